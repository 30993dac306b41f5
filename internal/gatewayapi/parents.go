package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// routeParent is one listener a route's parentRef reaches, and whether it
// accepts the route.
type routeParent struct {
	info *parentInfo
	// ref is the parentRef's index in spec.parentRefs.
	ref    int
	denied *denial
	// banned are the hostnames of the other listeners on the same port
	// and protocol, which win the hosts they match more exactly.
	banned []string
	// hosts are the hosts of a mesh parent (a Service's, a ServiceEntry's),
	// port its port (0 for every port), shown how findings name it; info
	// is then meshParent.
	hosts []string
	port  int32
	shown string
}

// meshParent stands for the sidecars (and waypoints) of the mesh, the
// parent of a route attached to a Service: it admits every route kind.
var meshParent = &parentInfo{internalName: "mesh", allowedKinds: []gwv1.RouteGroupKind{
	routeKind("HTTPRoute"), routeKind("GRPCRoute"), routeKind("TCPRoute"), routeKind("TLSRoute")}}

// mesh reports whether the parent is a Service's (GAMMA).
func (p routeParent) mesh() bool { return p.info == meshParent }

// denial is why a listener does not accept a route; rank orders the
// reasons as istiod picks the one it reports (lower first).
type denial struct {
	reason, message string
	rank            int
}

const (
	rankNotAllowed = iota + 1
	rankNoHostname
	rankNotAccepted
)

// route is what the conversion reads of any route kind.
type route struct {
	meta      *model.ObjectMeta
	kind      string
	refs      []gwv1.ParentReference
	hostnames []gwv1.Hostname
}

func (r route) name() string { return r.meta.Namespace + "/" + r.meta.Name }

// parentsOf resolves a route's parentRefs to the listeners they reach
// (docs/semantics/gateway-api.md §G3.1), adding the findings about
// references meshc cannot follow to found. The result is sorted by
// parentRef, as istiod sorts it. It only reads the converter.
func (c *converter) parentsOf(r route, found *[]diag.Diagnostic) []routeParent {
	var out []routeParent
	for i, ref := range r.refs {
		group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, model.GroupGatewayAPI, "Gateway", r.meta.Namespace)
		switch {
		case isMeshParent(group, kind):
			if rp, ok := c.serviceParent(r, ref, i, kind, ns, found); ok {
				out = append(out, rp)
			}
			continue
		case group != model.GroupGatewayAPI || kind != "Gateway" && kind != "ListenerSet":
			continue // another controller's parent: istiod passes it over
		}
		key := nsName{ns, string(ref.Name)}
		infos := c.parents[parentKey{kind, key}]
		if len(infos) == 0 {
			// Judged only when the input holds Gateways: routes are
			// often kept apart from the Gateways they attach to.
			switch {
			case len(c.kgwList) == 0:
			case kind == "Gateway" && c.kgws[key] == nil:
				*found = append(*found, diag.ParentRefMissing.At(r.meta.RefAt(specIndex("parentRefs", i)), r.kind, r.name(), ns+"/"+string(ref.Name)))
			case kind == "ListenerSet" && !c.hasListenerSet(key):
				*found = append(*found, diag.SetParentRefMissing.At(r.meta.RefAt(specIndex("parentRefs", i)), r.kind, r.name(), ns+"/"+string(ref.Name)))
			}
			continue
		}
		for _, pi := range infos {
			rp := routeParent{info: pi, ref: i, denied: c.allowed(pi, r, ref)}
			for _, other := range infos {
				if other != pi && other.port == pi.port && other.protocol == pi.protocol && other.originalHostname != pi.originalHostname {
					rp.banned = append(rp.banned, other.originalHostname)
				}
			}
			out = append(out, rp)
		}
	}
	if len(r.refs) > 1 {
		keys := make([]string, len(r.refs))
		for i, ref := range r.refs {
			keys[i] = parentRefString(ref, r.meta.Namespace)
		}
		slices.SortStableFunc(out, func(a, b routeParent) int { return strings.Compare(keys[a.ref], keys[b.ref]) })
	}
	return out
}

// parentRefString is the order istiod sorts a route's parents in.
func parentRefString(ref gwv1.ParentReference, ns string) string {
	group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, model.GroupGatewayAPI, "Gateway", ns)
	section, port := "", 0
	if ref.SectionName != nil {
		section = string(*ref.SectionName)
	}
	if ref.Port != nil {
		port = int(*ref.Port)
	}
	return fmt.Sprintf("%s/%s/%s/%s/%d.%s", group, kind, ref.Name, section, port, ns)
}

