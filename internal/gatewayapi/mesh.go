package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// meshGateway is the gateway name of VirtualServices for sidecars, which
// mesh (GAMMA) routes are bound to (docs/semantics/gateway-api.md §G7).
const meshGateway = "mesh"

// The labels that point a Service, ServiceEntry or namespace at a
// waypoint, and the controller of istiod's waypoints.
const (
	labelUseWaypoint          = "istio.io/use-waypoint"
	labelUseWaypointNamespace = "istio.io/use-waypoint-namespace"
	controllerMesh            = "istio.io/mesh-controller"
)

// meshParent is a parentRef naming a Service or ServiceEntry: the route
// applies to the sidecars that call it.
type meshParent struct {
	// ref is the parentRef's index in spec.parentRefs.
	ref int
	// hosts are the hosts the route takes over: the Service's name, or
	// the ServiceEntry's hosts.
	hosts []string
	// port is the parentRef's port, 0 for every port.
	port int32
}

// isMeshParent reports whether a parentRef's group and kind make a mesh
// route.
func isMeshParent(group, kind string) bool {
	return group == "" && kind == "Service" || group == model.GroupNetworking && kind == "ServiceEntry"
}

// meshParents resolves a route's mesh parentRefs, reporting those istiod
// would not accept (a Service or ServiceEntry that does not exist) and
// ports the parent does not have. The result is in parentRef order.
func (c *converter) meshParents(r route) []meshParent {
	var out []meshParent
	for i, ref := range r.refs {
		group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, model.GroupGatewayAPI, "Gateway", r.meta.Namespace)
		if !isMeshParent(group, kind) {
			continue
		}
		name := string(ref.Name)
		if c.waypointOfAnotherController(kind, ns, name) {
			continue // that controller's waypoint serves the route
		}
		p := meshParent{ref: i}
		if ref.Port != nil {
			p.port = int32(*ref.Port)
		}
		at := r.meta.RefAt(model.Path{}.Key("spec").Key("parentRefs").Index(i))
		var ports []int32
		if kind == "Service" {
			svc := c.services[nsName{ns, name}]
			// A missing Service is judged only when the input holds
			// Services of its namespace, as for backends.
			if svc == nil && c.svcNs[ns] {
				c.report(diag.ParentRefRejected.At(at, r.kind, r.name(), "Service "+ns+"/"+name, "NotAccepted", fmt.Sprintf("parent service: %q not found", name)))
				continue
			}
			p.hosts = []string{c.serviceHost(name, ns)}
			if svc != nil {
				for _, sp := range svc.Spec.Ports {
					ports = append(ports, sp.Port)
				}
			}
		} else {
			se := c.serviceEntries[nsName{ns, name}]
			if se == nil {
				if c.seNs[ns] {
					c.report(diag.ParentRefRejected.At(at, r.kind, r.name(), "ServiceEntry "+ns+"/"+name, "NotAccepted", fmt.Sprintf("parent service entry: %q not found", name)))
				}
				// istiod accepts the reference but has no hosts to
				// route: nothing is made of it.
				continue
			}
			p.hosts = se.Spec.GetHosts()
			for _, sp := range se.Spec.GetPorts() {
				ports = append(ports, int32(sp.GetNumber()))
			}
		}
		if p.port != 0 && ports != nil && !slices.Contains(ports, p.port) {
			c.report(diag.MeshPortMissing.At(at, r.kind, r.name(), int(p.port), kind+" "+ns+"/"+name))
		}
		out = append(out, p)
	}
	return out
}

// waypointOfAnotherController reports whether a parent Service or
// ServiceEntry (or, without the label itself, its namespace) uses a
// waypoint, a Gateway of the input whose class belongs to a controller
// other than istiod's: istiod then leaves the parentRef to that controller.
func (c *converter) waypointOfAnotherController(kind, ns, name string) bool {
	var labels map[string]string
	if kind == "Service" {
		svc := c.services[nsName{ns, name}]
		if svc == nil {
			return false
		}
		labels = svc.Labels
	} else {
		se := c.serviceEntries[nsName{ns, name}]
		if se == nil {
			return false
		}
		labels = se.Labels
	}
	wp, ok := labels[labelUseWaypoint]
	if !ok {
		labels = c.opts.Namespaces[ns]
		wp, ok = labels[labelUseWaypoint]
	}
	if !ok || wp == "" || strings.EqualFold(wp, "none") {
		return false
	}
	wpNs := cmp.Or(labels[labelUseWaypointNamespace], ns)
	gw := c.kgws[nsName{wpNs, wp}]
	if gw == nil {
		return false
	}
	ctl := c.controller(string(gw.Spec.GatewayClassName))
	return ctl != "" && ctl != ControllerIstio && ctl != controllerMesh
}

// routePieces converts an HTTP or gRPC route for the Gateway listeners and
// the mesh parents it attaches to.
func (c *converter) routePieces(r route, convert func(*ruleBuilder) []httpRule) []piece {
	return append(c.httpPieces(r, convert), c.meshPieces(r, convert)...)
}

// meshPieces converts an HTTP or gRPC route for its mesh parents: one piece
// per parent and host, keyed by the route's namespace, the parentRef's port
// and the host, so that the routes of one namespace for one Service merge
// into one VirtualService (docs/semantics/gateway-api.md §G7.2).
func (c *converter) meshPieces(r route, convert func(*ruleBuilder) []httpRule) []piece {
	parents := c.meshParents(r)
	if len(parents) == 0 {
		return nil
	}
	b := &ruleBuilder{c: c, r: r, mesh: true}
	rules := convert(b)
	c.reportNew(b)
	if b.hard || len(rules) == 0 {
		return nil
	}
	sortRules(rules)
	var out []piece
	for _, p := range parents {
		key := r.meta.Namespace
		prules := rules
		if p.port != 0 {
			key += "/" + strconv.Itoa(int(p.port))
			prules = withPort(rules, uint32(p.port))
		}
		for _, h := range p.hosts {
			out = append(out, piece{key: key + "/" + h, from: r.meta, kind: r.kind, host: h, gw: meshGateway, rules: prules})
		}
	}
	return out
}

