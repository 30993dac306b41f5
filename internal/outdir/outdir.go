// Package outdir owns meshc build's output directory: it decides whether a
// directory may be replaced, writes a build beside it under a lock, and
// swaps the finished build into place so that readers never see it half
// written or missing. It deletes only what meshc itself wrote: an earlier
// build (recognised by its marker file), its own temporary directories, and
// what the user named with --force.
package outdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/inputfile"
)

// Marker is the file every meshc OUT holds: it lists every file meshc wrote
// there, so that a later build knows what it may delete.
const Marker = ".meshc-out"

// IndexFile is written by every build; with Marker it makes a meshc OUT.
const IndexFile = "index.json"

const markerHeader = "# Written by meshc build. It may replace this directory, deleting only the files listed here."

// Options say what else Check must protect.
type Options struct {
	// Inputs are the paths the build reads ("-" is standard input): the
	// manifests and every other file, such as the mesh and project
	// configs.
	Inputs []string
	// Force allows replacing a directory that is not an earlier meshc
	// OUT, or one that holds other files.
	Force bool
	// Dir and Home stand for the working and home directories; empty
	// means the process's own (tests set them).
	Dir, Home string
}

// Target is an output directory that Check allowed.
type Target struct {
	// Named is OUT as the user wrote it, for messages.
	Named string
	// Path is the absolute path with every symlink resolved: a symlinked
	// OUT is written through, into its target.
	Path string
}

// RefusedError says why an OUT may not be written.
type RefusedError struct {
	Named, Reason string
	// Forcible is true when --force would allow it.
	Forcible bool
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("refusing to write the build to %q: %s", e.Named, e.Reason)
	if e.Forcible {
		msg += "; --force replaces it whole"
	}
	return msg
}

// Check decides, before any work, whether the build may replace out. It
// never allows /, the working or home directory or one of their
// ancestors, an input or one of its ancestors, a mount point, or anything
// but a directory; without Force it also refuses a non-empty directory
// that is not an earlier meshc OUT or holds files meshc did not write.
func Check(out string, opts Options) (Target, error) {
	if strings.TrimSpace(out) == "" {
		return Target{}, &RefusedError{Named: out, Reason: "the path is empty (an unset variable?)"}
	}
	refuse := func(forcible bool, format string, args ...any) (Target, error) {
		return Target{}, &RefusedError{Named: out, Reason: fmt.Sprintf(format, args...), Forcible: forcible}
	}
	// What the name leads to, links followed: /dev/stdout is a link to a
	// link to a pipe that has no path of its own to resolve.
	if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
		return refuse(false, "it is %s, and OUT must be a directory or absent", inputfile.Kind(fi.Mode()))
	}
	path, err := canonical(out)
	if err != nil {
		return Target{}, fmt.Errorf("output directory %q: %w", out, err)
	}
	t := Target{Named: out, Path: path}
	if filepath.Dir(path) == path {
		return refuse(false, "it is the root directory")
	}
	wd, err := dirOr(opts.Dir, os.Getwd)
	if err != nil {
		return Target{}, fmt.Errorf("working directory: %w", err)
	}
	if wd, err = canonical(wd); err != nil {
		return Target{}, fmt.Errorf("working directory: %w", err)
	}
	if within(wd, path) {
		return refuse(false, "it is the working directory or one of its parents")
	}
	if home, err := dirOr(opts.Home, os.UserHomeDir); err == nil {
		if home, err = canonical(home); err == nil && within(home, path) {
			return refuse(false, "it is the home directory or one of its parents")
		}
	}
	for _, in := range opts.Inputs {
		if in == "-" || in == "" {
			continue
		}
		p, err := canonical(in)
		switch {
		case err != nil:
		case p == path:
			return refuse(false, "it is the input %s", in)
		case within(p, path):
			return refuse(false, "it holds the input %s", in)
		}
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return Target{}, fmt.Errorf("output directory %q: %w", out, err)
	}
	if !fi.IsDir() {
		return refuse(false, "it is %s, and OUT must be a directory or absent", inputfile.Kind(fi.Mode()))
	}
	if mount, err := isMountPoint(path, fi); err == nil && mount {
		return refuse(false, "it is a mount point, which cannot be replaced as a whole; name a directory inside it")
	}
	if opts.Force {
		return t, nil
	}
	if foreign, err := Foreign(path); err != nil {
		return Target{}, fmt.Errorf("output directory %q: %w", out, err)
	} else if len(foreign) > 0 {
		return refuse(true, "%s", describeForeign(path, foreign))
	}
	return t, nil
}

