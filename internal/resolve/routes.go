package resolve

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	meshv1 "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/protocol"
)

// RouteConfig is a sidecar's outbound HTTP route configuration for one
// port, as istiod builds it (docs/semantics/virtual-services.md §6.4, docs/semantics/envoy-output.md §7.5): virtual hosts from
// VirtualServices, default ones for the other services, then a catch-all.
type RouteConfig struct {
	Name         string
	Port         uint32
	VirtualHosts []*VirtualHost
}

// VirtualHost is one virtual host of a route configuration.
type VirtualHost struct {
	Name    string
	Domains []string
	Routes  []*HTTPRoute
	// VirtualService wrote the routes; nil for a service's default route
	// and for the catch-all.
	VirtualService *VirtualService
	// Service is the service the vhost is named after, if any.
	Service *Service
	// CatchAll is "allow_any" or "block_all" for a sidecar's last vhost,
	// BlackholeCatchAll for a gateway's only one when nothing routes.
	CatchAll string
	// RequireTLS says an httpsRedirect gateway server sends the vhost's
	// requests to HTTPS.
	RequireTLS bool
}

// HTTPRoute is one route of a virtual host.
type HTTPRoute struct {
	Name string
	// Match is the VirtualService match; nil for a default route or a
	// route without matches.
	Match *networking.HTTPMatchRequest
	// Clusters are the weighted destinations; one means a plain cluster.
	Clusters []WeightedCluster
	// Source is the VirtualService route, nil for a default route.
	Source *Route
	// Mirrors are the clusters of the route's mirror destinations (mirror
	// and mirrors), found as its destinations are.
	Mirrors map[*networking.Destination]ClusterID
	// Root is the VirtualService (a delegate's root) whose route this is,
	// on a gateway's virtual host, which merges several; nil on a
	// sidecar's, whose VirtualHost names it.
	Root *VirtualService
	// TLS says the gateway server the route was translated for has TLS
	// settings, which its redirects follow.
	TLS bool
}

// WeightedCluster is a destination cluster and its weight: a service's
// cluster, or with Passthrough (an allow_any route without an egress
// proxy) the cluster that forwards to the original destination.
type WeightedCluster struct {
	ID          ClusterID
	Passthrough bool
	Weight      int32
}

// PassthroughCluster is the name of the cluster that forwards to the
// original destination.
const PassthroughCluster = "PassthroughCluster"

// Name is the cluster as Envoy's configuration names it.
func (w WeightedCluster) Name() string {
	if w.Passthrough {
		return PassthroughCluster
	}
	return w.ID.String()
}

// ClusterName is istiod's outbound cluster name.
func ClusterName(port uint32, subset string, h host.Name) string {
	return ClusterID{Port: port, Subset: subset, Host: h}.String()
}

// OutboundRoutes builds the outbound route configurations of a sidecar,
// one per HTTP or sniffed service port, sorted by port.
func (m *Mesh) OutboundRoutes(v *ProxyView) []*RouteConfig {
	sc := v.Scope
	var portList []uint32
	for _, l := range sc.Listeners {
		for _, s := range l.Services {
			for _, p := range s.Ports {
				if p.Protocol.IsHTTPOrSniffed() && !slices.Contains(portList, p.Number) {
					portList = append(portList, p.Number)
				}
			}
		}
	}
	slices.Sort(portList)
	var out []*RouteConfig
	for _, port := range portList {
		out = append(out, m.routeConfig(v, port))
	}
	return out
}

// IsPortless reports whether an egress listener serves every port of its
// services through one route configuration: a unix-socket bind without a
// port, or an HTTP_PROXY port (docs/semantics/envoy-output.md §7.5, listener port 0).
func (l *EgressListener) IsPortless() bool {
	return l.unixSocket() || protocol.Parse(l.Port.GetProtocol()) == protocol.HTTPProxy
}

func (l *EgressListener) unixSocket() bool {
	return strings.HasPrefix(l.Bind, "unix://") && l.Port.GetNumber() == 0
}

// RouteName is the route configuration a portless egress listener names:
// its bind for a unix socket, else its port.
func (l *EgressListener) RouteName() string {
	if l.unixSocket() {
		return l.Bind
	}
	return strconv.FormatUint(uint64(l.Port.GetNumber()), 10)
}

