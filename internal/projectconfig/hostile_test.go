//go:build unix

package projectconfig

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

// TestLoadNotAFile: a .meshc.yaml that is /dev/zero, a link to it or a
// FIFO is an error naming it, returned at once.
func TestLoadNotAFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "zero", FileName)
	fifo := filepath.Join(dir, "fifo", FileName)
	for _, d := range []string{filepath.Dir(link), filepath.Dir(fifo)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for path, want := range map[string]string{
		"/dev/zero": "/dev/zero is a character device, not a regular file",
		link:        link + " is a character device, not a regular file",
		fifo:        fifo + " is a pipe, not a regular file",
	} {
		// Found upward as it would be, then loaded.
		if found, err := Find(filepath.Dir(path)); path != "/dev/zero" && (err != nil || found != path) {
			t.Errorf("Find = %q, %v; want %s", found, err, path)
		}
		var err error
		testfiles.Within(t, "Load("+path+")", func() { _, err = Load(nil, path) })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want %q", path, err, want)
		}
	}
}
