package main

import (
	"io/fs"
	"testing"
)

func TestCgroupLimit(t *testing.T) {
	const v2, v1 = "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	tests := []struct {
		name  string
		files map[string]string
		want  uint64
	}{
		{"version 2 limit", map[string]string{v2: "2147483648\n", v1: "1024\n"}, 2 << 30},
		{"version 2 without a limit", map[string]string{v2: "max\n", v1: "1024\n"}, 0},
		{"version 1 limit", map[string]string{v1: "536870912\n"}, 512 << 20},
		{"version 1 without a limit", map[string]string{v1: "9223372036854771712\n"}, 9223372036854771712},
		{"no control group files", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := func(name string) ([]byte, error) {
				if s, ok := tt.files[name]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			if got := cgroupLimit(read); got != tt.want {
				t.Errorf("cgroupLimit = %d, want %d", got, tt.want)
			}
		})
	}
}
