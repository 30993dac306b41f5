package lint

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// routeAnalyzers check VirtualServices and routes (MC5xxx).
var routeAnalyzers = []*Analyzer{
	unreachableRoute,
	gatewayNotFound,
	destinationPortRequired,
	virtualServiceLeaksHosts,
	sidecarBypassedByRoute,
	virtualServiceHostNotInGateway,
	routeToUnknownPort,
	ingressRouteSkipsMeshRules,
	sidecarHidesRoutedHost,
	jwtClaimRouteWithoutAuthentication,
}

// ruleMatches is one route of a VirtualService's http, tcp or tls list as
// MC5003 compares them: its matches, and whether it takes everything.
type ruleMatches struct {
	name     string
	matches  []matchKey
	catchAll bool
}

// matchKey is a match as MC5003 compares it: its deterministic encoding
// (a match's name only labels it, so it is left out) and, for an HTTP
// match on a uri prefix or exact path, the encoding of the rest and the
// path, so that a prefix can be found to cover a later match.
type matchKey struct {
	full, rest string
	uri        string
	prefix     bool // uri is a prefix; else exact, or no uri when rest is ""
}

func encode(m proto.Message) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return string(b)
}

func httpMatchKey(m *networking.HTTPMatchRequest) matchKey {
	c := proto.Clone(m).(*networking.HTTPMatchRequest)
	c.Name = ""
	k := matchKey{full: encode(c)}
	switch u := c.GetUri().GetMatchType().(type) {
	case *networking.StringMatch_Prefix:
		k.uri, k.prefix = u.Prefix, true
	case *networking.StringMatch_Exact:
		k.uri = u.Exact
	default:
		return k
	}
	c.Uri = nil
	k.rest = encode(c)
	return k
}

// MC5003: a route, or a match of one, that an earlier route of the same
// VirtualService always takes first (docs/semantics/virtual-services.md
// §6.6: the first matching route wins). A per-object check: copies HNC
// made say nothing their source does not.
var unreachableRoute = &Analyzer{Entry: diag.UnreachableRoute, Run: func(p *Pass) {
	for _, vs := range p.Mesh.VirtualServices {
		o := vs.Object
		if o.InheritedFrom != nil {
			continue
		}
		if hs := o.Spec.GetHttp(); mayShadow(hs) {
			http := make([]ruleMatches, 0, len(hs))
			for _, r := range hs {
				rm := ruleMatches{name: r.GetName(), catchAll: len(r.GetMatch()) == 0}
				for _, m := range r.GetMatch() {
					rm.matches = append(rm.matches, httpMatchKey(m))
					rm.catchAll = rm.catchAll || resolve.CatchAllMatch(m)
				}
				http = append(http, rm)
			}
			reportUnreachable(p, &o.ObjectMeta, "http", http)
		}
		if ts := o.Spec.GetTcp(); mayShadow(ts) {
			reportUnreachable(p, &o.ObjectMeta, "tcp", encodedMatches(ts))
		}
		if ts := o.Spec.GetTls(); mayShadow(ts) {
			reportUnreachable(p, &o.ObjectMeta, "tls", encodedMatches(ts))
		}
	}
}}

// mayShadow reports whether a route list can have a dead route or match:
// one route with at most one match has nothing before it to take its
// requests. That is the common list, a Gateway API route's conversion
// (one rule, one "/" prefix match) among them, and it is left before its
// matches are encoded.
func mayShadow[R interface{ GetMatch() []M }, M any](routes []R) bool {
	return len(routes) > 1 || len(routes) == 1 && len(routes[0].GetMatch()) > 1
}

// encodedMatches lists the tcp or tls routes by their matches' encodings.
func encodedMatches[R interface{ GetMatch() []M }, M proto.Message](routes []R) []ruleMatches {
	out := make([]ruleMatches, 0, len(routes))
	for _, r := range routes {
		rm := ruleMatches{catchAll: len(r.GetMatch()) == 0}
		for _, m := range r.GetMatch() {
			rm.matches = append(rm.matches, matchKey{full: encode(m)})
		}
		out = append(out, rm)
	}
	return out
}

