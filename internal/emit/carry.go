package emit

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshc/meshc/internal/deephash"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/resolve"
)

// Carry is what one in-memory build leaves for the next (a server's
// successive compiles): each sidecar part's outbound clusters, by the
// digest of what they are built from (resolve.Digester.Clusters). An edit
// to a VirtualService every namespace sees changes every scope's routes
// but none of its clusters, so the next build takes the clusters of each
// scope as they were instead of assembling thousands again.
type Carry struct {
	mu     sync.Mutex
	halves map[deephash.Sum]*clusterHalf
	// taken counts the parts that took their clusters from the Carry
	// before this one.
	taken atomic.Int64
}

// clusterHalf is the cluster stage of a part's build: what
// outboundClusters and specialClusters leave in the builder.
type clusterHalf struct {
	clusters  []*clusterv3.Cluster
	private   []*clusterv3.Cluster
	endpoints []*endpointv3.ClusterLoadAssignment
	omitted   []string
	problems  []string
	// res indexes clusters and endpoints (Config.Resources), made once
	// for every build that takes the half.
	resOnce sync.Once
	res     *envoycfg.Config
	resErr  error
}

// resources indexes h's clusters and endpoints once.
func (h *clusterHalf) resources() (*envoycfg.Config, error) {
	h.resOnce.Do(func() { h.res, h.resErr = envoycfg.New(nil, h.clusters, nil, h.endpoints, nil) })
	return h.res, h.resErr
}

// carrying is an Emitter's link to the builds before and after it.
type carrying struct {
	prev, next *Carry
	// sums are the cluster digests of the views being built.
	sums map[*resolve.ProxyView]deephash.Sum
}

// CarryFrom makes e's sidecar parts take their clusters from prev (nil
// for none) where sums, the views' cluster digests, match, and returns
// the Carry the build leaves: the halves it used, under the digest of
// every view that used them, and those of views it Retains, and nothing
// else, so what no view asked for is dropped. Only in-memory builds (Configs) use it; call it before
// building.
func (e *Emitter) CarryFrom(prev *Carry, sums map[*resolve.ProxyView]deephash.Sum) *Carry {
	next := &Carry{halves: map[deephash.Sum]*clusterHalf{}}
	if prev == nil {
		prev = &Carry{}
	}
	e.carry = &carrying{prev: prev, next: next, sums: sums}
	return next
}

// Taken is how many parts of the build that left c took their clusters
// from the Carry before.
func (c *Carry) Taken() int { return int(c.taken.Load()) }

// carried is the cluster half the build before left for v.
func (e *Emitter) carried(v *resolve.ProxyView) *clusterHalf {
	if e.carry == nil {
		return nil
	}
	sum, ok := e.carry.sums[v]
	if !ok {
		return nil
	}
	c := e.carry.prev
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.halves[sum]
}

// Retain leaves for the next build the clusters the build before left
// for v, a proxy this build does not build but keeps as it was.
func (e *Emitter) Retain(v *resolve.ProxyView) { e.keep(v, e.carried(v)) }

// keep leaves h for the next build under v's digest.
func (e *Emitter) keep(v *resolve.ProxyView, h *clusterHalf) {
	if e.carry == nil || h == nil {
		return
	}
	sum, ok := e.carry.sums[v]
	if !ok {
		return
	}
	c := e.carry.next
	c.mu.Lock()
	c.halves[sum] = h
	c.mu.Unlock()
}

// clusterStage builds a part's clusters into b, or takes them from the
// build before, and says what it did as a clusterHalf.
func (b *builder) clusterStage() *clusterHalf {
	if h := b.carried(b.view); h != nil {
		b.carry.next.taken.Add(1)
		b.cfg.Clusters = slices.Clone(h.clusters)
		b.cfg.Endpoints = slices.Clone(h.endpoints)
		for _, name := range h.omitted {
			b.omitted[name] = true
		}
		b.pk.problems = append(b.pk.problems, h.problems...)
		return h
	}
	b.outboundClusters()
	if b.stopped() {
		return nil
	}
	b.specialClusters()
	return &clusterHalf{
		clusters:  slices.Clone(b.cfg.Clusters),
		private:   privateClusters(b.view.Scope, b.cfg.Clusters),
		endpoints: slices.Clone(b.cfg.Endpoints),
		omitted:   slices.Sorted(maps.Keys(b.omitted)),
		problems:  slices.Clone(b.pk.problems),
	}
}
