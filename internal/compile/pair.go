package compile

import (
	"context"
	"fmt"
	"sync"

	"github.com/meshc/meshc/internal/deephash"
	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/resolve"
)

// Pair builds the configurations of two compiles' proxies, BASE and HEAD,
// in memory and batch after batch, for comparing them (Configurer, one
// per side, sharing a Store). Once Digest has digested the pairs, what an
// edit leaves alone is not built twice: the clusters and inbound
// resources that digest alike on both sides are left out of both
// (omitted), and HEAD takes from BASE's batch the rest of what BASE built
// from inputs that digest as HEAD's do (emit.Carry), one value on both
// sides for the comparer to pass over.
type Pair struct {
	meshes     [2]*resolve.Mesh
	base, head *Configurer
	// carry is what BASE's batch leaves for HEAD's, and HEAD's own, which
	// nothing takes; both are emptied after every batch. Nil until
	// Digest.
	carry [2]*emit.Carry
}

// NewPair prepares a Pair of base and head with opts.
func NewPair(base, head *Result, opts BuildOptions) *Pair {
	store := NewStore()
	return &Pair{meshes: [2]*resolve.Mesh{base.Mesh, head.Mesh}, base: base.Configurer(opts, store), head: head.Configurer(opts, store)}
}

// Digest reports which pairs of views, olds[i] and news[i] of the two
// sides, may have different configurations: those whose views digest
// differently (resolve.Digester: a configuration is a function of what a
// view's digest covers). It keeps what it digested of the sidecars among
// them for Configs to leave out and carry. When a side cannot be
// digested, every pair may differ and nothing is left out or carried.
func (p *Pair) Digest(olds, news []*resolve.ProxyView) []bool {
	views := [2][]*resolve.ProxyView{olds, news}
	var ds [2]*resolve.Digester
	var sums [2][]deephash.Sum
	var errs [2]error
	bothSides(func(i int) {
		if ds[i], errs[i] = p.meshes[i].NewDigester(); errs[i] != nil {
			return
		}
		sums[i] = make([]deephash.Sum, len(views[i]))
		for j, v := range views[i] {
			if sums[i][j], errs[i] = ds[i].View(v); errs[i] != nil {
				return
			}
		}
	})
	differ := make([]bool, len(olds))
	for j := range differ {
		differ[j] = errs[0] != nil || errs[1] != nil || sums[0][j] != sums[1][j]
	}
	if errs[0] != nil || errs[1] != nil {
		return differ
	}
	var carried [2]map[*resolve.ProxyView]emit.Sums
	bothSides(func(i int) {
		carried[i] = map[*resolve.ProxyView]emit.Sums{}
		for j, v := range views[i] {
			if !differ[j] || v.Proxy.Type != resolve.SidecarProxy {
				continue
			}
			s, err := carrySums(ds[i], v)
			if err != nil {
				errs[i] = err
				return
			}
			carried[i][v] = s
		}
	})
	if errs[0] != nil || errs[1] != nil {
		// The pairs are told apart; only carrying is lost.
		return differ
	}
	omit := omitted(views, differ, carried)
	p.carry[0] = p.base.e.CarryFrom(omit, carried[0])
	p.carry[1] = p.head.e.CarryFrom(p.carry[0], carried[1])
	return differ
}

// omitted is what both sides may leave out (emit.Omitting) of the pairs
// of views that differ, from what they digest as: a sidecar's inbound
// resources where its Own digests match, and a part's clusters where the
// Clusters digests of every pair whose proxies may share a part on
// either side match. Parts are within a scope, so those are the pairs
// connected through the scopes of their views; a pair that is not two
// sidecars keeps its scopes' clusters.
func omitted(views [2][]*resolve.ProxyView, differ []bool, carried [2]map[*resolve.ProxyView]emit.Sums) *emit.Carry {
	var own, clusters []deephash.Sum
	// Scopes joined by pairs, as a union-find; bad marks the sets that
	// hold a pair whose clusters may differ.
	parent := map[*resolve.Scope]*resolve.Scope{}
	var find func(s *resolve.Scope) *resolve.Scope
	find = func(s *resolve.Scope) *resolve.Scope {
		p, ok := parent[s]
		if !ok || p == s {
			parent[s] = s
			return s
		}
		r := find(p)
		parent[s] = r
		return r
	}
	bad := map[*resolve.Scope]bool{}
	for j, old := range views[0] {
		if !differ[j] {
			continue
		}
		nw := views[1][j]
		a, b := find(old.Scope), find(nw.Scope)
		if a != b {
			parent[a] = b
			bad[b] = bad[b] || bad[a]
		}
		os, ok0 := carried[0][old]
		ns, ok1 := carried[1][nw]
		if !ok0 || !ok1 || os.Clusters != ns.Clusters {
			bad[b] = true
		}
		if ok0 && ok1 && os.Own == ns.Own {
			own = append(own, os.Own)
		}
	}
	for j, old := range views[0] {
		if differ[j] && !bad[find(old.Scope)] {
			clusters = append(clusters, carried[0][old].Clusters)
		}
	}
	return emit.Omitting(clusters, own)
}

// bothSides runs f for side 0 and side 1 at once.
func bothSides(f func(side int)) {
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// Configs builds a batch of pairs' configurations, olds[i] on BASE and
// news[i] on HEAD: BASE first, then HEAD, taking from BASE's batch.
func (p *Pair) Configs(ctx context.Context, olds, news []*resolve.ProxyView) (oc, nc []*envoycfg.Config, err error) {
	// Between batches the Carries are emptied: what a batch shares with
	// the next (clusters, endpoints) the Emitters keep anyway.
	defer func() {
		for _, c := range p.carry {
			if c != nil {
				c.Clear()
			}
		}
	}()
	if oc, err = p.base.Configs(ctx, olds); err != nil {
		return nil, nil, fmt.Errorf("build BASE: %w", err)
	}
	if nc, err = p.head.Configs(ctx, news); err != nil {
		return nil, nil, fmt.Errorf("build HEAD: %w", err)
	}
	return oc, nc, nil
}

// Omitted counts what the batches built so far left out on both sides
// (emit.Omitting): parts' clusters and proxies' inbound resources.
func (p *Pair) Omitted() (parts, proxies int) {
	if p.carry[0] == nil {
		return 0, 0
	}
	t := p.carry[0].Taken()
	return t.Clusters, t.Own
}
