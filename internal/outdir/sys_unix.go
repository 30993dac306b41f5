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
// holds it so that ctx can end the wait. The lock file stays: removing it
// would let a waiting build lock a file no one else sees.
func lock(ctx context.Context, file string, waiting Waiting) (func(), error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock output directory: %w", err)
	}
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock output directory: %s: %w", file, err)
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
