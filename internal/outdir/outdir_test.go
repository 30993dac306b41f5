package outdir

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshc/meshc/internal/outdir/outdirtest"
)

// tree makes files (a trailing slash makes a directory) under dir.
func tree(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// commit writes files into a new build of t and commits it.
func commit(t *testing.T, target Target, opts Options, files ...string) {
	t.Helper()
	b, err := Begin(context.Background(), target, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	tree(t, b.Dir(), files...)
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "home", "me", "repo")
	tree(t, root, "home/me/repo/manifests/a.yaml", "home/me/repo/notes.txt", "etc/envoy/README", "etc/envoy/sub/cert.pem", "empty/")
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere", "x"), filepath.Join(work, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(work, "notes-link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(work, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	earlier := filepath.Join(root, "earlier")
	commit(t, Target{Named: earlier, Path: earlier}, Options{Dir: work}, "index.json", "default/web.json")
	touched := filepath.Join(root, "touched")
	commit(t, Target{Named: touched, Path: touched}, Options{Dir: work}, "index.json", "default/web.json")
	tree(t, touched, "default/notes.txt")

	base := Options{Inputs: []string{"manifests", "-"}, Dir: work, Home: filepath.Join(root, "home", "me")}
	for _, tc := range []struct {
		name, out string
		force     bool
		// refused is a fragment of the refusal; "" means allowed.
		refused  string
		forcible bool
		path     string // the resolved target, when allowed
	}{
		{name: "empty path", out: "", refused: "empty"},
		{name: "blank path", out: " ", refused: "empty"},
		{name: "root", out: "/", refused: "root directory"},
		{name: "root forced", out: "/", force: true, refused: "root directory"},
		{name: "working directory", out: ".", refused: "working directory"},
		{name: "working directory forced", out: work, force: true, refused: "working directory"},
		{name: "parent", out: "..", refused: "working directory or one of its parents"},
		{name: "grandparent by another name", out: "../../me/../..", refused: "parents"},
		{name: "input", out: "manifests", refused: "is the input /"},
		{name: "input with slash, forced", out: "manifests/", force: true, refused: "is the input"},
		{name: "home", out: filepath.Join(root, "home", "me"), refused: "working directory"},
		{name: "home's parent", out: filepath.Join(root, "home"), refused: "working directory or one of its parents"},
		{name: "file", out: "notes.txt", refused: "it is a file, and OUT must be a directory or absent"},
		{name: "file forced", out: "notes.txt", force: true, refused: "it is a file"},
		{name: "link to a file, forced", out: "notes-link", force: true, refused: "it is a file"},
		{name: "device forced", out: os.DevNull, force: true, refused: "it is a character device, and OUT must be a directory"},
		{name: "pipe forced", out: "fifo", force: true, refused: "it is a pipe"},
		{name: "directory meshc did not write", out: filepath.Join(root, "etc", "envoy"), refused: "meshc did not write, holding README, sub/", forcible: true},
		{name: "directory meshc did not write, forced", out: filepath.Join(root, "etc", "envoy"), force: true, path: filepath.Join(root, "etc", "envoy")},
		{name: "earlier build with a file added", out: touched, refused: "earlier meshc build, but holds files meshc did not write: default/notes.txt", forcible: true},
		{name: "earlier build", out: earlier, path: earlier},
		{name: "empty directory", out: filepath.Join(root, "empty"), path: filepath.Join(root, "empty")},
		{name: "new directory", out: "out", path: filepath.Join(work, "out")},
		{name: "new directory inside an input", out: "manifests/out", path: filepath.Join(work, "manifests", "out")},
		{name: "symlink is written through", out: "link", path: filepath.Join(root, "real")},
		{name: "dangling symlink is written through", out: "dangling", path: filepath.Join(root, "nowhere", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := base
			opts.Force = tc.force
			// Relative names are the working directory's.
			out := tc.out
			if strings.TrimSpace(out) != "" && !filepath.IsAbs(out) {
				out = filepath.Join(work, out)
			}
			// Inputs are relative to the working directory too.
			opts.Inputs = []string{filepath.Join(work, "manifests"), "-"}
			got, err := Check(out, opts)
			var refused *RefusedError
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused == "":
				if got.Path != tc.path {
					t.Errorf("path %s, want %s", got.Path, tc.path)
				}
			case err == nil:
				t.Fatalf("allowed %s, want a refusal containing %q", got.Path, tc.refused)
			case !strings.Contains(err.Error(), tc.refused):
				t.Errorf("refusal %q, want it to contain %q", err, tc.refused)
			case errors.As(err, &refused) && refused.Forcible != tc.forcible:
				t.Errorf("forcible %v, want %v: %v", refused.Forcible, tc.forcible, err)
			}
		})
	}
	// The home directory and its parents, when they are not above the
	// working directory, even with --force; a directory beside home is
	// allowed.
	tree(t, root, "users/me/.bashrc", "users/other/notes")
	for _, force := range []bool{false, true} {
		opts := Options{Dir: filepath.Join(root, "empty"), Home: filepath.Join(root, "users", "me"), Force: force}
		for _, out := range []string{filepath.Join(root, "users", "me"), filepath.Join(root, "users"), filepath.Join(root, "users", "me", "..")} {
			var refused *RefusedError
			if _, err := Check(out, opts); !errors.As(err, &refused) || refused.Forcible || !strings.Contains(err.Error(), "home directory or one of its parents") {
				t.Errorf("%s, force %v: %v; want a refusal --force cannot lift", out, force, err)
			}
		}
		if _, err := Check(filepath.Join(root, "users", "other"), opts); (err == nil) != force {
			t.Errorf("beside home, force %v: %v", force, err)
		}
	}
}

// TestCheckMountPoint: a mount point cannot be renamed, so it is refused
// even with --force. Check only looks: nothing is written there.
func TestCheckMountPoint(t *testing.T) {
	for _, dir := range []string{"/proc", "/dev"} {
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		if mount, err := isMountPoint(dir, fi); err != nil || !mount {
			t.Logf("%s is not a mount point here", dir)
			continue
		}
		for _, force := range []bool{false, true} {
			_, err = Check(dir, Options{Dir: t.TempDir(), Home: t.TempDir(), Force: force})
			if err == nil || !strings.Contains(err.Error(), "mount point") {
				t.Errorf("%s, force %v: err = %v, want a mount-point refusal", dir, force, err)
			}
		}
	}
}

// TestCommitRefusesFilesAddedDuringBuild: a file dropped into OUT between
// Begin and the swap stops the swap: OUT keeps it and its earlier build,
// and the finished build is removed. With --force, what OUT held when the
// build began may go, but not what came later.
func TestCommitRefusesFilesAddedDuringBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		// earlier is what OUT holds when the build begins: an earlier
		// build ("build"), files of the user's, or nothing.
		earlier []string
		force   bool
		drop    string // a file dropped into OUT, relative to it
		want    string // a fragment of Commit's error, "" for success
	}{
		{"file at the top", []string{"build"}, false, "NOTES.txt", "files meshc did not write appeared in it during the build: NOTES.txt; the finished build was removed"},
		{"file in a namespace directory", []string{"build"}, false, "ns/mine.yaml", "appeared in it during the build: ns/mine.yaml"},
		{"directory", []string{"build"}, false, "new/a", "appeared in it during the build: new/"},
		{"OUT made meanwhile", nil, false, "x", "appeared in it during the build: x"},
		{"nothing added", []string{"build"}, false, "", ""},
		{"forced, nothing added", []string{"README", "sub/cert.pem"}, true, "", ""},
		{"forced, a file added", []string{"README"}, true, "late", "appeared in it during the build: late"},
	} {
		// The file lands before Commit checks OUT, or between that check
		// and the exchange (the hook), when the previous OUT must go back.
		for _, atSwap := range []bool{false, true} {
			name := tc.name + map[bool]string{false: ", before the check", true: ", at the swap"}[atSwap]
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				target := Target{Named: out, Path: out}
				if slices.Equal(tc.earlier, []string{"build"}) {
					commit(t, target, Options{Dir: dir}, "index.json", "ns/web.json")
				} else {
					tree(t, out, tc.earlier...)
				}
				b, err := Begin(context.Background(), target, Options{Dir: dir, Force: tc.force}, nil)
				if err != nil {
					t.Fatal(err)
				}
				tree(t, b.Dir(), "index.json", "ns/other.json")
				var before map[string]bool
				drop := func() {
					if tc.drop != "" {
						tree(t, out, tc.drop)
					}
					before = listing(t, out)
				}
				ctx := context.Background()
				if atSwap {
					ctx = WithHooks(ctx, Hooks{BeforeSwap: func(got string) {
						if got != out {
							t.Errorf("hook given %s, want %s", got, out)
						}
						drop()
					}})
				} else {
					drop()
				}
				err = b.Commit(ctx)
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("commit: %v", err)
				case tc.want == "":
					if _, err := os.Stat(filepath.Join(out, "ns", "other.json")); err != nil {
						t.Errorf("the build was not swapped in: %v", err)
					}
				case err == nil || !strings.Contains(err.Error(), tc.want):
					t.Fatalf("commit: %v, want an error containing %q", err, tc.want)
				default:
					if after := listing(t, out); !maps.Equal(before, after) {
						t.Errorf("OUT changed: %v, then %v", before, after)
					}
				}
				entries, _ := os.ReadDir(dir)
				if len(entries) != 1 {
					t.Errorf("beside OUT: %v, want only OUT", entries)
				}
			})
		}
	}
}

