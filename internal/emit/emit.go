// Package emit turns the resolved view of each proxy into the Envoy
// configuration istiod would send it (docs/semantics/envoy-output.md §7), with go-control-plane
// types: clusters, listeners, route configurations and endpoints, named
// and shaped as istiod names them, then validated and written.
package emit

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"sync"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshc/meshc/internal/resolve"
)

// Format is how a proxy's configuration is laid out.
type Format string

const (
	// Bootstrap is one Envoy bootstrap per proxy with static resources:
	// routes inline in their listeners, endpoints inline in clusters.
	Bootstrap Format = "bootstrap"
	// XDS is the resources as an xDS server sends them: EDS clusters,
	// listeners naming RDS routes, endpoints apart.
	XDS Format = "xds"
)

// EndpointMode says where a static config's clusters find endpoints.
type EndpointMode string

const (
	// EndpointsInline lists the endpoints the manifests give.
	EndpointsInline EndpointMode = "inline"
	// EndpointsDNS resolves each Kubernetes service by its cluster DNS
	// name, for when pod IPs are unknown at build time.
	EndpointsDNS EndpointMode = "dns"
)

// Options shape the emitted configuration.
type Options struct {
	// Format is Bootstrap unless set.
	Format Format
	// Endpoints is EndpointsInline unless set; only Bootstrap uses it.
	Endpoints EndpointMode
	// TLS says how Istio mutual TLS is written; "" means TLSIstio.
	TLS TLSMode
	// CertDir holds the certificate files of TLSFiles mode.
	CertDir string
	// Shared writes what proxies share once: each distinct set of
	// outbound clusters and listeners (with xDS, also route
	// configurations and endpoints) goes to a content-addressed file under
	// SharedDir, and a proxy's own files hold only its own resources
	// (inbound listeners and clusters, identity) and point at the shared
	// ones: filesystem config sources in a bootstrap, index entries with
	// xDS. Otherwise every proxy's files are whole.
	Shared bool
	// HeadlessCIDRChains puts the pods of a headless TCP service port on
	// one wildcard listener, a chain per pod address, instead of a
	// listener per pod: istiod's PILOT_ENABLE_HEADLESS_FILTER_CHAIN_LISTENER.
	HeadlessCIDRChains bool
	// SharedRoot prefixes the shared paths bootstraps name; "" keeps them
	// relative to the output directory, Envoy's working directory.
	SharedRoot string
	// ADS, when set, is the HOST:PORT of an xDS server (meshc serve)
	// that serves the proxies: each proxy's output is then a bootstrap
	// that fetches its whole configuration from there over ADS. The
	// configuration is built, checked and measured in the XDS format the
	// server sends; Format and Shared are ignored.
	ADS string
	// Unchecked leaves out validation and cross-checks, a third of a
	// build's time: for callers that compare configurations rather than
	// ship them. Config.Problems then holds only packing failures.
	Unchecked bool
}

// Config is the Envoy configuration of one proxy, as xDS would deliver it:
// EDS clusters with their endpoints apart, listeners naming their routes.
type Config struct {
	View      *resolve.ProxyView
	Clusters  []*clusterv3.Cluster
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
	Endpoints []*endpointv3.ClusterLoadAssignment
	// Problems are validation failures and parts meshc could not build;
	// each becomes an MC8002 diagnostic.
	Problems []string

	// part is the sidecar's shared outbound part, whose resources lead
	// the lists above; key finds it in the cache. ownClusters and
	// ownListeners are the resources that follow them, the proxy's own.
	part         *part
	key          partKey
	ownClusters  []*clusterv3.Cluster
	ownListeners []*listenerv3.Listener
	// origins are the VirtualService rules of the routes in Routes.
	origins map[*routev3.Route]*resolve.Route
}

