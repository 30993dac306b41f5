package emit

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/meshgen/meshgentest"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestWriteStopsWithinAResource: when ctx ends, the proxies in flight stop
// at their next resource, not when they are done, and no goroutine is
// left. Two workers take two proxies: one of a namespace a Sidecar trims,
// done in milliseconds, whose progress ends ctx; and one that sees the
// whole generated mesh, whose thousands of clusters take the other worker
// seconds to build and render.
func TestWriteStopsWithinAResource(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves a large generated mesh")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	objs, mc := meshgentest.Load(t, meshgen.Options{Namespaces: 60, ServicesPerNS: 20})
	m, _ := resolvetest.Stages(objs, mc)
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
	t.Logf("Write returned %v after ctx ended", took)
	// Waiting for the other proxy to finish took seconds.
	if took > 500*time.Millisecond {
		t.Errorf("Write returned %v after ctx ended, want at once", took)
	}
}
