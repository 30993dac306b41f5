package outdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsEarlierBuild: only a finished build, its marker meshc's and every
// file it lists present, counts; an empty, hand-made or emptied marker
// does not, nor a build in progress.
func TestIsEarlierBuild(t *testing.T) {
	root := t.TempDir()
	build := func(name string) string {
		dir := filepath.Join(root, name)
		commit(t, Target{Named: dir, Path: dir}, Options{Dir: root}, "index.json", "default/web.json")
		return dir
	}
	marker := func(name, content string) string {
		dir := filepath.Join(root, name)
		tree(t, dir, "index.json")
		if err := os.WriteFile(filepath.Join(dir, Marker), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	missing := build("missing")
	if err := os.Remove(filepath.Join(missing, "default", "web.json")); err != nil {
		t.Fatal(err)
	}
	inProgress := filepath.Join(root, "in-progress")
	tree(t, inProgress, "index.json")
	if err := writeMarker(inProgress, nil); err != nil {
		t.Fatal(err)
	}
	tree(t, root, "x") // what a marker listing ../x would find
	linked := marker("linked", "")
	if err := os.Remove(filepath.Join(linked, Marker)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(linked, Marker)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		want      bool
	}{
		{"finished build", build("out"), true},
		{"empty marker", marker("empty", ""), false},
		{"hand-made marker", marker("forged", "index.json\n"), false},
		{"marker listing a path outside", marker("outside", markerHeader+"\nindex.json\n../x\n"), false},
		{"listed file gone", missing, false},
		{"build in progress", inProgress, false},
		{"marker linked to a device", linked, false},
		{"no marker", root, false},
	} {
		if got := IsEarlierBuild(tc.dir); got != tc.want {
			t.Errorf("%s: IsEarlierBuild = %v, want %v", tc.name, got, tc.want)
		}
	}
}
