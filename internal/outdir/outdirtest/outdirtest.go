// Package outdirtest helps tests watch an output directory from outside,
// as a reader of the build would.
package outdirtest

import (
	"os"
	"sync"
)

// WatchMissing polls for file until the returned stop is called, which
// returns how many times the file was missing.
func WatchMissing(file string) (stop func() int) {
	done := make(chan struct{})
	missing := 0
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := os.Stat(file); err != nil {
				missing++
			}
		}
	})
	return func() int {
		close(done)
		wg.Wait()
		return missing
	}
}