// reportUnreachable reports the dead routes and matches of one route list
// (spec.<kind>) of a VirtualService: after a route that takes everything,
// and matches that repeat an earlier route's match or that an earlier
// uri prefix with otherwise identical conditions covers. Matches are
// looked up by encoding, so the cost grows with the matches, and with the
// prefixes sharing the same other conditions.
func reportUnreachable(p *Pass, vs *model.ObjectMeta, kind string, routes []ruleMatches) {
	spec := model.Path{}.Key("spec").Key(kind)
	label := func(i int) string {
		if routes[i].name != "" {
			return fmt.Sprintf("spec.%s[%d] (%q)", kind, i, routes[i].name)
		}
		return fmt.Sprintf("spec.%s[%d]", kind, i)
	}
	type at struct{ route, match int }
	type dead struct {
		match int
		by    at
		why   string // "" for a repeat
	}
	seen := map[string]at{}
	prefixes := map[string][]at{} // by the encoding of the other conditions
	catchAll := -1
	for i, r := range routes {
		if catchAll >= 0 {
			why := "has no match and takes everything"
			if len(routes[catchAll].matches) > 0 {
				why = "matches every request (uri prefix \"/\" and nothing else)"
			}
			p.Report(vs, spec.Index(i), diag.RouteAfterCatchAll,
				label(i), objName(vs), label(catchAll), why)
			continue
		}
		var deads []dead
		for j, m := range r.matches {
			// An earlier match of the same route counts too: the later
			// one is never what selects the route.
			if prev, ok := seen[m.full]; ok {
				deads = append(deads, dead{match: j, by: prev})
				continue
			}
			seen[m.full] = at{i, j}
			if m.rest == "" {
				continue
			}
			if k := slices.IndexFunc(prefixes[m.rest], func(a at) bool {
				return strings.HasPrefix(m.uri, routes[a.route].matches[a.match].uri)
			}); k >= 0 {
				by := prefixes[m.rest][k]
				deads = append(deads, dead{match: j, by: by, why: fmt.Sprintf("its uri prefix %q covers %q", routes[by.route].matches[by.match].uri, m.uri)})
				continue
			}
			if m.prefix {
				prefixes[m.rest] = append(prefixes[m.rest], at{i, j})
			}
		}
		switch {
		case len(deads) > 0 && len(deads) == len(r.matches):
			p.Report(vs, spec.Index(i).Key("match"), diag.RouteMatchesCovered,
				label(i), objName(vs), label(deads[0].by.route))
		default:
			for _, d := range deads {
				how := "it repeats " + label(d.by.route) + fmt.Sprintf(".match[%d], which comes first", d.by.match)
				if d.why != "" {
					how = label(d.by.route) + fmt.Sprintf(".match[%d] comes first and takes all its requests: %s", d.by.match, d.why)
				}
				p.Report(vs, spec.Index(i).Key("match").Index(d.match), diag.MatchCovered,
					d.match, label(i), objName(vs), how)
			}
		}
		if r.catchAll {
			catchAll = i
		}
	}
}

// gatewayIndex knows the Gateways of the input: Istio's, and the Gateway
// API's, which a VirtualService may bind too.
type gatewayIndex struct {
	byRef  map[string]model.Object // "namespace/name"
	byName map[string][]string     // name → namespaces, sorted
}

func newGatewayIndex(m *resolve.Mesh) gatewayIndex {
	x := gatewayIndex{byRef: map[string]model.Object{}, byName: map[string][]string{}}
	for _, o := range m.Objects {
		meta := o.Meta()
		if meta.Kind != "Gateway" || (meta.Group() != model.GroupNetworking && meta.Group() != "gateway.networking.k8s.io") {
			continue
		}
		ref := meta.Namespace + "/" + meta.Name
		if _, dup := x.byRef[ref]; !dup {
			x.byRef[ref] = o
			x.byName[meta.Name] = append(x.byName[meta.Name], meta.Namespace)
		}
	}
	for _, nss := range x.byName {
		slices.Sort(nss)
	}
	return x
}