// allowed says why a listener does not accept a route, nil when it does.
func (c *converter) allowed(pi *parentInfo, r route, ref gwv1.ParentReference) *denial {
	if ref.Port != nil && int32(*ref.Port) != pi.port {
		return &denial{reason: "NoMatchingParent", message: fmt.Sprintf("port %d not found", *ref.Port), rank: rankNotAccepted}
	}
	if ref.SectionName != nil && *ref.SectionName != "" && string(*ref.SectionName) != pi.section {
		return &denial{reason: "NoMatchingParent", message: fmt.Sprintf("sectionName %q not found", *ref.SectionName), rank: rankNotAccepted}
	}
	hostnames := r.hostnames
	if len(hostnames) == 0 {
		hostnames = []gwv1.Hostname{"*"}
	}
	matched, hostMatched := false, false
	for _, rh := range hostnames {
		for _, ph := range pi.hostnames {
			pns, phost, ok := strings.Cut(ph, "/")
			if !ok {
				pns, phost = "*", ph
			}
			hm := host.Name(phost).Matches(host.Name(rh))
			hostMatched = hostMatched || hm
			if hm && (pns == "*" || pns == r.meta.Namespace) {
				matched = true
			}
		}
	}
	if !matched {
		if hostMatched {
			return &denial{reason: "NotAllowedByListeners", rank: rankNotAllowed,
				message: fmt.Sprintf("hostnames matched parent hostname %q, but namespace %q is not allowed by the parent", pi.originalHostname, r.meta.Namespace)}
		}
		return &denial{reason: "NoMatchingListenerHostname", rank: rankNoHostname,
			message: fmt.Sprintf("no hostnames matched parent hostname %q", pi.originalHostname)}
	}
	if !slices.ContainsFunc(pi.allowedKinds, func(k gwv1.RouteGroupKind) bool { return kindEqual(k, routeKind(r.kind)) }) {
		return &denial{reason: "NotAllowedByListeners", message: fmt.Sprintf("kind %s is not allowed", r.kind), rank: rankNotAllowed}
	}
	return nil
}

// reportParents reports each parentRef that no listener accepts, with the
// reason istiod would give, and attaches the route to the listeners that
// accept it. It returns those (acceptedParents).
func (c *converter) reportParents(r route, parents []routeParent) []routeParent {
	c.attach(r, parents)
	return acceptedParents(parents)
}

// attach attaches a route to the listeners among its parents that accept
// it, and reports each parentRef that none accepts.
func (c *converter) attach(r route, parents []routeParent) {
	denied := false
	for _, p := range parents {
		switch {
		case p.denied != nil:
			denied = true
		case !p.mesh():
			p.info.listener.Routes = append(p.info.listener.Routes, Attachment{Kind: r.kind, Object: r.meta})
		}
	}
	if denied {
		c.reportDenied(r, parents)
	}
}

// acceptedParents are the parents that accept a route, sorted by
// generated Gateway name: parents itself when it is the one parent.
func acceptedParents(parents []routeParent) []routeParent {
	if len(parents) == 1 && parents[0].denied == nil {
		return parents
	}
	var accepted []routeParent
	for _, p := range parents {
		if p.denied == nil {
			accepted = append(accepted, p)
		}
	}
	slices.SortStableFunc(accepted, func(a, b routeParent) int { return strings.Compare(a.info.internalName, b.info.internalName) })
	return accepted
}

// reportDenied reports each parentRef whose listeners all deny the route.
func (c *converter) reportDenied(r route, parents []routeParent) {
	for i := range r.refs {
		var ps []routeParent
		for _, p := range parents {
			if p.ref == i {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 || slices.ContainsFunc(ps, func(p routeParent) bool { return p.denied == nil }) {
			continue
		}
		best := slices.MinFunc(ps, func(a, b routeParent) int { return cmp.Compare(a.denied.rank, b.denied.rank) })
		var msgs []string
		for _, p := range ps {
			if p.denied.rank == best.denied.rank && !slices.Contains(msgs, p.denied.message) {
				msgs = append(msgs, p.denied.message)
			}
		}
		parent := best.shown
		if !best.mesh() {
			best.info.gw.Rejected = append(best.info.gw.Rejected, Rejection{Kind: r.kind, Object: r.meta, Reason: best.denied.reason, Message: strings.Join(msgs, "; ")})
			parent = best.info.owner
		}
		c.report(diag.ParentRefRejected.At(r.meta.RefAt(specIndex("parentRefs", i)), r.kind, r.name(),
			parent, best.denied.reason, strings.Join(msgs, "; ")))
	}
}

// allowsHost reports whether a route host may be served by the parent
// listener: a wildcard listener leaves a host to another listener of the
// same port and protocol whose hostname matches it more exactly.
func (p routeParent) allowsHost(routeHost string) bool {
	ours := host.Name(p.info.originalHostname)
	rh := host.Name(routeHost)
	if ours != "" && !ours.IsWildcard() {
		return true
	}
	if ours != "" && !rh.Matches(ours) {
		return false
	}
	for _, other := range p.banned {
		if len(ours) > len(other) {
			continue
		}
		if rh.SubsetOf(host.Name(other)) {
			return false
		}
	}
	return true
}
