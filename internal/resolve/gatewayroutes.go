package resolve

import (
	"slices"

	"github.com/meshc/meshc/internal/host"
)

// Sidecars take the VirtualServices istiod generates from Gateway API
// routes (GatewayAPI set) with a few rules of their own
// (docs/semantics/gateway-api.md §G7.4); selectVirtualServices puts those
// of the proxy's namespace first.

// vsImports is vsMatches for vs's host h; a generated VirtualService's
// hosts are imported as services are: a wildcard host only by an entry
// that contains it.
func (c *hostClass) vsImports(vs *VirtualService, h host.Name) bool {
	if !vs.GatewayAPI {
		return c.vsMatches(h)
	}
	_, ok := c.matches(h)
	return ok
}

// gatewayRouteApplies reports whether a VirtualService serves sidecars of
// proxyNs, given the services of the route configuration it names (mine):
// a generated one serves none when it names no service, and outside its
// own namespace only when it names a service of that namespace (a
// producer's route); a consumer's route, for a service of another
// namespace, serves its own namespace only.
func gatewayRouteApplies(vs *VirtualService, mine []*Service, proxyNs string) bool {
	switch {
	case !vs.GatewayAPI:
		return true
	case len(mine) == 0:
		return false
	case proxyNs == vs.Namespace():
		return true
	}
	return slices.ContainsFunc(mine, func(s *Service) bool { return s.Namespace == vs.Namespace() })
}

// appendNamedServices appends to out the scope's services whose host is a
// host of vs, as a generated VirtualService names them (wildcards name
// none).
func (sc *Scope) appendNamedServices(out []*Service, vs *VirtualService) []*Service {
	for i, h := range vs.Hosts {
		var slot int
		var ok bool
		if vs.regHostIDs != nil {
			slot, ok = sc.slotOf(vs.regHostIDs[i], vs.regHostIDs[i] >= 0)
		} else {
			slot, ok = sc.index(lower(h))
		}
		if ok {
			out = append(out, sc.Services[slot])
		}
	}
	return out
}
