//go:build unix

package outdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive flock on file, polling while another process
// holds it so that ctx can end the wait, and the returned unlock removes
// the file, so nothing stays beside OUT once the build ends.
//
// Removing a lock file is safe only with a check on taking it: a waiter
// may have opened the file before its holder removed it and then win the
// flock on a file no one else will open. So after the flock succeeds, the
// path must still name the locked file (same device and inode); if it does
// not, the lock is worthless and the loop opens the path afresh. The
// holder removes the file before it releases the flock, so any process
// holding the flock on the file the path names is the one holder.
func lock(ctx context.Context, file string, waiting Waiting) (func(), error) {
	told := false
	for {
		f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock output directory: %w", err)
		}
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
			if err == nil || (!errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR)) {
				break
			}
			if !told && waiting != nil {
				waiting(file)
				told = true
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, context.Cause(ctx)
			case <-time.After(pollLock):
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock output directory: %s: %w", file, err)
		}
		if samePath(f, file) {
			return func() {
				_ = os.Remove(file)
				_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, nil
		}
		// The holder before us removed the file after we opened it.
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	open, err1 := f.Stat()
	named, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(open, named)
}

// replace puts dir where out is and returns where the previous out went
// ("" when there was none). On Linux the two are exchanged in one step
// (renameat2 RENAME_EXCHANGE), so out never goes missing; where the file
// system cannot exchange, out is moved aside and dir renamed in its place,
// leaving a moment without out.
func replace(dir, out string) (string, error) {
	err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, out, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return dir, nil
	case errors.Is(err, unix.ENOENT):
		// No previous OUT: a plain rename that would not clobber one
		// appearing meanwhile (every builder holds the lock; this is for
		// anyone else).
		if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, out, unix.RENAME_NOREPLACE); err == nil || !exchangeUnsupported(err) {
			return "", err
		}
		return "", os.Rename(dir, out)
	case exchangeUnsupported(err):
		return replaceInTwoSteps(dir, out)
	default:
		return "", err
	}
}

// exchangeUnsupported reports errors of kernels or file systems without
// renameat2's flags.
func exchangeUnsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}

// isMountPoint reports whether dir is on another device than its parent:
// such a directory cannot be renamed.
func isMountPoint(dir string, fi fs.FileInfo) (bool, error) {
	parent, err := os.Stat(filepath.Dir(dir))
	if err != nil {
		return false, err
	}
	a, ok1 := fi.Sys().(*syscall.Stat_t)
	b, ok2 := parent.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Dev != b.Dev, nil
}