// EgressRoutes builds the route configurations of a sidecar's portless
// egress listeners (docs/semantics/envoy-output.md §7.5, listener port 0): every HTTP port of the
// listener's services in one configuration, each service port a vhost
// whose domains carry the port ("host:port", bare too on port 80). A
// VirtualService's routes, translated for port 0, serve every HTTP port of
// the services it owns; its plain hosts only port 80.
func (m *Mesh) EgressRoutes(v *ProxyView) []*RouteConfig {
	var out []*RouteConfig
	for _, l := range v.Scope.Listeners {
		if !l.IsPortless() {
			continue
		}
		services := l.Services
		idx := indexHosts(services)
		var vss []*VirtualService
		for _, vs := range l.VirtualServices {
			if vsServesPort(vs, idx) {
				vss = append(vss, vs)
			}
		}
		chosen := chosenVirtualServices(vss, services)
		c, src := clientOf(v.Proxy), SidecarSource(v.Proxy, 0)
		owned := map[host.Name]bool{}
		var vhosts []*VirtualHost
		for _, vs := range vss {
			t := m.translation(vs, src, idx)
			routes := t.routes
			if len(routes) == 0 {
				continue
			}
			plain, mine := vsHosts(vs, services, idx, chosen)
			if !gatewayRouteApplies(vs, mine, v.Scope.Namespace) {
				continue
			}
			has80 := false
			for _, s := range mine {
				owned[s.Host] = true
				for _, p := range s.Ports {
					if p.Protocol.IsHTTPOrSniffed() {
						has80 = has80 || p.Number == 80
						vhosts = append(vhosts, &VirtualHost{Name: HostPort(string(s.Host), p.Number), Domains: m.ownNames(s, m.portDomains(s, c, p.Number)),
							Routes: routes, VirtualService: vs, Service: s})
					}
				}
			}
			if has80 {
				for _, h := range plain {
					vhosts = append(vhosts, &VirtualHost{Name: HostPort(string(h), 80), Domains: []string{string(h)}, Routes: routes, VirtualService: vs})
				}
			}
		}
		for _, s := range services {
			if owned[s.Host] || s.Resolution == Alias {
				continue
			}
			for _, p := range s.Ports {
				if p.Protocol.IsHTTPOrSniffed() {
					vhosts = append(vhosts, &VirtualHost{Name: HostPort(string(s.Host), p.Number), Domains: m.ownNames(s, m.portDomains(s, c, p.Number)), Service: s,
						Routes: []*HTTPRoute{{Name: "default", Clusters: []WeightedCluster{{ID: ClusterID{Port: p.Number, Host: s.Host}, Weight: 100}}}}})
				}
			}
		}
		vhosts = dedupDomains(vhosts)
		slices.SortStableFunc(vhosts, func(a, b *VirtualHost) int { return cmp.Compare(a.Name, b.Name) })
		vhosts = append(vhosts, m.catchAll(v.Scope))
		out = append(out, &RouteConfig{Name: l.RouteName(), VirtualHosts: vhosts})
	}
	return out
}

// HostPort is "host:port", as istiod names virtual hosts.
func HostPort(h string, port uint32) string { return h + ":" + strconv.FormatUint(uint64(port), 10) }

// portDomains are a service's domains on a portless listener: each with
// the port, and on port 80 bare as well.
func (m *Mesh) portDomains(s *Service, c client, port uint32) []string {
	suffix := ":" + strconv.FormatUint(uint64(port), 10)
	var out []string
	for _, d := range m.serviceDomains(s, c) {
		if port == 80 {
			out = append(out, d)
		}
		out = append(out, d+suffix)
	}
	return out
}

// rdsListener is the egress listener a port's route configuration is
// built from, as istiod picks it: the first with that port, else the
// catch-all (docs/semantics/envoy-output.md §7.5).
func rdsListener(sc *Scope, port uint32) *EgressListener {
	for _, l := range sc.Listeners {
		if l.Port == nil || l.Port.GetNumber() == port {
			return l
		}
	}
	return nil
}