// TestCommitStopsWhenContextEnds: a build whose context ended after it was
// written is not swapped in.
func TestCommitStopsWhenContextEnds(t *testing.T) {
	out, b := pending(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped")
	cancel(stop)
	if err := b.Commit(ctx); !errors.Is(err, stop) {
		t.Errorf("commit: %v, want %v", err, stop)
	}
	if _, err := os.Stat(filepath.Join(out, "ns", "web.json")); err != nil {
		t.Errorf("OUT changed: %v", err)
	}
	if _, err := os.Stat(b.Dir()); !os.IsNotExist(err) {
		t.Errorf("the build was left: %v", err)
	}
}

// listing is every path below dir.
func listing(t *testing.T, dir string) map[string]bool {
	t.Helper()
	paths := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		paths[p] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestCommitReplaces: a committed build replaces OUT whole, its marker
// lists every file written, and nothing is left beside OUT but the lock.
func TestCommitReplaces(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	target := Target{Named: out, Path: out}
	commit(t, target, Options{Dir: dir}, "index.json", "old/gone.json")
	commit(t, target, Options{Dir: dir}, "index.json", "ns/web.json", "ns/api/clusters.json")
	if _, err := os.Stat(filepath.Join(out, "old")); !os.IsNotExist(err) {
		t.Error("the previous build's files survived")
	}
	m, err := readMarker(out)
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(m.files))
	for f := range m.files {
		files = append(files, f)
	}
	slices.Sort(files)
	if want := []string{"index.json", "ns/api/clusters.json", "ns/web.json"}; !slices.Equal(files, want) {
		t.Errorf("marker lists %v, want %v", files, want)
	}
	if foreign, err := Foreign(out); err != nil || len(foreign) > 0 {
		t.Errorf("foreign %v, %v", foreign, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"out"}; !slices.Equal(names, want) {
		t.Errorf("beside OUT: %v, want %v", names, want)
	}
}

// pending makes an OUT holding an earlier build (ns/web.json) and begins
// and writes a new one (ns/other.json), not yet committed.
func pending(t *testing.T) (string, *Pending) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	target := Target{Named: out, Path: out}
	commit(t, target, Options{Dir: dir}, "index.json", "ns/web.json")
	b, err := Begin(context.Background(), target, Options{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tree(t, b.Dir(), "index.json", "ns/other.json")
	return out, b
}

// TestAbortKeepsPrevious: an aborted build removes its temporary directory
// and leaves OUT as it was.
func TestAbortKeepsPrevious(t *testing.T) {
	out, b := pending(t)
	b.Abort()
	b.Abort() // twice is harmless
	if _, err := os.Stat(b.Dir()); !os.IsNotExist(err) {
		t.Error("temporary directory left")
	}
	if data, err := os.ReadFile(filepath.Join(out, "ns", "web.json")); err != nil || string(data) != "ns/web.json" {
		t.Errorf("previous OUT changed: %q %v", data, err)
	}
	if err := b.Commit(context.Background()); err == nil {
		t.Error("commit after abort succeeded")
	}
}

// TestStaleTemporariesRemoved: what a killed build into OUT left is
// removed by the next build into OUT; a temporary of another OUT whose
// name starts alike, and a directory without marker, are not.
func TestStaleTemporariesRemoved(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	stale := filepath.Join(dir, ".out.meshc-tmp-123")
	staleOld := filepath.Join(dir, ".out.meshc-tmp-456.old")
	othersTemp := filepath.Join(dir, ".out.meshc-tmp-7.meshc-tmp-789") // OUT out.meshc-tmp-7
	unmarked := filepath.Join(dir, ".out.meshc-tmp-1")
	for _, d := range []string{stale, staleOld, othersTemp} {
		tree(t, d, "ns/web.json")
		if err := writeMarker(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	tree(t, unmarked, "keep.txt")
	commit(t, Target{Named: out, Path: out}, Options{Dir: dir}, "index.json")
	for _, gone := range []string{stale, staleOld} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s survived", gone)
		}
	}
	for _, kept := range []string{othersTemp, unmarked} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s removed: %v", kept, err)
		}
	}
}

// TestConcurrentBuilds: builds into one OUT take turns; none fails, none
// leaves anything beside OUT, and a reader never finds index.json missing
// once the first build is in.
func TestConcurrentBuilds(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	target := Target{Named: out, Path: out}
	commit(t, target, Options{Dir: dir}, "index.json")
	stopWatching := outdirtest.WatchMissing(filepath.Join(out, "index.json"))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			b, err := Begin(context.Background(), target, Options{Dir: dir}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer b.Abort()
			for j := range 50 {
				name := filepath.Join(b.Dir(), "ns", string(rune('a'+i))+string(rune('a'+j%26))+".json")
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
					errs <- err
					return
				}
			}
			if err := os.WriteFile(filepath.Join(b.Dir(), "index.json"), []byte("{}"), 0o644); err != nil {
				errs <- err
				return
			}
			errs <- b.Commit(context.Background())
		})
	}
	wg.Wait()
	missing := stopWatching()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if missing > 0 && exchanges(t) {
		t.Errorf("index.json was missing %d times", missing)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("beside OUT: %v, want only OUT", entries)
	}
}

