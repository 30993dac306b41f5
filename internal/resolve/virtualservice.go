package resolve

import (
	"maps"
	"slices"
	"strings"
	"sync"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// MeshGateway is the gateway name that means "all sidecars".
const MeshGateway = "mesh"

// VirtualService is a VirtualService normalised as istiod binds it
// (docs/semantics/virtual-services.md §6.1): hosts expanded, gateways resolved, export computed.
type VirtualService struct {
	Object *model.VirtualService
	Hosts  []host.Name
	// Gateways are "mesh" or "namespace/name"; ["mesh"] when none given.
	Gateways []string
	exportTo exportTo
	// Delegate is a VirtualService without hosts, used only through a
	// root VirtualService's delegate route.
	Delegate bool
	// GatewayAPI marks a VirtualService istiod generated from a Gateway
	// API route, built with that API's semantics
	// (docs/semantics/gateway-api.md §G3.6, §G4).
	GatewayAPI bool
	// Routes are the effective HTTP routes, delegates merged in.
	Routes []Route
	// Destinations lists every destination of the effective routes, in
	// order, with hosts expanded in the namespace that wrote them.
	Destinations []Destination
	// id is the position in the index's list; hostIDs number Hosts,
	// lower-cased, in the index's sorted host list (see newVSIndex).
	id      int
	hostIDs []int32
	// regHostIDs is the registry's number of each of Hosts, lower-cased,
	// -1 for a host no service has; nil when not looked up
	// (numberDestinations): every scope looks a generated
	// VirtualService's hosts up, twice.
	regHostIDs []int32
}

// Namespace is the VirtualService's namespace.
func (vs *VirtualService) Namespace() string { return vs.Object.Namespace }

func (vs *VirtualService) compare(o *VirtualService) int {
	a, b := vs.Object, o.Object
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}

func newVirtualService(o *model.VirtualService, domain string, defaults []string) *VirtualService {
	vs := &VirtualService{Object: o, Delegate: len(o.Spec.GetHosts()) == 0,
		GatewayAPI: o.Annotations[model.AnnotationRouteSemantics] == model.RouteSemanticsGateway}
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
	// hostID is Host's number in the registry plus one, -1 for a host no
	// service has, 0 when not looked up (numberDestinations): the scopes
	// of a mesh look every destination up, hundreds of thousands of times.
	hostID int32
}

// numberDestinations sets the hostID of every destination in x, and the
// regHostIDs of every VirtualService.
func (x *vsIndex) numberDestinations(reg *registry) {
	for _, vs := range x.all {
		vs.regHostIDs = make([]int32, len(vs.Hosts))
		for i, h := range vs.Hosts {
			vs.regHostIDs[i] = -1
			if id, ok := reg.hostIDs[lower(h)]; ok {
				vs.regHostIDs[i] = id
			}
		}
		for i := range vs.Destinations {
			d := &vs.Destinations[i]
			d.hostID = -1
			if id, ok := reg.hostIDs[d.Host]; ok {
				d.hostID = id + 1
			}
		}
	}
}

// regID is the registry's number of d's host, false when no service has
// it.
func (d *Destination) regID(reg *registry) (int32, bool) {
	switch {
	case d.hostID > 0:
		return d.hostID - 1, true
	case d.hostID < 0:
		return 0, false
	}
	id, ok := reg.hostIDs[d.Host]
	return id, ok
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
// (docs/semantics/exportto.md §2.3), each list oldest first.
type vsIndex struct {
	public   map[string][]*VirtualService            // gateway → VSs
	private  map[string]map[string][]*VirtualService // ns → gateway → VSs
	exported map[string]map[string][]*VirtualService // ns → gateway → VSs
	all      []*VirtualService
	// hosts are the distinct lower-cased hosts of all, sorted, so that
	// scopes bind hosts by number and get them in order without sorting.
	hosts []host.Name
	// delegateProblems are delegate references that could not be used.
	delegateProblems []DelegateProblem
	// publicIn are the positions in public[MeshGateway] of each
	// namespace's VirtualServices.
	publicIn map[string][]int32
	// generated are, by namespace, the public mesh VirtualServices
	// generated from Gateway API routes of that namespace that have
	// hosts, in the order of public: what a listener importing every
	// host selects first in that namespace.
	generated map[string][]*VirtualService
	// everything is what a listener importing every host selects in a
	// namespace without VirtualServices of its own: each namespace that
	// shares it (sharesEverything) selects it with its generated ones
	// moved first. Computed once, by the first scope that asks, and
	// shared read-only.
	everything memo[selection]
	// bound holds, per registry, the binding of the selection everything
	// in a scope of that registry's everyScope services and of no
	// namespace (bindShared).
	boundMu sync.Mutex
	bound   map[*registry]*memo[vsBinding]
}

// selection is a list of selected VirtualServices; gateway says one of
// them is generated from a Gateway API route.
type selection struct {
	vss     []*VirtualService
	gateway bool
}

// vsBinding is bindVirtualServices' result.
type vsBinding struct {
	choices []VSChoice
	winners []*VirtualService
}

// sharesEverything reports whether a listener of proxyNs importing every
// host selects from x.everything: proxyNs has no VirtualServices exported
// to it privately or by name, so the listener selects the public ones,
// its own generated ones first (selectAmong).
func (x *vsIndex) sharesEverything(proxyNs string) bool {
	return len(x.private[proxyNs][MeshGateway]) == 0 && len(x.exported[proxyNs][MeshGateway]) == 0
}

// boundIn is the memo of the shared binding for scopes of reg.
func (x *vsIndex) boundIn(reg *registry) *memo[vsBinding] {
	x.boundMu.Lock()
	defer x.boundMu.Unlock()
	b := x.bound[reg]
	if b == nil {
		b = &memo[vsBinding]{}
		x.bound[reg] = b
	}
	return b
}

// newVSIndex merges delegates into their roots, computes destinations and
// indexes the VirtualServices.
func newVSIndex(vss []*VirtualService, domain string, meshDefault []string) *vsIndex {
	x := &vsIndex{public: map[string][]*VirtualService{}, private: map[string]map[string][]*VirtualService{}, exported: map[string]map[string][]*VirtualService{},
		generated: map[string][]*VirtualService{}, bound: map[*registry]*memo[vsBinding]{}, publicIn: map[string][]int32{}}
	x.all = slices.Clone(vss)
	slices.SortStableFunc(x.all, (*VirtualService).compare)
	x.delegateProblems = expandDelegates(x.all, meshDefault)
	for i, vs := range x.all {
		vs.Destinations = vs.destinations(domain)
		vs.id = i
	}
	x.numberHosts()
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
				// A VirtualService naming "mesh" twice is listed twice,
				// generated once.
				own := x.generated[vs.Namespace()]
				if g == MeshGateway && vs.GatewayAPI && len(vs.Hosts) > 0 && (len(own) == 0 || own[len(own)-1] != vs) {
					x.generated[vs.Namespace()] = append(own, vs)
				}
				if g == MeshGateway {
					x.publicIn[vs.Namespace()] = append(x.publicIn[vs.Namespace()], int32(len(x.public[g])))
				}
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

// numberHosts sets x.hosts and every VirtualService's hostIDs.
func (x *vsIndex) numberHosts() {
	for _, vs := range x.all {
		for _, h := range vs.Hosts {
			x.hosts = append(x.hosts, lower(h))
		}
	}
	slices.Sort(x.hosts)
	x.hosts = slices.Compact(x.hosts)
	for _, vs := range x.all {
		vs.hostIDs = make([]int32, len(vs.Hosts))
		for i, h := range vs.Hosts {
			id, _ := slices.BinarySearch(x.hosts, lower(h))
			vs.hostIDs[i] = int32(id)
		}
	}
}

// visible is visibleVS(ns, gateway): private, then exported by name, then
// public.
func (x *vsIndex) visible(ns, gateway string) []*VirtualService {
	return slices.Concat(x.visibleLists(ns, gateway)...)
}

// visibleLists are the lists visible concatenates, for callers that need
// not copy them.
func (x *vsIndex) visibleLists(ns, gateway string) [][]*VirtualService {
	return [][]*VirtualService{x.private[ns][gateway], x.exported[ns][gateway], x.public[gateway]}
}

// selectVirtualServices is docs/semantics/sidecar-scope.md §4.7 for one
// egress listener. shared: the list is x.everything with the generated
// VirtualServices of proxyNs moved first (which selectAmong would
// select), the same for every namespace without generated ones.
func selectVirtualServices(x *vsIndex, l *EgressListener, proxyNs string) (vss []*VirtualService, shared bool) {
	if _, all := l.hosts.importsAll(); !all || !x.sharesEverything(proxyNs) {
		return selectAmong(x, l, proxyNs), false
	}
	every := x.everythingFor(l).vss
	own := x.generated[proxyNs]
	if len(own) == 0 {
		return every, true
	}
	// Everything holds the producers' routes of proxyNs among the
	// others; its consumers' routes only proxyNs selects.
	vss = make([]*VirtualService, 0, len(own)+len(every))
	vss = append(vss, own...)
	for _, vs := range every {
		if !vs.GatewayAPI || vs.Namespace() != proxyNs {
			vss = append(vss, vs)
		}
	}
	return vss, true
}

// everythingFor is x.everything; l is a listener importing every host.
func (x *vsIndex) everythingFor(l *EgressListener) selection {
	return x.everything.get(func() selection {
		// No namespace is empty: selection as in a namespace without
		// generated VirtualServices.
		vss := selectAmong(x, l, "")
		return selection{vss, slices.ContainsFunc(vss, func(vs *VirtualService) bool { return vs.GatewayAPI })}
	})
}

// selectAmong is selectVirtualServices, computed.
func selectAmong(x *vsIndex, l *EgressListener, proxyNs string) []*VirtualService {
	lists := x.visibleLists(proxyNs, MeshGateway)
	if _, all := l.hosts.importsAll(); !all && l.hosts.byNs["*"] == nil {
		// Only a namespace's own entries can import its VirtualServices.
		lists[2] = inNamespaces(lists[2], x.publicIn, maps.Keys(l.hosts.byNs))
	}
	return selectFrom(x, l, proxyNs, lists)
}

// selectFrom is selectAmong over lists of candidates.
func selectFrom(x *vsIndex, l *EgressListener, proxyNs string, lists [][]*VirtualService) []*VirtualService {
	var out []*VirtualService
	// A VirtualService can be listed more than once (e.g. exportTo [".", "*"]).
	seen := make([]bool, len(x.all))
	star := l.hosts.byNs["*"]
	// Hosts that import every service overlap every VirtualService host.
	_, importsAll := l.hosts.importsAll()
	for _, list := range lists {
		// Routes of Gateway API Services of the proxy's own namespace
		// come first in each list; another namespace's apply only when
		// written in the Service's namespace (docs/semantics/gateway-api.md §G3.6).
		for _, own := range []bool{true, false} {
			for _, vs := range list {
				if seen[vs.id] || own != (vs.GatewayAPI && vs.Namespace() == proxyNs) {
					continue
				}
				if vs.GatewayAPI && !own && !producerRoute(vs) {
					continue
				}
				seen[vs.id] = true
				if importsAll && len(vs.Hosts) > 0 || !importsAll && l.hosts.importsVS(vs, star) {
					out = append(out, vs)
				}
			}
		}
	}
	return out
}

// producerRoute reports whether a mesh route istiod generated from a
// Gateway API route may be written in the namespace of the service it
// routes: its host is that Service's "<name>.<namespace>.svc.<domain>", or
// no Service's at all (a ServiceEntry's, whose namespace the virtual hosts
// judge, docs/semantics/gateway-api.md §G7.4).
func producerRoute(vs *VirtualService) bool {
	for _, h := range vs.Hosts {
		// The second and third labels, without splitting the host.
		_, rest, ok := strings.Cut(string(h), ".")
		ns, rest, ok2 := strings.Cut(rest, ".")
		if svc, _, _ := strings.Cut(rest, "."); !ok || !ok2 || svc != "svc" || ns == vs.Namespace() {
			return true
		}
	}
	return false
}

// importsVS reports whether some host of vs is imported: not excluded, and
// overlapping an entry of vs's namespace or of "*/" (star).
func (e egressHosts) importsVS(vs *VirtualService, star *hostClass) bool {
	own := e.byNs[vs.Namespace()]
	for _, h := range vs.Hosts {
		if _, ex := own.excludes(h); ex {
			continue
		}
		if _, ex := star.excludes(h); ex {
			continue
		}
		if own.vsImports(vs, h) || star.vsImports(vs, h) {
			return true
		}
	}
	return false
}

// inferServices adds the services a listener's VirtualServices route to
// (docs/semantics/sidecar-scope.md §4.6). They reach clusters, not listeners, and bypass the
// Sidecar's hosts.
func (sc *Scope) inferServices(reg *registry, l *EgressListener, vss, all []*VirtualService) {
	var quiet []bool
	if sc.base != nil {
		quiet = sc.base.quiet.get(func() []bool { return quietVirtualServices(reg, sc.base, all) })
	}
	// Scratch space reused across VirtualServices: the destination hosts
	// in order of first use, and the ports routed to one of them.
	var hosts []*Destination // the first destination of each host
	var ports []uint32
	for _, vs := range vss {
		if vs.id < len(quiet) && quiet[vs.id] {
			continue
		}
		hosts = hosts[:0]
		for i := range vs.Destinations {
			if d := &vs.Destinations[i]; sc.routesHere(d) && !slices.ContainsFunc(hosts, func(o *Destination) bool { return o.Host == d.Host }) {
				hosts = append(hosts, d)
			}
		}
		for _, first := range hosts {
			h := first.Host
			id, ok := first.regID(reg)
			if !ok {
				continue
			}
			s := inferredService(reg, id, sc.Namespace)
			if s == nil || sc.holds(s) {
				// Held whole already: any part of it adds nothing.
				continue
			}
			ports = ports[:0]
			for i := range vs.Destinations {
				if d := &vs.Destinations[i]; d.Host == h && sc.routesHere(d) {
					ports = append(ports, d.Port)
				}
			}
			s = trimInferred(s, l, ports)
			if s == nil {
				continue
			}
			sc.add(s, Import{Service: s, ViaVirtualService: vs.Object})
		}
	}
}

// quietVirtualServices marks, by ID, the VirtualServices (all, the
// index's) that infer nothing in a scope built on base, whatever its
// namespace: every destination's host is of one namespace and public, so
// its service is the one inferredService finds for every namespace
// (soleVisible), and base holds it whole. Such a scope, of one listener,
// changes that host's place only by adding the service found for it,
// which it holds.
func quietVirtualServices(reg *registry, base *scopeBase, all []*VirtualService) []bool {
	quiet := make([]bool, len(all))
	for _, vs := range all {
		quiet[vs.id] = !slices.ContainsFunc(vs.Destinations, func(d Destination) bool {
			id, ok := d.regID(reg)
			if !ok || reg.soleVisible[id] == nil {
				return true
			}
			i := base.slot[id] - 1
			return i < 0 || base.services[i] != reg.soleVisible[id]
		})
	}
	return quiet
}

// RoutedDestinations calls f for every destination of the VirtualServices
// in force in the scope that routes the scope's proxies' traffic.
func (sc *Scope) RoutedDestinations(f func(d *Destination)) {
	for _, vs := range sc.winners {
		for i := range vs.Destinations {
			if d := &vs.Destinations[i]; sc.routesHere(d) {
				f(d)
			}
		}
	}
}

// routesHere reports whether a destination applies to the scope's
// proxies: TCP and TLS ones always, HTTP ones unless their route matches
// only other source namespaces.
func (sc *Scope) routesHere(d *Destination) bool {
	return d.Kind == "tcp" || d.Kind == "tls" || len(d.SourceNamespaces) == 0 || slices.Contains(d.SourceNamespaces, sc.Namespace)
}

// inferredService finds the service a destination host (numbered id in
// reg) means for proxies
// in proxyNs: the proxy's namespace's (without a visibility check), else a
// visible Kubernetes one, else the oldest visible one.
func inferredService(reg *registry, id int32, proxyNs string) *Service {
	if s := reg.soleVisible[id]; s != nil {
		return s
	}
	byNs := reg.byHostPreferred[id]
	for _, s := range byNs {
		if s.Namespace == proxyNs {
			return s
		}
	}
	for _, s := range byNs {
		if s.exportTo.visibleIn(proxyNs) {
			return s
		}
	}
	return nil
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
// which others claimed it and lost (docs/semantics/virtual-services.md §6.3).
// Why the winner won is Scope.VSReason: every scope holds a choice per
// host it routes, so a choice keeps to what only it knows.
type VSChoice struct {
	Host   host.Name
	Winner *VirtualService
	// losers is Losers, behind a pointer: most hosts have none, and a
	// slice header would take 24 of the choice's 48 bytes.
	losers *[]*VirtualService
}

// Losers are the VirtualServices that claimed the host and lost, in
// selection order.
func (c VSChoice) Losers() []*VirtualService {
	if c.losers == nil {
		return nil
	}
	return *c.losers
}

// bindVirtualServices records, per VS host, the VirtualService in force for
// the scope: the first in selection order wins, no merging. x is the index
// the listeners' VirtualServices come from; nil when there are none.
//
// shared says the scope's one listener selected x.everything, its own
// generated VirtualServices first. Then the scope takes the binding of
// everything in a scope of no namespace (bindShared), with the hosts of
// its own generated VirtualServices bound again (bindOwn): those are the
// only hosts the move changes. A generated VirtualService of another
// namespace applies where the scope holds a service of that namespace
// for one of its hosts (gatewayRouteApplies), so where everything has
// some, the shared binding is of the registry's everyScope services, and
// only a scope based on those (Scope.base) may take it: inference adds to
// such a scope only its own namespace's services and ones of the
// namespace everyScope already holds for the host (inferredService picks
// as dedupHosts does among public services), so which namespaces it
// holds services of for those hosts is everyScope's.
func (sc *Scope) bindVirtualServices(x *vsIndex, shared bool) {
	if x == nil {
		return
	}
	if !shared || len(sc.Listeners) != 1 {
		sc.bindAll(x)
		return
	}
	every := x.everythingFor(sc.Listeners[0])
	if every.gateway && sc.base == nil {
		sc.bindAll(x)
		return
	}
	b := x.boundIn(sc.reg).get(func() vsBinding {
		ref := &Scope{reg: sc.reg, Listeners: []*EgressListener{{VirtualServices: every.vss}}}
		if every.gateway {
			ref.Services, ref.slot = sc.base.services, sc.base.slot
		}
		ref.bindAll(x)
		return vsBinding{ref.VirtualServices, ref.winners}
	})
	sc.VirtualServices, sc.winners = b.choices, b.winners
	if own := x.generated[sc.Namespace]; len(own) > 0 {
		sc.bindOwn(x, own)
	}
}

// bindOwn rebinds the hosts of own, the scope's generated VirtualServices,
// which its selection moved first: for each, those of own that apply in
// the scope, then the VirtualServices that claimed it in the shared
// binding, each once, in order (one of own that applied there applies in
// the scope too, which holds a service wherever everyScope does). The
// shared binding stays shared when nothing changes.
func (sc *Scope) bindOwn(x *vsIndex, own []*VirtualService) {
	var ids []int32
	var applies []*VirtualService
	var named []*Service // scratch
	for _, vs := range own {
		ids = append(ids, vs.hostIDs...)
		if named = sc.appendNamedServices(named[:0], vs); gatewayRouteApplies(vs, named, sc.Namespace) {
			applies = append(applies, vs)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	shared := sc.VirtualServices
	var out []VSChoice // nil while every choice is shared's
	next := 0          // shared's choices before next are in out
	for _, id := range ids {
		var claims []*VirtualService
		for _, vs := range applies {
			if slices.Contains(vs.hostIDs, id) && !slices.Contains(claims, vs) {
				claims = append(claims, vs)
			}
		}
		i, found := slices.BinarySearchFunc(shared, x.hosts[id], func(c VSChoice, h host.Name) int { return strings.Compare(string(c.Host), string(h)) })
		if found {
			for _, vs := range slices.Concat([]*VirtualService{shared[i].Winner}, shared[i].Losers()) {
				if !slices.Contains(claims, vs) {
					claims = append(claims, vs)
				}
			}
		}
		var c VSChoice
		if len(claims) > 0 {
			c = VSChoice{Host: x.hosts[id], Winner: claims[0]}
			if len(claims) > 1 {
				losers := claims[1:]
				c.losers = &losers
			}
		}
		if out == nil {
			if !found && c.Winner == nil || found && c.Winner == shared[i].Winner && slices.Equal(c.Losers(), shared[i].Losers()) {
				continue
			}
			out = make([]VSChoice, 0, len(shared)+len(ids))
		}
		out = append(out, shared[next:i]...)
		if next = i; found {
			next++
		}
		if c.Winner != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return
	}
	sc.VirtualServices = append(out, shared[next:]...)
	sc.winners = nil
	seen := make([]bool, len(x.all))
	for _, c := range sc.VirtualServices {
		if !seen[c.Winner.id] {
			seen[c.Winner.id] = true
			sc.winners = append(sc.winners, c.Winner)
		}
	}
}

// bindAll is bindVirtualServices, computed.
func (sc *Scope) bindAll(x *vsIndex) {
	// Host IDs follow host order: numbering the hosts bound, in ID order,
	// gives each its place in the sorted result.
	slot := make([]int32, len(x.hosts)) // place+1 of each host ID
	sc.eachVSHost(func(_ *VirtualService, id int32) { slot[id] = 1 })
	n := int32(0)
	for id, bound := range slot {
		if bound > 0 {
			n++
			slot[id] = n
		}
	}
	if n == 0 {
		return
	}
	sc.VirtualServices = make([]VSChoice, n)
	sc.eachVSHost(func(vs *VirtualService, id int32) {
		switch c := &sc.VirtualServices[slot[id]-1]; {
		case c.Winner == nil:
			*c = VSChoice{Host: x.hosts[id], Winner: vs}
		case c.losers == nil && c.Winner != vs:
			c.losers = &[]*VirtualService{vs}
		case c.Winner != vs && !slices.Contains(*c.losers, vs):
			*c.losers = append(*c.losers, vs)
		}
	})
	seen := make([]bool, len(x.all))
	for _, c := range sc.VirtualServices {
		if !seen[c.Winner.id] {
			seen[c.Winner.id] = true
			sc.winners = append(sc.winners, c.Winner)
		}
	}
}

// Winners lists the VirtualServices in force for some host of the scope,
// once each, in the order of VirtualServices.
func (sc *Scope) Winners() []*VirtualService { return sc.winners }

// eachVSHost calls f with every host of the listeners' VirtualServices, in
// selection order.
func (sc *Scope) eachVSHost(f func(vs *VirtualService, id int32)) {
	var named []*Service // scratch, reused across VirtualServices
	for _, l := range sc.Listeners {
		for _, vs := range l.VirtualServices {
			if vs.GatewayAPI {
				named = sc.appendNamedServices(named[:0], vs)
				if !gatewayRouteApplies(vs, named, sc.Namespace) {
					continue
				}
			}
			for _, id := range vs.hostIDs {
				f(vs, id)
			}
		}
	}
}

// lower lower-cases a host as sidecar routes do, without allocating when
// it is already lower case.
func lower(h host.Name) host.Name {
	if strings.IndexFunc(string(h), func(r rune) bool { return 'A' <= r && r <= 'Z' }) < 0 {
		return h
	}
	return host.Name(strings.ToLower(string(h)))
}

// VSReason says why vs, the winner of a VSChoice of the scope, won: e.g.
// "exported privately to the proxy's namespace, which comes first".
func (sc *Scope) VSReason(vs *VirtualService) string {
	switch {
	case vs.GatewayAPI && vs.Namespace() == sc.Namespace:
		return "generated from a Gateway API route of the proxy's namespace, which comes first"
	case vs.exportTo.public:
		return "public, and the oldest of those visible"
	case vs.Namespace() == sc.Namespace:
		return "exported privately to the proxy's namespace, which comes first"
	}
	return "exported to the proxy's namespace by name, which comes before public ones"
}

// CatchAllMatch reports whether an HTTP match takes every request for
// every source: a match of everything as istiod tests it (see
// catchAllMatch) that names no port, gateway, source labels or source
// namespace.
func CatchAllMatch(m *networking.HTTPMatchRequest) bool {
	return catchAllMatch(m) && m.GetPort() == 0 && len(m.GetGateways()) == 0 &&
		len(m.GetSourceLabels()) == 0 && m.GetSourceNamespace() == ""
}

// ExportedTo reports whether the VirtualService is visible to proxies in
// ns (docs/semantics/exportto.md §2.3).
func (vs *VirtualService) ExportedTo(ns string) bool { return vs.exportTo.visibleIn(ns) }
