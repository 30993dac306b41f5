package emit

import (
	"encoding/binary"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/resolve"
)

// vhostCache holds the virtual hosts sidecar parts build, for the whole
// mesh: the scopes of namespaces without a Sidecar see the same
// services through the same VirtualServices, and differ in a few
// virtual hosts (a namespace's own services answer to short names), so
// each of thousands of virtual hosts was built again in every scope.
//
// A virtual host is a function of the resolved one (vhostKey), the
// listener port, the mesh config (one per Emitter) and the DestinationRule
// rules the proxy uses for the hosts it looks up (ruleFor). The lookups
// depend on what the routes say, so an entry records the ones its build
// made, and serves a proxy that finds the same rules for the same hosts.
type vhostCache struct {
	mu      sync.Mutex
	entries map[string][]*vhostEntry
	// served counts the virtual hosts taken from the cache.
	served atomic.Int64
}

type vhostEntry struct {
	// from is the resolved virtual host built. It keeps alive everything
	// its key names by address, so no other value can take an address
	// the key holds.
	from  *resolve.VirtualHost
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
	key := vhostKey(vh, port)
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
	e := &vhostEntry{from: vh}
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

// vhostKey spells out a resolved virtual host and the listener port,
// values as themselves and the resolved objects they point to (services,
// VirtualServices, their rules and matches, which do not change once
// resolved) by address. Every field of VirtualHost and HTTPRoute is in
// it (TestVirtualHostKeyCoversFields).
func vhostKey(vh *resolve.VirtualHost, port uint32) string {
	b := make([]byte, 0, 256)
	num := func(n uint64) { b = binary.AppendUvarint(b, n) }
	str := func(s string) {
		num(uint64(len(s)))
		b = append(b, s...)
	}
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	num(uint64(port))
	str(vh.Name)
	num(uint64(len(vh.Domains)))
	for _, d := range vh.Domains {
		str(d)
	}
	num(addr(vh.VirtualService))
	num(addr(vh.Service))
	str(vh.CatchAll)
	flag(vh.RequireTLS)
	num(uint64(len(vh.Routes)))
	for _, r := range vh.Routes {
		str(r.Name)
		num(addr(r.Match))
		num(uint64(len(r.Clusters)))
		for _, c := range r.Clusters {
			str(c.ID.String())
			flag(c.Passthrough)
			num(uint64(uint32(c.Weight)))
		}
		num(addr(r.Source))
		mirrors := make([]string, 0, len(r.Mirrors))
		for d, id := range r.Mirrors {
			mirrors = append(mirrors, strconv.FormatUint(addr(d), 16)+"="+id.String())
		}
		slices.Sort(mirrors)
		num(uint64(len(mirrors)))
		for _, m := range mirrors {
			str(m)
		}
		num(addr(r.Root))
		flag(r.TLS)
	}
	return string(b)
}

// addr is a pointer's address, 0 for nil.
func addr[T any](p *T) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }
