package gitrev

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

func TestFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "copy")
	tree := &Tree{rev: "origin/main", dir: dir}
	for name, want := range map[string]string{
		filepath.Join(dir, "m", "vs.yaml"): "origin/main:m/vs.yaml",
		filepath.Join(dir, "vs.yaml"):      "origin/main:vs.yaml",
		"/elsewhere/vs.yaml":               "/elsewhere/vs.yaml",
		dir + "-other/vs.yaml":             dir + "-other/vs.yaml",
	} {
		if got := tree.File(name); got != want {
			t.Errorf("File(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestReached: the paths a copied kustomization names outside what was
// copied, its generators' KEY=PATH files included; paths below what was
// copied and outside the repository are not asked for.
func TestReached(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{
		"overlays/prod/kustomization.yaml": "resources: [../../base, vs.yaml]\n" +
			"components: [../../components/canary]\n" +
			"patches:\n  - path: ../shared/patch.yaml\n    target: {kind: VirtualService}\n" +
			"configMapGenerator:\n  - name: c\n    files: [conf=../../config/app.conf]\n" +
			"bases: [../../../outside]\n",
	})
	tree := &Tree{rev: "HEAD", dir: dir}
	got, err := tree.reached([]string{"overlays/prod"})
	if err != nil {
		t.Fatal(err)
	}
	// vs.yaml, and strings that are no paths (the kind, the name c),
	// resolve below the overlay, which is copied already.
	want := []string{"base", "components/canary", "config/app.conf", "overlays/shared/patch.yaml"}
	if !slices.Equal(got, want) {
		t.Errorf("reached %v, want %v", got, want)
	}
}
