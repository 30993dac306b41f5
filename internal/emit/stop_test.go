package emit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/benchmesh"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/resolve"
)

// TestWriteStopsWithoutWaiting: when ctx ends, Write returns at once, not
// after the proxies being compiled. Two workers take two proxies: one of a
// namespace a Sidecar trims, done in milliseconds, whose progress ends
// ctx; and one that sees the whole generated mesh, whose thousands of
// clusters take the other worker seconds to build and render.
func TestWriteStopsWithoutWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves a large generated mesh")
	}
	objs, mc := benchmesh.Load(t, meshgen.Options{Namespaces: 60, ServicesPerNS: 20})
	m := resolve.Resolve(objs, resolve.Options{Mesh: mc})
	first := func(ns string) *resolve.ProxyView {
		for _, v := range m.Views {
			if v.Proxy.Namespace == ns {
				return v
			}
		}
		t.Fatalf("no proxy in %s", ns)
		return nil
	}
	views := []*resolve.ProxyView{first("ns-004"), first("ns-001")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stopped time.Time
	opts := WriteOptions{Dir: t.TempDir(), Workers: 2, Progress: func(done, _ int) {
		if done == 1 {
			stopped = time.Now()
			cancel()
		}
	}}
	_, err := New(m, Options{}).Write(ctx, views, opts)
	took := time.Since(stopped)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Write: %v, want it cancelled", err)
	}
	// An unloaded machine returns in microseconds; waiting for the
	// other proxy took seconds.
	if took > 500*time.Millisecond {
		t.Errorf("Write returned %v after ctx ended, want at once", took)
	}
}

// TestGate: nothing passes a closed gate, and closing waits for what is
// passing.
func TestGate(t *testing.T) {
	var g gate
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = g.pass(func() error {
			close(inside)
			<-release
			return nil
		})
	})
	<-inside
	closed := make(chan struct{})
	go func() { g.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close did not wait for the write passing")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-closed
	wg.Wait()
	dir := t.TempDir()
	err := g.pass(func() error { return os.WriteFile(filepath.Join(dir, "late"), nil, 0o644) })
	if !errors.Is(err, errGateClosed) {
		t.Errorf("pass after close: %v, want %v", err, errGateClosed)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); !os.IsNotExist(err) {
		t.Errorf("a write passed the closed gate: %v", err)
	}
}
