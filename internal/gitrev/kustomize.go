package gitrev

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/render"
)

// maxRounds bounds how many times the copy grows by the files its
// kustomizations reach: a chain of bases deeper than this is not a layout
// anyone keeps.
const maxRounds = 16

// withReached adds to the copy, at the revision, what the kustomizations
// in it reach outside it (bases beside the overlay, components, patch and
// generator files in other folders), round after round as the added
// folders hold kustomizations of their own: the revision's overlay then
// renders from the revision's bases, as the working tree's does from its.
// have are the repository paths already copied.
func (t *Tree) withReached(ctx context.Context, top string, have []string) error {
	for range maxRounds {
		want, err := t.reached(have)
		if err != nil || len(want) == 0 {
			return err
		}
		// Only what the revision has: a path that does not exist there is
		// Kustomize's to report, and fails the archive.
		out, err := git(ctx, top, append([]string{"ls-tree", "--name-only", t.rev, "--"}, want...)...)
		if err != nil {
			return err
		}
		exist := strings.Fields(out)
		if len(exist) == 0 {
			return nil
		}
		if err := t.archive(ctx, top, exist); err != nil {
			return err
		}
		have = append(have, exist...)
	}
	return nil
}

// reached lists the repository paths that the kustomizations of the copy
// name and that are not under have: every string of a kustomization that,
// read as a path from its folder, stays inside the repository. Strings
// that are no paths (kinds, names) name nothing in the revision and are
// dropped by the caller.
func (t *Tree) reached(have []string) ([]string, error) {
	var want []string
	err := filepath.WalkDir(t.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains(render.KustomizationNames, d.Name()) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(t.dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		var doc any
		if yaml.Unmarshal(data, &doc) != nil {
			return nil // Kustomize says what is wrong with it
		}
		for _, s := range scalars(doc) {
			// A generator's files entry may be KEY=PATH.
			if _, after, ok := strings.Cut(s, "="); ok {
				s = after
			}
			if s == "" || strings.ContainsAny(s, " \t\n:") {
				continue
			}
			r := path.Join(filepath.ToSlash(rel), s)
			if filepath.IsLocal(r) && !covered(r, have) && !slices.Contains(want, r) {
				want = append(want, r)
			}
		}
		return nil
	})
	slices.Sort(want)
	return want, err
}

// covered reports whether the repository path p is under one of have.
func covered(p string, have []string) bool {
	return slices.ContainsFunc(have, func(h string) bool {
		return h == "." || p == h || strings.HasPrefix(p, h+"/")
	})
}

// scalars collects every string value of a decoded YAML document.
func scalars(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, scalars(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, scalars(e)...)
		}
		return out
	}
	return nil
}
