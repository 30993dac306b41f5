package hugeheap

import (
	"bytes"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// wanted reports whether THP is in "madvise" mode and overcommit is not
// strict.
func wanted(k kernel) bool {
	thp, err := os.ReadFile(k.thp)
	if err != nil || !bytes.Contains(thp, []byte("[madvise]")) {
		return false
	}
	overcommit, err := os.ReadFile(k.overcommit)
	return err == nil && !bytes.HasPrefix(overcommit, []byte("2"))
}

func advise(size int) bool {
	// A block this large makes the runtime map fresh heap pages for it and
	// leave them untouched (they are known to be zero). Advising them and
	// then freeing the block leaves advised pages at the low addresses the
	// runtime's page allocator hands out first.
	block := make([]byte, size)
	ok := unix.Madvise(block, unix.MADV_HUGEPAGE) == nil
	runtime.KeepAlive(block)
	// Free the block now: left as garbage it would count as live heap and
	// push the first collections far out.
	runtime.GC()
	return ok
}
