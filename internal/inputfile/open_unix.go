//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// open opens path for reading. Unless a stream is wanted it does not wait
// for a FIFO's writer (O_NONBLOCK), so a FIFO put in place after the look
// in Read is refused instead of hanging; on a regular file O_NONBLOCK
// changes nothing.
func open(path string, stream bool) (*os.File, error) {
	if stream {
		return os.Open(path)
	}
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
