//go:build !unix

package load

import "io/fs"

// dirKeyOf is the resolved path where inodes are not at hand.
func dirKeyOf(_ fs.FileInfo, real string) dirKey { return dirKey{real: real} }
