package gatewayapi

import (
	"slices"

	"github.com/meshc/meshc/internal/model"
)

// gatewayBackends fills each Gateway's Backends: the hosts the routes
// attached to its listeners send to, which the backend policies of those
// hosts apply to (docs/semantics/gateway-api.md §G8, §G9).
func (c *converter) gatewayBackends() {
	for _, gw := range c.gws {
		bound := map[string]bool{}
		for _, l := range gw.Listeners {
			if l.Istio != nil {
				bound[l.Istio.Namespace+"/"+l.Istio.Name] = true
			}
		}
		set := map[string]bool{}
		for _, o := range c.out {
			vs, ok := o.(*model.VirtualService)
			if !ok || !slices.ContainsFunc(vs.Spec.GetGateways(), func(g string) bool { return bound[g] }) {
				continue
			}
			for _, r := range vs.Spec.GetHttp() {
				for _, d := range r.GetRoute() {
					set[d.GetDestination().GetHost()] = true
				}
			}
			for _, r := range vs.Spec.GetTcp() {
				for _, d := range r.GetRoute() {
					set[d.GetDestination().GetHost()] = true
				}
			}
			for _, r := range vs.Spec.GetTls() {
				for _, d := range r.GetRoute() {
					set[d.GetDestination().GetHost()] = true
				}
			}
		}
		delete(set, "")
		for h := range set {
			gw.Backends = append(gw.Backends, h)
		}
		slices.Sort(gw.Backends)
	}
}

// waypointUsers fills each waypoint's Users: the Services and
// ServiceEntries that name it with istio.io/use-waypoint, and the mesh
// routes attached to them (§G10).
func (c *converter) waypointUsers() {
	for _, gw := range c.gws {
		if gw.Controller != ControllerWaypoint {
			continue
		}
		users := map[parentKey]bool{}
		for ns, byName := range c.services {
			for name := range byName {
				if c.waypointOf("Service", ns, name) == gw.Object {
					users[parentKey{"Service", nsName{ns, name}}] = true
					gw.Users = append(gw.Users, "Service "+ns+"/"+name)
				}
			}
		}
		for key := range c.serviceEntries {
			if c.waypointOf("ServiceEntry", key.ns, key.name) == gw.Object {
				users[parentKey{"ServiceEntry", key}] = true
				gw.Users = append(gw.Users, "ServiceEntry "+key.ns+"/"+key.name)
			}
		}
		slices.Sort(gw.Users)
		self := parentKey{"Gateway", nsName{gw.Object.Namespace, gw.Object.Name}}
		for _, r := range c.routeRefs() {
			var mesh, direct bool
			for _, ref := range r.refs {
				group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, model.GroupGatewayAPI, "Gateway", r.meta.Namespace)
				key := parentKey{kind, nsName{ns, string(ref.Name)}}
				mesh = mesh || isMeshParent(group, kind) && users[key]
				direct = direct || group == model.GroupGatewayAPI && key == self
			}
			if mesh {
				gw.MeshRoutes = append(gw.MeshRoutes, Attachment{Kind: r.kind, Object: r.meta})
			}
			if direct {
				gw.Ignored = append(gw.Ignored, Attachment{Kind: r.kind, Object: r.meta})
			}
		}
	}
}

// routeRefs are the input's routes of every kind, with their parentRefs.
func (c *converter) routeRefs() []route {
	var out []route
	for _, r := range c.httpRoutes {
		out = append(out, route{meta: &r.ObjectMeta, kind: "HTTPRoute", refs: r.Spec.ParentRefs})
	}
	for _, r := range c.grpcRoutes {
		out = append(out, route{meta: &r.ObjectMeta, kind: "GRPCRoute", refs: r.Spec.ParentRefs})
	}
	for _, r := range c.tcpRoutes {
		out = append(out, route{meta: &r.ObjectMeta, kind: "TCPRoute", refs: r.Spec.ParentRefs})
	}
	for _, r := range c.tlsRoutes {
		out = append(out, route{meta: &r.ObjectMeta, kind: "TLSRoute", refs: r.Spec.ParentRefs})
	}
	return out
}
