package meshgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// gatewayAPI writes Gateway API objects over the random mesh, from a
// random stream of their own (so the rest of the mesh stays as Random
// writes it): in namespace gw, Gateways of class istio with HTTP, HTTPS,
// TLS passthrough, TCP and gRPC listeners, and sometimes one of a class
// istiod does not own; HTTPRoutes with matches, filters, weights and
// timeouts, GRPCRoutes, TCPRoutes and TLSRoutes from the application
// namespaces; mesh (GAMMA) HTTPRoutes whose parent is a Service; and
// ReferenceGrants for some cross-namespace backends and certificates.
// Some routes are deliberately not accepted or not allowed their
// backends: a hostname no listener takes, a section that does not exist,
// a namespace or kind a listener does not allow, a backend in another
// namespace without a grant. ListenerSets joining public, with the
// routes attached to them, come from a third stream, so that the other
// objects stay as they were before ListenerSets were generated; backend
// policies (XBackendTrafficPolicy) and an ambient waypoint Gateway from a
// fourth, into a file of their own.
func (g *randomMesh) gatewayAPI(seed int64) []File {
	a := &gatewayAPIMesh{
		randomMesh: randomMesh{r: rand.New(rand.NewPCG(uint64(seed), 0x67617069)), ns: g.ns, svcs: g.svcs},
		sets:       randomMesh{r: rand.New(rand.NewPCG(uint64(seed), 0x6c736574))},
		pols:       randomMesh{r: rand.New(rand.NewPCG(uint64(seed), 0x706f6c73))},
		grants:     map[string]bool{}, secrets: map[string]bool{},
	}
	a.generate()
	return a.files
}

type gatewayAPIMesh struct {
	randomMesh
	gw, routes, grantDocs strings.Builder
	grants                map[string]bool // ReferenceGrants written, by namespace/from-namespace/kind/to-kind
	secrets               map[string]bool // namespaces given the Secret gw-cert
	edge                  bool            // the second Gateway, with TLS, TCP and gRPC listeners, exists
	// sets draws the ListenerSets; allowedListeners is public's
	// spec.allowedListeners ("" for none), listenerSets how many to write.
	sets             randomMesh
	allowedListeners string
	listenerSets     int
	// pols draws the backend policies and the waypoint.
	pols randomMesh
}

// kind is a port's protocol as its name gives it ("http", "grpc", "tcp", ...).
func (p randomPort) kind() string {
	k, _, _ := strings.Cut(p.name, "-")
	return k
}

func (a *gatewayAPIMesh) generate() {
	a.gw.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: gw}\n")
	a.secret(&a.gw, "gw")
	a.planListenerSets()
	a.gateways()
	for _, s := range a.svcs {
		a.routesFor(s)
	}
	a.meshRoutes()
	for i := range a.listenerSets {
		a.listenerSet(i)
	}
	a.add("gateway-api/gateways.yaml", a.gw.String())
	a.add("gateway-api/routes.yaml", strings.TrimPrefix(a.routes.String()+a.grantDocs.String(), "---\n"))
	if p := a.policies(); p != "" {
		a.add("gateway-api/policies.yaml", p)
	}
}