// portIndex indexes the listener's services that have port, without
// repeats: the first of a hostname wins, as in indexHosts. It filters
// and indexes in one pass, sized up front: a scope sees thousands of
// services, and a map per step for every port of every part cost more
// than the routes built from them.
func portIndex(l *EgressListener, port uint32) hostIndex {
	x := hostIndex{all: make([]*Service, 0, len(l.Services)), byHost: make(map[host.Name]*Service, len(l.Services))}
	for _, s := range l.Services {
		if _, ok := s.PortServing(port); !ok {
			continue
		}
		if _, ok := x.byHost[s.Host]; ok {
			continue
		}
		x.byHost[s.Host] = s
		x.all = append(x.all, s)
		if s.Host.IsWildcard() {
			x.wildcards = append(x.wildcards, s)
		}
	}
	return x
}

func (m *Mesh) routeConfig(v *ProxyView, port uint32) *RouteConfig {
	sc, p := v.Scope, v.Proxy
	l := rdsListener(sc, port)
	if l == nil {
		return &RouteConfig{Name: strconv.Itoa(int(port)), Port: port, VirtualHosts: []*VirtualHost{m.catchAll(sc)}}
	}
	idx := portIndex(l, port)
	services := idx.all
	var vss []*VirtualService
	for _, vs := range l.VirtualServices {
		if port == 80 || vsServesPort(vs, idx) {
			vss = append(vss, vs)
		}
	}
	chosen := chosenVirtualServices(vss, services)
	c, src := clientOf(p), SidecarSource(p, port)
	vhosts := make([]*VirtualHost, 0, len(services)+1)
	owned := map[host.Name]bool{}
	for _, vs := range vss {
		t := m.translation(vs, src, idx)
		if len(t.routes) == 0 {
			continue
		}
		plain, mine := vsHosts(vs, services, idx, chosen)
		if !gatewayRouteApplies(vs, mine, sc.Namespace) {
			continue
		}
		// A service whose port is TCP here gets no vhost from the
		// VirtualService either (docs/semantics/virtual-services.md §6.4).
		mine = slices.DeleteFunc(mine, func(s *Service) bool {
			pp, _ := s.PortServing(port)
			return !pp.Protocol.IsHTTPOrSniffed()
		})
		if len(mine) == 0 && port != 80 {
			continue // plain hosts alone materialise only on port 80
		}
		// Plain hosts come before owned services in build order.
		for _, h := range plain {
			vhosts = append(vhosts, m.virtualHost(vhostInputs{routes: t, plain: h, port: port}, c))
		}
		for _, s := range mine {
			owned[s.Host] = true
			vhosts = append(vhosts, m.virtualHost(vhostInputs{routes: t, service: s, port: port}, c))
		}
	}
	for _, s := range services {
		// An alias only lends its names to its target's vhost.
		if owned[s.Host] || s.Resolution == Alias {
			continue
		}
		if pp, _ := s.PortServing(port); !pp.Protocol.IsHTTPOrSniffed() {
			continue
		}
		vhosts = append(vhosts, m.virtualHost(vhostInputs{service: s, port: port}, c))
	}
	vhosts = dedupDomains(vhosts)
	slices.SortStableFunc(vhosts, func(a, b *VirtualHost) int { return cmp.Compare(a.Name, b.Name) })
	vhosts = append(vhosts, m.catchAll(sc))
	return &RouteConfig{Name: strconv.Itoa(int(port)), Port: port, VirtualHosts: vhosts}
}

// vsServesPort is docs/semantics/virtual-services.md §6.2's filter for route ports other than 80.
// vsHosts splits a VirtualService's hosts into the services it owns among
// services (exact hosts, or through a wildcard when chosen for the
// service) and the plain hosts that name no service.
func vsHosts(vs *VirtualService, services []*Service, idx hostIndex, chosen map[host.Name]*VirtualService) (plain []host.Name, mine []*Service) {
	for _, h := range vs.Hosts {
		h = lower(h)
		if !h.IsWildcard() || vs.GatewayAPI {
			// A generated route's wildcard host names no service.
			if s := idx.byHost[h]; s != nil {
				mine = append(mine, s)
			} else {
				plain = append(plain, h)
			}
			continue
		}
		matched := false
		for _, s := range services {
			if h.Matches(s.Host) {
				matched = true
				if chosen[s.Host] == vs {
					mine = append(mine, s)
				}
			}
		}
		if !matched {
			plain = append(plain, h)
		}
	}
	return plain, mine
}

