// Package gitrev reads paths as they are at a git revision, without
// checking anything out: `git archive` streams the revision's files into
// a temporary directory the compile reads like any other, and file names
// are shown back as REV:path. (Teaching load to read an fs.FS would spare
// the directory; it is the larger change, and the git binary reads every
// repository layout, worktrees and partial clones included.)
package gitrev

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/meshc/meshc/internal/projectconfig"
)

// Tree is a revision's copy of some paths.
type Tree struct {
	// Paths are the requested paths inside the copy, in order.
	Paths []string
	rev   string
	dir   string
}

// File shows a path inside the copy as REV:path (path from the
// repository's top); other paths are returned as they are.
func (t *Tree) File(name string) string {
	rel, err := filepath.Rel(t.dir, name)
	if err != nil || !filepath.IsLocal(rel) {
		return name
	}
	return t.rev + ":" + filepath.ToSlash(rel)
}

// Close removes the copy.
func (t *Tree) Close() error { return os.RemoveAll(t.dir) }

// Extract copies paths (files or directories of the working tree, as the
// user names them; none means ".") as they are at rev, with the
// .meshc.yaml files above them up to the repository's top, so the copy
// reads the project config the revision had.
func Extract(ctx context.Context, rev string, paths []string) (*Tree, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	top, err := git(ctx, startDir(paths[0]), "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository: %w", paths[0], err)
	}
	top = strings.TrimSpace(top)
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("no revision %q in %s", rev, top)
	}
	var rels []string
	configs := map[string]bool{}
	for _, p := range paths {
		rel, err := fromTop(top, p)
		if err != nil {
			return nil, err
		}
		rels = append(rels, rel)
		for dir := path.Dir(rel); ; dir = path.Dir(dir) {
			configs[path.Join(dir, projectconfig.FileName)] = true
			if dir == "." {
				break
			}
		}
	}
	spec := rels
	for c := range configs {
		// Only the project configs the revision has: a pathspec that
		// matches nothing fails the archive.
		if out, err := git(ctx, top, "ls-tree", "--name-only", rev, "--", c); err == nil && strings.TrimSpace(out) != "" {
			spec = append(spec, c)
		}
	}
	dir, err := os.MkdirTemp("", "meshc-rev-")
	if err != nil {
		return nil, err
	}
	t := &Tree{rev: rev, dir: dir}
	if err := t.archive(ctx, top, spec); err != nil {
		t.Close()
		return nil, err
	}
	if err := t.withReached(ctx, top, spec); err != nil {
		t.Close()
		return nil, err
	}
	// The copy's root stands for the repository's: the search for
	// .meshc.yaml stops there, and a kustomization reads files below it.
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Close()
		return nil, err
	}
	for _, rel := range rels {
		t.Paths = append(t.Paths, filepath.Join(dir, filepath.FromSlash(rel)))
	}
	return t, nil
}

// startDir is where git looks for the repository of p.
func startDir(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return p
	}
	return filepath.Dir(p)
}

// fromTop is p relative to the repository's top, slash-separated.
func fromTop(top, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	// The top git prints has symlinks resolved; so must p's directory.
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s is outside the repository %s", p, top)
	}
	return filepath.ToSlash(rel), nil
}

// archive writes the revision's files under spec into t.dir.
func (t *Tree) archive(ctx context.Context, top string, spec []string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", top, "archive", "--format=tar", t.rev, "--"}, spec...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	xerr := t.untar(out)
	// Drain what is left, so git is not stuck on a full pipe.
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %s", t.rev, firstLine(stderr.String(), err))
	}
	return xerr
}

// untar writes the archive's directories and regular files; links and
// anything else are left out, and no name leaves the directory.
func (t *Tree) untar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read git archive: %w", err)
		}
		name := filepath.FromSlash(strings.TrimSuffix(h.Name, "/"))
		if !filepath.IsLocal(name) {
			continue
		}
		dst := filepath.Join(t.dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeReg:
			err = writeFile(dst, tr)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// git runs git in dir and returns its output; the error holds git's first
// line of complaint.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New(firstLine(stderr.String(), err))
	}
	return string(out), nil
}

func firstLine(s string, fallback error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); line != "" {
		return line
	}
	return fallback.Error()
}