// policies writes XBackendTrafficPolicies for some Services: a retry
// budget with some of its fields, sometimes with sessionPersistence
// (which istiod does not support), sometimes a newer second policy for the
// same Service (which istiod does not apply) or one for a Service that
// does not exist; and by chance a waypoint Gateway, which istiod deploys
// but meshc does not compile. Policies of one Service share the creation
// time every object gets, so the first by name is the one applied.
func (a *gatewayAPIMesh) policies() string {
	p := &a.pols
	var b strings.Builder
	policy := func(name, ns, target string) {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\nmetadata: {name: %s, namespace: %s}\nspec:\n  targetRefs: [{group: \"\", kind: Service, name: %s}]\n",
			name, ns, target)
		fmt.Fprintf(&b, "  retryConstraint: %s\n", p.pick("{}", "{budget: {percent: 35}}", "{budget: {percent: 10, interval: 30s}, minRetryRate: {count: 3, interval: 1s}}", "{minRetryRate: {count: 25, interval: 2s}}"))
		if p.chance(0.2) {
			b.WriteString("  sessionPersistence: {sessionName: pinned}\n")
		}
	}
	for _, s := range a.svcs {
		if !p.chance(0.3) {
			continue
		}
		policy(s.name+"-retries", s.ns, s.name)
		if p.chance(0.3) {
			policy(s.name+"-retries-2", s.ns, s.name)
		}
	}
	if len(a.ns) > 0 && p.chance(0.2) {
		policy("ghost-retries", a.ns[0], "ghost")
	}
	if len(a.ns) > 0 && p.chance(0.3) {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: waypoint, namespace: %s}\nspec:\n  gatewayClassName: istio-waypoint\n  listeners: [{name: mesh, port: 15008, protocol: HBONE}]\n", a.ns[0])
	}
	return strings.TrimPrefix(b.String(), "---\n")
}

// secret writes the Secret gw-cert in ns to b, once per namespace.
func (a *gatewayAPIMesh) secret(b *strings.Builder, ns string) {
	if a.secrets[ns] {
		return
	}
	a.secrets[ns] = true
	fmt.Fprintf(b, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: gw-cert, namespace: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n", ns, testCertPEM, testKeyPEM)
}

// writeGateway writes a Gateway in namespace gw with its listeners, one
// flow mapping each, and spec, more of its spec ("" or whole lines).
func writeGateway(b *strings.Builder, name, class, spec string, listeners ...string) {
	fmt.Fprintf(b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: gw}\nspec:\n  gatewayClassName: %s\n%s  listeners:\n", name, class, spec)
	for _, l := range listeners {
		fmt.Fprintf(b, "  - {%s}\n", l)
	}
}

// gateways writes public (HTTP, HTTP on 8080 for HTTPRoutes only, HTTPS)
// and, by chance, edge (TLS passthrough, TCP, gRPC over HTTP) and a
// Gateway of a class istiod does not compile.
func (a *gatewayAPIMesh) gateways() {
	allowed := a.pick(
		"{namespaces: {from: All}}",
		"{namespaces: {from: Same}}",
		"{namespaces: {from: Selector, selector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: ["+strings.Join(a.ns[:min(2, len(a.ns))], ", ")+"]}]}}}")
	hostname := a.pick("hostname: \"*.example.com\", ", "")
	cert := "{name: gw-cert}"
	if a.chance(0.3) {
		// A certificate in another namespace: granted or not.
		cert = "{name: gw-cert, namespace: " + a.ns[0] + "}"
		a.secret(&a.grantDocs, a.ns[0])
		if a.chance(0.6) {
			a.grant(a.ns[0], "gw", "Gateway", "Secret")
		}
	}
	all := "allowedRoutes: {namespaces: {from: All}}"
	spec := ""
	if a.allowedListeners != "" {
		spec = "  allowedListeners: " + a.allowedListeners + "\n"
	}
	writeGateway(&a.gw, "public", "istio", spec,
		"name: http, port: 80, protocol: HTTP, "+hostname+"allowedRoutes: "+allowed,
		"name: http-alt, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}, kinds: [{kind: HTTPRoute}]}",
		"name: https, port: 443, protocol: HTTPS, hostname: \"*.example.com\", tls: {mode: Terminate, certificateRefs: ["+cert+"]}, "+all)
	if a.chance(0.7) {
		a.edge = true
		writeGateway(&a.gw, "edge", "istio", "",
			"name: tls, port: 8443, protocol: TLS, tls: {mode: Passthrough}, "+all,
			"name: tcp, port: 9000, protocol: TCP, "+all,
			"name: grpc, port: 9090, protocol: HTTP, "+all)
	}
	if a.chance(0.3) {
		writeGateway(&a.gw, "foreign", "other-class", "", "name: http, port: 80, protocol: HTTP, "+all)
	}
}

// grant writes a ReferenceGrant in ns admitting kind objects of from's
// namespace to refer to objects of kind to, once.
func (a *gatewayAPIMesh) grant(ns, from, kind, to string) {
	key := ns + "/" + from + "/" + kind + "/" + to
	if a.grants[key] {
		return
	}
	a.grants[key] = true
	fmt.Fprintf(&a.grantDocs, "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: from-%s-%s, namespace: %s}\nspec:\n  from: [{group: gateway.networking.k8s.io, kind: %s, namespace: %s}]\n  to: [{group: \"\", kind: %s}]\n",
		from, strings.ToLower(kind), ns, kind, from, to)
}

// routesFor writes, by chance, the route of s's first port's kind.
func (a *gatewayAPIMesh) routesFor(s randomService) {
	p := s.ports[0]
	switch p.kind() {
	case "http", "http2":
		if a.chance(0.6) {
			a.httpRoute(s, p)
		}
	case "grpc":
		if a.chance(0.7) {
			a.grpcRoute(s, p)
		}
	case "tcp", "mongo":
		if a.chance(0.7) {
			a.tcpRoute(s, p)
		}
	case "tls", "https":
		if a.chance(0.7) {
			a.tlsRoute(s, p)
		}
	}
}

// parent picks where an HTTPRoute attaches: mostly a listener that can
// take it, sometimes a section public does not have.
func (a *gatewayAPIMesh) parent() string {
	ref := "{name: public, namespace: gw"
	switch a.r.IntN(6) {
	case 0:
		ref += ", sectionName: http-alt"
	case 1:
		ref += ", sectionName: https"
	case 2:
		ref += ", sectionName: missing"
	case 3:
		ref += ", port: 80"
	case 4:
		ref += ", sectionName: http"
	}
	return ref + "}"
}

func (a *gatewayAPIMesh) httpRoute(s randomService, p randomPort) {
	hostname := s.name + "-" + s.ns + ".example.com"
	if a.chance(0.1) {
		hostname = s.name + ".example.net" // no listener of public takes it with a hostname set
	}
	fmt.Fprintf(&a.routes, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: %s}\nspec:\n  parentRefs: [%s]\n  hostnames: [%q]\n  rules:\n",
		s.name, s.ns, a.parent(), hostname)
	for i := range 1 + a.r.IntN(3) {
		a.httpRule(s, p, i == 0)
	}
}

