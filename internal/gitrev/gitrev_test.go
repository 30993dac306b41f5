package gitrev

import (
	"path/filepath"
	"testing"
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
