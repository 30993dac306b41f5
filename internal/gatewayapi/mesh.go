package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// Mesh (GAMMA) routes: routes whose parent is a Service or ServiceEntry,
// which istiod binds to the sidecars (docs/semantics/gateway-api.md §G7).

// The labels that point a Service, ServiceEntry or namespace at a
// waypoint, and the controller of istiod's waypoints.
const (
	labelUseWaypoint          = "istio.io/use-waypoint"
	labelUseWaypointNamespace = "istio.io/use-waypoint-namespace"
)

// isMeshParent reports whether a parentRef's group and kind make a mesh
// route.
func isMeshParent(group, kind string) bool {
	return group == "" && kind == "Service" || group == model.GroupNetworking && kind == "ServiceEntry"
}

// serviceParent is the mesh parent a parentRef to a Service or
// ServiceEntry makes (§G7.1), reporting a port the parent lacks; refused
// when the parent does not exist (judged when the input holds Services,
// ServiceEntries, of its namespace). ok is false when the reference is
// passed over: a waypoint of another controller serves the parent, or a
// ServiceEntry that cannot be judged has no hosts to route. Findings are
// added to found.
func (c *converter) serviceParent(r route, ref gwv1.ParentReference, i int, kind, ns string, found *[]diag.Diagnostic) (rp routeParent, ok bool) {
	name := string(ref.Name)
	rp = routeParent{info: meshParent, ref: i}
	if ref.Port != nil {
		rp.port = int32(*ref.Port)
	}
	// portMissing: the parent lists ports, and not the parentRef's.
	portMissing := false
	if kind == "Service" {
		svc := c.services.get(nsName{ns, name})
		if svc != nil && c.waypointOfAnotherController(svc.Labels, ns) {
			return rp, false
		}
		h := c.serviceHost(name, ns)
		rp.hosts = []string{h}
		if svc == nil && c.services.has(ns) {
			rp.shown = "Service " + h
			rp.denied = &denial{reason: "NoMatchingParent", message: fmt.Sprintf("parent service: %q not found", name), rank: rankNotAccepted}
			return rp, true
		}
		if svc != nil && rp.port != 0 && len(svc.Spec.Ports) > 0 {
			portMissing = !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Port == rp.port })
		}
	} else {
		se := c.serviceEntries[nsName{ns, name}]
		switch {
		case se != nil && c.waypointOfAnotherController(se.Labels, ns):
			return rp, false
		case se == nil && c.seNs[ns]:
			rp.shown = "ServiceEntry " + ns + "/" + name
			rp.denied = &denial{reason: "NoMatchingParent", message: fmt.Sprintf("parent service entry: %q not found", name), rank: rankNotAccepted}
			return rp, true
		case se == nil:
			return rp, false
		}
		rp.hosts = se.Spec.GetHosts()
		if ports := se.Spec.GetPorts(); rp.port != 0 && len(ports) > 0 {
			portMissing = !slices.ContainsFunc(ports, func(sp *networking.ServicePort) bool { return int32(sp.GetNumber()) == rp.port })
		}
	}
	if portMissing {
		*found = append(*found, diag.MeshPortMissing.At(r.meta.RefAt(specIndex("parentRefs", i)), r.kind, r.name(), int(rp.port), kind+" "+ns+"/"+name))
	}
	return rp, true
}

// waypointOfAnotherController reports whether a parent Service or
// ServiceEntry of namespace ns with these labels (or, without the label
// itself, its namespace) uses a waypoint, a Gateway of the input whose
// class belongs to a controller other than istiod's: istiod then leaves
// the parentRef to that controller.
func (c *converter) waypointOfAnotherController(labels map[string]string, ns string) bool {
	gw := c.waypoint(labels, ns)
	if gw == nil {
		return false
	}
	ctl := c.controller(string(gw.Spec.GatewayClassName))
	return ctl != "" && ctl != ControllerIstio && ctl != ControllerWaypoint
}

// waypointOf is the Gateway of the input that a Service or ServiceEntry
// names as its waypoint, nil when there is none.
func (c *converter) waypointOf(kind, ns, name string) *model.KubeGateway {
	if kind == "Service" {
		if svc := c.services.get(nsName{ns, name}); svc != nil {
			return c.waypoint(svc.Labels, ns)
		}
	} else if se := c.serviceEntries[nsName{ns, name}]; se != nil {
		return c.waypoint(se.Labels, ns)
	}
	return nil
}

