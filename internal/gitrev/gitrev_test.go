package gitrev

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshc/meshc/internal/testfiles"
)

// repo makes a repository with one commit of files, a link and an
// executable, then changes the working tree; it runs in the repository.
func repo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := testfiles.Write(t, map[string]string{
		"m/a.yaml":     "committed a\n",
		"m/sub/b.yaml": "committed b\n",
		".meshc.yaml":  "failOn: warning\n",
		"bin/run.sh":   "#!/bin/sh\n",
	})
	t.Chdir(dir)
	if err := os.Symlink("a.yaml", filepath.Join("m", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join("bin", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "one"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=meshc", "-c", "user.email=meshc@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join("m", "a.yaml"), []byte("working tree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTree: a revision's tree is an fs.FS holding what was committed, not
// the working tree, with links as links; names are shown as REV:path.
func TestTree(t *testing.T) {
	repo(t)
	tree, err := Open(context.Background(), "HEAD", []string{"m/sub", "m/a.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if err := fstest.TestFS(tree, "m/a.yaml", "m/sub/b.yaml", ".meshc.yaml", "bin/run.sh", "m/link.yaml"); err != nil {
		t.Error(err)
	}
	if data, err := fs.ReadFile(tree, "m/a.yaml"); err != nil || string(data) != "committed a\n" {
		t.Errorf("m/a.yaml = %q, %v", data, err)
	}
	if fi, err := fs.Stat(tree, "m/link.yaml"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link: %v, %v", fi.Mode(), err)
	}
	if !slices.Equal(tree.Paths, []string{"m/sub", "m/a.yaml"}) {
		t.Errorf("paths %v", tree.Paths)
	}
	for name, want := range map[string]string{"m/a.yaml": "HEAD:m/a.yaml", "elsewhere.yaml": "elsewhere.yaml", "<stdin>": "<stdin>"} {
		if got := tree.File(name); got != want {
			t.Errorf("File(%q) = %q, want %q", name, got, want)
		}
	}
	// From a subdirectory, paths are still named from the top.
	t.Chdir("m")
	sub, err := Open(context.Background(), "HEAD", []string{"sub"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if !slices.Equal(sub.Paths, []string{"m/sub"}) {
		t.Errorf("paths from m/: %v", sub.Paths)
	}
}

func TestOpenErrors(t *testing.T) {
	repo(t)
	outside := t.TempDir()
	for _, tc := range []struct {
		rev   string
		paths []string
		want  string
	}{
		{"nope", nil, `no revision "nope"`},
		{"HEAD", []string{"m/new.yaml"}, "m/new.yaml is not in revision HEAD"},
		{"HEAD", []string{outside}, "is not in a git repository"},
	} {
		if _, err := Open(context.Background(), tc.rev, tc.paths); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s, %v): %v, want %q", tc.rev, tc.paths, err, tc.want)
		}
	}
}
