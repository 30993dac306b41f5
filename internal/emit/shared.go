package emit

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/resolve"
)

// Sidecars that share a scope mostly share their configuration: the
// outbound clusters, listeners, routes and endpoints depend on the proxy
// only through the selector DestinationRules it matches, VirtualService
// matches on source labels, and its own IP among headless endpoints. A
// part is that outbound configuration, built, validated and rendered once
// per (scope, variant) and reused byte for byte by every proxy with it.
type part struct {
	clusters []*clusterv3.Cluster
	// private are the clusters of services not exported to every
	// namespace, in order, a subset of clusters: in the shared layout
	// they are written with each proxy, so that scopes that see the same
	// mesh-wide services plus a few of their own share one cluster file.
	private []*clusterv3.Cluster
	// half is the cluster stage's result, for the next build (Carry):
	// all of the part's clusters and endpoints, as later stages add none.
	half *clusterHalf
	// listenerHalf is the listener stage's, for the next build likewise.
	listenerHalf *stageHalf
	listeners    []*listenerv3.Listener
	routes       []*routev3.RouteConfiguration
	endpoints    []*endpointv3.ClusterLoadAssignment
	// problems are the validator findings on the part's resources.
	problems []string
	// What cross-checks need from the build.
	rdsNames map[string]bool
	refs     map[string]string
	omitted  map[string]bool
	origins  map[*routev3.Route]*resolve.Route
	// check is the cross-check of the part's resources, made once for
	// every proxy with the part (checked).
	checkOnce sync.Once
	check     *checkState
	// render holds the part's resources rendered for the output format
	// (Emitter.rendered).
	renderOnce sync.Once
	render     *rendering
	err        error
	// privateRender is the private clusters rendered as the proxy's own
	// (Options.Shared).
	privateRender *rendering
	// res are the part's resources in memory (Config.Resources), made
	// once for every proxy with the part.
	resOnce sync.Once
	res     *envoycfg.Config
	resErr  error
	// docs are the part's shared documents (Options.Shared), listed once.
	filesOnce sync.Once
	docs      []partDoc
}

// checked is the cross-check of the part's resources; b is a builder of
// the part's scope, whose services say which clusters must exist.
func (p *part) checked(b *builder) *checkState {
	p.checkOnce.Do(func() { p.check = b.checkBase(p.clusters, p.listeners, p.routes, p.refs, p.rdsNames, p.omitted) })
	return p.check
}

// scopeFacts are what decides a proxy's variant within a scope, found
// once per scope.
type scopeFacts struct {
	selectorRules  []*resolve.Rule
	labelSensitive bool
	headlessIPs    map[string]bool
}

func factsOf(m *resolve.Mesh, sc *resolve.Scope) *scopeFacts {
	f := &scopeFacts{headlessIPs: map[string]bool{}}
	for _, s := range sc.Services {
		if dec, ok := sc.DestinationRule(s.Host); ok {
			for _, r := range dec.Lookup.Rules {
				if r.Selector != nil && !slices.Contains(f.selectorRules, r) {
					f.selectorRules = append(f.selectorRules, r)
				}
			}
		}
		if s.Resolution == resolve.Passthrough {
			for _, e := range s.Endpoints {
				f.headlessIPs[e.Address] = true
			}
		}
	}
	for _, l := range sc.Listeners {
		for _, vs := range l.VirtualServices {
			for _, r := range vs.Routes {
				for _, match := range r.GetMatch() {
					f.labelSensitive = f.labelSensitive || len(match.GetSourceLabels()) > 0
				}
			}
			for _, r := range vs.Object.Spec.GetTcp() {
				for _, match := range r.GetMatch() {
					f.labelSensitive = f.labelSensitive || len(match.GetSourceLabels()) > 0
				}
			}
		}
	}
	return f
}

// variant names what, besides its scope, a proxy's outbound config
// depends on. It is a cache key only, never output.
func (f *scopeFacts) variant(p *resolve.Proxy) string {
	var b strings.Builder
	for _, r := range f.selectorRules {
		if r.Namespace() == p.Namespace && resolve.LabelsMatch(r.Selector, p.Labels) {
			fmt.Fprintf(&b, "r%p;", r)
		}
	}
	for _, ip := range p.IPs {
		if f.headlessIPs[ip] {
			b.WriteString("i" + ip + ";")
		}
	}
	// The IP family decides listener addresses, passthrough binds, DNS
	// families and vhost VIPs.
	if has4, has6 := p.Families(); has6 {
		fmt.Fprintf(&b, "f%t;", has4)
	}
	if f.labelSensitive {
		for _, k := range sortedKeys(p.Labels) {
			b.WriteString("l" + k + "=" + p.Labels[k] + ";")
		}
	}
	return b.String()
}

type partKey struct {
	scope   *resolve.Scope
	variant string
}

type partEntry struct {
	once sync.Once
	part *part
	// users is how many proxies of the current build still need it.
	users int
}

// parts caches parts while a build runs and drops each when its last
// proxy is done, so memory follows the scopes in flight, not the mesh.
type parts struct {
	mu      sync.Mutex
	facts   map[*resolve.Scope]*scopeFacts
	entries map[partKey]*partEntry
}

func newParts() *parts {
	return &parts{facts: map[*resolve.Scope]*scopeFacts{}, entries: map[partKey]*partEntry{}}
}

func (ps *parts) key(m *resolve.Mesh, v *resolve.ProxyView) partKey {
	ps.mu.Lock()
	f := ps.facts[v.Scope]
	if f == nil {
		f = factsOf(m, v.Scope)
		ps.facts[v.Scope] = f
	}
	ps.mu.Unlock()
	return partKey{v.Scope, f.variant(v.Proxy)}
}

// expect counts the proxies that will use each part.
func (ps *parts) expect(m *resolve.Mesh, views []*resolve.ProxyView) {
	for _, v := range views {
		if v.Proxy.Type != resolve.SidecarProxy {
			continue
		}
		k := ps.key(m, v)
		ps.mu.Lock()
		e := ps.entries[k]
		if e == nil {
			e = &partEntry{}
			ps.entries[k] = e
		}
		e.users++
		ps.mu.Unlock()
	}
}

// get returns the part for a proxy, building it on first use.
func (ps *parts) get(k partKey, build func() *part) *part {
	ps.mu.Lock()
	e := ps.entries[k]
	if e == nil {
		e = &partEntry{users: 1}
		ps.entries[k] = e
	}
	ps.mu.Unlock()
	e.once.Do(func() { e.part = build() })
	return e.part
}

// done releases a proxy's hold on its part.
func (ps *parts) done(k partKey) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if e := ps.entries[k]; e != nil {
		if e.users--; e.users <= 0 {
			delete(ps.entries, k)
		}
	}
}
