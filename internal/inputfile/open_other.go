//go:build !unix

package inputfile

import "os"

// open opens path for reading; without FIFOs there is nothing to wait for.
func open(path string, _ bool) (*os.File, error) { return os.Open(path) }
