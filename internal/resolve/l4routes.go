package resolve

import (
	"fmt"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// L4Route is one TCP or TLS route a listener takes, in the order it takes
// them: where the traffic goes and what of the connection it matches.
type L4Route struct {
	VirtualService *VirtualService
	Destinations   []*networking.RouteDestination
	// SNIHosts and Subnets are the chain's match (TLS SNI names,
	// destination subnets); none match every connection.
	SNIHosts, Subnets []string
	// Terminal (TCP) is a route that takes every connection left: no
	// match, or an applicable match on no subnets. Nothing after it runs.
	Terminal bool
}

// l4Match is what TCP and TLS route matches have in common.
type l4Match interface {
	GetGateways() []string
	GetSourceLabels() map[string]string
	GetSourceNamespace() string
	GetPort() uint32
}

// L4MatchApplies says whether a TCP or TLS match takes a sidecar's
// traffic: unlike an HTTP match, every predicate must hold — gateways
// (when given) naming one of src's, source labels, source namespace and
// port (docs/semantics/virtual-services.md §6.6).
func L4MatchApplies(m l4Match, src RouteSource, vsNs string) bool {
	switch {
	case len(m.GetGateways()) > 0 && !src.names(m.GetGateways(), vsNs):
	case !LabelsMatch(m.GetSourceLabels(), src.Labels):
	case m.GetSourceNamespace() != "" && m.GetSourceNamespace() != src.Namespace:
	case m.GetPort() != 0 && m.GetPort() != src.Port:
	default:
		return true
	}
	return false
}

// gatewayL4Applies is a gateway server's check of a TCP or TLS match: the
// port unset or the server's, the gateways unset or naming the server's.
// istiod does not look at a gateway proxy's labels or namespace here.
func gatewayL4Applies(m l4Match, src RouteSource, vsNs string) bool {
	if m.GetPort() != 0 && m.GetPort() != src.Port {
		return false
	}
	return len(m.GetGateways()) == 0 || src.names(m.GetGateways(), vsNs)
}

// ForHost are the VirtualServices, in order, with a host that matches h.
func ForHost(vss []*VirtualService, h host.Name) []*VirtualService {
	var out []*VirtualService
	for _, vs := range vss {
		if slices.ContainsFunc(vs.Hosts, func(vh host.Name) bool { return host.Name(strings.ToLower(string(vh))).Matches(h) }) {
			out = append(out, vs)
		}
	}
	return out
}

// SidecarTCPRoutes are the TCP routes of a sidecar's listener for h, from
// the listener's VirtualServices (docs/semantics/virtual-services.md
// §6.6), in order: a route whose applicable matches all name subnets is
// taken on those subnets, and the first route without matches, or with an
// applicable match on no subnets, is terminal and ends the list. On a
// portless listener (port 0) every applicable match is terminal.
func SidecarTCPRoutes(vss []*VirtualService, h host.Name, src RouteSource) []L4Route {
	var out []L4Route
	for _, vs := range ForHost(vss, h) {
		for _, r := range vs.Object.Spec.GetTcp() {
			if len(r.GetRoute()) == 0 {
				continue
			}
			terminal := len(r.GetMatch()) == 0
			var subnets []string
			for _, m := range r.GetMatch() {
				if !L4MatchApplies(m, src, vs.Namespace()) {
					continue
				}
				if len(m.GetDestinationSubnets()) == 0 || src.Port == 0 {
					terminal = true
					break
				}
				subnets = append(subnets, m.GetDestinationSubnets()...)
			}
			switch {
			case terminal:
				return append(out, L4Route{VirtualService: vs, Destinations: r.GetRoute(), Terminal: true})
			case len(subnets) > 0:
				out = append(out, L4Route{VirtualService: vs, Destinations: r.GetRoute(), Subnets: subnets})
			}
		}
	}
	return out
}

// SidecarTLSRoutes are the TLS routes of a sidecar's listener for h: one
// per applicable match, matching its SNI names and destination subnets,
// the first route winning a repeated match. istiod keeps the last
// destination subnets it met for every later match too, even one without
// subnets; so does meshc, to predict it.
func SidecarTLSRoutes(vss []*VirtualService, h host.Name, src RouteSource) []L4Route {
	var out []L4Route
	handled := map[string]bool{}
	var subnets []string
	for _, vs := range ForHost(vss, h) {
		for _, r := range vs.Object.Spec.GetTls() {
			if len(r.GetRoute()) == 0 {
				continue
			}
			for _, m := range r.GetMatch() {
				if !L4MatchApplies(m, src, vs.Namespace()) {
					continue
				}
				if len(m.GetDestinationSubnets()) > 0 {
					subnets = m.GetDestinationSubnets()
				}
				key := strings.Join(m.GetSniHosts(), ",") + "|" + strings.Join(m.GetDestinationSubnets(), ",")
				if handled[key] {
					continue
				}
				handled[key] = true
				out = append(out, L4Route{VirtualService: vs, Destinations: r.GetRoute(), SNIHosts: m.GetSniHosts(), Subnets: subnets})
			}
		}
	}
	return out
}

// GatewayTCPRoute is the TCP route a TCP gateway server, plain or
// terminating TLS, takes: the first, over its VirtualServices in order,
// with destinations and a match for the server (or none). A VirtualService
// made of a TLSRoute has TLS routes only: istiod then takes the first of
// those whose match, SNI names aside, is the server's
// (docs/semantics/gateway-api.md §G3.4).
func GatewayTCPRoute(gs GatewayServer) (L4Route, bool) {
	src := RouteSource{Gateways: []string{gs.Gateway.Namespace + "/" + gs.Gateway.Name}, Port: gs.Port}
	for _, gr := range gs.Routes {
		vs := gr.VirtualService
		applies := func(m l4Match) bool { return gatewayL4Applies(m, src, vs.Namespace()) }
		for _, r := range vs.Object.Spec.GetTcp() {
			if len(r.GetRoute()) == 0 {
				continue
			}
			if len(r.GetMatch()) == 0 || slices.ContainsFunc(r.GetMatch(), func(m *networking.L4MatchAttributes) bool { return applies(m) }) {
				return L4Route{VirtualService: vs, Destinations: r.GetRoute(), Terminal: true}, true
			}
		}
		if !strings.HasPrefix(vs.Object.Annotations[model.AnnotationParents], "TLSRoute/") {
			continue
		}
		for _, r := range vs.Object.Spec.GetTls() {
			if slices.ContainsFunc(r.GetMatch(), func(m *networking.TLSMatchAttributes) bool { return applies(m) }) {
				return L4Route{VirtualService: vs, Destinations: r.GetRoute(), Terminal: true}, true
			}
		}
	}
	return L4Route{}, false
}

// GatewayTLSRoutes are the routes of a TLS passthrough gateway server, by
// SNI, along the TLS routes of its VirtualServices
// (docs/semantics/virtual-services.md §6.7). An SNI name an earlier route
// on the port and bind took (seen, shared by the port's servers, holds
// the bind of the latest server to take each name) is skipped, as istiod
// does and as Envoy would refuse the duplicate; skipped says why for each.
func GatewayTLSRoutes(gs GatewayServer, seen map[string]string) (routes []L4Route, skipped []string) {
	bind := gs.Gateway.Spec.GetServers()[gs.Index].GetBind()
	gw := gs.Gateway.Namespace + "/" + gs.Gateway.Name
	src := RouteSource{Gateways: []string{gw}, Port: gs.Port}
	for _, gr := range gs.Routes {
		vs := gr.VirtualService
		for _, r := range vs.Object.Spec.GetTls() {
			if len(r.GetRoute()) == 0 {
				continue
			}
			for _, m := range r.GetMatch() {
				if !gatewayL4Applies(m, src, vs.Namespace()) {
					continue
				}
				if slices.ContainsFunc(m.GetSniHosts(), func(h string) bool { b, ok := seen[h]; return ok && b == bind }) {
					skipped = append(skipped, fmt.Sprintf("VirtualService %s/%s: TLS route on gateway %s port %d repeats an SNI name of an earlier route; skipped, as istiod does",
						vs.Object.Namespace, vs.Object.Name, gw, gs.Port))
					continue
				}
				for _, h := range m.GetSniHosts() {
					seen[h] = bind
				}
				routes = append(routes, L4Route{VirtualService: vs, Destinations: r.GetRoute(), SNIHosts: m.GetSniHosts()})
			}
		}
	}
	return routes, skipped
}
