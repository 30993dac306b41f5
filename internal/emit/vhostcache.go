package emit

import (
	"slices"
	"sync"
	"sync/atomic"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/resolve"
)

// vhostCache holds the virtual hosts sidecar parts build, for the whole
// mesh: scopes that see a service through the same VirtualService get the
// same resolved virtual host (resolve builds each once for them all), and
// without the cache each of thousands would be built again in every
// scope.
//
// A virtual host is a function of the resolved one, which does not change
// once resolved (found by address), the listener port, the mesh config
// (one per Emitter) and the DestinationRule rules the proxy uses for the
// hosts it looks up (ruleFor). The lookups depend on what the routes say,
// so an entry records the ones its build made, and serves a proxy that
// finds the same rules for the same hosts.
type vhostCache struct {
	mu      sync.Mutex
	entries map[vhostKey][]*vhostEntry
	// served counts the virtual hosts taken from the cache.
	served atomic.Int64
}

// vhostKey is a resolved virtual host on a listener port.
type vhostKey struct {
	vh   *resolve.VirtualHost
	port uint32
}

type vhostEntry struct {
	rules []ruleRead
	out   *routev3.VirtualHost
	// origins are the routes of out translated from VirtualService
	// rules, by index: from.Routes[i].Source.
	origins  []int
	problems []string
}

// ruleRead is a rule lookup a build made: the rule for host.
type ruleRead struct {
	host host.Name
	rule *resolve.Rule
}

// cachedVirtualHost is virtualHost, taken from the mesh's cache for a
// sidecar. A gateway's virtual hosts share routes between them and are
// built as they are.
func (b *builder) cachedVirtualHost(vh *resolve.VirtualHost, port uint32, shared map[*resolve.HTTPRoute]*routev3.Route) *routev3.VirtualHost {
	if b.vhosts == nil || !b.sidecar() || slices.ContainsFunc(vh.Routes, func(r *resolve.HTTPRoute) bool { return r.Root != nil }) {
		return b.virtualHost(vh, port, shared)
	}
	key := vhostKey{vh, port}
	b.vhosts.mu.Lock()
	candidates := b.vhosts.entries[key]
	b.vhosts.mu.Unlock()
	for _, e := range candidates {
		if b.sameRules(e.rules) {
			for _, i := range e.origins {
				b.origins[e.out.Routes[i]] = vh.Routes[i].Source
			}
			b.pk.problems = append(b.pk.problems, e.problems...)
			b.vhosts.served.Add(1)
			return e.out
		}
	}
	e := &vhostEntry{}
	np := len(b.pk.problems)
	b.reads = &e.rules
	built := b.virtualHost(vh, port, shared)
	b.reads = nil
	e.problems = slices.Clone(b.pk.problems[np:])
	e.out = intern(b.store, built)
	for i, r := range built.Routes {
		if src, ok := b.origins[r]; ok {
			delete(b.origins, r)
			b.origins[e.out.Routes[i]] = src
			e.origins = append(e.origins, i)
		}
	}
	b.vhosts.mu.Lock()
	b.vhosts.entries[key] = append(b.vhosts.entries[key], e)
	b.vhosts.mu.Unlock()
	return e.out
}

// sameRules reports whether the proxy finds the rules reads found.
func (b *builder) sameRules(reads []ruleRead) bool {
	for _, r := range reads {
		if b.ruleFor(r.host) != r.rule {
			return false
		}
	}
	return true
}
