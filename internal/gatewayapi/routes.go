package gatewayapi

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/parallel"
)

// httpRule is a converted HTTP route and the rule it came from.
type httpRule struct {
	r    *networking.HTTPRoute
	part model.DerivedPart
}

// piece is the VirtualService istiod makes of one route for one listener
// and host, before it merges the pieces of one listener and host.
type piece struct {
	key   string
	from  *model.ObjectMeta
	kind  string
	host  string
	gw    string
	rules []httpRule
}

// routes converts the routes attached to the Gateways converted
// (docs/semantics/gateway-api.md §G3), HTTP and gRPC routes merged per
// listener and host. The HTTP and gRPC routes convert on every core
// (httpConversion); what they report and attach follows in input order.
func (c *converter) routes(ctx context.Context) error {
	convs := make([]httpConversion, 0, len(c.httpRoutes)+len(c.grpcRoutes))
	for _, r := range c.httpRoutes {
		rt := route{meta: &r.ObjectMeta, kind: "HTTPRoute", refs: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
		convs = append(convs, httpConversion{r: rt, http: r})
	}
	for _, r := range c.grpcRoutes {
		rt := route{meta: &r.ObjectMeta, kind: "GRPCRoute", refs: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
		convs = append(convs, httpConversion{r: rt, grpc: r})
	}
	parallel.For(ctx, len(convs), func(i int) { c.convertHTTP(&convs[i]) })
	if err := context.Cause(ctx); err != nil {
		return err
	}
	n := 0
	for _, hc := range convs {
		n += len(hc.pieces)
	}
	pieces := make([]*piece, 0, n)
	for i := range convs {
		pieces = c.reportHTTP(pieces, &convs[i])
	}
	if err := c.merge(ctx, pieces); err != nil {
		return err
	}
	for _, r := range c.tcpRoutes {
		c.l4Route(route{meta: &r.ObjectMeta, kind: "TCPRoute", refs: r.Spec.ParentRefs}, r.Spec.Rules, nil)
	}
	for _, r := range c.tlsRoutes {
		rules := make([]gwv1.TCPRouteRule, len(r.Spec.Rules))
		for i, rule := range r.Spec.Rules {
			rules[i] = gwv1.TCPRouteRule{Name: rule.Name, BackendRefs: rule.BackendRefs}
		}
		c.l4Route(route{meta: &r.ObjectMeta, kind: "TLSRoute", refs: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}, rules, r.Spec.Hostnames)
	}
	return nil
}

// httpConversion is an HTTP or gRPC route converted for each listener
// accepting it, one piece per host, and for each Service it is attached
// to. convertHTTP fills it reading the converter only, so routes convert
// at once; reportHTTP then reports its findings and attaches it.
type httpConversion struct {
	r route
	// http or grpc is the route.
	http    *model.HTTPRoute
	grpc    *model.GRPCRoute
	parents []routeParent
	found   []diag.Diagnostic // parentsOf's
	// gw and mesh converted the rules for Gateway and for Service
	// parents, when the route has one of that kind (toGateway, toMesh):
	// backends of other namespaces need a ReferenceGrant only at a
	// Gateway.
	gw, mesh          ruleBuilder
	toGateway, toMesh bool
	pieces            []piece
}

// rules converts the route's rules with b.
func (hc *httpConversion) rules(b *ruleBuilder) []httpRule {
	if hc.grpc != nil {
		var out []httpRule
		for n, rule := range hc.grpc.Spec.Rules {
			out = append(out, b.grpcRule(n, rule)...)
		}
		return out
	}
	rules := hc.http.Spec.Rules
	if len(rules) == 0 {
		rules = []gwv1.HTTPRouteRule{{}} // the API server's default
	}
	out := b.httpRule(0, rules[0])
	for n, rule := range rules[1:] {
		out = append(out, b.httpRule(n+1, rule)...)
	}
	return out
}

// convertHTTP converts a route (httpConversion); it only reads c.
func (c *converter) convertHTTP(hc *httpConversion) {
	r := hc.r
	hc.parents = c.parentsOf(r, &hc.found)
	if len(hc.parents) == 0 {
		return
	}
	var rules, meshRules []httpRule
	if hc.toGateway = slices.ContainsFunc(hc.parents, func(p routeParent) bool { return !p.mesh() }); hc.toGateway {
		hc.gw = ruleBuilder{c: c, r: r}
		rules = hc.rules(&hc.gw)
		sortRules(rules)
	}
	if hc.toMesh = slices.ContainsFunc(hc.parents, routeParent.mesh); hc.toMesh {
		hc.mesh = ruleBuilder{c: c, r: r, mesh: true}
		meshRules = hc.rules(&hc.mesh)
		sortRules(meshRules)
	}
	var hosts []string
	if hc.toGateway {
		hosts = routeHosts(r.hostnames)
	}
	for _, p := range acceptedParents(hc.parents) {
		if p.mesh() {
			if hc.mesh.hard || len(meshRules) == 0 {
				continue
			}
			key := r.meta.Namespace
			if p.port != 0 {
				key += "/" + strconv.Itoa(int(p.port))
			}
			for _, h := range p.hosts {
				hc.pieces = append(hc.pieces, piece{key: key + "/" + h, from: r.meta, kind: r.kind, host: h, gw: MeshGateway, rules: withPort(meshRules, p.port)})
			}
			continue
		}
		if hc.gw.hard || len(rules) == 0 {
			continue
		}
		for _, h := range hosts {
			if !p.allowsHost(h) {
				continue
			}
			hc.pieces = append(hc.pieces, piece{key: p.info.internalName + "/" + h, from: r.meta, kind: r.kind, host: h, gw: p.info.internalName, rules: rules})
		}
	}
}

// reportHTTP reports what converting a route found, in the order istiod
// meets it, attaches the route to its listeners and appends its pieces
// to out.
func (c *converter) reportHTTP(out []*piece, hc *httpConversion) []*piece {
	c.diags = append(c.diags, hc.found...)
	switch {
	case hc.toGateway:
		hc.gw.reportProblems()
	case hc.toMesh:
		hc.mesh.reportProblems()
	}
	c.attach(hc.r, hc.parents)
	for i := range hc.pieces {
		out = append(out, &hc.pieces[i])
	}
	return out
}

// MeshGateway is the gateway name of the sidecars.
const MeshGateway = "mesh"

// withPort restricts mesh routes to the port of their Service parent:
// each match, or a match of its own, gets the port; 0 leaves them as
// they are.
func withPort(rules []httpRule, port int32) []httpRule {
	if port == 0 {
		return rules
	}
	out := make([]httpRule, len(rules))
	for i, r := range rules {
		hr := proto.Clone(r.r).(*networking.HTTPRoute)
		for _, m := range hr.Match {
			m.Port = uint32(port)
		}
		if len(hr.Match) == 0 {
			hr.Match = []*networking.HTTPMatchRequest{{Port: uint32(port)}}
		}
		out[i] = httpRule{r: hr, part: r.part}
	}
	return out
}

// merge makes one VirtualService of the pieces of each listener and host:
// the oldest route's first, rules sorted by match specificity
// (docs/semantics/gateway-api.md §G3.3). The VirtualServices, made on
// every core, come in key order.
func (c *converter) merge(ctx context.Context, pieces []*piece) error {
	// Sorting by key, stably, groups each key's pieces in the order they
	// were made.
	slices.SortStableFunc(pieces, func(a, b *piece) int { return strings.Compare(a.key, b.key) })
	var groups [][]*piece
	for len(pieces) > 0 {
		n := 1
		for n < len(pieces) && pieces[n].key == pieces[0].key {
			n++
		}
		groups, pieces = append(groups, pieces[:n]), pieces[n:]
	}
	made := make([]model.Object, len(groups))
	parallel.For(ctx, len(groups), func(i int) { made[i] = mergeKey(groups[i]) })
	c.out = append(c.out, made...)
	return context.Cause(ctx)
}

// mergeKey makes the VirtualService of the pieces of one key.
func mergeKey(ps []*piece) *model.VirtualService {
	rules := ps[0].rules // each piece's rules are sorted already
	parents := ps[0].kind + "/" + ps[0].from.Name + "." + ps[0].from.Namespace
	if len(ps) > 1 {
		slices.SortStableFunc(ps, func(a, b *piece) int {
			return cmp.Or(a.from.Created.Compare(b.from.Created), cmp.Compare(a.from.Namespace, b.from.Namespace), cmp.Compare(a.from.Name, b.from.Name))
		})
		rules = nil
		names := make([]string, len(ps))
		for i, p := range ps {
			rules = append(rules, p.rules...)
			names[i] = p.kind + "/" + p.from.Name + "." + p.from.Namespace
		}
		sortRules(rules)
		parents = strings.Join(names, ",")
	}
	first := ps[0]
	parts := make([]model.DerivedPart, len(rules))
	spec := &networking.VirtualService{Hosts: []string{first.host}, Gateways: []string{first.gw}, Http: make([]*networking.HTTPRoute, len(rules))}
	for i, r := range rules {
		spec.Http[i], parts[i] = r.r, r.part
	}
	vs := &model.VirtualService{ObjectMeta: derivedFrom("networking.istio.io/v1", "VirtualService", first.from.Namespace,
		strings.ReplaceAll(first.key, "/", "~"), first.from, parts), Spec: spec}
	vs.Annotations = map[string]string{annParents: parents, annRouteSemantics: model.RouteSemanticsGateway}
	return vs
}

// sortRules orders HTTP routes as the Gateway API requires: exact paths,
// then prefixes, then regexes, longer first; then routes with a method,
// more headers, more query parameters; routes without match last. Equal
// routes keep their order.
func sortRules(rules []httpRule) {
	slices.SortStableFunc(rules, func(a, b httpRule) int {
		am, bm := a.r.GetMatch(), b.r.GetMatch()
		switch {
		case len(am) == 0 && len(bm) == 0:
			return 0
		case len(am) == 0:
			return 1
		case len(bm) == 0:
			return -1
		}
		m1, m2 := am[0], bm[0]
		return cmp.Or(
			cmp.Compare(uriRank(m2), uriRank(m1)),
			cmp.Compare(uriLength(m2), uriLength(m1)),
			cmp.Compare(boolInt(m2.GetMethod() != nil), boolInt(m1.GetMethod() != nil)),
			cmp.Compare(len(m2.GetHeaders()), len(m1.GetHeaders())),
			cmp.Compare(len(m2.GetQueryParams()), len(m1.GetQueryParams())),
		)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func uriRank(m *networking.HTTPMatchRequest) int {
	switch m.GetUri().GetMatchType().(type) {
	case *networking.StringMatch_Exact:
		return 3
	case *networking.StringMatch_Prefix:
		return 2
	case *networking.StringMatch_Regex:
		return 1
	}
	return -1
}

func uriLength(m *networking.HTTPMatchRequest) int {
	u := m.GetUri()
	if u == nil {
		return 0
	}
	return len(u.GetExact()) + len(u.GetPrefix()) + len(u.GetRegex())
}

// l4Route converts a TCPRoute or, with sni set (possibly empty), a
// TLSRoute: one VirtualService per listener accepting it (and per host
// for TLS), not merged (docs/semantics/gateway-api.md §G3.4).
func (c *converter) l4Route(r route, rules []gwv1.TCPRouteRule, sni []gwv1.Hostname) {
	parents := c.parentsOf(r, &c.diags)
	if len(parents) == 0 {
		return
	}
	tls := r.kind == "TLSRoute"
	b := &ruleBuilder{c: c, r: r}
	var routes []*networking.RouteDestination
	type l4rule struct {
		dest []*networking.RouteDestination
		part model.DerivedPart
	}
	var converted []l4rule
	for n, rule := range rules {
		path := specIndex("rules", n)
		routes = b.l4Destinations(rule.BackendRefs, path.Key("backendRefs"))
		converted = append(converted, l4rule{routes, model.DerivedPart{From: r.meta, Path: path}})
	}
	gw := slices.ContainsFunc(parents, func(p routeParent) bool { return !p.mesh() })
	if gw {
		b.reportProblems()
	}
	mesh := c.meshL4Rules(r, rules, slices.ContainsFunc(parents, routeParent.mesh), !gw)
	accepted := c.reportParents(r, parents)
	infix := "~tcp~"
	if tls {
		infix = "~tls~"
	}
	count := 0
	for _, p := range accepted {
		if p.mesh() {
			count = c.meshL4Route(r, p, mesh, infix, count)
			continue
		}
		if b.hard {
			continue
		}
		hosts := []string{"*"}
		if tls {
			hosts = routeHosts(sni)
			if p.info.originalHostname != "" {
				hosts = intersectHosts(hosts, p.info.originalHostname)
			}
		}
		for _, h := range hosts {
			name := r.meta.Name + infix + strconv.Itoa(count) + "~" + generatedSuffix
			count++
			vs := &model.VirtualService{ObjectMeta: derived("networking.istio.io/v1", "VirtualService", r.meta.Namespace, name, r.meta, model.Path{}.Key("spec").Key("rules"), "")}
			if len(converted) > 0 {
				vs.Derived.Parts = vs.Derived.Parts[:0]
			}
			spec := &networking.VirtualService{Hosts: []string{h}, Gateways: []string{p.info.internalName}}
			for _, cr := range converted {
				vs.Derived.Parts = append(vs.Derived.Parts, cr.part)
				if tls {
					match := routeHosts(sni)
					if p.info.originalHostname != "" {
						match = intersectHosts(match, p.info.originalHostname)
						if len(match) == 0 {
							continue
						}
					}
					spec.Tls = append(spec.Tls, &networking.TLSRoute{Match: []*networking.TLSMatchAttributes{{SniHosts: match}}, Route: cr.dest})
				} else {
					spec.Tcp = append(spec.Tcp, &networking.TCPRoute{Route: cr.dest})
				}
			}
			vs.Spec = spec
			vs.Annotations = map[string]string{annParents: r.kind + "/" + r.meta.Name + "." + r.meta.Namespace, annRouteSemantics: model.RouteSemanticsGateway}
			c.out = append(c.out, vs)
		}
	}
}

// routeHosts are a route's hostnames, "*" when it has none.
func routeHosts(h []gwv1.Hostname) []string {
	if len(h) == 0 {
		return []string{"*"}
	}
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = string(x)
	}
	return out
}

// intersectHosts narrows route hosts to a listener hostname: the more
// specific of each overlapping pair.
func intersectHosts(hosts []string, listener string) []string {
	var out []string
	l := host.Name(listener)
	for _, h := range hosts {
		rh := host.Name(h)
		switch {
		case rh.SubsetOf(l) && !slices.Contains(out, h):
			out = append(out, h)
		case l.SubsetOf(rh) && !slices.Contains(out, listener):
			out = append(out, listener)
		}
	}
	return out
}

// duration parses a Gateway API duration ("10s", "1h30m", "500ms").
func duration(s *gwv1.Duration) time.Duration {
	if s == nil {
		return 0
	}
	d, _ := time.ParseDuration(string(*s))
	return d
}

// problem is a route reference or rule istiod reports in the route's
// status; hard ones stop the conversion of the whole route.
type problem struct {
	path model.Path
	hard bool
	diag func(ref diag.ObjectRef) diag.Diagnostic
}
