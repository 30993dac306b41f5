package xds

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// A burst of events is one recompile once quiet; a steady stream fires
// at the maximum delay; force fires at once.
func TestDebounce(t *testing.T) {
	const after, max = 30 * time.Millisecond, 150 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	events, force := make(chan struct{}), make(chan struct{})
	var fired atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		debounce(ctx, events, force, after, max, func() { fired.Add(1) })
	}()
	defer func() { cancel(); <-done }()

	for range 1000 {
		events <- struct{}{}
	}
	time.Sleep(3 * after)
	if n := fired.Load(); n != 1 {
		t.Fatalf("a burst of 1000 events fired %d times, want 1", n)
	}

	// Events every after/3 never leave a quiet period: max fires.
	start := time.Now()
	for time.Since(start) < 2*max+after {
		events <- struct{}{}
		time.Sleep(after / 3)
	}
	if n := fired.Load() - 1; n < 1 || n > 3 {
		t.Errorf("a steady stream over %s fired %d times, want about 2 (debounce max %s)", 2*max+after, n, max)
	}
	time.Sleep(3 * after)

	before := fired.Load()
	force <- struct{}{}
	// The send returns once debounce took it; fire ran before the
	// next receive, so a second send orders after it.
	force <- struct{}{}
	if n := fired.Load() - before; n < 1 {
		t.Errorf("force fired %d times", n)
	}
}

// A directory created under a watched one is watched too.
func TestWatcherNewDirectories(t *testing.T) {
	dir := t.TempDir()
	w, err := newWatcher([]string{dir}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	defer func() { cancel(); <-done }()
	wait := func(what string) {
		t.Helper()
		select {
		case <-w.changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("no change seen for %s", what)
		}
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wait("a new directory")
	// Let the watcher add the new directories before writing into them.
	time.Sleep(50 * time.Millisecond)
	for len(w.changed) > 0 {
		<-w.changed
	}
	if err := os.WriteFile(filepath.Join(sub, "vs.yaml"), []byte("kind: VirtualService\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wait("a file in a new directory")
}
