//go:build !unix

package outdir

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// lock is a no-op where flock does not exist: concurrent builds into one
// OUT are not serialised there.
func lock(context.Context, string, Waiting) (func(), error) { return func() {}, nil }

// replace moves out aside and renames dir into its place; there is a
// moment without out.
func replace(dir, out string) (string, error) {
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		return "", os.Rename(dir, out)
	}
	return replaceInTwoSteps(dir, out)
}

func isMountPoint(string, fs.FileInfo) (bool, error) { return false, nil }
