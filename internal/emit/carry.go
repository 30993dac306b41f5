package emit

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/meshc/meshc/internal/deephash"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/resolve"
)

// Carry is what one in-memory build leaves for the next (a server's
// successive compiles): each sidecar part's outbound clusters and
// outbound listeners, and each sidecar's own inbound resources, each
// under the digest of what it is built from (resolve.Digester's
// Clusters, Listeners and Own). An edit to a VirtualService's HTTP routes
// every namespace sees changes every scope's route configurations but
// none of those, so the next build takes them as they were and builds
// only the routes again.
type Carry struct {
	mu sync.Mutex
	// halves are *clusterHalf for carriedClusters, *stageHalf otherwise.
	halves map[carryKey]any
	// taken counts, by kind, what of the build that left this Carry was
	// taken from the Carry before.
	taken [carriedKinds]atomic.Int64
}

// What a Carry holds.
const (
	carriedClusters = iota
	carriedListeners
	carriedOwn
	carriedKinds
)

type carryKey struct {
	kind int
	sum  deephash.Sum
}

// Sums are the digests a sidecar's carried resources are filed under:
// resolve.Digester's Clusters, Listeners and Own of its view.
type Sums struct{ Clusters, Listeners, Own deephash.Sum }

func (s Sums) key(kind int) carryKey {
	switch kind {
	case carriedClusters:
		return carryKey{kind, s.Clusters}
	case carriedListeners:
		return carryKey{kind, s.Listeners}
	}
	return carryKey{kind, s.Own}
}

// Taken says how much of a build was taken from the build before: parts
// whose clusters, parts whose outbound listeners, and proxies whose own
// resources.
type Taken struct{ Clusters, Listeners, Own int }

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

// stageHalf is what a later stage of a build (a part's outbound
// listeners, a proxy's own resources) added to its builder, which starts
// it with no references or route names of its own.
type stageHalf struct {
	clusters  []*clusterv3.Cluster
	listeners []*listenerv3.Listener
	refs      map[string]string
	rdsNames  map[string]bool
	problems  []string
}

// stageStart is where a stage began in its builder's lists.
type stageStart struct{ clusters, listeners, problems int }

func (b *builder) startStage() stageStart {
	return stageStart{len(b.cfg.Clusters), len(b.cfg.Listeners), len(b.pk.problems)}
}

// record is what the stage begun at s added to b.
func (b *builder) record(s stageStart) *stageHalf {
	return &stageHalf{
		clusters:  slices.Clone(b.cfg.Clusters[s.clusters:]),
		listeners: slices.Clone(b.cfg.Listeners[s.listeners:]),
		refs:      maps.Clone(b.refs),
		rdsNames:  maps.Clone(b.rdsNames),
		problems:  slices.Clone(b.pk.problems[s.problems:]),
	}
}

// replay adds to b what h recorded, as building the stage again would.
func (b *builder) replay(h *stageHalf) {
	b.cfg.Clusters = append(b.cfg.Clusters, h.clusters...)
	b.cfg.Listeners = append(b.cfg.Listeners, h.listeners...)
	maps.Copy(b.refs, h.refs)
	maps.Copy(b.rdsNames, h.rdsNames)
	b.pk.problems = append(b.pk.problems, h.problems...)
}

// carrying is an Emitter's link to the builds before and after it.
type carrying struct {
	prev, next *Carry
	// sums are the digests of the views being built.
	sums map[*resolve.ProxyView]Sums
}

// CarryFrom makes e's sidecars take from prev (nil for none) what was
// built from inputs that digest as theirs, sums, and returns the Carry
// the build leaves: what it used, under the digests of every view that
// used it, and what views it Retains used, and nothing else, so what no
// view asked for is dropped. Only in-memory builds (Configs) use it;
// call it before building.
func (e *Emitter) CarryFrom(prev *Carry, sums map[*resolve.ProxyView]Sums) *Carry {
	next := &Carry{halves: map[carryKey]any{}}
	if prev == nil {
		prev = &Carry{}
	}
	e.carry = &carrying{prev: prev, next: next, sums: sums}
	return next
}