// httpRule writes one rule: matches on the first rule by chance, filters,
// backends and a timeout.
func (a *gatewayAPIMesh) httpRule(s randomService, p randomPort, first bool) {
	var parts []string
	match := ""
	if first && a.chance(0.7) {
		match = a.pick(
			"matches: [{path: {type: PathPrefix, value: /api}}]",
			"matches: [{path: {type: Exact, value: /login}}, {path: {type: PathPrefix, value: /static}}]",
			"matches: [{path: {type: RegularExpression, value: \"/v[0-9]+/.*\"}}]",
			"matches: [{headers: [{name: x-canary, value: \"1\"}]}]",
			"matches: [{path: {type: PathPrefix, value: /}, method: POST}]",
			"matches: [{queryParams: [{name: debug, value: \"1\"}]}]",
			"matches: [{headers: [{type: RegularExpression, name: x-user, value: \"a.*\"}]}]")
		parts = append(parts, match)
	}
	var filters []string
	redirect := false
	if a.chance(0.3) {
		filters = append(filters, a.pick(
			"{type: RequestHeaderModifier, requestHeaderModifier: {add: [{name: x-gw, value: \"1\"}], remove: [x-debug]}}",
			"{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-env, value: prod}]}}",
			"{type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: x-served-by, value: gw}]}}",
			"{type: CORS, cors: {allowOrigins: [\"https://*.example.com\"], allowMethods: [GET, POST], allowHeaders: [x-user]}}"))
	}
	switch a.r.IntN(8) {
	case 0:
		filters = append(filters, a.pick(
			"{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}",
			"{type: RequestRedirect, requestRedirect: {hostname: moved.example.com, path: {type: ReplaceFullPath, replaceFullPath: /new}}}"))
		redirect = true
	case 1:
		rewrite := "{type: URLRewrite, urlRewrite: {hostname: internal.example.com}}"
		// The CRD admits a prefix replacement only under exactly one PathPrefix match.
		if strings.HasPrefix(match, "matches: [{path: {type: PathPrefix") && a.chance(0.7) {
			rewrite = "{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}"
		}
		filters = append(filters, rewrite)
	case 2:
		other := a.svcs[a.r.IntN(len(a.svcs))]
		if other.ns == s.ns {
			filters = append(filters, fmt.Sprintf("{type: RequestMirror, requestMirror: {backendRef: {name: %s, port: %d}}}", other.name, other.ports[0].number))
		}
	}
	if len(filters) > 0 {
		parts = append(parts, "filters: ["+strings.Join(filters, ", ")+"]")
	}
	if !redirect {
		parts = append(parts, "backendRefs: ["+a.backends(s, p)+"]")
		if a.chance(0.3) {
			parts = append(parts, fmt.Sprintf("timeouts: {request: %ds}", 1+a.r.IntN(10)))
		}
	}
	fmt.Fprintf(&a.routes, "  - {%s}\n", strings.Join(parts, ", "))
}