// Emitter builds proxy configs for one mesh. It holds what all proxies
// share, computed once, and is safe for concurrent Build calls.
type Emitter struct {
	shared *shared
	opts   Options
	parts  *parts
	// bufs are document buffers, reused from proxy to proxy.
	bufs sync.Pool
	// scratch are buffers resources are indented in before being copied
	// out at their size.
	scratch sync.Pool
	// clusterCache holds sidecar clusters by clusterKey, and frags the
	// rendered form of cached resources, for the whole mesh: a service's
	// clusters are the same in every scope that sees it through the same
	// DestinationRule.
	clusterCache sync.Map
	frags        sync.Map
	// byContent are the rendered fragments by fragmentKey.
	byContent sync.Map
	// vhosts are the virtual hosts sidecar parts built.
	vhosts *vhostCache
	// store, when set, interns the resources parts and cluster sets
	// build (Share).
	store *Store
	// carry links an in-memory build to the ones before and after it
	// (CarryFrom); nil otherwise.
	carry *carrying
	// sharedDocs are the shared documents made so far, by path.
	sharedDocs sync.Map
	// paths are where the proxies of the current build go.
	paths layout
	// done is closed when the current build stops (Write's context):
	// one proxy of a large mesh takes seconds, so building and rendering
	// look at it between resources. Nil outside Write: never closed.
	done <-chan struct{}
}

// errStopped ends the proxies in flight when a build stops; the build
// reports its context's cause instead.
var errStopped = errors.New("build stopped")

// stopped reports whether the current build has stopped.
func (e *Emitter) stopped() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// shared is what every proxy's build reads: mesh-wide facts computed once.
type shared struct {
	mesh *resolve.Mesh
}

// New prepares an Emitter for a resolved mesh.
func New(m *resolve.Mesh, opts Options) *Emitter {
	opts.TLS = cmp.Or(opts.TLS, TLSIstio)
	opts.Format = cmp.Or(opts.Format, Bootstrap)
	opts.Endpoints = cmp.Or(opts.Endpoints, EndpointsInline)
	if opts.ADS != "" {
		opts.Format, opts.Shared = XDS, false
	}
	sh := &shared{mesh: m}
	return &Emitter{shared: sh, opts: opts, parts: newParts(), vhosts: &vhostCache{entries: map[vhostKey][]*vhostEntry{}}}
}

// Share makes e take resources equal to those of s from s, and add its
// own: Emitters sharing a Store (a diff's two sides, a server's
// successive compiles) share equal resources as values. Call it before
// building.
func (e *Emitter) Share(s *Store) { e.store = s }

// builder builds one proxy's config.
type builder struct {
	*Emitter
	mesh *resolve.Mesh
	view *resolve.ProxyView
	pk   packer
	cfg  *Config
	// rdsNames are the route configurations listeners refer to.
	rdsNames map[string]bool
	// routeCache holds route configurations by name, built on demand.
	routeCache map[string]*routev3.RouteConfiguration
	outRoutes  map[string]*routev3.RouteConfiguration
	// refs are the clusters tcp_proxy filters send to, with where.
	refs map[string]string
	// hcmCache holds outbound connection managers by stat prefix and route;
	// hcmRoutes the route configuration each of them names.
	hcmCache  map[string]*listenerv3.Filter
	hcmRoutes map[*listenerv3.Filter]string
	// omitted are clusters istiod leaves out on purpose.
	omitted map[string]bool
	// origins are the VirtualService rules routes were translated from.
	origins map[*routev3.Route]*resolve.Route
	// reads, while set, records the rules ruleFor finds (vhostCache).
	reads *[]ruleRead
	// merged is a router's Gateway servers once merged, nil until
	// mergedGateway is first asked.
	merged *resolve.MergedGateway
}

func (e *Emitter) newBuilder(v *resolve.ProxyView) *builder {
	return &builder{Emitter: e, mesh: e.shared.mesh, view: v, cfg: &Config{View: v},
		rdsNames: map[string]bool{}, refs: map[string]string{}, omitted: map[string]bool{}, origins: map[*routev3.Route]*resolve.Route{},
		hcmCache: map[string]*listenerv3.Filter{}, hcmRoutes: map[*listenerv3.Filter]string{}, routeCache: map[string]*routev3.RouteConfiguration{}}
}

// Build compiles the config of one proxy. A sidecar's outbound part comes
// from the part it shares with the other proxies of its scope.
func (e *Emitter) Build(v *resolve.ProxyView) *Config {
	cfg := e.build(v)
	if p := cfg.part; p != nil {
		cfg.Clusters, cfg.Listeners = concat(p.clusters, cfg.ownClusters), concat(p.listeners, cfg.ownListeners)
	}
	return cfg
}

