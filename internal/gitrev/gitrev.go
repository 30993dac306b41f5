// Package gitrev reads paths as they are at a git revision, without
// checking anything out or writing anything: the revision's tree, listed
// once by `git ls-tree`, is an fs.FS named by paths from the repository's
// top, and a file's content is read when it is opened, through one
// `git cat-file --batch` kept running. File names are shown as REV:path.
//
// It runs the git binary rather than reading the object store in Go: git
// reads every repository layout (worktrees, partial clones, alternates,
// new index and pack formats) the way the user's git does, and meshc
// takes on no second implementation of git as a dependency for one
// command.
package gitrev

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxBlob is the largest file Open reads: more than any limit meshc reads
// with (inputfile's, Helm's), which check a file's size before opening it.
const MaxBlob = 256 << 20

// Tree is a revision's tree as an fs.FS (with ReadDir and Stat). Links in
// it are files of mode fs.ModeSymlink, not followed; submodules are left
// out. It is safe for concurrent use; Close ends its git process.
type Tree struct {
	// Paths are the requested paths as the tree names them, in order.
	Paths []string
	rev   string
	nodes map[string]*node

	// mu serializes reads through cat, which ends when ctx does.
	mu  sync.Mutex
	cat *catFile
}

// node is an entry of the tree.
type node struct {
	name string // base name
	mode fs.FileMode
	size int64
	// oid is a blob's object name; children a directory's entries, sorted.
	oid      string
	children []*node
}

// Open lists the tree of rev in the repository holding paths (files or
// directories of the working tree, as the user names them; none means
// "."). Each path must be in the revision.
func Open(ctx context.Context, rev string, paths []string) (*Tree, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	top, err := git(ctx, startDir(paths[0]), "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository: %w", paths[0], err)
	}
	top = strings.TrimSpace(top)
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("no revision %q in %s", rev, top)
	}
	listing, err := git(ctx, top, "ls-tree", "-r", "-z", "-l", "--full-tree", "--end-of-options", rev)
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s: %w", rev, err)
	}
	t := &Tree{rev: rev, nodes: map[string]*node{".": {name: ".", mode: fs.ModeDir | 0o555}}}
	if err := t.list(listing); err != nil {
		return nil, err
	}
	for _, p := range paths {
		rel, err := fromTop(top, p)
		if err != nil {
			return nil, err
		}
		if t.nodes[rel] == nil {
			return nil, fmt.Errorf("%s is not in revision %s", rel, rev)
		}
		t.Paths = append(t.Paths, rel)
	}
	if t.cat, err = startCatFile(ctx, top); err != nil {
		return nil, err
	}
	return t, nil
}

// list builds the tree from `git ls-tree -r -z -l` output: per entry
// "MODE TYPE OID SIZE\tPATH\x00".
func (t *Tree) list(listing string) error {
	for entry := range strings.SplitSeq(strings.TrimSuffix(listing, "\x00"), "\x00") {
		if entry == "" {
			continue
		}
		meta, name, ok := strings.Cut(entry, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return fmt.Errorf("git ls-tree: unexpected entry %q", entry)
		}
		var mode fs.FileMode
		switch f[0] {
		case "100644":
			mode = 0o444
		case "100755":
			mode = 0o555
		case "120000":
			mode = fs.ModeSymlink | 0o777
		default:
			continue // a submodule's commit: not in this repository
		}
		if !fs.ValidPath(name) {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return fmt.Errorf("git ls-tree: size of %s: %w", name, err)
		}
		t.add(name, &node{name: path.Base(name), mode: mode, size: size, oid: f[2]})
	}
	for _, n := range t.nodes {
		slices.SortFunc(n.children, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	}
	return nil
}

// add puts n at name, making the directories above it.
func (t *Tree) add(name string, n *node) {
	t.nodes[name] = n
	for name != "." {
		dir := path.Dir(name)
		parent, ok := t.nodes[dir]
		if !ok {
			parent = &node{name: path.Base(dir), mode: fs.ModeDir | 0o555}
			t.nodes[dir] = parent
		}
		parent.children = append(parent.children, n)
		if ok {
			return
		}
		name, n = dir, parent
	}
}

// File shows a name of the tree as REV:path; other names (files of the
// working tree, standard input) are returned as they are.
func (t *Tree) File(name string) string {
	if t.nodes[name] == nil || name == "." {
		return name
	}
	return t.rev + ":" + name
}

func (t *Tree) lookup(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n := t.nodes[name]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Stat describes name; a link is described, not followed.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// ReadDir lists a directory, sorted by name.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		out[i] = fs.FileInfoToDirEntry(info{c})
	}
	return out, nil
}

