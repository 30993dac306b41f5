// Package inputfile reads the files meshc is given — manifests, the mesh
// config, .meshc.yaml, build markers — one way for all: never more than a
// size limit, and, unless a stream is asked for, only regular files, so
// that a link to /dev/zero cannot exhaust memory and a FIFO cannot hang.
package inputfile

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// DefaultLimit is the largest file read when Options.Limit is not set.
const DefaultLimit = 32 << 20

// Options say what Read accepts.
type Options struct {
	// Limit is the largest size read; 0 means DefaultLimit.
	Limit int64
	// Stream accepts what is not a regular file — a pipe named on the
	// command line (<(helm template ...), a FIFO), a device — and reads it
	// up to Limit. Without it such a file is refused unopened, since
	// opening a FIFO waits for a writer.
	Stream bool
	// Listed says the path was a regular file, not a link, when its
	// directory was read: Read opens it without looking first (the open
	// does not wait for a FIFO put there since, and what it opened is
	// checked all the same), one system call fewer for each file of a
	// walk.
	Listed bool
	// Name is how messages name the file; empty means the path.
	Name string
}

// readError is the system's error, said with the file's name but
// without the path it repeats (errors.Is still finds fs.ErrNotExist).
type readError struct {
	msg string
	err error
}

func (e *readError) Error() string { return e.msg }

func (e *readError) Unwrap() error { return e.err }

// Read returns the content of the file at path, following symlinks. Its
// errors are sentences naming the file.
func Read(path string, opts Options) ([]byte, error) {
	limit := cmp.Or(opts.Limit, DefaultLimit)
	name := cmp.Or(opts.Name, path)
	if !opts.Stream && !opts.Listed {
		// Look before opening: open blocks on a FIFO without a writer,
		// and opening a device can do more than open it.
		fi, err := os.Stat(path)
		if err != nil {
			return nil, cannotRead(name, err)
		}
		if err := checkRegular(name, fi); err != nil {
			return nil, err
		}
	}
	f, err := open(path, opts.Stream)
	if err != nil {
		return nil, cannotRead(name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, cannotRead(name, err)
	}
	sizeHint := int64(0)
	switch {
	case fi.Mode().IsRegular():
		if err := within(name, fi, limit); err != nil {
			return nil, err
		}
		sizeHint = fi.Size()
	case !opts.Stream:
		// Replaced by something else since the look above.
		return nil, checkRegular(name, fi)
	}
	return readAll(f, name, limit, sizeHint)
}

// ReadFS is Read for the file name of fsys (a git tree, a test map):
// only a regular file, never more than the limit. A link in fsys is
// followed only if fsys follows it when opening. A nil fsys is the OS's
// file system: ReadFS is then Read.
func ReadFS(fsys fs.FS, name string, opts Options) ([]byte, error) {
	if fsys == nil {
		return Read(name, opts)
	}
	limit := cmp.Or(opts.Limit, DefaultLimit)
	shown := cmp.Or(opts.Name, name)
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, cannotRead(shown, err)
	}
	if err := checkRegular(shown, fi); err != nil {
		return nil, err
	}
	if err := within(shown, fi, limit); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, cannotRead(shown, err)
	}
	defer f.Close()
	return readAll(f, shown, limit, fi.Size())
}

// within refuses a regular file over the limit before it is read.
func within(name string, fi fs.FileInfo, limit int64) error {
	if fi.Size() > limit {
		return fmt.Errorf("%s is %s, over the %s limit", name, size(fi.Size()), size(limit))
	}
	return nil
}

// ReadStream reads r, named name in errors, up to limit bytes (0 means
// DefaultLimit): standard input.
func ReadStream(r io.Reader, name string, limit int64) ([]byte, error) {
	return readAll(r, name, cmp.Or(limit, DefaultLimit), 0)
}

func readAll(r io.Reader, name string, limit, sizeHint int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, sizeHint+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, cannotRead(name, err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%s is over the %s limit", name, size(limit))
	}
	return buf.Bytes(), nil
}

// checkRegular refuses what is not a regular file, saying what it is.
func checkRegular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a regular file", path, Kind(fi.Mode()))
}

// Kind names what kind of file a mode is, for messages that refuse one:
// the inputs here, OUT in internal/outdir.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a file"
	}
	return "a special file"
}

func cannotRead(path string, err error) error {
	return &readError{msg: fmt.Sprintf("cannot read %s: %s", path, Reason(err)), err: err}
}

// Reason is err without the path os errors repeat.
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// size prints a byte count for messages.
func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
