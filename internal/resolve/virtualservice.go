package resolve

import (
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// MeshGateway is the gateway name that means "all sidecars".
const MeshGateway = "mesh"

// VirtualService is a VirtualService normalised as istiod binds it
// (istio.md §6.1): hosts expanded, gateways resolved, export computed.
type VirtualService struct {
	Object *model.VirtualService
	Hosts  []host.Name
	// Gateways are "mesh" or "namespace/name"; ["mesh"] when none given.
	Gateways []string
	exportTo exportTo
	// Delegate is a VirtualService without hosts, used only through a
	// root VirtualService's delegate route.
	Delegate bool
	// Routes are the effective HTTP routes, delegates merged in.
	Routes []Route
	// Destinations lists every destination of the effective routes, in
	// order, with hosts expanded in the namespace that wrote them.
	Destinations []Destination
}

// Namespace is the VirtualService's namespace.
func (vs *VirtualService) Namespace() string { return vs.Object.Namespace }

func (vs *VirtualService) compare(o *VirtualService) int {
	a, b := vs.Object, o.Object
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}

func newVirtualService(o *model.VirtualService, domain string, defaults []string) *VirtualService {
	vs := &VirtualService{Object: o, Delegate: len(o.Spec.GetHosts()) == 0}
	for _, h := range o.Spec.GetHosts() {
		vs.Hosts = append(vs.Hosts, host.FQDN(h, o.Namespace, domain))
	}
	for _, g := range o.Spec.GetGateways() {
		vs.Gateways = append(vs.Gateways, host.GatewayRef(g, o.Namespace))
	}
	if len(vs.Gateways) == 0 {
		vs.Gateways = []string{MeshGateway}
	}
	vs.exportTo = newExportTo(o.Spec.GetExportTo(), defaults, o.Namespace)
	return vs
}

// Destination is one place a VirtualService sends traffic.
type Destination struct {
	Host host.Name
	// Port is the destination port number, 0 when the route gives none.
	Port   uint32
	Subset string
	// Path locates the destination in the VirtualService, e.g.
	// spec.http[0].route[1].destination.
	Path model.Path
	// Kind is "http", "tcp", "tls", "mirror" or "mirrors".
	Kind string
	// SourceNamespaces are the sourceNamespace values of the HTTP route's
	// matches; such a route applies only to proxies in one of them.
	SourceNamespaces []string
	// In is the VirtualService that wrote the destination: the one
	// routing, or the delegate whose route was merged in.
	In *VirtualService
}

// destinations lists every destination of a VirtualService's effective
// routes, in order, with hosts expanded in the namespace that wrote them.
func (vs *VirtualService) destinations(domain string) []Destination {
	var out []Destination
	add := func(in *VirtualService, d *networking.Destination, p model.Path, kind string, srcNs []string) {
		if d == nil {
			return
		}
		out = append(out, Destination{Host: host.FQDN(d.GetHost(), in.Namespace(), domain), Port: d.GetPort().GetNumber(),
			Subset: d.GetSubset(), Path: p, Kind: kind, SourceNamespaces: srcNs, In: in})
	}
	spec := model.Path{}.Key("spec")
	for _, r := range vs.Routes {
		var src []string
		for _, m := range r.GetMatch() {
			if m.GetSourceNamespace() != "" {
				src = append(src, m.GetSourceNamespace())
			}
		}
		if len(src) < len(r.GetMatch()) {
			src = nil // a match without sourceNamespace applies everywhere
		}
		rp := spec.Key("http").Index(r.Index)
		for j, d := range r.GetRoute() {
			add(r.From, d.GetDestination(), rp.Key("route").Index(j).Key("destination"), "http", src)
		}
		add(r.From, r.GetMirror(), rp.Key("mirror"), "mirror", src)
		for j, m := range r.GetMirrors() {
			add(r.From, m.GetDestination(), rp.Key("mirrors").Index(j).Key("destination"), "mirrors", src)
		}
	}
	for i, r := range vs.Object.Spec.GetTcp() {
		for j, d := range r.GetRoute() {
			add(vs, d.GetDestination(), spec.Key("tcp").Index(i).Key("route").Index(j).Key("destination"), "tcp", nil)
		}
	}
	for i, r := range vs.Object.Spec.GetTls() {
		for j, d := range r.GetRoute() {
			add(vs, d.GetDestination(), spec.Key("tls").Index(i).Key("route").Index(j).Key("destination"), "tls", nil)
		}
	}
	return out
}

// vsIndex is istiod's VirtualService visibility index per gateway
// (istio.md §2.3), each list oldest first.
type vsIndex struct {
	public   map[string][]*VirtualService            // gateway → VSs
	private  map[string]map[string][]*VirtualService // ns → gateway → VSs
	exported map[string]map[string][]*VirtualService // ns → gateway → VSs
	all      []*VirtualService
	// delegateProblems are delegate references that could not be used.
	delegateProblems []DelegateProblem
}

// newVSIndex merges delegates into their roots, computes destinations and
// indexes the VirtualServices.
func newVSIndex(vss []*VirtualService, domain string, meshDefault []string) *vsIndex {
	x := &vsIndex{public: map[string][]*VirtualService{}, private: map[string]map[string][]*VirtualService{}, exported: map[string]map[string][]*VirtualService{}}
	x.all = slices.Clone(vss)
	slices.SortStableFunc(x.all, (*VirtualService).compare)
	x.delegateProblems = expandDelegates(x.all, meshDefault)
	for _, vs := range x.all {
		vs.Destinations = vs.destinations(domain)
	}
	put := func(m map[string]map[string][]*VirtualService, ns, g string, vs *VirtualService) {
		if m[ns] == nil {
			m[ns] = map[string][]*VirtualService{}
		}
		m[ns][g] = append(m[ns][g], vs)
	}
	for _, vs := range x.all {
		if vs.Delegate {
			continue
		}
		for _, g := range vs.Gateways {
			switch {
			case vs.exportTo.public:
				x.public[g] = append(x.public[g], vs)
			case vs.exportTo.nowhere:
			default:
				for _, ns := range vs.exportTo.names() {
					if ns == vs.Namespace() {
						put(x.private, ns, g, vs)
					} else {
						put(x.exported, ns, g, vs)
					}
				}
			}
		}
	}
	return x
}

// visible is visibleVS(ns, gateway): private, then exported by name, then
// public.
func (x *vsIndex) visible(ns, gateway string) []*VirtualService {
	return slices.Concat(x.private[ns][gateway], x.exported[ns][gateway], x.public[gateway])
}

// selectVirtualServices is istio.md §4.7 for one egress listener.
func selectVirtualServices(x *vsIndex, l *EgressListener, proxyNs string) []*VirtualService {
	var out []*VirtualService
	// A VirtualService can be listed more than once (e.g. exportTo [".", "*"]).
	seen := map[*VirtualService]bool{}
	star := l.hosts.byNs["*"]
	for _, vs := range x.visible(proxyNs, MeshGateway) {
		if seen[vs] {
			continue
		}
		seen[vs] = true
		own := l.hosts.byNs[vs.Namespace()]
		for _, h := range vs.Hosts {
			if _, ex := own.excludes(h); ex {
				continue
			}
			if _, ex := star.excludes(h); ex {
				continue
			}
			if own.vsMatches(h) || star.vsMatches(h) {
				out = append(out, vs)
				break
			}
		}
	}
	return out
}

// inferServices adds the services a listener's VirtualServices route to
// (istio.md §4.6). They reach clusters, not listeners, and bypass the
// Sidecar's hosts.
func (sc *Scope) inferServices(reg *registry, l *EgressListener, vss []*VirtualService, domain string) {
	for _, vs := range vss {
		ports := map[host.Name][]uint32{}
		var order []host.Name
		for _, d := range vs.Destinations {
			if d.Kind != "tcp" && d.Kind != "tls" && len(d.SourceNamespaces) > 0 && !slices.Contains(d.SourceNamespaces, sc.Namespace) {
				continue
			}
			if _, seen := ports[d.Host]; !seen {
				order = append(order, d.Host)
			}
			ports[d.Host] = append(ports[d.Host], d.Port)
		}
		for _, h := range order {
			s := inferredService(reg, h, sc.Namespace)
			if s == nil {
				continue
			}
			s = trimInferred(s, l, ports[h])
			if s == nil {
				continue
			}
			sc.add(s, Import{Service: s, ViaVirtualService: vs.Object})
		}
	}
}

// inferredService finds the service a destination host means for proxies
// in proxyNs: the proxy's namespace's (without a visibility check), else a
// visible Kubernetes one, else the oldest visible one.
func inferredService(reg *registry, h host.Name, proxyNs string) *Service {
	byNs := reg.byHostNs[h]
	if s := byNs[proxyNs]; s != nil {
		return s
	}
	var best *Service
	for _, s := range byNs {
		if !s.exportTo.visibleIn(proxyNs) {
			continue
		}
		switch {
		case best == nil:
			best = s
		case (s.Registry == Kubernetes) != (best.Registry == Kubernetes):
			if s.Registry == Kubernetes {
				best = s
			}
		case s.compare(best) < 0:
			best = s
		}
	}
	return best
}

func trimInferred(s *Service, l *EgressListener, destPorts []uint32) *Service {
	if l.Port != nil {
		return trimToPort(s, l.Port)
	}
	if slices.Contains(destPorts, 0) {
		return s
	}
	var kept []Port
	for _, p := range s.Ports {
		if slices.Contains(destPorts, p.Number) {
			kept = append(kept, p)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case len(s.Ports):
		return s
	}
	t := *s
	t.Ports = kept
	return &t
}

// VSChoice records which VirtualService routes a host for a scope, and
// which others claimed it and lost (istio.md §6.3).
type VSChoice struct {
	Host   host.Name
	Winner *VirtualService
	Losers []*VirtualService
	// Reason says why the winner won, e.g. "exported privately to the
	// proxy's namespace" or "oldest".
	Reason string
}

// bindVirtualServices records, per VS host, the VirtualService in force for
// the scope: the first in selection order wins, no merging.
func (sc *Scope) bindVirtualServices() {
	seen := map[host.Name]int{}
	for _, l := range sc.Listeners {
		for _, vs := range l.VirtualServices {
			for _, h := range vs.Hosts {
				h = lower(h)
				if i, ok := seen[h]; ok {
					c := &sc.VirtualServices[i]
					if c.Winner != vs && !slices.Contains(c.Losers, vs) {
						c.Losers = append(c.Losers, vs)
					}
					continue
				}
				seen[h] = len(sc.VirtualServices)
				sc.VirtualServices = append(sc.VirtualServices, VSChoice{Host: h, Winner: vs, Reason: sc.vsReason(vs)})
			}
		}
	}
	slices.SortFunc(sc.VirtualServices, func(a, b VSChoice) int { return strings.Compare(string(a.Host), string(b.Host)) })
}

// lower lower-cases a host as sidecar routes do, without allocating when
// it is already lower case.
func lower(h host.Name) host.Name {
	if strings.IndexFunc(string(h), func(r rune) bool { return 'A' <= r && r <= 'Z' }) < 0 {
		return h
	}
	return host.Name(strings.ToLower(string(h)))
}

func (sc *Scope) vsReason(vs *VirtualService) string {
	switch {
	case vs.exportTo.public:
		return "public, and the oldest of those visible"
	case vs.Namespace() == sc.Namespace:
		return "exported privately to the proxy's namespace, which comes first"
	}
	return "exported to the proxy's namespace by name, which comes before public ones"
}
