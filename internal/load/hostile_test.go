//go:build unix

package load

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileDir holds, beside one manifest, a manifest name linked to
// /dev/zero and a FIFO no one writes to.
func hostileDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	return dir
}

// TestLoadRefusesWhatIsNotAFile: in a directory walked, a link to a device
// and a FIFO are MC1006 at once, neither read without end nor waited on.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	dir := hostileDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, ds, err := Paths(ctx, []string{dir}, Options{})
	if err != nil {
		t.Fatalf("%v (the walk hangs)", err)
	}
	checkDiags(t, ds, []diagKey{
		{"MC1006", 0, "fifo.yaml is a named pipe (FIFO), not a regular file"},
		{"MC1006", 0, "zero.yaml is a device, not a regular file"},
	})
	if len(res.Objects) != 1 {
		t.Errorf("loaded %d objects, want the one in ok.yaml", len(res.Objects))
	}
}

// TestLoadBoundsANamedDevice: a device named on the command line is read
// as a stream, and only up to the limit.
func TestLoadBoundsANamedDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, ds, err := Paths(ctx, []string{"/dev/zero"}, Options{MaxFileSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, ds, []diagKey{{"MC1006", 0, "/dev/zero is over the 1000 bytes limit"}})
}

// TestMeshConfigFileNotAFile: --mesh-config naming /dev/zero, a link to
// it or a FIFO is refused unread.
func TestMeshConfigFileNotAFile(t *testing.T) {
	dir := hostileDir(t)
	for _, file := range []string{"/dev/zero", filepath.Join(dir, "zero.yaml"), filepath.Join(dir, "fifo.yaml")} {
		done := make(chan string)
		go func() {
			_, ds := MeshConfig(nil, MeshOptions{File: file})
			done <- dump(ds)
		}()
		select {
		case got := <-done:
			if !strings.Contains(got, "MC1006 mesh config: "+file+" is a ") || !strings.Contains(got, "not a regular file") {
				t.Errorf("%s: %s", file, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading the mesh config hangs", file)
		}
	}
}
