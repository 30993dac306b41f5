package resolve

import (
	"slices"
	"sync"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
)

// routeMemo holds the pieces of sidecars' outbound route configurations
// for one mesh, each built once for every scope that sees it alike: the
// scopes of namespaces without a Sidecar see the same services through
// the same VirtualServices, and their route configurations differ in a
// few virtual hosts (a namespace's own services answer to short names);
// without it each VirtualService would be translated again in every
// scope.
//
// A piece is a function of the inputs its key names, and of the mesh
// (its config and registry), which does not change once resolved:
//   - a VirtualService's HTTP routes on a port (translation): of the
//     sidecar and its scope the translation reads only whether each
//     match takes the sidecar's traffic (its labels and namespace
//     against sourceLabels and sourceNamespace) and which of the scope's
//     services each destination host names. An entry records those
//     reads and serves a scope whose reads give the same answers, as
//     translating again would read the same and build the same;
//   - a virtual host (vhostInputs): the translation or the service's
//     default route, the service or plain host it is named after, the
//     port, and of the sidecar what its names depend on (client);
//   - the catch-all: what unmatched traffic meets (catchAllKey).
//
// What a whole route configuration adds per scope (which services and
// VirtualServices the scope's listener has on the port, which
// VirtualService owns a service, dropping taken domains, order) is
// worked out for every scope, from shared pieces; a piece is never
// changed once made (dedupDomains copies). TestRouteMemoIsSound builds
// every sidecar's routes with and without the memo.
//
// A nil *routeMemo builds every piece afresh.
type routeMemo struct {
	mu           sync.Mutex
	translations map[translationKey][]*translation
	vhosts       map[vhostInputs]*VirtualHost
	catchAlls    map[catchAllKey]*VirtualHost
}

func newRouteMemo() *routeMemo {
	return &routeMemo{translations: map[translationKey][]*translation{}, vhosts: map[vhostInputs]*VirtualHost{}, catchAlls: map[catchAllKey]*VirtualHost{}}
}

type translationKey struct {
	vs   *VirtualService
	port uint32
}

// translation is a VirtualService's HTTP routes translated for sidecars on
// one port, with what the translation read: the matches it asked about
// and their answers, and the hosts it looked up and the services found.
type translation struct {
	vs      *VirtualService
	routes  []*HTTPRoute
	matches []matchRead
	hosts   []hostRead
}

type matchRead struct {
	match   *networking.HTTPMatchRequest
	applies bool
}

type hostRead struct {
	host    host.Name
	service *Service
}

// sameReads reports whether sidecar src, idx indexing its scope's
// services with the port, reads what t read.
func (t *translation) sameReads(src RouteSource, idx hostIndex) bool {
	for _, r := range t.matches {
		if HTTPMatchApplies(r.match, src, t.vs.Namespace()) != r.applies {
			return false
		}
	}
	for _, r := range t.hosts {
		if idx.byHost[r.host] != r.service {
			return false
		}
	}
	return true
}

// translation is vs's HTTP routes for sidecar src (SidecarSource), idx
// indexing its scope's services with src's port (translateRoutes).
func (m *Mesh) translation(vs *VirtualService, src RouteSource, idx hostIndex) *translation {
	memo := m.routes
	if memo == nil {
		return m.translate(vs, src, idx)
	}
	key := translationKey{vs, src.Port}
	memo.mu.Lock()
	seen := memo.translations[key]
	memo.mu.Unlock()
	for _, t := range seen {
		if t.sameReads(src, idx) {
			return t
		}
	}
	t := m.translate(vs, src, idx)
	memo.mu.Lock()
	defer memo.mu.Unlock()
	// Another scope may have made an equal one meanwhile: keep one.
	for _, o := range memo.translations[key][len(seen):] {
		if o.sameReads(src, idx) {
			return o
		}
	}
	memo.translations[key] = append(memo.translations[key], t)
	return t
}