// Open opens name. A file's content is read whole from git (up to
// MaxBlob); a link's is its target.
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return &dir{info: info{n}, tree: t, name: name}, nil
	}
	if n.size > MaxBlob {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%d bytes, over gitrev's limit of %d", n.size, MaxBlob)}
	}
	data, err := t.blob(n.oid)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{info: info{n}, Reader: bytes.NewReader(data)}, nil
}

// Close ends the git process reading files; the tree's files can no
// longer be opened.
func (t *Tree) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cat.in.Close()
	return t.cat.cmd.Wait()
}

// blob reads an object's content through the running cat-file.
func (t *Tree) blob(oid string) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cat.read(oid)
}

// catFile is a running `git cat-file --batch`: an object name written,
// its header and content read back.
type catFile struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

func startCatFile(ctx context.Context, top string) (*catFile, error) {
	c := &catFile{cmd: exec.CommandContext(ctx, "git", "-C", top, "cat-file", "--batch")}
	c.cmd.Stderr = &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.out = bufio.NewReader(out)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return c, nil
}

func (c *catFile) read(oid string) ([]byte, error) {
	if _, err := io.WriteString(c.in, oid+"\n"); err != nil {
		return nil, fmt.Errorf("git cat-file: %s", firstLine(c.stderr.String(), err))
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %s", firstLine(c.stderr.String(), err))
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[0] != oid {
		return nil, fmt.Errorf("git cat-file: %s", strings.TrimSpace(header))
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 || size > MaxBlob {
		return nil, fmt.Errorf("git cat-file: bad size in %q", strings.TrimSpace(header))
	}
	data := make([]byte, size+1) // the content, then a newline
	if _, err := io.ReadFull(c.out, data); err != nil {
		return nil, fmt.Errorf("git cat-file: %s", firstLine(c.stderr.String(), err))
	}
	return data[:size], nil
}

// info is a node as fs.FileInfo.
type info struct{ n *node }

func (i info) Name() string       { return i.n.name }
func (i info) Size() int64        { return i.n.size }
func (i info) Mode() fs.FileMode  { return i.n.mode }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.n.mode.IsDir() }
func (i info) Sys() any           { return nil }

// file is an open file: its content in memory.
type file struct {
	info
	*bytes.Reader
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dir is an open directory.
type dir struct {
	info
	tree *Tree
	name string
	read int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

// ReadDir lists the directory's entries n at a time (fs.ReadDirFile).
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	all, err := d.tree.ReadDir(d.name)
	if err != nil {
		return nil, err
	}
	rest := all[d.read:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && len(rest) > n {
		rest = rest[:n]
	}
	d.read += len(rest)
	return rest, nil
}

// startDir is where git looks for the repository of p.
func startDir(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return p
	}
	return filepath.Dir(p)
}

// fromTop is p relative to the repository's top, slash-separated.
func fromTop(top, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	// The top git prints has symlinks resolved; so must p's directory.
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s is outside the repository %s", p, top)
	}
	return filepath.ToSlash(rel), nil
}

// git runs git in dir and returns its output; the error holds git's first
// line of complaint.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New(firstLine(stderr.String(), err))
	}
	return string(out), nil
}

func firstLine(s string, fallback error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); line != "" {
		return line
	}
	return fallback.Error()
}
