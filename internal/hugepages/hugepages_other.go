//go:build !linux

package hugepages

func reserve(kernel) (int, bool) { return 0, false }

func advise(int) bool { return false }