// MC5004: a gateway reference naming no Gateway. Per object, whatever
// else the input holds, as istioctl does.
var gatewayNotFound = &Analyzer{Entry: diag.GatewayNotFound, Run: func(p *Pass) {
	gws := newGatewayIndex(p.Mesh)
	for _, vs := range p.Mesh.VirtualServices {
		o := vs.Object
		if o.Derived != nil {
			// istiod's own: a route attached to a listener it does not
			// program (reported by the conversion).
			continue
		}
		check := func(ref string, at model.Path) {
			if ref == resolve.MeshGateway {
				return
			}
			full := host.GatewayRef(ref, o.Namespace)
			if _, ok := gws.byRef[full]; ok {
				return
			}
			hint := ""
			_, name, _ := strings.Cut(full, "/")
			if strings.Contains(name, "~") {
				// No object has such a name: istiod generates it for the
				// Gateways it makes of a Gateway API Gateway.
				hint = " (a name istiod makes for a Gateway API Gateway: attach the route to that Gateway with an HTTPRoute instead)"
			} else if nss := gws.byName[name]; len(nss) > 0 {
				hint = fmt.Sprintf(" (a Gateway %s exists in %s %s: write %s/%s)", name, plural(len(nss), "namespace", "namespaces"), list(nss, 3), nss[0], name)
			}
			p.Report(&o.ObjectMeta, at, diag.NoSuchGateway,
				objName(&o.ObjectMeta), ref, full, hint)
		}
		spec := model.Path{}.Key("spec")
		for i, g := range o.Spec.GetGateways() {
			check(g, spec.Key("gateways").Index(i))
		}
		for i, r := range o.Spec.GetHttp() {
			for j, m := range r.GetMatch() {
				for k, g := range m.GetGateways() {
					check(g, spec.Key("http").Index(i).Key("match").Index(j).Key("gateways").Index(k))
				}
			}
		}
		for i, r := range o.Spec.GetTcp() {
			for j, m := range r.GetMatch() {
				for k, g := range m.GetGateways() {
					check(g, spec.Key("tcp").Index(i).Key("match").Index(j).Key("gateways").Index(k))
				}
			}
		}
		for i, r := range o.Spec.GetTls() {
			for j, m := range r.GetMatch() {
				for k, g := range m.GetGateways() {
					check(g, spec.Key("tls").Index(i).Key("match").Index(j).Key("gateways").Index(k))
				}
			}
		}
	}
}}

// MC5008: a VirtualService bound to a Gateway that serves none of its
// hosts, as istioctl reports it; and, for a VirtualService bound to
// gateways only, the hosts none of them serves, whose routes nothing uses
// (docs/semantics/virtual-services.md §6.7).
var virtualServiceHostNotInGateway = &Analyzer{Entry: diag.VirtualServiceHostNotInGateway, Run: func(p *Pass) {
	gws := newGatewayIndex(p.Mesh)
	for _, vs := range p.Mesh.VirtualServices {
		if vs.Delegate || vs.Object.Derived != nil {
			// istiod gives an exact listener every host of its routes
			// (docs/semantics/gateway-api.md §G3.1); hostnames are the
			// conversion's to judge (MC7106).
			continue
		}
		o := vs.Object
		var servedAll []host.Name // by the Gateways that serve some host
		var serving []string
		allKnown := !slices.Contains(vs.Gateways, resolve.MeshGateway)
		for i, ref := range o.Spec.GetGateways() {
			full := host.GatewayRef(ref, o.Namespace)
			var served []host.Name
			switch gw := gws.byRef[full].(type) {
			case *model.Gateway:
				served = resolve.ServerHosts(gw, o.Namespace)
			case *model.KubeGateway:
				served = listenerHosts(gw)
			default:
				allKnown = false
				continue // MC5004's
			}
			gwMeta := gws.byRef[full].Meta()
			if len(host.Intersection(served, vs.Hosts)) > 0 {
				servedAll = append(servedAll, served...)
				serving = append(serving, full)
				continue
			}
			offered := "none for this namespace"
			if len(served) > 0 {
				offered = list(hostStrings(served), 5)
			}
			d := p.Report(&o.ObjectMeta, model.Path{}.Key("spec").Key("gateways").Index(i), diag.GatewayServesNoHost,
				objName(&o.ObjectMeta), full, list(hostStrings(vs.Hosts), 5), offered)
			d.Related = append(d.Related, related(gwMeta, "its servers' hosts"))
		}
		if !allKnown || len(serving) == 0 {
			continue
		}
		var unserved []string
		first := -1
		for j, h := range vs.Hosts {
			if len(host.Intersection(servedAll, []host.Name{h})) == 0 {
				unserved = append(unserved, string(h))
				if first < 0 {
					first = j
				}
			}
		}
		if first >= 0 {
			p.Report(&o.ObjectMeta, model.Path{}.Key("spec").Key("hosts").Index(first), diag.GatewaysServeSomeHosts,
				objName(&o.ObjectMeta), list(serving, 3), plural(len(unserved), "host ", "hosts ")+list(unserved, 5), plural(len(unserved), "it", "them"))
		}
	}
}}