// Omitting is a Carry for builds to take from (CarryFrom's prev) that
// holds nothing under each of clusters and own: a build taking from it
// leaves out a sidecar part's outbound clusters and endpoints where the
// part is built from a view whose Clusters digest is among clusters, and
// a sidecar's inbound resources where its Own digest is among own, with
// the findings building them would make (Config.Problems). It is for
// comparing two builds in memory (compile.Pair) where both sides' views
// digest alike, so that what the two would build alike is left out of
// both instead of built twice to be found equal. A part's clusters are
// built from whichever of its proxies comes first: every proxy of a part
// must be among clusters or none. Outbound listeners cannot be left out:
// the route configurations are the ones they name.
func Omitting(clusters, own []deephash.Sum) *Carry {
	c := &Carry{halves: make(map[carryKey]any, len(clusters)+len(own))}
	for _, s := range clusters {
		c.halves[carryKey{carriedClusters, s}] = &clusterHalf{}
	}
	for _, s := range own {
		c.halves[carryKey{carriedOwn, s}] = &stageHalf{}
	}
	return c
}

// Clear drops what c holds, keeping its counts: for a caller whose
// builds take, batch by batch, from the batch another Emitter just built
// (compile.Pair), which would otherwise hold every batch's resources.
// It must not run while a build files into or takes from c.
func (c *Carry) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.halves)
}

// Taken is how much of the build that left c was taken from the Carry
// before.
func (c *Carry) Taken() Taken {
	return Taken{int(c.taken[carriedClusters].Load()), int(c.taken[carriedListeners].Load()), int(c.taken[carriedOwn].Load())}
}

// lookup is what the build before left for v of one kind; nil outside a
// carrying build, for a view without digests (a router) or for none.
func (e *Emitter) lookup(v *resolve.ProxyView, kind int) any {
	if e.carry == nil {
		return nil
	}
	s, ok := e.carry.sums[v]
	if !ok {
		return nil
	}
	c := e.carry.prev
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.halves[s.key(kind)]
}

// carried is lookup, counting what it finds as taken.
func (e *Emitter) carried(v *resolve.ProxyView, kind int) any {
	h := e.lookup(v, kind)
	if h != nil {
		e.carry.next.taken[kind].Add(1)
	}
	return h
}

// file leaves h of one kind for the next build under v's digest.
func (e *Emitter) file(v *resolve.ProxyView, kind int, h any) {
	if e.carry == nil || h == nil {
		return
	}
	s, ok := e.carry.sums[v]
	if !ok {
		return
	}
	c := e.carry.next
	c.mu.Lock()
	defer c.mu.Unlock()
	c.halves[s.key(kind)] = h
}

// Retain leaves for the next build what the build before left for v, a
// proxy this build does not build but keeps as it was.
func (e *Emitter) Retain(v *resolve.ProxyView) {
	for kind := range carriedKinds {
		e.file(v, kind, e.lookup(v, kind))
	}
}

// keepPart leaves p's clusters and listeners for the next build under
// v's digests; the part's key says v would build them alike.
func (e *Emitter) keepPart(v *resolve.ProxyView, p *part) {
	if p.half != nil {
		e.file(v, carriedClusters, p.half)
	}
	if p.listenerHalf != nil {
		e.file(v, carriedListeners, p.listenerHalf)
	}
}

// clusterStage builds a part's clusters into b, or takes them from the
// build before, and says what it did as a clusterHalf.
func (b *builder) clusterStage() *clusterHalf {
	if h, ok := b.carried(b.view, carriedClusters).(*clusterHalf); ok {
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

// listenerStage builds a part's outbound listeners into b, interned, or
// takes them from the build before, and says what it did; nil when the
// build stopped, carries nothing, or the listeners hold their route
// configurations inline (Bootstrap), which are built from more than
// Digester.Listeners covers.
func (b *builder) listenerStage() *stageHalf {
	carry := b.carry != nil && b.opts.Format != Bootstrap
	if carry {
		if h, ok := b.carried(b.view, carriedListeners).(*stageHalf); ok {
			b.replay(h)
			return h
		}
	}
	start := b.startStage()
	b.outboundListeners()
	if b.stopped() {
		return nil
	}
	b.cfg.Listeners = append(b.cfg.Listeners, b.virtualOutbound())
	b.internPart()
	if !carry {
		return nil
	}
	return b.record(start)
}

// ownStage builds a sidecar's own resources, its inbound clusters and
// listeners, into b, or takes them from the build before, and files them
// for the next build.
func (b *builder) ownStage() {
	if h, ok := b.carried(b.view, carriedOwn).(*stageHalf); ok {
		b.replay(h)
		b.file(b.view, carriedOwn, h)
		return
	}
	start := b.startStage()
	b.inboundClusters()
	b.cfg.Listeners = append(b.cfg.Listeners, b.inboundListeners()...)
	if b.carry != nil {
		b.file(b.view, carriedOwn, b.record(start))
	}
}
