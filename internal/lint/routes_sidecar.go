package lint

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// The route analyzers that read a Sidecar's scope. Each iterates scopes,
// not proxies, and groups its findings over the scopes they share.

// sidecarScopes are the scopes a Sidecar resource shapes: gateways and the
// built-in default import everything.
func sidecarScopes(m *resolve.Mesh, f func(sc *resolve.Scope, sidecar *model.Sidecar)) {
	for _, sc := range m.Scopes {
		if s := sc.Choice.Sidecar; s != nil {
			f(sc, s)
		}
	}
}

// MC5006: a Sidecar imports a VirtualService for one host and, with it,
// routes for hosts it does not import (docs/semantics/sidecar-scope.md
// §4.7: the VirtualService is taken whole).
var virtualServiceLeaksHosts = &Analyzer{Entry: diag.VirtualServiceLeaksHosts, Run: func(p *Pass) {
	// A root namespace Sidecar's "./" entries differ per namespace, and
	// so may the hosts left out.
	type key struct {
		sidecar *model.Sidecar
		vs      *resolve.VirtualService
		leaked  string
	}
	type finding struct {
		via     host.Name
		leaked  []int // indexes in vs.Hosts
		proxies []*resolve.Proxy
	}
	var found groups[key, finding]
	sidecarScopes(p.Mesh, func(sc *resolve.Scope, sidecar *model.Sidecar) {
		done := map[*resolve.VirtualService]bool{}
		for _, l := range sc.Listeners {
			for _, vs := range l.VirtualServices {
				if done[vs] {
					continue
				}
				done[vs] = true
				var via host.Name
				var leaked []int
				for i, h := range vs.Hosts {
					if slices.ContainsFunc(sc.Listeners, func(l *resolve.EgressListener) bool { return l.ImportsVSHost(vs, h) }) {
						via = cmp.Or(via, h)
					} else {
						leaked = append(leaked, i)
					}
				}
				if len(leaked) == 0 || via == "" {
					continue
				}
				k := key{sidecar, vs, fmt.Sprint(leaked)}
				f := found.add(k, func() finding { return finding{via: via, leaked: leaked} })
				f.proxies = append(f.proxies, sc.Proxies...)
			}
		}
	})
	for _, k := range found.order {
		f := found.byKey[k]
		var names []string
		for _, i := range f.leaked {
			names = append(names, string(k.vs.Hosts[i]))
		}
		vsMeta := &k.vs.Object.ObjectMeta
		d := p.Report(vsMeta, model.Path{}.Key("spec").Key("hosts").Index(f.leaked[0]), diag.SidecarImportsOtherHosts,
			objName(&k.sidecar.ObjectMeta), objName(vsMeta), f.via, list(names, 5), plural(len(names), "that host", "those hosts"))
		d.Related = append(d.Related, related(&k.sidecar.ObjectMeta, "its egress hosts import %s only", f.via))
		d.Proxies = proxyIDs(f.proxies)
	}
}}

