package resolve

import (
	"cmp"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// GatewayServer is one server of a Gateway that selects a router proxy,
// with the VirtualServices bound to it (docs/semantics/virtual-services.md §6.7).
type GatewayServer struct {
	Gateway *model.Gateway
	// Index is the server's position in spec.servers.
	Index  int
	Port   uint32
	Hosts  []string
	Routes []GatewayRoute
}

// Bind is the address the server binds, "" for none.
func (gs GatewayServer) Bind() string { return gs.Gateway.Spec.GetServers()[gs.Index].GetBind() }

// GatewayRoute is a VirtualService applied to a gateway server, and the
// hosts it serves there.
type GatewayRoute struct {
	VirtualService *VirtualService
	Hosts          []host.Name
}

// bindGateways finds the Gateways selecting a router proxy (from any
// namespace) and the VirtualServices each server takes: those visible to
// the proxy's namespace for the gateway, whose hosts meet the server's. A
// Gateway istiod generated from a Gateway API Gateway names its Services
// instead of a selector: it binds to their instances, and only the
// servers whose port one of those Services has
// (docs/semantics/gateway-api.md §G2.6).
func bindGateways(p *Proxy, gateways []*model.Gateway, vss *vsIndex, services []*Service) []GatewayServer {
	var out []GatewayServer
	for _, gw := range gateways {
		bound, ok := BoundServices(gw, services)
		if ok {
			bound = slices.DeleteFunc(slices.Clone(bound), func(s *Service) bool {
				return s.Namespace != p.Namespace || len(s.Selector) == 0 || !LabelsMatch(s.Selector, p.Labels)
			})
			if len(bound) == 0 {
				continue
			}
		} else if !LabelsMatch(gw.Spec.GetSelector(), p.Labels) {
			continue
		}
		name := gw.Namespace + "/" + gw.Name
		for i, srv := range gw.Spec.GetServers() {
			if ok && !slices.ContainsFunc(bound, func(s *Service) bool { _, has := s.PortNumbered(srv.GetPort().GetNumber()); return has }) {
				continue
			}
			gs := GatewayServer{Gateway: gw, Index: i, Port: srv.GetPort().GetNumber(), Hosts: ownNamespace(srv.GetHosts(), gw.Namespace)}
			for _, vs := range vss.visible(p.Namespace, name) {
				hosts := host.Intersection(host.NamesForNamespace(gs.Hosts, vs.Namespace()), vs.Hosts)
				if len(hosts) > 0 {
					gs.Routes = append(gs.Routes, GatewayRoute{vs, hosts})
				}
			}
			out = append(out, gs)
		}
	}
	slices.SortStableFunc(out, func(a, b GatewayServer) int {
		return olderFirst(a.Gateway.Created, a.Gateway.Name, a.Gateway.Namespace, b.Gateway.Created, b.Gateway.Name, b.Gateway.Namespace)
	})
	return out
}

// BoundServices are the Services of the Gateway's namespace (its parent
// Gateway's, for a ListenerSet's listener) a generated Gateway names; ok
// is false for a Gateway that selects its workloads by labels.
func BoundServices(gw *model.Gateway, services []*Service) (out []*Service, ok bool) {
	names, ok := gw.Annotations[model.AnnotationGatewayService]
	if !ok {
		return nil, false
	}
	ns := cmp.Or(gw.Annotations[model.AnnotationParentNamespace], gw.Namespace)
	for _, h := range strings.Split(names, ",") {
		for _, s := range services {
			if string(s.Host) == h && s.Namespace == ns {
				out = append(out, s)
			}
		}
	}
	return out, true
}

// serviceBoundSelectors are the selectors of the Services generated
// Gateways bind to: the workloads they select are routers.
func serviceBoundSelectors(gateways []*model.Gateway, services []*Service) []map[string]string {
	var out []map[string]string
	for _, gw := range gateways {
		bound, _ := BoundServices(gw, services)
		for _, s := range bound {
			if len(s.Selector) > 0 {
				out = append(out, s.Selector)
			}
		}
	}
	return out
}

// ownNamespace spells a server host's "./" as the Gateway's namespace.
func ownNamespace(hosts []string, ns string) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		if name, ok := strings.CutPrefix(h, "./"); ok {
			h = ns + "/" + name
		}
		out[i] = h
	}
	return out
}

// MergedServerHosts are the hosts of server i of a Gateway as istiod compares
// them when it merges Gateways (docs/semantics/virtual-services.md §6.7):
// "./h" is "<gwNs>/h", "*/h" is "h", and "*/*" alone stands for all.
func MergedServerHosts(gw *model.Gateway, i int) []string {
	return MergeHosts(ownNamespace(gw.Spec.GetServers()[i].GetHosts(), gw.Namespace))
}

// MergeHosts are server hosts, "./" already spelt as the namespace, as
// istiod compares them when merging Gateways: "*/host" is "host", and
// "*/*" alone stands for all.
func MergeHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if name, ok := strings.CutPrefix(h, "*/"); ok {
			if name == "*" {
				return []string{"*"}
			}
			h = name
		}
		out = append(out, h)
	}
	return out
}

// ServerHosts are the hosts of every server of gw that VirtualServices of
// namespace vsNs can bind, as istiod binds them (bindGateways): "./host"
// is the Gateway's namespace, "ns/host" counts only for ns.
func ServerHosts(gw *model.Gateway, vsNs string) []host.Name {
	var out []host.Name
	for _, srv := range gw.Spec.GetServers() {
		out = append(out, host.NamesForNamespace(ownNamespace(srv.GetHosts(), gw.Namespace), vsNs)...)
	}
	return out
}