func vsServesPort(vs *VirtualService, idx hostIndex) bool {
	for _, h := range vs.Hosts {
		h = lower(h)
		if idx.byHost[h] != nil {
			return true
		}
		if h.IsWildcard() {
			if slices.ContainsFunc(idx.all, func(s *Service) bool { return h.Matches(s.Host) }) {
				return true
			}
		} else if slices.ContainsFunc(idx.wildcards, func(s *Service) bool { return s.Host.Matches(h) }) {
			return true
		}
	}
	return false
}

// chosenVirtualServices picks, per service, the one VirtualService that
// may own it through a wildcard host (docs/semantics/virtual-services.md §6.3 rule 3): an exact-host
// VirtualService if any, else the most specific wildcard, first on ties.
func chosenVirtualServices(vss []*VirtualService, services []*Service) map[host.Name]*VirtualService {
	// An exact host is found by lookup, the first VirtualService naming it
	// winning; only wildcard hosts, usually few, are tried one by one.
	exact := make(map[host.Name]*VirtualService, len(vss))
	type wildcard struct {
		h  host.Name
		vs *VirtualService
	}
	var wildcards []wildcard
	for _, vs := range vss {
		for _, h := range vs.Hosts {
			switch h = lower(h); {
			case h.IsWildcard():
				wildcards = append(wildcards, wildcard{h, vs})
			case exact[h] == nil:
				exact[h] = vs
			}
		}
	}
	out := map[host.Name]*VirtualService{}
	for _, s := range services {
		if vs := exact[s.Host]; vs != nil {
			out[s.Host] = vs
			continue
		}
		var best *VirtualService
		var bestHost host.Name
		for _, w := range wildcards {
			if w.h.Matches(s.Host) && (best == nil || host.Compare(w.h, bestHost) < 0) {
				best, bestHost = w.vs, w.h
			}
		}
		if best != nil {
			out[s.Host] = best
		}
	}
	return out
}

// hostIndex is a list of services found by hostname, the first of a
// hostname winning, as a scan of the list would; wildcards are those with
// wildcard hostnames.
type hostIndex struct {
	all       []*Service
	byHost    map[host.Name]*Service
	wildcards []*Service
}

func indexHosts(services []*Service) hostIndex {
	x := hostIndex{all: services, byHost: make(map[host.Name]*Service, len(services))}
	for _, s := range services {
		if _, ok := x.byHost[s.Host]; !ok {
			x.byHost[s.Host] = s
		}
		if s.Host.IsWildcard() {
			x.wildcards = append(x.wildcards, s)
		}
	}
	return x
}

// RouteSource is what a route's source predicates are checked against: a
// sidecar, whose only gateway is "mesh", or a gateway proxy serving one
// Gateway ("namespace/name"), with its labels and namespace, on a
// listener port.
type RouteSource struct {
	Gateways  []string
	Labels    map[string]string
	Namespace string
	Port      uint32
}

// SidecarSource is p as a sidecar on port.
func SidecarSource(p *Proxy, port uint32) RouteSource {
	return RouteSource{Gateways: []string{MeshGateway}, Labels: p.Labels, Namespace: p.Namespace, Port: port}
}

// GatewaySource is p serving gateway ("namespace/name") on port.
func GatewaySource(p *Proxy, gateway string, port uint32) RouteSource {
	return RouteSource{Gateways: []string{gateway}, Labels: p.Labels, Namespace: p.Namespace, Port: port}
}

// names reports whether any of refs, as written in a VirtualService of
// namespace vsNs, is one of src's gateways.
func (src RouteSource) names(refs []string, vsNs string) bool {
	return slices.ContainsFunc(refs, func(g string) bool { return slices.Contains(src.Gateways, host.GatewayRef(g, vsNs)) })
}