// listenerHosts are the hostnames of a Gateway API Gateway's listeners;
// a listener without one serves every host, as istioctl reads it.
func listenerHosts(gw *model.KubeGateway) []host.Name {
	var out []host.Name
	for _, l := range gw.Spec.Listeners {
		if l.Hostname == nil || *l.Hostname == "" {
			return []host.Name{"*"}
		}
		out = append(out, host.Name(*l.Hostname))
	}
	return out
}

func hostStrings(hs []host.Name) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}

// serviceFor is the service a VirtualService of namespace ns means by
// destination host h, for the port checks: the one of ns, else the oldest
// visible to ns. ExternalName aliases have their target's ports, so they
// are left out; nil when none is known.
func serviceFor(m *resolve.Mesh, h host.Name, ns string) *resolve.Service {
	var visible *resolve.Service
	for _, s := range m.ServicesNamed(h) {
		switch {
		case s.Resolution == resolve.Alias:
		case s.Namespace == ns:
			return s
		case visible == nil && s.VisibleIn(ns):
			visible = s
		}
	}
	return visible
}

// ownDestinations calls f with each destination a VirtualService wrote
// itself (a delegate's are its own, not its roots').
func ownDestinations(m *resolve.Mesh, f func(vs *resolve.VirtualService, d *resolve.Destination)) {
	for _, vs := range m.VirtualServices {
		for i := range vs.Destinations {
			if d := &vs.Destinations[i]; d.In == vs {
				f(vs, d)
			}
		}
	}
}

