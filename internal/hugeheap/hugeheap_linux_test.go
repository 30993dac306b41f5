package hugeheap

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWanted(t *testing.T) {
	tests := []struct {
		name, thp, overcommit string
		want                  bool
	}{
		{"madvise mode", "always [madvise] never\n", "0\n", true},
		{"madvise mode, overcommit always", "always [madvise] never\n", "1\n", true},
		{"always mode needs no advice", "[always] madvise never\n", "0\n", false},
		{"never mode ignores advice", "always madvise [never]\n", "0\n", false},
		{"strict overcommit could refuse the block", "always [madvise] never\n", "2\n", false},
		{"no THP support", "", "0\n", false},
		{"unreadable overcommit", "always [madvise] never\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			k := kernel{thp: filepath.Join(dir, "thp"), overcommit: filepath.Join(dir, "overcommit")}
			for path, text := range map[string]string{k.thp: tt.thp, k.overcommit: tt.overcommit} {
				if text == "" {
					continue // a missing file
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := wanted(k); got != tt.want {
				t.Errorf("wanted = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAdvise checks the advice itself where the kernel takes it: a wrong
// range or flag would be refused.
func TestAdvise(t *testing.T) {
	if !wanted(system) {
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