// HTTPMatchApplies says whether an HTTP match can take src's traffic, as
// istiod decides for sidecars and gateways alike
// (docs/semantics/virtual-services.md §6.6): the port must agree; a match that names
// gateways applies exactly when it names one of src's, its source labels
// and namespace unchecked; otherwise the source labels must be a subset of
// src's and the source namespace, if any, src's.
func HTTPMatchApplies(m *networking.HTTPMatchRequest, src RouteSource, vsNs string) bool {
	if m.GetPort() != 0 && m.GetPort() != src.Port {
		return false
	}
	if gws := m.GetGateways(); len(gws) > 0 {
		return src.names(gws, vsNs)
	}
	return LabelsMatch(m.GetSourceLabels(), src.Labels) && (m.GetSourceNamespace() == "" || m.GetSourceNamespace() == src.Namespace)
}

// translateRoutes turns a VirtualService's HTTP routes into routes for a
// sidecar on one port (docs/semantics/virtual-services.md §6.6): applies
// says whether a match takes the sidecar's traffic, and lookup finds a
// destination or mirror host among the scope's services with that port,
// so a single-port service on another port still gets the route's port
// (docs/semantics/cases.md Q8). A match of everything ends the list.
func (m *Mesh) translateRoutes(vs *VirtualService, port uint32, applies func(*networking.HTTPMatchRequest) bool, lookup func(host.Name) *Service) []*HTTPRoute {
	return httpRoutes(vs, applies, func(r *Route, d *networking.Destination) ClusterID {
		h := host.FQDN(d.GetHost(), r.From.Namespace(), m.Config.DomainSuffix)
		return destinationCluster(d, h, lookup(h), port)
	})
}

// GatewayHTTPRoutes translates a VirtualService's HTTP routes for v, a
// router, serving gateway ("namespace/name") on port: matches for other
// gateways, ports or sources drop out, and a destination or mirror without
// a port takes the only port of its service or else the server's
// (docs/semantics/envoy-output.md §7.9). As on a sidecar, a match of
// everything ends the VirtualService's list; the gateway's virtual host
// then puts catch-alls after the other VirtualServices' routes.
func (m *Mesh) GatewayHTTPRoutes(vs *VirtualService, gateway string, v *ProxyView, port uint32) []*HTTPRoute {
	src := GatewaySource(v.Proxy, gateway, port)
	applies := func(match *networking.HTTPMatchRequest) bool { return HTTPMatchApplies(match, src, vs.Namespace()) }
	return httpRoutes(vs, applies, func(r *Route, d *networking.Destination) ClusterID {
		h := host.FQDN(d.GetHost(), r.From.Namespace(), m.Config.DomainSuffix)
		return destinationCluster(d, h, m.gatewayService(v, vs.Namespace(), h), port)
	})
}

// gatewayService is the service a gateway's HTTP route finds for a
// destination host: the one in the VirtualService's namespace if the proxy
// may see it, else the proxy's own for that host, else none
// (docs/semantics/virtual-services.md §6.6).
func (m *Mesh) gatewayService(v *ProxyView, vsNs string, h host.Name) *Service {
	if s := m.reg.byHostNs[h][vsNs]; s != nil && s.VisibleIn(v.Proxy.Namespace) {
		return s
	}
	s, _ := v.Scope.Service(h)
	return s
}