// exchanges reports whether this file system swaps directories in one step.
func exchanges(t *testing.T) bool {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	tree(t, dir, "a/", "b/")
	aside, err := replace(a, b)
	return err == nil && aside == a
}

// TestLockWaitEndsWithContext: a build waiting for another's lock says so
// once and gives up when its context ends.
func TestLockWaitEndsWithContext(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	target := Target{Named: out, Path: out}
	held, err := Begin(context.Background(), target, Options{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Abort()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	told := 0
	_, err = Begin(ctx, target, Options{Dir: dir}, func(string) { told++ })
	if !errors.Is(err, context.DeadlineExceeded) || told != 1 {
		t.Errorf("err = %v, told %d times; want the deadline, told once", err, told)
	}
}

// TestRemoveAll: a build's tree goes whole, its directories in parallel;
// a directory that is not there is no error.
func TestRemoveAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	tree(t, dir, "index.json", "ns-1/a.json", "ns-2/b/clusters.json", "_shared/c.json", "empty/")
	if err := removeAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", dir, err)
	}
	if err := removeAll(dir); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}

// TestLockRemovedAndExclusive: the lock file goes with its holder, and
// however many builds race for one OUT, one holds the lock at a time,
// including a waiter that opened the file its holder then removed.
func TestLockRemovedAndExclusive(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".out.meshc-lock")
	var held, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				unlock, err := lock(context.Background(), file, nil)
				if err != nil {
					t.Error(err)
					return
				}
				n := held.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				held.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("%d holders at once", m)
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file left: %v", err)
	}
}
