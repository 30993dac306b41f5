// Package testfiles lays out files for tests and compares output with
// golden files. It imports nothing of meshc, so the tests of every package
// can use it.
package testfiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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

// Within fails the test when f has not returned after ten seconds: a read
// waiting for a FIFO's writer, or a walk that does not end, would hang the
// test instead. what names the operation in the failure.
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}