func portNumbers(s *resolve.Service) []string {
	var out []string
	for _, pt := range s.Ports {
		n := fmt.Sprint(pt.Number)
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// severalPorts reports whether s has two port numbers or more, as
// portNumbers would list them, without spelling them out.
func severalPorts(s *resolve.Service) bool {
	return slices.ContainsFunc(s.Ports, func(pt resolve.Port) bool { return pt.Number != s.Ports[0].Number })
}

// MC5005: destinations without a port, to a service with several: one
// finding per VirtualService and host, at the first such destination.
var destinationPortRequired = &Analyzer{Entry: diag.DestinationPortRequired, Run: func(p *Pass) {
	type key struct {
		vs   *resolve.VirtualService
		host host.Name
	}
	type finding struct {
		first model.Path
		svc   *resolve.Service
		count int
	}
	// Only keys with a finding are kept: most destinations make none, and
	// a key without one is judged again, the same, at its next
	// destination.
	found := map[key]*finding{}
	var order []key
	ownDestinations(p.Mesh, func(vs *resolve.VirtualService, d *resolve.Destination) {
		if d.Port != 0 {
			return
		}
		k := key{vs, d.Host}
		if f := found[k]; f != nil {
			f.count++
			return
		}
		s := serviceFor(p.Mesh, d.Host, vs.Namespace())
		if s == nil || !severalPorts(s) || slices.Equal(vs.Gateways, []string{resolve.MeshGateway}) && portsCarryOver(p.Mesh, vs, s) {
			return
		}
		found[k] = &finding{first: d.Path, svc: s, count: 1}
		order = append(order, k)
	})
	for _, k := range order {
		f := found[k]
		more := ""
		if f.count > 1 {
			more = fmt.Sprintf(" (%d destinations)", f.count)
		}
		vsMeta := &k.vs.Object.ObjectMeta
		d := p.Report(vsMeta, f.first, diag.PortlessDestination,
			objName(vsMeta), k.host, more, list(portNumbers(f.svc), 8))
		d.Related = append(d.Related, related(f.svc.Object, "defines %s", f.svc.Host))
	}
}}

// portsCarryOver reports whether sidecar routes of vs reach dest without a
// port: a sidecar keeps the port the request came in on, so every port of
// the services vs is for must be a port of dest. Hosts without a service
// in the input are given the benefit of the doubt.
func portsCarryOver(m *resolve.Mesh, vs *resolve.VirtualService, dest *resolve.Service) bool {
	for _, h := range vs.Hosts {
		s := serviceFor(m, h, vs.Namespace())
		if s == nil {
			continue
		}
		for _, pt := range s.Ports {
			if _, ok := dest.PortNumbered(pt.Number); !ok {
				return false
			}
		}
	}
	return true
}

// MC5009: a destination port the service does not have.
var routeToUnknownPort = &Analyzer{Entry: diag.RouteToUnknownPort, Run: func(p *Pass) {
	ownDestinations(p.Mesh, func(vs *resolve.VirtualService, d *resolve.Destination) {
		if d.Port == 0 {
			return
		}
		s := serviceFor(p.Mesh, d.Host, vs.Namespace())
		if s == nil || len(s.Ports) == 0 {
			return
		}
		if _, ok := s.PortNumbered(d.Port); ok {
			return
		}
		dd := p.Report(&vs.Object.ObjectMeta, d.Path.Key("port").Key("number"), diag.NoSuchServicePort,
			objName(&vs.Object.ObjectMeta), d.Port, d.Host, plural(len(portNumbers(s)), "port ", "ports ")+list(portNumbers(s), 8), resolve.ClusterName(d.Port, d.Subset, d.Host))
		dd.Related = append(dd.Related, related(s.Object, "defines %s", s.Host))
	})
}}

// generatedOnly reports whether a host's VirtualServices all come from
// Gateway API routes: a consumer's mesh route overriding the producer's in
// its namespace, or routes of one Service's ports, by design.
func generatedOnly(c resolve.VSChoice) bool {
	return c.Winner.GatewayAPI && !slices.ContainsFunc(c.Losers(), func(vs *resolve.VirtualService) bool { return !vs.GatewayAPI })
}

// MC5001: several VirtualServices claim hosts for the same proxies. One
// finding per conflicting group (one winner, the same losers), listing
// its hosts, so N VirtualServices sharing N hosts make one finding, not
// N² (issue 14's performance case).
var virtualServiceHostConflict = &Analyzer{Entry: diag.VirtualServiceHostConflict, Run: func(p *Pass) {
	type group struct {
		winner  *resolve.VirtualService
		losers  []*resolve.VirtualService
		hosts   []host.Name
		proxies []*resolve.Proxy
		scopes  map[*resolve.Scope]bool
	}
	found := map[string]*group{}
	var order []string
	var key strings.Builder
	for _, sc := range p.Mesh.Scopes {
		for _, c := range sc.VirtualServices {
			if len(c.Losers()) == 0 || generatedOnly(c) {
				continue
			}
			key.Reset()
			fmt.Fprintf(&key, "%p", c.Winner)
			for _, l := range c.Losers() {
				fmt.Fprintf(&key, ",%p", l)
			}
			g := found[key.String()]
			if g == nil {
				g = &group{winner: c.Winner, losers: c.Losers(), scopes: map[*resolve.Scope]bool{}}
				found[key.String()] = g
				order = append(order, key.String())
			}
			if !slices.Contains(g.hosts, c.Host) {
				g.hosts = append(g.hosts, c.Host)
			}
			if !g.scopes[sc] {
				g.scopes[sc] = true
				g.proxies = append(g.proxies, sc.Proxies...)
			}
		}
	}
	for _, k := range order {
		g := found[k]
		host.Sort(g.hosts)
		hosts := make([]string, len(g.hosts))
		for i, h := range g.hosts {
			hosts[i] = string(h)
		}
		lm, wm := &g.losers[0].Object.ObjectMeta, &g.winner.Object.ObjectMeta
		var d *diag.Diagnostic
		if len(g.losers) == 1 {
			d = p.Report(lm, model.ParsePath("spec.hosts"), diag.HostClaimedTwice,
				objName(lm), objName(wm), plural(len(hosts), "host ", "hosts ")+list(hosts, 5), plural(len(hosts), "it", "them"))
		} else {
			names := make([]string, len(g.losers))
			for i, l := range g.losers {
				names[i] = objName(&l.Object.ObjectMeta)
			}
			d = p.Report(lm, model.ParsePath("spec.hosts"), diag.HostClaimedByMany,
				len(g.losers)+1, plural(len(hosts), "host ", "hosts ")+list(hosts, 5), objName(wm), list(names, 5), plural(len(hosts), "it", "them"))
		}
		d.Related = append(d.Related, related(wm, "used for %s", plural(len(hosts), "this host", "these hosts")))
		for _, l := range g.losers[1:] {
			d.Related = append(d.Related, related(&l.Object.ObjectMeta, "also ignored"))
		}
		d.Proxies = proxyIDs(g.proxies)
	}
}}

// MC5002: a route destination is not a service the proxies can see.
var destinationHostNotFound = &Analyzer{Entry: diag.DestinationHostNotFound, Run: func(p *Pass) {
	type key struct {
		vs   *resolve.VirtualService
		path string
	}
	type finding struct {
		dest    resolve.Destination
		proxies []*resolve.Proxy
		hidden  []*resolve.Service
	}
	var found groups[key, finding]
	for _, sc := range p.Mesh.Scopes {
		sc.RoutedDestinations(func(dest *resolve.Destination) {
			if _, ok := sc.ServiceOf(dest); ok || p.Mesh.Reachable(dest.Host, sc.Namespace) || !p.Mesh.Describes(dest.Host) {
				return
			}
			// A destination that exportTo hides from this namespace
			// matters only if its proxies can reach a host of the
			// VirtualService, which the input must then show.
			var caller *resolve.Scope
			if len(p.Mesh.ServicesNamed(dest.Host)) > 0 && sc.Namespace != dest.In.Namespace() {
				caller = sc
			}
			if !callable(p.Mesh, dest.In, caller) {
				return
			}
			k := key{dest.In, dest.Path.String()}
			f := found.add(k, func() finding { return finding{dest: *dest, hidden: p.Mesh.ServicesNamed(dest.Host)} })
			f.proxies = append(f.proxies, sc.Proxies...)
		})
	}
	// A delegate applies only through the VirtualServices that delegate
	// to it; one no other names is still judged, from its own namespace,
	// as istioctl judges every VirtualService.
	ownDestinations(p.Mesh, func(vs *resolve.VirtualService, dest *resolve.Destination) {
		if !vs.Delegate || p.Mesh.Reachable(dest.Host, vs.Namespace()) || !p.Mesh.Describes(dest.Host) {
			return
		}
		// A finding through the delegating VirtualServices stays.
		found.add(key{vs, dest.Path.String()}, func() finding { return finding{dest: *dest, hidden: p.Mesh.ServicesNamed(dest.Host)} })
	})
	for _, k := range found.order {
		f := found.byKey[k]
		vsMeta := &k.vs.Object.ObjectMeta
		why := "no Service or ServiceEntry has that host"
		if len(f.hidden) > 0 {
			why = "services with that host exist but their exportTo hides them"
		} else if strings.Count(string(f.dest.Host), ".") == 1 {
			why += " (a name with one dot is not expanded: write the short name or the full name)"
		}
		who := "these proxies"
		if len(f.proxies) == 0 {
			who = "its namespace" // an unreferenced delegate
		}
		d := p.Report(vsMeta, f.dest.Path.Key("host"), diag.DestinationUnreachable, objName(vsMeta), f.dest.Host, who, why)
		for _, s := range f.hidden {
			d.Related = append(d.Related, related(s.Object, "defines %s, not visible to these proxies", s.Host))
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}

// delegateDest is a destination of a VirtualService, by its field.
type delegateDest struct {
	vs   *resolve.VirtualService
	path string
}

// callable reports whether some host of vs can be called, so that its
// routes matter: not when every host is a Kubernetes service name that no
// Service defines, as no DNS name exists for it (a VirtualService for a
// short name in a namespace without that service). A name in a namespace
// whose Services the input does not hold counts as callable, unless sc is
// given: then only hosts the input shows proxies of sc can reach count.
// Delegates, wildcards and other hosts are callable.
func callable(m *resolve.Mesh, vs *resolve.VirtualService, sc *resolve.Scope) bool {
	if len(vs.Hosts) == 0 {
		return true
	}
	for _, h := range vs.Hosts {
		if _, kube := m.KubernetesNamespace(h); !kube {
			return true
		}
		if !m.Describes(h) {
			if sc == nil {
				return true
			}
			continue
		}
		if len(m.ServicesNamed(h)) == 0 {
			continue
		}
		if sc == nil {
			return true
		}
		if _, ok := sc.Service(h); ok || m.Reachable(h, sc.Namespace) {
			return true
		}
	}
	return false
}
