//go:build unix

package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/testfiles"
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
		{"MC1006", 0, "fifo.yaml is a pipe, not a regular file"},
		{"MC1006", 0, "zero.yaml is a character device, not a regular file"},
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
		var got string
		testfiles.Within(t, "reading the mesh config "+file, func() {
			_, ds := MeshConfig(nil, MeshOptions{File: file})
			got = dump(ds)
		})
		if !strings.Contains(got, "MC1006 mesh config: "+file+" is a ") || !strings.Contains(got, "not a regular file") {
			t.Errorf("%s: %s", file, got)
		}
	}
}

// TestLoadDiamondOfLinks: each level links twice to the next, so 2^20
// paths lead to the last; each directory is walked once and each file
// read once, at once.
func TestLoadDiamondOfLinks(t *testing.T) {
	const depth = 20
	root := t.TempDir()
	for i := range depth + 1 {
		level := filepath.Join(root, fmt.Sprintf("l%02d", i))
		if err := os.Mkdir(level, 0o755); err != nil {
			t.Fatal(err)
		}
		ns := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns%02d}\n", i)
		if err := os.WriteFile(filepath.Join(level, "ns.yaml"), []byte(ns), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == depth {
			break
		}
		for _, link := range []string{"a", "b"} {
			if err := os.Symlink(fmt.Sprintf("../l%02d", i+1), filepath.Join(level, link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	var res Result
	var ds []diag.Diagnostic
	var err error
	// The walk runs before anything looks at a context.
	testfiles.Within(t, "the walk, a path at a time,", func() {
		res, ds, err = Paths(context.Background(), []string{filepath.Join(root, "l00")}, Options{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) > 0 || len(res.Files) != depth+1 || len(res.Objects) != depth+1 {
		t.Errorf("read %d files, %d objects, want %d each; diagnostics:\n%s", len(res.Files), len(res.Objects), depth+1, dump(ds))
	}
	// The first path met names each file: l00/a/a/..., never b.
	for _, f := range res.Files {
		if strings.Contains(f, string(filepath.Separator)+"b"+string(filepath.Separator)) {
			t.Errorf("file %s is named by a later path", f)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the walk took %v", d)
	}
}

// TestLoadLinkIntoProc: a link to /proc or /sys is named (MC1010) and not
// followed; the rest loads.
func TestLoadLinkIntoProc(t *testing.T) {
	dir := t.TempDir()
	var links []string
	for _, target := range []string{"/proc", "/sys"} {
		if _, err := os.Stat(target); err != nil {
			continue
		}
		link := filepath.Join(dir, filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		links = append(links, link)
	}
	if len(links) == 0 {
		t.Skip("neither /proc nor /sys here")
	}
	if err := os.WriteFile(filepath.Join(dir, "ns.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res Result
	var ds []diag.Diagnostic
	var err error
	testfiles.Within(t, "the walk into "+strings.Join(links, ", "), func() {
		res, ds, err = Paths(context.Background(), []string{dir}, Options{})
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []diagKey
	for _, link := range links {
		want = append(want, diagKey{"MC1010", 0, link + " links to /"})
	}
	checkDiags(t, ds, want)
	for _, d := range ds {
		if d.Severity != diag.Info || !strings.Contains(d.Message, "pseudo-filesystem") {
			t.Errorf("%s %s: %s", d.Code, d.Severity, d.Message)
		}
	}
	if len(res.Objects) != 1 {
		t.Errorf("loaded %d objects, want 1", len(res.Objects))
	}
}

// TestLoadCancelledWhileAFIFOWaits: a FIFO named on the command line is
// read as a stream, whose open waits for a writer; ending ctx returns at
// once all the same.
func TestLoadCancelledWhileAFIFOWaits(t *testing.T) {
	fifo := filepath.Join(hostileDir(t), "fifo.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var err error
	testfiles.Within(t, "loading a FIFO without a writer after ctx ended", func() {
		_, _, err = Paths(ctx, []string{fifo}, Options{})
	})
	if err == nil {
		t.Error("want ctx's error")
	}
}