// waypoint is the Gateway of the input that an object of namespace ns
// with these labels names as its waypoint (label istio.io/use-waypoint,
// on it or else on its namespace), nil when there is none.
func (c *converter) waypoint(labels map[string]string, ns string) *model.KubeGateway {
	if len(c.kgws) == 0 {
		return nil // no Gateway of the input to be one
	}
	wp, ok := labels[labelUseWaypoint]
	if !ok {
		labels = c.opts.Namespaces[ns]
		wp, ok = labels[labelUseWaypoint]
	}
	if !ok || wp == "" || strings.EqualFold(wp, "none") {
		return nil
	}
	return c.kgws[nsName{cmp.Or(labels[labelUseWaypointNamespace], ns), wp}]
}

// meshL4 is a TCP or TLS route's rules converted for its mesh parents.
type meshL4 struct {
	dests  [][]*networking.RouteDestination
	parts  []model.DerivedPart
	zero   []bool // the rule's backends all lack weight
	refuse bool   // a rule cannot be converted: nothing is made
}

// meshL4Rules converts a TCP or TLS route's rules for mesh parents, when
// it has some (any), reporting the problems when report is set (the route
// has no Gateway parent, whose conversion reported them).
func (c *converter) meshL4Rules(r route, rules []gwv1.TCPRouteRule, any, report bool) meshL4 {
	if !any {
		return meshL4{}
	}
	b := &ruleBuilder{c: c, r: r, mesh: true}
	var out meshL4
	for n, rule := range rules {
		path := specIndex("rules", n)
		out.dests = append(out.dests, b.l4Destinations(rule.BackendRefs, path.Key("backendRefs")))
		out.parts = append(out.parts, model.DerivedPart{From: r.meta, Path: path})
		sum := 0
		for _, ref := range rule.BackendRefs {
			sum += weight(ref)
		}
		out.zero = append(out.zero, sum == 0)
	}
	if report {
		b.reportProblems()
	}
	out.refuse = b.hard
	return out
}

// meshL4Route makes a TCP or TLS route's VirtualServices for one mesh
// parent, one per host, numbered on from count (§G7.3); it returns the
// next number.
func (c *converter) meshL4Route(r route, p routeParent, m meshL4, infix string, count int) int {
	if m.refuse {
		return count
	}
	tls := r.kind == "TLSRoute"
	for _, h := range p.hosts {
		name := r.meta.Name + infix + strconv.Itoa(count) + "~" + generatedSuffix
		count++
		vs := &model.VirtualService{ObjectMeta: derived("networking.istio.io/v1", "VirtualService", r.meta.Namespace, name, r.meta, model.Path{}.Key("spec").Key("rules"), "")}
		if len(m.parts) > 0 {
			vs.Derived.Parts = slices.Clone(m.parts)
		}
		spec := &networking.VirtualService{Hosts: []string{h}, Gateways: []string{MeshGateway}}
		for n, dest := range m.dests {
			if tls {
				tr := &networking.TLSRoute{Route: dest}
				if !m.zero[n] {
					// A rule without weight has no match to narrow.
					tr.Match = []*networking.TLSMatchAttributes{meshSNI(r.hostnames, p, h)}
				}
				spec.Tls = append(spec.Tls, tr)
				continue
			}
			tr := &networking.TCPRoute{Route: dest}
			if p.port != 0 {
				tr.Match = []*networking.L4MatchAttributes{{Port: uint32(p.port)}}
			}
			spec.Tcp = append(spec.Tcp, tr)
		}
		vs.Spec = spec
		vs.Annotations = map[string]string{annParents: r.kind + "/" + r.meta.Name + "." + r.meta.Namespace, annRouteSemantics: model.RouteSemanticsGateway}
		c.out = append(c.out, vs)
	}
	return count
}

// meshSNI is a TLS rule's match for a mesh parent's host: the route's
// hostnames (the parent's hosts when it has none) that the host matches,
// on the parentRef's port.
func meshSNI(hostnames []gwv1.Hostname, p routeParent, h string) *networking.TLSMatchAttributes {
	sni := routeHosts(hostnames)
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
