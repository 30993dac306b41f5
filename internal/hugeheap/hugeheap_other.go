//go:build !linux

package hugeheap

func reserve(kernel) (int, bool) { return 0, false }

func advise(int) bool { return false }