func dirOr(dir string, get func() (string, error)) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return get()
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// canonical makes p absolute and resolves the symlinks of its longest
// existing prefix, so that two names of one directory compare equal. A
// symlink to a path that does not exist yet resolves to that path.
func canonical(p string) (string, error) {
	return canonicalDepth(p, 0)
}

func canonicalDepth(p string, depth int) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for cur := abs; ; cur = filepath.Dir(cur) {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			slices.Reverse(rest)
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling link: go on from where it points.
			target, rerr := os.Readlink(cur)
			if rerr != nil || depth >= 40 {
				return "", fmt.Errorf("%s: %w", cur, cmpErr(rerr, errors.New("too many levels of symbolic links")))
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			slices.Reverse(rest)
			return canonicalDepth(filepath.Join(append([]string{target}, rest...)...), depth+1)
		}
		if filepath.Dir(cur) == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
	}
}

// Foreign lists, relative to dir, the entries meshc did not write there:
// everything, when dir is not an earlier meshc OUT. An empty directory has
// none.
func Foreign(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	written, err := readMarker(dir)
	if err != nil {
		return names(entries), nil
	}
	if _, err := os.Stat(filepath.Join(dir, IndexFile)); err != nil {
		return names(entries), nil
	}
	var foreign []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "." || rel == Marker:
		case d.IsDir():
			if !written.dirs[rel] {
				foreign = append(foreign, rel+"/")
				return fs.SkipDir
			}
		case !written.files[rel]:
			foreign = append(foreign, rel)
		}
		return nil
	})
	return foreign, err
}

func names(entries []fs.DirEntry) []string {
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out
}

func describeForeign(dir string, foreign []string) string {
	if _, err := readMarker(dir); err == nil {
		return "it is an earlier meshc build, but holds files meshc did not write: " + shown(foreign)
	}
	return "it is a directory meshc did not write, holding " + shown(foreign)
}

// shown lists the first few of names.
func shown(names []string) string {
	s := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d more", len(names)-3)
	}
	return s
}

// IsOutput reports whether dir is a meshc OUT or a build in progress.
func IsOutput(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, Marker))
	return err == nil
}

// IsEarlierBuild reports whether dir holds a finished build meshc wrote:
// its marker is meshc's, lists the index among the files, and every file
// listed is there. Loading passes over such a directory, and only such: an
// empty or hand-made marker must not hide manifests.
func IsEarlierBuild(dir string) bool {
	return IsEarlierBuildIn(os.DirFS(dir), ".")
}

// IsEarlierBuildIn is IsEarlierBuild for the directory dir of fsys (a git
// tree that holds a committed build, say).
func IsEarlierBuildIn(fsys fs.FS, dir string) bool {
	data, err := inputfile.ReadFS(fsys, path.Join(dir, Marker), inputfile.Options{})
	if err != nil {
		return false
	}
	m, err := parseMarker(data, path.Join(dir, Marker))
	if err != nil || !m.files[IndexFile] {
		return false
	}
	for f := range m.files {
		if !filepath.IsLocal(f) {
			return false
		}
		if fi, err := fs.Lstat(fsys, path.Join(dir, path.Clean(f))); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// marker is what a Marker file says: the files meshc wrote, and the
// directories holding them.
type marker struct {
	files, dirs map[string]bool
}

func readMarker(dir string) (marker, error) {
	file := filepath.Join(dir, Marker)
	data, err := inputfile.Read(file, inputfile.Options{})
	if err != nil {
		return marker{}, err
	}
	return parseMarker(data, file)
}

// parseMarker reads the content of the marker file.
func parseMarker(data []byte, file string) (marker, error) {
	m := marker{files: map[string]bool{}, dirs: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != markerHeader {
		return marker{}, fmt.Errorf("%s is not a meshc marker", file)
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		m.files[line] = true
		for d := path.Dir(line); d != "."; d = path.Dir(d) {
			m.dirs[d] = true
		}
	}
	return m, sc.Err()
}

// writeMarker writes dir's marker, listing files.
func writeMarker(dir string, files []string) error {
	var b strings.Builder
	b.WriteString(markerHeader + "\n")
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	return os.WriteFile(filepath.Join(dir, Marker), []byte(b.String()), 0o644)
}
