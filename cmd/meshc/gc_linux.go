package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// totalMemory is the memory meshc may use in bytes, 0 if unknown: the
// machine's, or its control group's limit when lower (a container's
// memory limit is what the kernel enforces, whatever the host has).
func totalMemory() uint64 {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0
	}
	total := uint64(info.Totalram) * uint64(info.Unit)
	if limit := cgroupLimit(os.ReadFile); limit > 0 && limit < total {
		return limit
	}
	return total
}

// cgroupLimit is the memory limit of the process's control group
// (version 2, then version 1), 0 for none or unknown.
func cgroupLimit(read func(string) ([]byte, error)) uint64 {
	for _, file := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := read(file)
		if err != nil {
			continue
		}
		// "max" (version 2) means none; version 1 says so with a huge number,
		// which the caller's comparison with the machine's memory drops.
		n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return 0
		}
		return n
	}
	return 0
}
