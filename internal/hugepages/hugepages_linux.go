package hugepages

import (
	"bytes"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// reserve is how much heap to advise: none unless THP is in "madvise"
// mode and overcommit is not strict; at most a quarter of memory.
func reserve(k kernel) (int, bool) {
	thp, err := os.ReadFile(k.thp)
	if err != nil || !bytes.Contains(thp, []byte("[madvise]")) {
		return 0, false
	}
	overcommit, err := os.ReadFile(k.overcommit)
	if err != nil || bytes.HasPrefix(overcommit, []byte("2")) {
		return 0, false
	}
	meminfo, err := os.ReadFile(k.meminfo)
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(meminfo) {
		// "MemTotal:       24576000 kB"
		if rest, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
			kb, err := strconv.Atoi(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))))
			if err != nil {
				return 0, false
			}
			size := min(maxReserve, kb<<10/4)
			return size, size >= minReserve
		}
	}
	return 0, false
}

// minReserve is the least advice worth its garbage collection.
const minReserve = 32 << 20

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
