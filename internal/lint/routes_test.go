package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
)

// vs is a VirtualService of ns; spec is its inline YAML spec.
func vs(ns, name, spec string) string { return obj("VirtualService", ns, name, spec) }

// gatewayFixture is an injected ingress namespace with a gateway workload
// and Gateway ingress/public serving hosts.
func gatewayFixture(hosts string) []string {
	return []string{ns("ingress"), deployment("ingress", "gw", "{istio: ingressgateway}"),
		obj("Gateway", "ingress", "public", fmt.Sprintf("selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: [%s]}]", hosts))}
}

const requestAuthn = "apiVersion: security.istio.io/v1\nkind: RequestAuthentication\nmetadata: {name: jwt, namespace: ingress}\nspec: {selector: {matchLabels: {istio: ingressgateway}}, jwtRules: [{issuer: https://issuer.example.com}]}\n"

// TestRouteAnalyzers: for each MC5xxx code of the route family, cases
// that fire, with the object, a message fragment and the proxies, and
// near misses that must not.
func TestRouteAnalyzers(t *testing.T) {
	web := []string{ns("web"), ns("client"), service("web", "api"), service("web", "backend"),
		deployment("web", "api-v1", "{app: api, version: v1}"), deployment("client", "caller", "{app: caller}")}
	with := func(docs ...string) []string { return append(append([]string{}, web...), docs...) }
	route := "route: [{destination: {host: api}}]"
	http := "http: [{" + route + "}]"
	tests := []struct {
		name    string
		code    string
		docs    []string
		want    int    // findings of code
		object  string // namespace/name of the first
		message string // fragment of its message
		proxies string // its proxies, joined with ","; checked when want > 0
	}{
		{"MC5003 route after a route without match", "MC5003", with(vs("web", "api", "hosts: [api], http: [{name: all, "+route+"}, {match: [{uri: {prefix: /v2}}], "+route+"}]")),
			1, "web/api", `spec.http[1] of web/api is never used: spec.http[0] ("all") before it has no match`, ""},
		{"MC5003 route after a match of everything", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /}}], "+route+"}, {match: [{uri: {prefix: /v2}}], "+route+"}]")),
			1, "web/api", "matches every request", ""},
		{"MC5003 every match repeated", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{name: a, uri: {prefix: /a}}], "+route+"}, {match: [{name: b, uri: {prefix: /a}}], "+route+"}]")),
			1, "web/api", "spec.http[1] of web/api is never used: each of its matches repeats or is covered by a match of an earlier route (spec.http[0])", ""},
		{"MC5003 one match repeated", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /a}}], "+route+"}, {match: [{uri: {prefix: /b}}, {uri: {prefix: /a}}], "+route+"}]")),
			1, "web/api", "match[1] of spec.http[1] of web/api never takes traffic: it repeats spec.http[0].match[0]", ""},
		{"MC5003 match covered by an earlier prefix", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /api}, method: {exact: GET}}], "+route+"}, {match: [{uri: {exact: /health}}, {uri: {prefix: /api/v1}, method: {exact: GET}}], "+route+"}]")),
			1, "web/api", `match[1] of spec.http[1] of web/api never takes traffic: spec.http[0].match[0] comes first and takes all its requests: its uri prefix "/api" covers "/api/v1"`, ""},
		{"MC5003 a match covered by an earlier match of the same route", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /api/v1/product}, method: {exact: GET}}, {uri: {prefix: /api/v1/products}, method: {exact: GET}}, {uri: {exact: /health}}, {uri: {exact: /health}}], "+route+"}]")),
			2, "web/api", `match[1] of spec.http[0] of web/api never takes traffic: spec.http[0].match[0] comes first and takes all its requests: its uri prefix "/api/v1/product" covers "/api/v1/products"`, ""},
		{"MC5003 near miss: the longer prefix first, or other conditions", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /api/v1}}], "+route+"}, {match: [{uri: {prefix: /api}}], "+route+"}, {match: [{uri: {prefix: /api/v2}, method: {exact: POST}}], "+route+"}]")),
			0, "", "", ""},
		{"MC5003 TCP route after a route without match", "MC5003", with(vs("web", "api", "hosts: [api], tcp: [{route: [{destination: {host: api}}]}, {match: [{port: 9000}], route: [{destination: {host: backend}}]}]")),
			1, "web/api", "spec.tcp[1] of web/api is never used", ""},
		{"MC5003 near miss: specific before general", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /v2}}], "+route+"}, {match: [{uri: {prefix: /}}], "+route+"}, {"+route+"}]")),
			1, "web/api", "spec.http[2]", ""}, // the last is dead behind the "/" match, nothing else
		{"MC5003 TLS match repeated within its one route", "MC5003", with(vs("web", "api", "hosts: [api], tls: [{match: [{sniHosts: [api]}, {sniHosts: [api]}], route: [{destination: {host: api}}]}]")),
			1, "web/api", "match[1] of spec.tls[0]", ""},
		{"MC5003 near miss: one route whose one match takes everything, as a converted HTTPRoute has", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /}}], "+route+"}]")),
			0, "", "", ""},
		{"MC5003 near miss: a match of everything for some sources only", "MC5003", with(vs("web", "api", "hosts: [api], http: [{match: [{uri: {prefix: /}, sourceLabels: {app: caller}}], "+route+"}, {"+route+"}]")),
			0, "", "", ""},

		{"MC5004 gateway in no namespace", "MC5004", with(vs("web", "api", "hosts: [api.example.com], gateways: [ingress/public], "+http)),
			1, "web/api", `binds gateway "ingress/public", but there is no Gateway ingress/public`, ""},
		{"MC5004 short name means the VirtualService's namespace", "MC5004", with(append(gatewayFixture("'*'"), vs("web", "api", "hosts: [api.example.com], gateways: [mesh, public], "+http))...),
			1, "web/api", `no Gateway web/public (a Gateway public exists in namespace ingress: write ingress/public)`, ""},
		{"MC5004 in a match", "MC5004", with(append(gatewayFixture("'*'"), vs("web", "api", "hosts: [api.example.com], gateways: [mesh, ingress/public], http: [{match: [{gateways: [ingress/nope]}], "+route+"}]"))...),
			1, "web/api", `binds gateway "ingress/nope", but there is no Gateway ingress/nope`, ""},
		{"MC5004 near miss: Istio and Gateway API gateways exist", "MC5004", with(append(gatewayFixture("'*'"),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: k8s, namespace: web}\nspec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}\n",
			vs("web", "api", "hosts: [api.example.com], gateways: [mesh, ingress/public, k8s], "+http))...),
			0, "", "", ""},

		{"MC5005 no port, service with two", "MC5005", with(service("web", "multi", "{port: 80, name: http}", "{port: 9090, name: http-admin}"), service("web", "other", "{port: 8080, name: http}"),
			vs("web", "multi", "hosts: [other], http: [{route: [{destination: {host: multi}}]}]")),
			1, "web/multi", "routes to multi.web.svc.cluster.local without a port, but the service has ports 80, 9090", ""},
		{"MC5005 one finding per host", "MC5005", with(service("web", "multi", "{port: 80, name: http}", "{port: 9090, name: http-admin}"), service("web", "other", "{port: 8080, name: http}"),
			vs("web", "multi", "hosts: [other], http: [{route: [{destination: {host: multi}, weight: 90}, {destination: {host: multi}, weight: 10}]}]")),
			1, "web/multi", "without a port (2 destinations)", ""},
		{"MC5005 a gateway route to its own host", "MC5005", with(append(gatewayFixture("'*'"), service("web", "multi", "{port: 80, name: http}", "{port: 9090, name: http-admin}"),
			vs("web", "multi", "hosts: [multi], gateways: [mesh, ingress/public], http: [{route: [{destination: {host: multi}}]}]"))...),
			1, "web/multi", "without a port", ""},
		{"MC5005 near miss: one port number, for UDP and TCP", "MC5005", with(service("web", "dns", "{port: 53, name: dns, protocol: UDP}", "{port: 53, name: dns-tcp}"), service("web", "other", "{port: 8080, name: tcp}"),
			vs("web", "dns", "hosts: [other], tcp: [{route: [{destination: {host: dns}}]}]")),
			0, "", "", ""},
		{"MC5005 near miss: port given, one port, or a sidecar route to a service with the same ports", "MC5005", with(service("web", "multi", "{port: 80, name: http}", "{port: 9090, name: http-admin}"),
			vs("web", "multi", "hosts: [multi.example.com], http: [{route: [{destination: {host: multi, port: {number: 9090}}}]}, {route: [{destination: {host: api}}]}]"),
			vs("web", "own", "hosts: [multi], http: [{route: [{destination: {host: multi}}]}]")),
			0, "", "", ""},

		{"MC5006 VirtualService brings another host", "MC5006", with(obj("Sidecar", "web", "default", "egress: [{hosts: [./api.web.svc.cluster.local]}]"),
			vs("web", "api", "hosts: [api, api.example.com], "+http)),
			1, "web/api", "Sidecar web/default imports web/api through host api.web.svc.cluster.local, and with it its routes for api.example.com", "web/api-v1"},
		{"MC5006 without workloads: the namespace's stand-in", "MC5006", []string{service("web", "api"), obj("Sidecar", "web", "default", "egress: [{hosts: [./api.web.svc.cluster.local]}]"),
			vs("web", "api", "hosts: [api, api.example.com], "+http)},
			1, "web/api", "and with it its routes for api.example.com", "web/*"},
		{"MC5006 near miss: every host imported", "MC5006", with(obj("Sidecar", "web", "default", "egress: [{hosts: [./api.web.svc.cluster.local, '*/api.example.com']}]"),
			vs("web", "api", "hosts: [api, api.example.com], "+http)),
			0, "", "", ""},

		{"MC5007 route to a service the Sidecar does not import", "MC5007", with(obj("Sidecar", "web", "default", "egress: [{hosts: [./api.web.svc.cluster.local]}]"),
			vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: backend}}]}]")),
			1, "web/api", "web/api routes to backend.web.svc.cluster.local, which Sidecar web/default does not import", "web/api-v1"},
		{"MC5007 without workloads: the namespace's stand-in", "MC5007", []string{service("web", "api"), service("web", "backend"), obj("Sidecar", "web", "default", "egress: [{hosts: [./api.web.svc.cluster.local]}]"),
			vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: backend}}]}]")},
			1, "web/api", "which Sidecar web/default does not import", "web/*"},
		{"MC5007 near miss: the Sidecar imports it", "MC5007", with(obj("Sidecar", "web", "default", "egress: [{hosts: ['./*']}]"),
			vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: backend}}]}]")),
			0, "", "", ""},

		{"MC5008 host served by no server", "MC5008", with(append(gatewayFixture("shop.example.com"), vs("web", "api", "hosts: [api.example.com], gateways: [ingress/public], "+http))...),
			1, "web/api", "binds gateway ingress/public, but no server of that Gateway serves any of its hosts (api.example.com); the servers offer shop.example.com", ""},
		{"MC5008 server host for another namespace", "MC5008", with(append(gatewayFixture("./shop.example.com"), vs("web", "api", "hosts: [shop.example.com], gateways: [ingress/public], "+http))...),
			1, "web/api", "the servers offer none for this namespace", ""},
		{"MC5008 one host of a gateway-only VirtualService not served", "MC5008", with(append(gatewayFixture("shop.example.com"), vs("web", "api", "hosts: [shop.example.com, api.example.com], gateways: [ingress/public], "+http))...),
			1, "web/api", "web/api binds gateways only (ingress/public), and none of them serves host api.example.com; its routes for it are never used", ""},
		{"MC5008 near miss: the other host is for the mesh", "MC5008", with(append(gatewayFixture("shop.example.com"), vs("web", "api", "hosts: [shop.example.com, api], gateways: [ingress/public, mesh], "+http))...),
			0, "", "", ""},
		{"MC5008 Gateway API Gateway", "MC5008", with(
			"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: k8s, namespace: web}\nspec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP, hostname: shop.example.com}]}\n",
			vs("web", "api", "hosts: [api.example.com], gateways: [k8s], "+http)),
			1, "web/api", "binds gateway web/k8s, but no server of that Gateway serves any of its hosts (api.example.com); the servers offer shop.example.com", ""},
		{"MC5008 near miss: a Gateway API listener without hostname", "MC5008", with(
			"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: k8s, namespace: web}\nspec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}\n",
			vs("web", "api", "hosts: [api.example.com], gateways: [k8s], "+http)),
			0, "", "", ""},
		{"MC5008 near miss: wildcard server host", "MC5008", with(append(gatewayFixture("'*.example.com'"), vs("web", "api", "hosts: [api.example.com], gateways: [ingress/public], "+http))...),
			0, "", "", ""},

		{"MC5009 port the service lacks", "MC5009", with(vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: api, port: {number: 8080}}}]}]")),
			1, "web/api", "routes to port 8080 of api.web.svc.cluster.local, which has only port 80; the route names cluster outbound|8080||api.web.svc.cluster.local", ""},
		{"MC5009 near miss: right port, or a service not in the input", "MC5009", with(vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: api, port: {number: 80}}}]}, {route: [{destination: {host: other.example.com, port: {number: 8080}}}]}]")),
			0, "", "", ""},

		{"MC5010 gateway route without subset", "MC5010", with(append(gatewayFixture("shop.example.com"),
			vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: api, subset: v1}}]}]"),
			vs("ingress", "front", "hosts: [shop.example.com], gateways: [public], http: [{route: [{destination: {host: api.web.svc.cluster.local}}]}]"))...),
			1, "ingress/front", "ingress/front sends traffic from gateway ingress/public to api.web.svc.cluster.local without a subset, while VirtualService web/api routes that host by subset", ""},
		{"MC5010 near miss: gateway route with subset", "MC5010", with(append(gatewayFixture("shop.example.com"),
			vs("web", "api", "hosts: [api], http: [{route: [{destination: {host: api, subset: v1}}]}]"),
			vs("ingress", "front", "hosts: [shop.example.com], gateways: [public], http: [{route: [{destination: {host: api.web.svc.cluster.local, subset: v1}}]}]"))...),
			0, "", "", ""},

		{"MC5011 Sidecar does not import the namespace's VirtualService", "MC5011", with(obj("Sidecar", "web", "default", "egress: [{hosts: [istio-system/*]}]"), vs("web", "api", "hosts: [api], "+http)),
			1, "web/api", "web/api routes api.web.svc.cluster.local for the mesh, but Sidecar web/default, which applies to web/api-v1, imports none of its hosts", "web/api-v1"},
		{"MC5011 without workloads: the namespace's stand-in", "MC5011", []string{obj("Sidecar", "web", "default", "egress: [{hosts: [istio-system/*]}]"), vs("web", "api", "hosts: [api], "+http)},
			1, "web/api", "Sidecar web/default, which applies to web/*, imports none", "web/*"},
		{"MC5011 the root namespace's Sidecar", "MC5011", with(obj("Sidecar", "istio-system", "default", "egress: [{hosts: [istio-system/*]}]"), vs("web", "api", "hosts: [api], "+http)),
			1, "web/api", "Sidecar istio-system/default, which applies to web/api-v1, imports none of its hosts", "web/api-v1"},
		{"MC5011 a selector Sidecar; the namespace default imports it", "MC5011", with(deployment("web", "batch", "{app: batch}"),
			obj("Sidecar", "web", "default", "egress: [{hosts: ['./*']}]"),
			obj("Sidecar", "web", "batch", "workloadSelector: {labels: {app: batch}}, egress: [{hosts: [istio-system/*]}]"), vs("web", "api", "hosts: [api], "+http)),
			1, "web/api", "Sidecar web/batch, which applies to web/batch, imports none of its hosts", "web/batch"},
		{"MC5011 the service is imported, but by its own namespace", "MC5011", with(service("client", "db"), obj("Sidecar", "web", "default", "egress: [{hosts: [istio-system/*, client/*]}]"),
			vs("web", "db", "hosts: [db.client.svc.cluster.local], "+strings.ReplaceAll(http, "host: api", "host: db.client.svc.cluster.local"))),
			1, "web/db", `imports none of its hosts (it imports the service db.client.svc.cluster.local, but a VirtualService is imported only by egress hosts of its own namespace, web, or of "*/")`, "web/api-v1"},
		{"MC5011 near miss: a VirtualService for a service that does not exist", "MC5011", with(obj("Sidecar", "web", "default", "egress: [{hosts: [istio-system/*]}]"), vs("web", "ghost", "hosts: [ghost], "+http)),
			0, "", "", ""},
		{"MC5011 near miss: imported, or gateway-only", "MC5011", with(append(gatewayFixture("'*'"), obj("Sidecar", "web", "default", "egress: [{hosts: ['./*']}]"),
			vs("web", "api", "hosts: [api], "+http), vs("web", "front", "hosts: [front.example.com], gateways: [ingress/public], "+http))...),
			0, "", "", ""},

		{"MC5012 claim route on a gateway without RequestAuthentication", "MC5012", with(append(gatewayFixture("shop.example.com"),
			vs("ingress", "front", "hosts: [shop.example.com], gateways: [public], http: [{match: [{headers: {'@request.auth.claims.group': {exact: admin}}}], route: [{destination: {host: api.web.svc.cluster.local}}]}]"))...),
			1, "ingress/front", `routes on JWT claim "@request.auth.claims.group" through gateway ingress/public, but no RequestAuthentication applies to its proxy ingress/gw`, "ingress/gw"},
		{"MC5012 without gateway workloads: judged by the Gateway's selector", "MC5012", []string{
			obj("Gateway", "ingress", "public", "selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: [shop.example.com]}]"),
			vs("ingress", "front", "hosts: [shop.example.com], gateways: [public], http: [{match: [{withoutHeaders: {'@request.auth.claims[group]': {exact: admin}}}], route: [{destination: {host: api.web.svc.cluster.local}}]}]")},
			1, "ingress/front", "no RequestAuthentication in the input selects its workloads (istio=ingressgateway)", ""},
		{"MC5012 near miss: without workloads, a RequestAuthentication selects the labels", "MC5012", []string{
			obj("Gateway", "ingress", "public", "selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: [shop.example.com]}]"),
			strings.Replace(requestAuthn, "namespace: ingress", "namespace: istio-system", 1),
			vs("ingress", "front", "hosts: [shop.example.com], gateways: [public], http: [{match: [{headers: {'@request.auth.claims.group': {exact: admin}}}], route: [{destination: {host: api.web.svc.cluster.local}}]}]")},
			0, "", "", ""},
		{"MC5012 near miss: RequestAuthentication selects the gateway", "MC5012", with(append(gatewayFixture("shop.example.com"), requestAuthn,
			vs("ingress", "front", "hosts: [shop.example.com], gateways: [public], http: [{match: [{headers: {'@request.auth.claims.group': {exact: admin}}}], route: [{destination: {host: api.web.svc.cluster.local}}]}]"))...),
			0, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := firstOf(t, tt.code, tt.want, tt.docs)
			if !ok {
				return
			}
			if d.Object.Namespace+"/"+d.Object.Name != tt.object || !strings.Contains(d.Message, tt.message) || strings.Join(d.Proxies, ",") != tt.proxies {
				t.Errorf("got:\n%s\nwant object %s, message containing %q, proxies %q", describe([]diag.Diagnostic{d}), tt.object, tt.message, tt.proxies)
			}
			if d.Object.File != "in.yaml" || d.Object.Line == 0 {
				t.Errorf("finding lacks its field's position: %+v", d.Object)
			}
			if e := entryOf(tt.code); d.Severity != e.Severity {
				t.Errorf("severity %s, want %s", d.Severity, e.Severity)
			}
		})
	}
}

