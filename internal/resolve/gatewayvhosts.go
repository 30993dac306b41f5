package resolve

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
)

// BlackholeCatchAll is the CatchAll of a gateway route configuration's
// only virtual host when nothing routes there: Envoy answers 404.
const BlackholeCatchAll = "blackhole"

// GatewayRouteConfig assembles route configuration r of a router
// (MergedGateway.Routes), named by its first server's port
// (docs/semantics/virtual-services.md §6.7): a virtual host per host a VirtualService serves there, the
// routes of several VirtualServices for one host concatenated in server
// and binding order. Hosts given the same routes share one virtual host,
// named by the most specific of them; an httpsRedirect server's hosts
// without routes share one too. Routes matching every request go last,
// and the virtual hosts are sorted by name. With no virtual host, the
// configuration holds a blackhole one.
func (m *Mesh) GatewayRouteConfig(v *ProxyView, r GatewayRoutes) *RouteConfig {
	name, servers := r.Name, r.Servers
	var port uint32
	if len(servers) > 0 {
		port = servers[0].Port
	}
	type vhost struct {
		vh *VirtualHost
		// groups are the (gateway, VirtualService) route lists the
		// routes came from, in order: equal groups, equal routes.
		groups []string
	}
	byHost := map[host.Name]*vhost{}
	add := func(name string) *vhost {
		h := host.Name(strings.ToLower(name))
		vh := byHost[h]
		if vh == nil {
			vh = &vhost{vh: &VirtualHost{Name: HostPort(string(h), port), Domains: []string{string(h)}}}
			byHost[h] = vh
		}
		return vh
	}
	// A VirtualService's routes are translated once per gateway, for the
	// first server that takes it.
	translated := map[string][]*HTTPRoute{}
	for _, gs := range servers {
		gw := gs.Gateway.Namespace + "/" + gs.Gateway.Name
		tls := gs.Gateway.Spec.GetServers()[gs.Index].GetTls()
		redirect := tls.GetHttpsRedirect()
		for _, gr := range gs.Routes {
			key := gw + "|" + gr.VirtualService.Namespace() + "/" + gr.VirtualService.Object.Name
			routes, ok := translated[key]
			if !ok {
				routes = m.GatewayHTTPRoutes(gr.VirtualService, gw, v, port)
				for _, r := range routes {
					r.Root, r.TLS = gr.VirtualService, tls != nil
				}
				translated[key] = routes
			}
			if len(routes) == 0 {
				continue // no HTTP route for this server: no virtual host either
			}
			for _, h := range gr.Hosts {
				vh := add(string(h))
				vh.vh.Routes = append(vh.vh.Routes, routes...)
				vh.groups = append(vh.groups, key)
				vh.vh.RequireTLS = vh.vh.RequireTLS || redirect
			}
		}
		// httpsRedirect sends every host of the server to HTTPS, with or
		// without routes.
		if redirect {
			for _, h := range gs.Hosts {
				if _, after, ok := strings.Cut(h, "/"); ok {
					h = after
				}
				add(h).vh.RequireTLS = true
			}
		}
	}
	rc := &RouteConfig{Name: name, Port: port}
	first := map[string]*vhost{}
	hosts := slices.Collect(maps.Keys(byHost))
	host.Sort(hosts)
	for _, h := range hosts {
		vh := byHost[h]
		key := strings.Join(vh.groups, ",")
		if f := first[key]; f != nil && f.vh.RequireTLS == vh.vh.RequireTLS {
			f.vh.Domains = append(f.vh.Domains, vh.vh.Domains...)
			continue
		}
		first[key] = vh
		rc.VirtualHosts = append(rc.VirtualHosts, vh.vh)
	}
	for _, vh := range rc.VirtualHosts {
		vh.Routes = catchAllLast(vh.Routes)
	}
	slices.SortFunc(rc.VirtualHosts, func(a, b *VirtualHost) int { return cmp.Compare(a.Name, b.Name) })
	if len(rc.VirtualHosts) == 0 {
		rc.VirtualHosts = []*VirtualHost{{Name: HostPort("blackhole", port), Domains: []string{"*"}, CatchAll: BlackholeCatchAll}}
	}
	return rc
}

// catchAllLast moves the routes that match every request after the
// others, keeping each group's order, as istiod sorts a gateway virtual
// host's routes.
func catchAllLast(routes []*HTTPRoute) []*HTTPRoute {
	out := slices.DeleteFunc(slices.Clone(routes), matchesEverything)
	for _, r := range routes {
		if matchesEverything(r) {
			out = append(out, r)
		}
	}
	return out
}

// matchesEverything says whether a gateway route, as Envoy gets it,
// matches every request: istiod's test reads the Envoy route, where a
// generated route's prefix matches whole segments, so its "//" is the
// segment prefix "/".
func matchesEverything(r *HTTPRoute) bool {
	m := r.Match
	if m == nil {
		return true
	}
	return catchAllMatch(m) || (r.Root.GatewayAPI && m.GetUri().GetPrefix() == "//" && onlyURI(m))
}

// onlyURI says whether a match asks nothing but the path.
func onlyURI(m *networking.HTTPMatchRequest) bool {
	return len(m.GetHeaders()) == 0 && len(m.GetQueryParams()) == 0 && len(m.GetWithoutHeaders()) == 0 &&
		m.GetMethod() == nil && m.GetAuthority() == nil && m.GetScheme() == nil
}
