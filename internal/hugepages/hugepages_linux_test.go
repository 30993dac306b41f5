package hugepages

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReserve(t *testing.T) {
	const madvise, mem24G = "always [madvise] never\n", "MemTotal:       25165824 kB\nMemFree:        1000 kB\n"
	tests := []struct {
		name, thp, overcommit, meminfo string
		want                           int
	}{
		{"madvise mode", madvise, "0\n", mem24G, maxReserve},
		{"madvise mode, overcommit always", madvise, "1\n", mem24G, maxReserve},
		{"a quarter of a small machine", madvise, "0\n", "MemTotal:        1048576 kB\n", 256 << 20},
		{"too small to bother", madvise, "0\n", "MemTotal:          65536 kB\n", 0},
		{"always mode needs no advice", "[always] madvise never\n", "0\n", mem24G, 0},
		{"never mode ignores advice", "always madvise [never]\n", "0\n", mem24G, 0},
		{"strict overcommit could refuse the block", madvise, "2\n", mem24G, 0},
		{"no THP support", "", "0\n", mem24G, 0},
		{"unreadable overcommit", madvise, "", mem24G, 0},
		{"unreadable meminfo", madvise, "0\n", "", 0},
		{"garbled meminfo", madvise, "0\n", "MemTotal: lots\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			k := kernel{thp: filepath.Join(dir, "thp"), overcommit: filepath.Join(dir, "overcommit"), meminfo: filepath.Join(dir, "meminfo")}
			for path, text := range map[string]string{k.thp: tt.thp, k.overcommit: tt.overcommit, k.meminfo: tt.meminfo} {
				if text == "" {
					continue // a missing file
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := reserve(k)
			if ok != (tt.want > 0) || (ok && got != tt.want) {
				t.Errorf("reserve = %d, %v; want %d", got, ok, tt.want)
			}
		})
	}
}

// TestAdvise checks the advice itself where the kernel takes it: a wrong
// range or flag would be refused.
func TestAdvise(t *testing.T) {
	if _, ok := reserve(system); !ok {
		t.Skip("THP is not in madvise mode here")
	}
	if !advise(8 << 20) {
		t.Error("the kernel refused MADV_HUGEPAGE on a fresh heap block")
	}
}

func TestEnableOff(t *testing.T) {
	t.Setenv("MESHC_HUGEPAGES", "off")
	if Enable() {
		t.Error("Enable advised with MESHC_HUGEPAGES=off")
	}
}
