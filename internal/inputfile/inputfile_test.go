//go:build unix

package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

// hostile makes, in a temporary directory, the files the reader must
// refuse or bound: a link to an endless device, a FIFO no one writes, a
// directory, a file over the limit.
func hostile(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	p := map[string]string{
		"zero":  filepath.Join(dir, "zero.yaml"),
		"fifo":  filepath.Join(dir, "fifo.yaml"),
		"dir":   dir,
		"big":   filepath.Join(dir, "big.yaml"),
		"small": filepath.Join(dir, "small.yaml"),
	}
	if err := os.Symlink("/dev/zero", p["zero"]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p["fifo"], 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.WriteFile(p["big"], make([]byte, 101), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p["small"], []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRead(t *testing.T) {
	p := hostile(t)
	for _, tc := range []struct {
		name, path string
		opts       Options
		want       string // a fragment of the error; "" for success
	}{
		{"regular", p["small"], Options{}, ""},
		{"link to a device", p["zero"], Options{}, "zero.yaml is a character device, not a regular file"},
		{"FIFO", p["fifo"], Options{}, "fifo.yaml is a pipe, not a regular file"},
		{"directory", p["dir"], Options{}, "is a directory, not a regular file"},
		{"over the limit", p["big"], Options{Limit: 100}, "big.yaml is 101 bytes, over the 100 bytes limit"},
		{"device as a stream is bounded", p["zero"], Options{Limit: 1000, Stream: true}, "zero.yaml is over the 1000 bytes limit"},
		{"missing", p["small"] + ".gone", Options{}, "cannot read " + p["small"] + ".gone: no such file or directory"},
		{"named", p["zero"], Options{Name: "mesh.yaml"}, "mesh.yaml is a character device"},
		// A file a walk listed is opened without a look first: what is
		// there by then is refused all the same, a FIFO without waiting.
		{"listed", p["small"], Options{Listed: true}, ""},
		{"listed, a FIFO since", p["fifo"], Options{Listed: true}, "fifo.yaml is a pipe, not a regular file"},
		{"listed, gone since", p["small"] + ".gone", Options{Listed: true}, "cannot read " + p["small"] + ".gone: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			var err error
			testfiles.Within(t, "Read", func() { data, err = Read(tc.path, tc.opts) })
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "" && string(data) != "a: 1\n":
				t.Fatalf("read %q", data)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadKeepsTheCause(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "gone"), Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not say the file does not exist", err)
	}
}

func TestReadStream(t *testing.T) {
	if _, err := ReadStream(strings.NewReader(strings.Repeat("x", 11)), "<stdin>", 10); err == nil || err.Error() != "<stdin> is over the 10 bytes limit" {
		t.Errorf("error %v", err)
	}
	if data, err := ReadStream(strings.NewReader("ok"), "<stdin>", 10); err != nil || string(data) != "ok" {
		t.Errorf("read %q, %v", data, err)
	}
}
