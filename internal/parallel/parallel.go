// Package parallel spreads independent work over the cores for the passes
// that have such work (scopes, analyzers).
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(0..n-1) from up to GOMAXPROCS goroutines and returns when
// every call that started has returned, so no goroutine outlives it. Once
// ctx ends no further call starts: a cancelled pass stops within one call
// per core. The caller checks ctx afterwards, as the results are then
// incomplete. f must write only state of its own index.
func For(ctx context.Context, n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
