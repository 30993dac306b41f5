package render

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/meshc/meshc/internal/inputfile"
)

// The functions of this package read a chart or a kustomization from the
// OS's file system when given a nil fs.FS, with paths as the user named
// them; else from the fs.FS (a git revision's tree, say), with paths
// slash-separated from its root. An fs.FS is read as it is: a link in it
// is not followed unless the fs.FS itself follows it, and every file is
// read within inputfile's limit.

// stat is fs.Stat, or os.Stat for the OS's file system.
func stat(fsys fs.FS, name string) (fs.FileInfo, error) {
	if fsys == nil {
		return os.Stat(name)
	}
	return fs.Stat(fsys, name)
}

// readFile reads a file a chart or kustomization names, within limit (0:
// inputfile's default).
func readFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	return inputfile.ReadFS(fsys, name, inputfile.Options{Limit: limit})
}

// join is filepath.Join for the OS's paths, path.Join for an fs.FS's.
func join(fsys fs.FS, elem ...string) string {
	if fsys == nil {
		return filepath.Join(elem...)
	}
	return path.Join(elem...)
}

// treeFS is an fs.FS as the read-only file system Kustomize reads: its
// paths are absolute, "/" standing for the fs.FS's root.
type treeFS struct{ fsys fs.FS }

// name is the fs.FS's name of the absolute path p.
func (treeFS) name(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(p)), "/")
	if p == "" {
		return "."
	}
	return p
}

// abs is the absolute path of the fs.FS's name.
func (treeFS) abs(name string) string { return path.Join("/", name) }

func (t treeFS) Open(p string) (filesys.File, error) {
	f, err := t.fsys.Open(t.name(p))
	if err != nil {
		return nil, err
	}
	return readOnlyFile{f}, nil
}

func (t treeFS) ReadFile(p string) ([]byte, error) {
	return inputfile.ReadFS(t.fsys, t.name(p), inputfile.Options{})
}

func (t treeFS) IsDir(p string) bool {
	fi, err := fs.Stat(t.fsys, t.name(p))
	return err == nil && fi.IsDir()
}

func (t treeFS) Exists(p string) bool {
	_, err := fs.Stat(t.fsys, t.name(p))
	return err == nil
}

func (t treeFS) ReadDir(p string) ([]string, error) {
	entries, err := fs.ReadDir(t.fsys, t.name(p))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// CleanedAbs splits p into the directory that holds it and its file name
// ("" when p is a directory), as Kustomize's disk does.
func (t treeFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	abs := t.abs(t.name(p))
	if t.IsDir(abs) {
		return filesys.ConfirmedDir(abs), "", nil
	}
	dir := path.Dir(abs)
	if !t.IsDir(dir) || dir == abs {
		return "", "", fmt.Errorf("'%s' is not in a directory", p)
	}
	return filesys.ConfirmedDir(dir), path.Base(abs), nil
}

func (t treeFS) Glob(pattern string) ([]string, error) {
	names, err := fs.Glob(t.fsys, t.name(pattern))
	for i, n := range names {
		names[i] = t.abs(n)
	}
	return names, err
}

func (t treeFS) Walk(p string, fn filepath.WalkFunc) error {
	return fs.WalkDir(t.fsys, t.name(p), func(name string, d fs.DirEntry, err error) error {
		var fi fs.FileInfo
		if err == nil {
			fi, err = d.Info()
		}
		return fn(t.abs(name), fi, err)
	})
}

func (treeFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (treeFS) Mkdir(string) error                  { return errReadOnly }
func (treeFS) MkdirAll(string) error               { return errReadOnly }
func (treeFS) RemoveAll(string) error              { return errReadOnly }
func (treeFS) WriteFile(string, []byte) error      { return errReadOnly }

// readOnlyFile is an fs.File as Kustomize's File.
type readOnlyFile struct{ fs.File }

func (readOnlyFile) Write([]byte) (int, error) { return 0, errReadOnly }
