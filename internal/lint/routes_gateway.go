package lint

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// The route analyzers about what gateways do with VirtualServices.

// gatewayRefs are a VirtualService's gateways other than the mesh.
func gatewayRefs(vs *resolve.VirtualService) []string {
	var out []string
	for _, g := range vs.Gateways {
		if g != resolve.MeshGateway {
			out = append(out, g)
		}
	}
	return out
}

// MC5010: a gateway route to a host without a subset, where a mesh
// VirtualService routes that host by subset: gateways never apply mesh
// VirtualServices (docs/semantics/virtual-services.md §6.7).
var ingressRouteSkipsMeshRules = &Analyzer{Entry: diag.IngressRouteSkipsMeshRules, Run: func(p *Pass) {
	// The mesh VirtualServices that route one of their own hosts by
	// subset, by that host.
	bySubset := map[host.Name][]*resolve.VirtualService{}
	for _, vs := range p.Mesh.VirtualServices {
		if vs.Delegate || !slices.Contains(vs.Gateways, resolve.MeshGateway) {
			continue
		}
		for _, d := range vs.Destinations {
			if d.Kind == "http" && d.Subset != "" && slices.Contains(vs.Hosts, d.Host) && !slices.Contains(bySubset[d.Host], vs) {
				bySubset[d.Host] = append(bySubset[d.Host], vs)
			}
		}
	}
	if len(bySubset) == 0 {
		return
	}
	// A delegate's destination, shared by several roots, is one finding.
	type key struct {
		in   *resolve.VirtualService
		path string
	}
	seen := map[key]bool{}
	for _, vs := range p.Mesh.VirtualServices {
		gws := gatewayRefs(vs)
		if vs.Delegate || len(gws) == 0 {
			continue
		}
		for _, d := range vs.Destinations {
			if d.Kind != "http" || d.Subset != "" || seen[key{d.In, d.Path.String()}] {
				continue
			}
			seen[key{d.In, d.Path.String()}] = true
			mesh := slices.DeleteFunc(slices.Clone(bySubset[d.Host]), func(o *resolve.VirtualService) bool { return o == vs })
			if len(mesh) == 0 {
				continue
			}
			var names []string
			for _, o := range mesh {
				names = append(names, objName(&o.Object.ObjectMeta))
			}
			inMeta := &d.In.Object.ObjectMeta
			r := p.Report(inMeta, d.Path.Key("host"), diag.GatewayRouteWithoutSubset,
				objName(inMeta), list(gws, 3), d.Host, plural(len(names), "VirtualService ", "VirtualServices ")+list(names, 3), plural(len(names), "its", "their"), plural(len(names), "it", "them"))
			for _, o := range mesh {
				r.Related = append(r.Related, related(&o.Object.ObjectMeta, "routes %s by subset for the mesh", d.Host))
			}
		}
	}
}}

// jwtClaimHeader is the prefix of a header match on a JWT claim:
// "@request.auth.claims.name" or "@request.auth.claims[name]".
const jwtClaimHeader = "@request.auth.claims"

func isClaimHeader(name string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(name), jwtClaimHeader)
	return ok && (len(rest) > 1 && rest[0] == '.' || len(rest) > 2 && rest[0] == '[' && rest[len(rest)-1] == ']')
}

// claimMatch finds the first match of a VirtualService's effective HTTP
// routes on a JWT claim: the header and where it is written.
func claimMatch(vs *resolve.VirtualService) (string, *resolve.VirtualService, model.Path, bool) {
	for _, r := range vs.Routes {
		for j, m := range r.GetMatch() {
			for _, field := range []struct {
				name    string
				headers []string
			}{{"headers", slices.Sorted(maps.Keys(m.GetHeaders()))}, {"withoutHeaders", slices.Sorted(maps.Keys(m.GetWithoutHeaders()))}} {
				for _, h := range field.headers {
					if isClaimHeader(h) {
						return h, r.From, model.Path{}.Key("spec").Key("http").Index(r.Index).Key("match").Index(j).Key(field.name), true
					}
				}
			}
		}
	}
	return "", nil, nil, false
}