// reportNew reports a mesh conversion's problems that the conversion for
// Gateways has not reported already: a route with both kinds of parents
// is converted twice.
func (c *converter) reportNew(b *ruleBuilder) {
	for _, p := range b.problems {
		d := p.diag(b.r.meta.RefAt(p.path))
		if !slices.ContainsFunc(c.diags, func(o diag.Diagnostic) bool { return o.Key == d.Key && o.Message == d.Message }) {
			c.report(d)
		}
	}
}

// withPort copies rules, each match (or a new one when there is none)
// narrowed to a port.
func withPort(rules []httpRule, port uint32) []httpRule {
	out := make([]httpRule, len(rules))
	for i, r := range rules {
		hr := r.r.DeepCopy()
		for _, m := range hr.Match {
			m.Port = port
		}
		if len(hr.Match) == 0 {
			hr.Match = []*networking.HTTPMatchRequest{{Port: port}}
		}
		out[i] = httpRule{r: hr, part: r.part}
	}
	return out
}

// l4Routes converts a TCP or TLS route for the Gateway listeners and the
// mesh parents it attaches to.
func (c *converter) l4Routes(r route, rules []gwv1.TCPRouteRule, sni []gwv1.Hostname) {
	first := len(c.out)
	c.l4Route(r, rules, sni)
	c.meshL4Route(r, rules, first)
}

// meshL4Route makes a TCP or TLS route's VirtualServices for its mesh
// parents, one per parent and host (docs/semantics/gateway-api.md §G7.3).
// They are numbered with the route's Gateway VirtualServices (made from
// first on) in the order istiod takes parents, by name: Gateways whose
// namespace sorts before "mesh" come first.
func (c *converter) meshL4Route(r route, rules []gwv1.TCPRouteRule, first int) {
	parents := c.meshParents(r)
	if len(parents) == 0 {
		return
	}
	tls := r.kind == "TLSRoute"
	b := &ruleBuilder{c: c, r: r, mesh: true}
	dests := make([][]*networking.RouteDestination, len(rules))
	parts := make([]model.DerivedPart, len(rules))
	for n, rule := range rules {
		path := model.Path{}.Key("spec").Key("rules").Index(n)
		dests[n] = b.l4Destinations(rule.BackendRefs, path.Key("backendRefs"))
		parts[n] = model.DerivedPart{From: r.meta, Path: path}
	}
	c.reportNew(b)
	if b.hard {
		return
	}
	var before, after []*model.VirtualService
	for _, o := range c.out[first:] {
		if vs, ok := o.(*model.VirtualService); ok {
			if vs.Spec.GetGateways()[0] < meshGateway {
				before = append(before, vs)
			} else {
				after = append(after, vs)
			}
		}
	}
	var made []*model.VirtualService
	for _, p := range parents {
		for _, h := range p.hosts {
			vs := &model.VirtualService{ObjectMeta: derived("networking.istio.io/v1", "VirtualService", r.meta.Namespace, "", r.meta, model.Path{}.Key("spec").Key("rules"), "")}
			if len(parts) > 0 {
				vs.Derived.Parts = slices.Clone(parts)
			}
			spec := &networking.VirtualService{Hosts: []string{h}, Gateways: []string{meshGateway}}
			for n := range rules {
				if tls {
					tr := &networking.TLSRoute{Route: dests[n]}
					if totalWeight(rules[n].BackendRefs) > 0 {
						// A rule without weight has no match to narrow.
						tr.Match = []*networking.TLSMatchAttributes{meshSNI(r.hostnames, p, h)}
					}
					spec.Tls = append(spec.Tls, tr)
					continue
				}
				tr := &networking.TCPRoute{Route: dests[n]}
				if p.port != 0 {
					tr.Match = []*networking.L4MatchAttributes{{Port: uint32(p.port)}}
				}
				spec.Tcp = append(spec.Tcp, tr)
			}
			vs.Spec = spec
			vs.Annotations = map[string]string{annParents: r.kind + "/" + r.meta.Name + "." + r.meta.Namespace, annRouteSemantics: model.RouteSemanticsGateway}
			made = append(made, vs)
			c.out = append(c.out, vs)
		}
	}
	infix := "~tcp~"
	if tls {
		infix = "~tls~"
	}
	for i, vs := range slices.Concat(before, made, after) {
		vs.Name = r.meta.Name + infix + strconv.Itoa(i) + "~" + generatedSuffix
	}
}

// meshSNI is a TLS rule's match for a mesh parent's host: the route's
// hostnames (the parent's hosts when it has none) that the host matches,
// on the parentRef's port.
func meshSNI(hostnames []gwv1.Hostname, p meshParent, h string) *networking.TLSMatchAttributes {
	sni := sniHosts(hostnames)
	if slices.Equal(sni, []string{"*"}) {
		sni = p.hosts
	}
	if len(sni) > 1 {
		var kept []string
		for _, s := range sni {
			if host.Name(h).Matches(host.Name(s)) {
				kept = append(kept, s)
			}
		}
		sni = kept
	}
	m := &networking.TLSMatchAttributes{SniHosts: slices.Clone(sni)}
	if p.port != 0 {
		m.Port = uint32(p.port)
	}
	return m
}

func totalWeight(refs []gwv1.BackendRef) int {
	sum := 0
	for _, ref := range refs {
		sum += weight(ref)
	}
	return sum
}
