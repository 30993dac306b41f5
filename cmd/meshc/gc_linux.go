package main

import "syscall"

// totalMemory is the machine's memory in bytes, 0 if unknown.
func totalMemory() uint64 {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0
	}
	return uint64(info.Totalram) * uint64(info.Unit)
}