// MC5012: a gateway route on a JWT claim, on gateway proxies no
// RequestAuthentication applies to. Like istioctl, it judges the gateway
// workloads of the input, with the RequestAuthentications of their
// namespace and the root namespace (resolve.Mesh.PoliciesFor). A Gateway
// whose workloads are not in the input is judged by its selector: it is
// reported only when no RequestAuthentication anywhere in the input
// selects those labels, since the workloads' namespace is unknown.
var jwtClaimRouteWithoutAuthentication = &Analyzer{Entry: diag.JWTClaimRouteWithoutAuthentication, Run: func(p *Pass) {
	var byGateway map[string][]*resolve.Proxy // "namespace/name" → its proxies
	var gateways gatewayIndex
	authenticated := map[*resolve.Proxy]bool{}
	for _, vs := range p.Mesh.VirtualServices {
		gws := gatewayRefs(vs)
		if vs.Delegate || len(gws) == 0 {
			continue
		}
		header, in, at, ok := claimMatch(vs)
		if !ok {
			continue
		}
		if byGateway == nil {
			byGateway = gatewayProxies(p.Mesh, authenticated)
			gateways = newGatewayIndex(p.Mesh)
		}
		for _, g := range gws {
			proxies := byGateway[g]
			if len(proxies) == 0 {
				gw, ok := gateways.byRef[g].(*model.Gateway)
				if !ok || requestAuthnSelects(p.Mesh, gw.Spec.GetSelector()) {
					continue // MC5004's, or possibly authenticated
				}
				d := p.Report(&in.Object.ObjectMeta, at, diag.ClaimRouteUnselected,
					objName(&vs.Object.ObjectMeta), header, g, labelString(gw.Spec.GetSelector()))
				d.Related = append(d.Related, related(&gw.ObjectMeta, "selects the gateway workloads"))
				continue
			}
			var bare []*resolve.Proxy
			for _, px := range proxies {
				if !authenticated[px] {
					bare = append(bare, px)
				}
			}
			if len(bare) == 0 {
				continue
			}
			ids := proxyIDs(bare)
			d := p.Report(&in.Object.ObjectMeta, at, diag.ClaimRouteUnauthenticated,
				objName(&vs.Object.ObjectMeta), header, g, plural(len(ids), "proxy ", "proxies ")+list(ids, 5))
			d.Proxies = ids
		}
	}
}}

// requestAuthnSelects reports whether some RequestAuthentication of the
// input, in any namespace, selects workloads labelled labels.
func requestAuthnSelects(m *resolve.Mesh, labels map[string]string) bool {
	return slices.ContainsFunc(m.Policies, func(pol *resolve.Policy) bool {
		return pol.Object.Kind == "RequestAuthentication" && pol.Selects(labels)
	})
}

// labelString renders labels as "k=v, ...", sorted.
func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return "every workload"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+"="+labels[k])
	}
	return strings.Join(out, ", ")
}

// gatewayProxies lists, per Gateway, the router proxies it selects, and
// records in authenticated those a RequestAuthentication applies to.
func gatewayProxies(m *resolve.Mesh, authenticated map[*resolve.Proxy]bool) map[string][]*resolve.Proxy {
	out := map[string][]*resolve.Proxy{}
	for _, v := range m.Views {
		if len(v.Gateways) == 0 {
			continue
		}
		authenticated[v.Proxy] = slices.ContainsFunc(m.PoliciesFor(v.Proxy), func(pol *resolve.Policy) bool {
			return pol.Object.Kind == "RequestAuthentication"
		})
		for _, gs := range v.Gateways {
			ref := gs.Gateway.Namespace + "/" + gs.Gateway.Name
			if !slices.Contains(out[ref], v.Proxy) {
				out[ref] = append(out[ref], v.Proxy)
			}
		}
	}
	return out
}
