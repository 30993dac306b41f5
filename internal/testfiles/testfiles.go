// Package testfiles lays out files for tests. It imports nothing of
// meshc, so the tests of every package can use it.
package testfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// Write creates files (path relative to a new temporary directory, slash
// separated, to content) and returns the directory.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
