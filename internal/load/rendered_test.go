package load

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestKustomizationsFound: walking a tree renders each top-level
// kustomization once; a base its overlays use is rendered inside them, not
// also on its own, and its files are not read one by one. With Kustomize
// off the same tree is read file by file.
func TestKustomizationsFound(t *testing.T) {
	tree := filepath.Join("..", "render", "testdata", "kustomize")
	res, _, err := Paths(context.Background(), []string{tree}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(tree, "overlays/prod"), filepath.Join(tree, "overlays/staging")}
	if !slices.Equal(res.Files, want) {
		t.Errorf("read %v, want %v", res.Files, want)
	}
	res, _, _ = Paths(context.Background(), []string{tree}, Options{Render: RenderOptions{NoKustomize: true}})
	if len(res.Files) != 6 {
		t.Errorf("--kustomize=off read %v", res.Files)
	}
}
