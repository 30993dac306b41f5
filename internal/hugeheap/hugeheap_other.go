//go:build !linux

package hugeheap

func wanted(kernel) bool { return false }

func advise(int) bool { return false }