// backends: s itself, or s split with another HTTP service, in s's
// namespace or (granted or not) another one, or now and then a Service
// that does not exist.
func (a *gatewayAPIMesh) backends(s randomService, p randomPort) string {
	self := fmt.Sprintf("{name: %s, port: %d", s.name, p.number)
	if a.chance(0.08) {
		return "{name: gone, port: 80}"
	}
	if !a.chance(0.5) {
		return self + "}"
	}
	var others []randomService
	for _, o := range a.svcs {
		if o.name+o.ns != s.name+s.ns && o.ports[0].http {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return self + "}"
	}
	o := others[a.r.IntN(len(others))]
	w := 10 * (1 + a.r.IntN(9))
	ref := fmt.Sprintf("{name: %s, port: %d, weight: %d}", o.name, o.ports[0].number, 100-w)
	if o.ns != s.ns {
		ref = fmt.Sprintf("{name: %s, namespace: %s, port: %d, weight: %d}", o.name, o.ns, o.ports[0].number, 100-w)
		if a.chance(0.7) {
			a.grant(o.ns, s.ns, "HTTPRoute", "Service")
		}
	}
	return fmt.Sprintf("%s, weight: %d}, %s", self, w, ref)
}

func (a *gatewayAPIMesh) grpcRoute(s randomService, p randomPort) {
	parent := "{name: public, namespace: gw, sectionName: http-alt}" // kinds: HTTPRoute only, so not accepted
	if a.edge {
		parent = a.pick("{name: edge, namespace: gw, sectionName: grpc}", "{name: edge, namespace: gw, sectionName: grpc}", parent)
	}
	match := a.pick(
		"matches: [{method: {service: example."+s.name+", method: Get}}], ",
		"matches: [{method: {service: example."+s.name+"}}, {headers: [{name: x-grpc, value: \"1\"}]}], ",
		"")
	fmt.Fprintf(&a.routes, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {name: %s, namespace: %s}\nspec:\n  parentRefs: [%s]\n  rules:\n  - {%sbackendRefs: [{name: %s, port: %d}]}\n",
		s.name, s.ns, parent, match, s.name, p.number)
}

func (a *gatewayAPIMesh) tcpRoute(s randomService, p randomPort) {
	parent := "{name: public, namespace: gw, sectionName: http}" // an HTTP listener takes no TCPRoute
	if a.edge && a.chance(0.8) {
		parent = "{name: edge, namespace: gw, sectionName: tcp}"
	}
	fmt.Fprintf(&a.routes, "---\napiVersion: gateway.networking.k8s.io/%s\nkind: TCPRoute\nmetadata: {name: %s, namespace: %s}\nspec:\n  parentRefs: [%s]\n  rules:\n  - backendRefs: [{name: %s, port: %d}]\n",
		a.pick("v1alpha2", "v1"), s.name, s.ns, parent, s.name, p.number)
}

func (a *gatewayAPIMesh) tlsRoute(s randomService, p randomPort) {
	if !a.edge {
		return
	}
	fmt.Fprintf(&a.routes, "---\napiVersion: gateway.networking.k8s.io/%s\nkind: TLSRoute\nmetadata: {name: %s, namespace: %s}\nspec:\n  parentRefs: [{name: edge, namespace: gw, sectionName: tls}]\n  hostnames: [%s-%s.example.org]\n  rules:\n  - backendRefs: [{name: %s, port: %d}]\n",
		a.pick("v1alpha2", "v1"), s.name, s.ns, s.name, s.ns, s.name, p.number)
}

// meshRoutes writes up to two mesh HTTPRoutes, whose parent is a Service
// no VirtualService routes, splitting by path to the Service itself and
// another one in its namespace.
func (a *gatewayAPIMesh) meshRoutes() {
	n := 0
	for _, s := range a.svcs {
		p := s.ports[0]
		if s.routed || !p.http || n == 2 || !a.chance(0.4) {
			continue
		}
		n++
		port := ""
		if a.chance(0.5) {
			port = fmt.Sprintf(", port: %d", p.number)
		}
		other := s
		for _, o := range a.svcs {
			if o.ns == s.ns && o.name != s.name && o.ports[0].http {
				other = o
			}
		}
		fmt.Fprintf(&a.routes, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s-mesh, namespace: %s}\nspec:\n  parentRefs: [{group: \"\", kind: Service, name: %s%s}]\n  rules:\n  - {matches: [{path: {type: PathPrefix, value: /other}}], backendRefs: [{name: %s, port: %d}]}\n  - {backendRefs: [{name: %s, port: %d}]%s}\n",
			s.name, s.ns, s.name, port, other.name, other.ports[0].number, s.name, p.number, a.pick("", ", timeouts: {request: 3s}"))
	}
}

// planListenerSets decides, by chance, whether ListenerSets join public,
// how many, and which namespaces public admits them from: none (every
// ListenerSet is then not allowed), all, its own or one application
// namespace.
func (a *gatewayAPIMesh) planListenerSets() {
	if !a.sets.chance(0.7) {
		return
	}
	a.listenerSets = 1 + a.sets.r.IntN(2)
	a.allowedListeners = a.sets.pick("",
		"{namespaces: {from: All}}", "{namespaces: {from: All}}",
		"{namespaces: {from: Same}}",
		"{namespaces: {from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: "+a.ns[0]+"}}}}")
}

// listenerSet writes ListenerSet extra-<i> joining public from gw or an
// application namespace, with listeners on public's ports (so they
// reach the gateway's Service): HTTP with a hostname of its own, by chance
// HTTPS with a certificate of its namespace or (granted or not) of gw's,
// and by chance one without hostname that conflicts with public's
// http-alt; then the HTTPRoutes attached to it.
func (a *gatewayAPIMesh) listenerSet(i int) {
	l := &a.sets
	ns := l.pick(append([]string{"gw"}, a.ns...)...)
	name := fmt.Sprintf("extra-%d", i)
	hostname := name + "." + ns + ".example.org"
	listeners := []string{fmt.Sprintf("name: web, port: %s, protocol: HTTP, hostname: %s%s",
		l.pick("80", "8080"), hostname, l.pick("", ", allowedRoutes: {namespaces: {from: All}}"))}
	if l.chance(0.5) {
		cert := "{name: gw-cert}"
		if ns != "gw" && l.chance(0.5) {
			cert = "{name: gw-cert, namespace: gw}"
			if l.chance(0.6) {
				a.grant("gw", ns, "ListenerSet", "Secret")
			}
		} else {
			a.secret(&a.gw, ns)
		}
		listeners = append(listeners, fmt.Sprintf("name: secure, port: 443, protocol: HTTPS, hostname: %s, tls: {mode: Terminate, certificateRefs: [%s]}, allowedRoutes: {namespaces: {from: All}}", hostname, cert))
	}
	if l.chance(0.25) {
		listeners = append(listeners, "name: dup, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}")
	}
	fmt.Fprintf(&a.gw, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: %s, namespace: %s}\nspec:\n  parentRef: {name: public, namespace: gw}\n  listeners:\n", name, ns)
	for _, ls := range listeners {
		fmt.Fprintf(&a.gw, "  - {%s}\n", ls)
	}
	var http []randomService
	for _, s := range a.svcs {
		if s.ports[0].http {
			http = append(http, s)
		}
	}
	for _, j := range l.r.Perm(len(http))[:min(len(http), 1+l.r.IntN(2))] {
		s := http[j]
		section := l.pick("", ", sectionName: web", ", sectionName: secure", ", sectionName: missing")
		match := l.pick("", "matches: [{path: {type: PathPrefix, value: /"+name+"}}], ")
		fmt.Fprintf(&a.routes, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s-%s-%s, namespace: %s}\nspec:\n  parentRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: %s, namespace: %s%s}]\n  hostnames: [%s]\n  rules:\n  - {%sbackendRefs: [{name: %s, port: %d}]}\n",
			s.name, name, ns, s.ns, name, ns, section, hostname, match, s.name, s.ports[0].number)
	}
}

