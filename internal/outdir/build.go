package outdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/parallel"
)

// Pending is an output being written: a temporary directory beside OUT,
// held under OUT's lock until Commit or Abort.
type Pending struct {
	target Target
	tmp    string
	unlock func()
	done   bool
	// kept are the entries of OUT meshc did not write that --force
	// allowed when the build began; anything else found at the swap
	// stops it.
	kept []string
}

// Hooks are called at points of a build, for tests to act between them.
type Hooks struct {
	// BeforeSwap is called by Commit with OUT's path once the build is
	// written and OUT checked, just before the two are exchanged.
	BeforeSwap func(out string)
}

type hooksKey struct{}

// WithHooks returns ctx carrying h, for Commit.
func WithHooks(ctx context.Context, h Hooks) context.Context {
	return context.WithValue(ctx, hooksKey{}, h)
}

// Waiting is called once when another build holds OUT's lock, before
// Begin waits for it.
type Waiting func(lockFile string)

// Begin takes OUT's lock (waiting while another build holds it, until ctx
// ends), removes temporary directories that killed builds into the same
// OUT left, checks the target again now that no other build can change it,
// and makes the temporary directory the build is written to.
func Begin(ctx context.Context, t Target, opts Options, waiting Waiting) (*Pending, error) {
	parent := filepath.Dir(t.Path)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	unlock, err := lock(ctx, lockPath(t.Path), waiting)
	if err != nil {
		return nil, err
	}
	b := &Pending{target: t, unlock: unlock}
	if err := removeStale(t.Path); err != nil {
		b.Abort()
		return nil, err
	}
	// Another build may have written OUT since Check, or a user may have
	// dropped a file in it.
	if again, err := Check(t.Named, opts); err != nil || again.Path != t.Path {
		b.Abort()
		return nil, cmpErr(err, fmt.Errorf("output directory %q now resolves to %s, not %s", t.Named, again.Path, t.Path))
	}
	if b.kept, err = foreignIfDir(t.Path); err != nil {
		b.Abort()
		return nil, fmt.Errorf("output directory %q: %w", t.Named, err)
	}
	tmp, err := os.MkdirTemp(parent, tempPrefix(t.Path))
	if err != nil {
		b.Abort()
		return nil, fmt.Errorf("output directory: %w", err)
	}
	b.tmp = tmp
	// MkdirTemp makes a private directory; the output is for everyone.
	// The marker goes in first, so a killed build's leftovers are known.
	if err := errors.Join(os.Chmod(tmp, 0o755), writeMarker(tmp, nil)); err != nil {
		b.Abort()
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return b, nil
}

// Dir is where the build's files go.
func (b *Pending) Dir() string { return b.tmp }

// Commit records the files written and puts the build where OUT is, in one
// step where the file system allows (see replace). The previous OUT is
// then removed. It does neither when ctx has ended, or when OUT holds
// something meshc did not write that it did not hold when the build began
// (a file dropped there meanwhile): the build is then removed and OUT
// left as it is.
func (b *Pending) Commit(ctx context.Context) error {
	if b.done {
		return errors.New("output directory: build already finished")
	}
	defer b.Abort()
	files, err := listFiles(b.tmp)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := writeMarker(b.tmp, files); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if err := b.unchanged(); err != nil {
		return err
	}
	if h, ok := ctx.Value(hooksKey{}).(Hooks); ok && h.BeforeSwap != nil {
		h.BeforeSwap(b.target.Path)
	}
	old, err := replace(b.tmp, b.target.Path)
	if err != nil {
		return fmt.Errorf("replace %s: %w", b.target.Named, err)
	}
	b.tmp = old // what Abort removes: the previous OUT, if there was one
	if old == "" {
		return nil
	}
	// A file may have landed in OUT between the check and the exchange:
	// then the previous OUT, now at old, goes back.
	added, err := b.added(old)
	if err != nil || len(added) == 0 {
		return err
	}
	back, err := replace(old, b.target.Path)
	if err != nil {
		b.tmp = "" // the previous OUT holds the user's files: never removed
		return fmt.Errorf("%s appeared in %s during the build; putting it back failed (%w): it is at %s", shown(added), b.target.Named, err, old)
	}
	b.tmp = back
	return b.appeared(added)
}

// unchanged checks, under the lock and just before the swap, that OUT
// holds nothing meshc did not write beyond what Begin found and --force
// allowed. Check ran when the build began; files added since would be
// deleted with the previous OUT.
func (b *Pending) unchanged() error {
	fi, err := os.Lstat(b.target.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("output directory %q: %w", b.target.Named, err)
	case !fi.IsDir():
		return &RefusedError{Named: b.target.Named, Reason: fmt.Sprintf("it became %s during the build; the finished build was removed", inputfile.Kind(fi.Mode()))}
	}
	added, err := b.added(b.target.Path)
	if err != nil || len(added) == 0 {
		return err
	}
	return b.appeared(added)
}

// added lists what dir, OUT or the previous OUT, holds that meshc did not
// write and Begin did not find. A directory --force allowed is compared
// by its entries, not their contents.
func (b *Pending) added(dir string) ([]string, error) {
	foreign, err := Foreign(dir)
	if err != nil {
		return nil, fmt.Errorf("output directory %q: %w", b.target.Named, err)
	}
	return slices.DeleteFunc(foreign, func(f string) bool { return slices.Contains(b.kept, f) }), nil
}

func (b *Pending) appeared(added []string) error {
	return &RefusedError{Named: b.target.Named, Reason: "files meshc did not write appeared in it during the build: " + shown(added) + "; the finished build was removed"}
}

// foreignIfDir is Foreign of dir, or nothing when dir does not exist.
func foreignIfDir(dir string) ([]string, error) {
	foreign, err := Foreign(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return foreign, err
}

// Abort removes the temporary directory (after Commit, the previous OUT)
// and releases the lock. It is safe to call more than once.
func (b *Pending) Abort() {
	if b.done {
		return
	}
	b.done = true
	if b.tmp != "" {
		_ = removeAll(b.tmp)
	}
	b.unlock()
}

// replaceInTwoSteps moves out aside, under a name removeStale knows, and
// renames dir into its place.
func replaceInTwoSteps(dir, out string) (string, error) {
	aside := dir + ".old"
	if err := os.Rename(out, aside); err != nil {
		return "", err
	}
	if err := os.Rename(dir, out); err != nil {
		return "", errors.Join(err, os.Rename(aside, out))
	}
	return aside, nil
}

// tempPrefix names the temporary directories of builds into out: hidden
// siblings, so that neither loading nor listing OUT's parent trips on them.
func tempPrefix(out string) string {
	return "." + filepath.Base(out) + ".meshc-tmp-"
}

func lockPath(out string) string {
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".meshc-lock")
}

// removeStale removes what killed builds into out left beside it: its
// temporary directories (MkdirTemp's digits after tempPrefix, ".old" after
// a two-step replacement) that hold a marker. It runs under out's lock, so
// no live build into out owns one; the digits keep the temporaries of an
// OUT whose name merely starts like out's apart.
func removeStale(out string) error {
	parent := filepath.Dir(out)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), tempPrefix(out))
		suffix = strings.TrimSuffix(suffix, ".old")
		if !ok || !e.IsDir() || suffix == "" || strings.Trim(suffix, "0123456789") != "" {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if IsOutput(dir) {
			if err := removeAll(dir); err != nil {
				return fmt.Errorf("remove %s, left by an interrupted build: %w", dir, err)
			}
		}
	}
	return nil
}

// removeAll removes dir as os.RemoveAll does, its entries (a build's
// namespace directories) in parallel: unlinking the hundreds of megabytes
// of a large build is most of what a stopped build waits for, and the file
// system frees several files at once about twice as fast as one by one.
func removeAll(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return os.RemoveAll(dir)
	}
	errs := make([]error, len(entries)+1)
	parallel.For(context.Background(), len(entries), func(i int) {
		errs[i] = os.RemoveAll(filepath.Join(dir, entries[i].Name()))
	})
	errs[len(entries)] = os.RemoveAll(dir)
	return errors.Join(errs...)
}

// listFiles lists the files below dir, relative and slash-separated,
// sorted; the marker is not listed.
func listFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != Marker {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// cmpErr is err, or else alt.
func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// pollLock is how often a waiting build tries the lock again.
const pollLock = 50 * time.Millisecond