// build is Build but for a sidecar's Clusters and Listeners, left empty:
// its part's resources and its own are what readers in memory want, and
// a sidecar's part is thousands of clusters, which copying into every
// proxy's lists made a tenth of what a diff allocates.
func (e *Emitter) build(v *resolve.ProxyView) *Config {
	if v.Proxy.Type == resolve.RouterProxy {
		b := e.newBuilder(v)
		b.outboundClusters()
		b.specialClusters()
		b.sniDnatClusters()
		b.gatewayListeners()
		b.addRoutes()
		b.cfg.origins = b.origins
		b.cfg.Problems = append(append(b.pk.problems, e.check(pgv, b.cfg)...), e.check(b.crossCheck, b.cfg)...)
		return b.cfg
	}
	k := e.parts.key(e.shared.mesh, v)
	p := e.parts.get(k, func() *part { return e.buildPart(v) })
	e.keepPart(v, p)
	b := e.newBuilder(v)
	b.ownStage()
	own := e.check(pgv, b.cfg)
	cfg := &Config{
		View:         v,
		Routes:       p.routes,
		Endpoints:    p.endpoints,
		part:         p,
		key:          k,
		ownClusters:  b.cfg.Clusters,
		ownListeners: b.cfg.Listeners,
		origins:      p.origins,
	}
	cross := e.check(func(*Config) []string {
		return b.checkOwn(p.checked(b), b.cfg.Clusters, b.cfg.Listeners, b.refs, b.rdsNames, b.omitted)
	}, cfg)
	cfg.Problems = slices.Concat(p.problems, b.pk.problems, own, cross)
	return cfg
}

// check runs a validation unless Options.Unchecked.
func (e *Emitter) check(validate func(*Config) []string, cfg *Config) []string {
	if e.opts.Unchecked {
		return nil
	}
	return validate(cfg)
}

func concat[T any](a, b []T) []T {
	return append(a[:len(a):len(a)], b...)
}

func (e *Emitter) buildPart(v *resolve.ProxyView) *part {
	b := e.newBuilder(v)
	half := b.clusterStage()
	if e.stopped() {
		return &part{err: errStopped}
	}
	listeners := b.listenerStage()
	if e.stopped() {
		return &part{err: errStopped}
	}
	b.addRoutes()
	if e.stopped() {
		return &part{err: errStopped}
	}
	p := &part{
		clusters: half.clusters, private: half.private, half: half, listenerHalf: listeners,
		listeners: b.cfg.Listeners, routes: b.cfg.Routes, endpoints: half.endpoints,
		problems: append(b.pk.problems, e.check(pgv, b.cfg)...),
		rdsNames: b.rdsNames, refs: b.refs, omitted: b.omitted, origins: b.origins,
	}
	return p
}

// internPart puts a part's listeners in the Store; its clusters,
// endpoints and virtual hosts are interned as they are cached.
func (b *builder) internPart() {
	if b.store == nil {
		return
	}
	for i, l := range b.cfg.Listeners {
		b.cfg.Listeners[i] = intern(b.store, l)
	}
}

// privateClusters are the clusters of cs whose service the scope holds
// and not every namespace may see, in order.
func privateClusters(sc *resolve.Scope, cs []*clusterv3.Cluster) []*clusterv3.Cluster {
	var out []*clusterv3.Cluster
	for _, c := range cs {
		id, ok := resolve.ParseClusterID(c.GetName())
		if !ok {
			continue
		}
		if s, ok := sc.Service(id.Host); ok && !s.ExportedEverywhere() {
			out = append(out, c)
		}
	}
	return out
}

// rendered renders a part's resources for the output format once, when
// the first proxy with it is written; an in-memory build never renders.
func (e *Emitter) rendered(p *part) (*rendering, error) {
	p.renderOnce.Do(func() {
		p.render, p.err = e.render(p.clusters, p.listeners, p.routes, p.endpoints, e.opts.Format == XDS || e.opts.Shared)
		if p.err == nil && e.opts.Shared {
			p.privateRender, p.err = e.render(p.private, nil, nil, nil, e.opts.Format == XDS)
		}
	})
	return p.render, p.err
}

// addRoutes adds the route configurations the listeners name.
func (b *builder) addRoutes() {
	for _, name := range sortedKeys(b.rdsNames) {
		b.cfg.Routes = append(b.cfg.Routes, b.route(name))
	}
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