// httpRoutes is the one translation of a VirtualService's HTTP routes:
// every route, a route per applicable match (named route.match), a route
// without matches or a match of everything ending the list, on sidecars
// and gateways alike. applies says whether a match takes the proxy's
// traffic (HTTPMatchApplies); clusterOf finds a destination's cluster.
func httpRoutes(vs *VirtualService, applies func(*networking.HTTPMatchRequest) bool, clusterOf func(*Route, *networking.Destination) ClusterID) []*HTTPRoute {
	var out []*HTTPRoute
	for i := range vs.Routes {
		r := &vs.Routes[i]
		var clusters []WeightedCluster
		for _, d := range Destinations(r.HTTPRoute) {
			clusters = append(clusters, WeightedCluster{ID: clusterOf(r, d.GetDestination()), Weight: d.GetWeight()})
		}
		var mirrors map[*networking.Destination]ClusterID
		for _, d := range append([]*networking.Destination{r.GetMirror()}, mirrorDestinations(r.HTTPRoute)...) {
			if d != nil {
				if mirrors == nil {
					mirrors = map[*networking.Destination]ClusterID{}
				}
				mirrors[d] = clusterOf(r, d)
			}
		}
		if len(r.GetMatch()) == 0 {
			return append(out, &HTTPRoute{Name: r.GetName(), Clusters: clusters, Source: r, Mirrors: mirrors})
		}
		for _, match := range r.GetMatch() {
			if !applies(match) {
				continue
			}
			name := r.GetName()
			if match.GetName() != "" {
				name += "." + match.GetName()
			}
			out = append(out, &HTTPRoute{Name: name, Match: match, Clusters: clusters, Source: r, Mirrors: mirrors})
			if catchAllMatch(match) {
				return out
			}
		}
	}
	return out
}