// MC5007: a route destination brings a service into a Sidecar's scope
// that the egress hosts do not import (docs/semantics/sidecar-scope.md
// §4.6).
var sidecarBypassedByRoute = &Analyzer{Entry: diag.SidecarBypassedByRoute, Run: func(p *Pass) {
	type key struct {
		sidecar *model.Sidecar
		vs      *resolve.VirtualService
		host    host.Name
	}
	type finding struct {
		path    model.Path
		svc     *resolve.Service
		proxies []*resolve.Proxy
	}
	var found groups[key, finding]
	sidecarScopes(p.Mesh, func(sc *resolve.Scope, sidecar *model.Sidecar) {
		seen := map[host.Name]bool{}
		sc.RoutedDestinations(func(d *resolve.Destination) {
			if seen[d.Host] {
				return
			}
			seen[d.Host] = true
			imp, ok := sc.Import(d.Host)
			if !ok || imp.Entry != "" || imp.ViaVirtualService == nil {
				return
			}
			k := key{sidecar, d.In, d.Host}
			f := found.add(k, func() finding { return finding{path: d.Path, svc: imp.Service} })
			f.proxies = append(f.proxies, sc.Proxies...)
		})
	})
	for _, k := range found.order {
		f := found.byKey[k]
		vsMeta := &k.vs.Object.ObjectMeta
		d := p.Report(vsMeta, f.path.Key("host"), diag.RouteImportsHost,
			objName(vsMeta), k.host, objName(&k.sidecar.ObjectMeta))
		d.Related = append(d.Related, related(&k.sidecar.ObjectMeta, "its egress hosts do not list %s", k.host))
		if f.svc != nil && f.svc.Object != nil {
			d.Related = append(d.Related, related(f.svc.Object, "defines %s", f.svc.Host))
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}

// MC5011: a mesh VirtualService of a namespace that the namespace's
// Sidecar does not import, so it never applies there
// (docs/semantics/sidecar-scope.md §4.7).
var sidecarHidesRoutedHost = &Analyzer{Entry: diag.SidecarHidesRoutedHost, Run: func(p *Pass) {
	byNs := map[string][]*resolve.VirtualService{}
	for _, vs := range p.Mesh.VirtualServices {
		// A VirtualService for a service that does not exist routes
		// nothing anyway (callable).
		if !vs.Delegate && slices.Contains(vs.Gateways, resolve.MeshGateway) && vs.ExportedTo(vs.Namespace()) && callable(p.Mesh, vs, nil) {
			byNs[vs.Namespace()] = append(byNs[vs.Namespace()], vs)
		}
	}
	type key struct {
		sidecar *model.Sidecar
		vs      *resolve.VirtualService
	}
	type finding struct {
		proxies []*resolve.Proxy
		// imported is a host of the VirtualService whose service the
		// scope imports all the same.
		imported host.Name
	}
	found := map[key]*finding{}
	var order []key
	sidecarScopes(p.Mesh, func(sc *resolve.Scope, sidecar *model.Sidecar) {
		for _, vs := range byNs[sc.Namespace] {
			if slices.ContainsFunc(sc.Listeners, func(l *resolve.EgressListener) bool { return slices.Contains(l.VirtualServices, vs) }) {
				continue
			}
			k := key{sidecar, vs}
			f := found[k]
			if f == nil {
				f = &finding{}
				for _, h := range vs.Hosts {
					if _, ok := sc.Service(h); ok {
						f.imported = h
						break
					}
				}
				found[k] = f
				order = append(order, k)
			}
			f.proxies = append(f.proxies, sc.Proxies...)
		}
	})
	for _, k := range order {
		f := found[k]
		vsMeta := &k.vs.Object.ObjectMeta
		ids := proxyIDs(f.proxies)
		why := ""
		if f.imported != "" {
			// istiod matches an egress host's namespace against the
			// VirtualService's, not the service's.
			why = fmt.Sprintf(" (it imports the service %s, but a VirtualService is imported only by egress hosts of its own namespace, %s, or of \"*/\")", f.imported, k.vs.Namespace())
		}
		d := p.Report(vsMeta, model.Path{}.Key("spec").Key("hosts"), diag.SidecarImportsNoHost,
			objName(vsMeta), list(hostStrings(k.vs.Hosts), 3), objName(&k.sidecar.ObjectMeta), list(ids, 5), why, plural(len(k.vs.Hosts), "the host", "its hosts"))
		d.Related = append(d.Related, related(&k.sidecar.ObjectMeta, "egress hosts %s", list(sidecarHosts(k.sidecar), 5)))
		d.Proxies = ids
	}
}}

func sidecarHosts(s *model.Sidecar) []string {
	var out []string
	for _, eg := range s.Spec.GetEgress() {
		out = append(out, eg.GetHosts()...)
	}
	return out
}