func entryOf(code string) *diag.Entry {
	for _, a := range Analyzers() {
		if a.Entry.Code == code {
			return a.Entry
		}
	}
	return nil
}

// TestRouteAnalyzersOddInput: the route analyzers must not panic on
// empty, partial or strange VirtualServices, Gateways and Sidecars.
func TestRouteAnalyzersOddInput(t *testing.T) {
	docs := []string{
		ns("web"), deployment("web", "w", "{app: w}"), deployment("web", "gw", "{istio: gw}"),
		service("web", "api", "{port: 80, name: http}", "{port: 81, name: http-b}"),
		obj("Gateway", "web", "empty", "selector: {istio: gw}"),
		obj("Gateway", "web", "nosel", "servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['./*', '*/*', 'x/']}]"),
		obj("Sidecar", "web", "default", "egress: [{hosts: ['~/*', './*', 'bad', '*/*.example.com']}, {port: {number: 80, protocol: HTTP, name: h}, hosts: ['*/*']}]"),
		vs("web", "empty", ""),
		vs("web", "no-hosts", "http: [{}, {match: [{}], route: [{destination: {host: api}}]}, {match: [{}]}]"),
		vs("web", "odd", "hosts: ['*', api, ''], gateways: ['', '/', a/b/c, ., ./, mesh, empty, nosel, web.svc.cluster.local], "+
			"http: [{match: [{uri: {prefix: ''}, gateways: ['']}, {uri: {regex: '.*'}}, {headers: {'@request.auth.claims': {exact: 'x'}, '@request.auth.claims[]': {exact: 'y'}, '@request.auth.claims.a': {}}}], "+
			"route: [{destination: {host: ''}}, {destination: {host: api, port: {number: 0}}}, {}], mirror: {host: api, port: {number: 7}}}, {delegate: {name: no-hosts}}, {delegate: {name: missing}}], "+
			"tcp: [{}, {match: [{}]}, {route: [{destination: {host: '*'}}]}], tls: [{match: [{sniHosts: ['*']}]}, {match: [{sniHosts: ['*']}], route: [{destination: {host: api}}]}]"),
	}
	for _, d := range run(t, Options{}, docs...) {
		if d.Message == "" {
			t.Errorf("empty message: %+v", d)
		}
	}
}