// Destinations are an HTTP route's destinations that carry traffic: all
// of them but those weighted zero beside others.
func Destinations(r *networking.HTTPRoute) []*networking.HTTPRouteDestination {
	var out []*networking.HTTPRouteDestination
	for _, d := range r.GetRoute() {
		if d.GetDestination() == nil || (len(r.GetRoute()) > 1 && d.GetWeight() == 0) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func mirrorDestinations(r *networking.HTTPRoute) []*networking.Destination {
	var out []*networking.Destination
	for _, m := range r.GetMirrors() {
		out = append(out, m.GetDestination())
	}
	return out
}

// DestinationCluster names the cluster of a destination of a TCP or TLS
// route, written in namespace ns, for a proxy with scope sc on a listener
// port. The service is looked up among the proxy's own, as istiod does: a
// host the proxy cannot see has none, so a destination without a port
// takes the listener's (docs/semantics/virtual-services.md §6.6).
func (m *Mesh) DestinationCluster(sc *Scope, d *networking.Destination, ns string, port uint32) ClusterID {
	h := host.FQDN(d.GetHost(), ns, m.Config.DomainSuffix)
	s, _ := sc.Service(h)
	return destinationCluster(d, h, s, port)
}

// destinationCluster is istiod's cluster for destination d (host h) on a
// listener port, s the service the proxy found for h or nil: the
// destination's port, else the service's only port, else the listener's;
// an alias goes to its target.
func destinationCluster(d *networking.Destination, h host.Name, s *Service, port uint32) ClusterID {
	if d.GetHost() == "" {
		// A Gateway API backend istiod could not resolve
		// (docs/semantics/gateway-api.md §G3.5).
		return UnknownServiceCluster
	}
	p := d.GetPort().GetNumber()
	if s != nil {
		if p == 0 && len(s.Ports) == 1 {
			p = s.Ports[0].Number
		}
		h = s.Concrete()
	}
	return ClusterID{Port: cmp.Or(p, port), Subset: d.GetSubset(), Host: h}
}

// catchAllMatch: a match of everything ends the route list. istiod tests
// the translated Envoy match (docs/semantics/virtual-services.md §6.6):
// path prefix "/" (also a uri without a match type) or regex ".*", and no
// header matcher — method, authority and scheme are headers too — nor query
// parameter.
func catchAllMatch(m *networking.HTTPMatchRequest) bool {
	if !onlyURI(m) {
		return false
	}
	switch u := m.GetUri().GetMatchType().(type) {
	case *networking.StringMatch_Prefix:
		return u.Prefix == "/"
	case *networking.StringMatch_Regex:
		return u.Regex == ".*"
	case *networking.StringMatch_Exact:
		return false
	}
	return true
}

// serviceDomains lists a service vhost's domains (docs/semantics/envoy-output.md §7.5): the
// host, its absolute form, the short forms the client's DNS search path
// makes, the same for each alias, wildcard twins for headless services,
// then VIPs.
func (m *Mesh) serviceDomains(s *Service, c client) []string {
	h := string(s.Host)
	var out []string
	if _, err := netip.ParseAddr(h); err == nil {
		out = []string{hostHeaderForm(h)} // an address is its own only name
	} else {
		out = append([]string{h, h + "."}, shortForms(h, c.ns, m.Config.DomainSuffix)...)
	}
	out = m.appendAliasNames(out, s, c.ns)
	// Each pod of a headless Kubernetes service has a name under the
	// service's (pod.svc.ns...), so every form gets a wildcard twin.
	if s.Registry == Kubernetes && s.Resolution == Passthrough {
		for _, d := range slices.Clone(out) {
			out = append(out, "*."+d)
		}
	}
	has4, has6 := c.has4, c.has6
	vips := m.vipsFor(s, has4, has6)
	if s.Allocated && len(vips) > 1 {
		// istiod names a host by the one allocated address its listener
		// binds first, even where the listener binds both.
		vips = vips[:1]
	}
	for _, a := range vips {
		// A cluster IP of a family the proxy lacks is no name of the
		// service there, though its listener may still bind it.
		if ip, err := netip.ParseAddr(a); a == WildcardAddress ||
			s.Registry == Kubernetes && err == nil && (ip.Is6() && !has6 || ip.Is4() && has6 && !has4) {
			continue
		}
		out = append(out, hostHeaderForm(a))
	}
	return out
}

// VIPsFor are the addresses of a service a proxy's vhost names, the
// first the one its listener binds. Of a Kubernetes service with cluster
// IPs of both families istiod keeps those of the proxy's family, and on a
// dual-stack proxy those of the first IP's (ISTIO_DUAL_STACK off); a
// proxy without addresses counts as IPv4. Of the addresses allocated to a
// ServiceEntry host it keeps the IPv4 one, or the IPv6 one on an
// IPv6-only proxy. Under ISTIO_DUAL_STACK a dual-stack proxy keeps them
// all. ServiceEntry addresses of its own are kept whole.
func (m *Mesh) VIPsFor(s *Service, p *Proxy) []string {
	has4, has6 := p.Families()
	return m.vipsFor(s, has4, has6)
}

// vipsFor is VIPsFor for a proxy of the given IP families.
func (m *Mesh) vipsFor(s *Service, has4, has6 bool) []string {
	if (s.Registry != Kubernetes && !s.Allocated) || len(s.Addresses) < 2 {
		return s.Addresses
	}
	if has4 && has6 && m.DualStack {
		return s.Addresses
	}
	want6 := has6 && !has4
	if has4 && has6 && !s.Allocated {
		first, err := netip.ParseAddr(s.Addresses[0])
		want6 = err == nil && first.Is6()
	}
	var out []string
	for _, a := range s.Addresses {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Is6() == want6 {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return s.Addresses
	}
	return out
}

// hostHeaderForm writes an address as a Host header carries it: an IPv6
// address in brackets.
func hostHeaderForm(addr string) string {
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() {
		return "[" + addr + "]"
	}
	return addr
}

// shortForms are the names a client in namespace ns can use for host h
// through the resolver search path <ns>.svc.<domain> (docs/semantics/envoy-output.md §7.5).
func shortForms(h, ns, domain string) []string {
	name, hostNs, ok := kubeHost(h, domain)
	if !ok {
		return nil
	}
	if hostNs == ns {
		return []string{name, name + "." + hostNs + ".svc", name + "." + hostNs}
	}
	return []string{name + "." + hostNs, name + "." + hostNs + ".svc"}
}

// kubeHost splits a Kubernetes service hostname, <name>.<ns>.svc.<domain>,
// into name and namespace.
func kubeHost(h, domain string) (name, ns string, ok bool) {
	suffix := ".svc." + domain
	if !strings.HasSuffix(h, suffix) {
		return "", "", false
	}
	name, ns, ok = strings.Cut(strings.TrimSuffix(h, suffix), ".")
	if !ok || strings.Contains(ns, ".") {
		return "", "", false
	}
	return name, ns, true
}

// isHost says whether a name is a service hostname, for dropping short
// forms that name another service.
func (m *Mesh) isHost(name string) bool {
	_, ok := m.reg.byHostNs[host.Name(name)]
	return ok
}

// ownNames drops from the domains of a service's vhost the short forms
// that are another service's hostname (docs/semantics/envoy-output.md
// §7.5), and returns domains itself when it drops none.
func (m *Mesh) ownNames(s *Service, domains []string) []string {
	var kept []string // nil while every domain is kept
	for i, d := range domains {
		if i >= 2 && !strings.Contains(d, ":") && !s.named(d) && m.isHost(d) {
			if kept == nil {
				kept = append(make([]string, 0, len(domains)), domains[:i]...)
			}
			continue
		}
		if kept != nil {
			kept = append(kept, d)
		}
	}
	if kept == nil {
		return domains
	}
	return kept
}

// dedupDomains drops, in build order, domains already taken; vhosts left
// with no domain, or with a name already used, disappear
// (docs/semantics/envoy-output.md §7.5). A vhost that loses domains is
// copied: vhosts are shared between scopes (routeMemo).
func dedupDomains(vhosts []*VirtualHost) []*VirtualHost {
	used := make(map[string]bool, 6*len(vhosts))
	names := make(map[string]bool, len(vhosts))
	out := make([]*VirtualHost, 0, len(vhosts))
	for _, vh := range vhosts {
		if names[vh.Name] || len(vh.Domains) == 0 {
			continue
		}
		var kept []string // nil while every domain is kept
		for i, d := range vh.Domains {
			if used[d] {
				if kept == nil {
					kept = append(make([]string, 0, len(vh.Domains)), vh.Domains[:i]...)
				}
				continue
			}
			used[d] = true
			if kept != nil {
				kept = append(kept, d)
			}
		}
		if kept != nil {
			if len(kept) == 0 {
				continue
			}
			c := *vh
			c.Domains = kept
			vh = &c
		}
		names[vh.Name] = true
		out = append(out, vh)
	}
	return out
}

// catchAll is the last vhost: pass through or block unknown destinations
// (docs/semantics/sidecar-scope.md §4.9). It is one of two per
// destination of unmatched traffic, shared by the scopes that have it.
func (m *Mesh) catchAll(sc *Scope) *VirtualHost {
	var to WeightedCluster
	blocked := m.blocksUnmatched(sc)
	if !blocked {
		to = sc.Unmatched()
	}
	return m.routes.catchAll(catchAllKey{blocked, to}, func() *VirtualHost {
		if blocked {
			return &VirtualHost{Name: "block_all", Domains: []string{"*"}, CatchAll: "block_all"}
		}
		return &VirtualHost{Name: "allow_any", Domains: []string{"*"}, CatchAll: "allow_any",
			Routes: []*HTTPRoute{{Name: "allow_any", Clusters: []WeightedCluster{to}}}}
	})
}

// blocksUnmatched says whether a scope blocks traffic for unknown
// destinations: its Sidecar's outbound traffic policy, else the mesh's.
func (m *Mesh) blocksUnmatched(sc *Scope) bool {
	mode := m.Config.GetOutboundTrafficPolicy().GetMode()
	if c := sc.Choice.Sidecar; c != nil && c.Spec.GetOutboundTrafficPolicy() != nil {
		if c.Spec.GetOutboundTrafficPolicy().GetMode() == networking.OutboundTrafficPolicy_REGISTRY_ONLY {
			mode = meshv1.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY
		} else {
			mode = meshv1.MeshConfig_OutboundTrafficPolicy_ALLOW_ANY
		}
	}
	return mode == meshv1.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY
}

// Unmatched is where a Sidecar's scope sends traffic for unknown
// destinations when it lets it through (docs/semantics/sidecar-scope.md
// §4.9): its egressProxy's cluster, else PassthroughCluster, as the one
// cluster of an allow_any route.
func (sc *Scope) Unmatched() WeightedCluster {
	if sc.Choice.Sidecar != nil {
		if ep := sc.Choice.Sidecar.Spec.GetOutboundTrafficPolicy().GetEgressProxy(); ep != nil {
			return WeightedCluster{ID: ClusterID{Port: ep.GetPort().GetNumber(), Subset: ep.GetSubset(), Host: host.Name(ep.GetHost())}, Weight: 100}
		}
	}
	return WeightedCluster{Passthrough: true, Weight: 100}
}