// A self-signed ECDSA certificate for *.example.com and *.example.org,
// valid until 2126, and its key, base64 as a Secret holds them: istiod
// programs no HTTPS listener whose certificate does not parse.
const (
	testCertPEM = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJzVENDQVZhZ0F3SUJBZ0lVUUdyY2RaSFZ4eU9CaSs0UlRkbFhOcjd6N0dzd0NnWUlLb1pJemowRUF3SXcKR0RFV01CUUdBMVVFQXd3TktpNWxlR0Z0Y0d4bExtTnZiVEFnRncweU5qRXhNall5TXpFeU1qSmFHQTh5TVRJMgpNVEV3TWpJek1USXlNbG93R0RFV01CUUdBMVVFQXd3TktpNWxlR0Z0Y0d4bExtTnZiVEJaTUJNR0J5cUdTTTQ5CkFnRUdDQ3FHU000OUF3RUhBMElBQk9aZ1dHeDlBK0JmeEFKV0N1M1pMd0lBNVY0WkhuREd5TmtSZnRxRSt3SjAKWjFnK0FSUlphUkFLSTZsRVgzR3dNU1JEcFZOQk9wWm0vaFNXbG5UN05MT2pmREI2TUIwR0ExVWREZ1FXQkJUTQpNd2EybllPbE1iMWlvRElkclhrR0F2bHpZVEFmQmdOVkhTTUVHREFXZ0JUTU13YTJuWU9sTWIxaW9ESWRyWGtHCkF2bHpZVEFQQmdOVkhSTUJBZjhFQlRBREFRSC9NQ2NHQTFVZEVRUWdNQjZDRFNvdVpYaGhiWEJzWlM1amIyMkMKRFNvdVpYaGhiWEJzWlM1dmNtY3dDZ1lJS29aSXpqMEVBd0lEU1FBd1JnSWhBTk5DTk1xdnE4M2tRSk5aR21WRwowNWo4VXZSckNLWThlUTQ4N3RCZ2tQdytBaUVBb0ZkcHU4Nm5KQ3JkbXIwaVFocG5aaHdVb2Q2SHduMWM5OGpzCiszT2tpLzA9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
	testKeyPEM  = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JR0hBZ0VBTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEJHMHdhd0lCQVFRZ3dKLzJMQzZHMCtOMWQvazcKcXFoS1JrWWY1emMyVVIyWWNldEVzRWw1cTZ1aFJBTkNBQVRtWUZoc2ZRUGdYOFFDVmdydDJTOENBT1ZlR1I1dwp4c2paRVg3YWhQc0NkR2RZUGdFVVdXa1FDaU9wUkY5eHNERWtRNlZUUVRxV1p2NFVscFowK3pTegotLS0tLUVORCBQUklWQVRFIEtFWS0tLS0tCg=="
)
