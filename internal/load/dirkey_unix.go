//go:build unix

package load

import (
	"io/fs"
	"syscall"
)

func dirKeyOf(fi fs.FileInfo, real string) dirKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return dirKey{dev: uint64(st.Dev), ino: st.Ino}
	}
	return dirKey{real: real}
}
