package parallel

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]atomic.Int32, n)
		For(context.Background(), n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}

func TestForStartsNothingAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	For(ctx, 10_000, func(int) {
		if calls.Add(1) == 5 {
			cancel()
		}
	})
	// Each worker may finish the call it is in; none starts another.
	if c := calls.Load(); c >= 10_000 || c < 5 {
		t.Fatalf("%d calls after a cancel at the fifth", c)
	}
}