// translate translates vs for sidecar src, recording what it reads.
func (m *Mesh) translate(vs *VirtualService, src RouteSource, idx hostIndex) *translation {
	t := &translation{vs: vs}
	t.routes = m.translateRoutes(vs, src.Port,
		func(match *networking.HTTPMatchRequest) bool {
			ok := HTTPMatchApplies(match, src, vs.Namespace())
			t.matches = append(t.matches, matchRead{match, ok})
			return ok
		},
		func(h host.Name) *Service {
			s := idx.byHost[h]
			t.hosts = append(t.hosts, hostRead{h, s})
			return s
		})
	return t
}

// client is what of a sidecar the names of its virtual hosts depend on:
// its namespace, which its DNS search path starts with, and its IP
// families, which pick the VIPs.
type client struct {
	ns         string
	has4, has6 bool
}

func clientOf(p *Proxy) client {
	has4, has6 := p.Families()
	return client{p.Namespace, has4, has6}
}

// namesClient is c as far as the names of s depend on it: a namespace
// other than that of the service's or an alias's Kubernetes hostname
// makes the same short names as any other (shortForms), so it is dropped.
func (m *Mesh) namesClient(s *Service, c client) client {
	if !m.namesIn(s, c.ns) {
		c.ns = ""
	}
	return c
}

// namesIn says whether s or one of its aliases has a Kubernetes hostname
// in namespace ns.
func (m *Mesh) namesIn(s *Service, ns string) bool {
	in := func(h host.Name) bool {
		_, hostNs, ok := kubeHost(string(h), m.Config.DomainSuffix)
		return ok && hostNs == ns
	}
	return in(s.Host) || slices.ContainsFunc(s.Aliases, func(a ServiceAlias) bool { return in(a.Host) })
}

// vhostInputs are what a sidecar's virtual host is made of: the routes
// (a translation, or nil for the service's default route), what it is
// named after (a service, or a plain host of the translation's
// VirtualService), the port, and of the client what the service's names
// depend on (namesClient).
type vhostInputs struct {
	routes  *translation
	service *Service
	plain   host.Name
	port    uint32
	client  client
}

// virtualHost is the virtual host in makes for client c, shared by every
// scope that makes the same inputs. It is built for c itself, so that a
// key missing some of c is caught when built without the memo.
func (m *Mesh) virtualHost(in vhostInputs, c client) *VirtualHost {
	if in.service != nil {
		in.client = m.namesClient(in.service, c)
	}
	return memoized(m.routes, func(r *routeMemo) map[vhostInputs]*VirtualHost { return r.vhosts }, in, func() *VirtualHost {
		s := in.service
		switch {
		case s == nil:
			return &VirtualHost{Name: HostPort(string(in.plain), in.port), Domains: []string{string(in.plain)}, Routes: in.routes.routes, VirtualService: in.routes.vs}
		case in.routes == nil:
			return &VirtualHost{Name: HostPort(string(s.Host), in.port), Domains: m.ownNames(s, m.serviceDomains(s, c)), Service: s,
				Routes: []*HTTPRoute{{Name: "default", Clusters: []WeightedCluster{{ID: ClusterID{Port: in.port, Host: s.Host}, Weight: 100}}}}}
		}
		return &VirtualHost{Name: HostPort(string(s.Host), in.port), Domains: m.ownNames(s, m.serviceDomains(s, c)), Routes: in.routes.routes,
			VirtualService: in.routes.vs, Service: s}
	})
}

// catchAllKey is what a scope's catch-all virtual host is made of: whether
// unmatched traffic is blocked, else where it goes.
type catchAllKey struct {
	blocked bool
	to      WeightedCluster
}

func (r *routeMemo) catchAll(k catchAllKey, build func() *VirtualHost) *VirtualHost {
	return memoized(r, func(r *routeMemo) map[catchAllKey]*VirtualHost { return r.catchAlls }, k, build)
}

// memoized is the value of k in the memo's table, built on first use;
// without a memo, built afresh.
func memoized[K comparable, V any](r *routeMemo, table func(*routeMemo) map[K]V, k K, build func() V) V {
	if r == nil {
		return build()
	}
	r.mu.Lock()
	v, ok := table(r)[k]
	r.mu.Unlock()
	if ok {
		return v
	}
	v = build()
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := table(r)[k]; ok {
		return o
	}
	table(r)[k] = v
	return v
}
