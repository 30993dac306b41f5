package routecheck

import (
	"fmt"
	"strings"
	"testing"
)

// gatewayWorkload is an ingress gateway in istio-system with no Service,
// so its servers' ports are its listeners' ports.
const gatewayWorkload = `apiVersion: v1
kind: Namespace
metadata:
  name: istio-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ingress
  namespace: istio-system
spec:
  selector:
    matchLabels: {istio: ingressgateway}
  template:
    metadata:
      annotations: {inject.istio.io/templates: gateway}
      labels: {istio: ingressgateway, sidecar.istio.io/inject: "true"}
    spec:
      containers:
      - {name: istio-proxy, image: auto}
`

// gw is a Gateway in default selecting the ingress, with servers written
// in YAML flow style.
func gw(name string, servers ...string) string {
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  selector: {istio: ingressgateway}\n  servers:\n  - %s\n",
		name, strings.Join(servers, "\n  - "))
}

// vs is a VirtualService in default bound to gateway, sending hosts to
// dest (HOST or HOST:PORT), under a URI match (a flow mapping) if any.
func vs(name, gateway string, hosts []string, match, dest string) string {
	d := "host: " + dest
	if h, p, ok := strings.Cut(dest, ":"); ok {
		d = fmt.Sprintf("host: %s, port: {number: %s}", h, p)
	}
	m := ""
	if match != "" {
		m = "    match: [{uri: " + match + "}]\n"
	}
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  hosts: [%s]\n  gateways: [%s]\n  http:\n  - route: [{destination: {%s}}]\n%s",
		name, strings.Join(hosts, ", "), gateway, d, m)
}

// Situations istiod's simulation tests assert for HTTP gateway servers,
// written afresh as meshc test files: listeners and route
// configurations, virtual hosts per server host, VirtualServices merged
// per host, and httpsRedirect.
func TestHTTPGatewayAsIstioSimulates(t *testing.T) {
	const httpServer = `{port: {number: 80, name: http, protocol: HTTP}, hosts: [foo.bar]}`
	const redirect = `{port: {number: 80, name: http, protocol: HTTP}, hosts: [example.com], tls: {httpsRedirect: true}}`
	simple := vs("vs", "gateway", []string{"example.com"}, "{prefix: /}", "b")
	cases := []struct {
		name      string
		manifests []string
		tests     string
	}{
		{"a server without VirtualServices", []string{gw("default", httpServer)}, `
- name: defined port
  from: gateway istio-system/ingress
  target: http://foo.bar/
  expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, virtualHost: "blackhole:80", noRoute: true, stoppedAt: route}
- name: undefined port
  from: gateway istio-system/ingress
  target: http://foo.bar:81/
  expect: {stoppedAt: listener}
`},
		{"a VirtualService on every host", []string{gw("gateway", httpServer), vs("bookinfo", "gateway", []string{`"*"`}, "{exact: /productpage}", "productpage:9080")}, `
- name: uri mismatch
  from: gateway istio-system/ingress
  target: http://foo.bar/
  expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, virtualHost: "foo.bar:80", stoppedAt: route}
- name: host mismatch
  from: gateway istio-system/ingress
  target: http://bad.bar/
  expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, stoppedAt: virtualHost}
- name: match
  from: gateway istio-system/ingress
  target: http://foo.bar/productpage
  expect: {listener: 0.0.0.0_80, virtualHost: "foo.bar:80", cluster: "outbound|9080||productpage.default.svc.cluster.local"}
`},
		{"two VirtualServices under a wildcard server", []string{
			gw("gateway", `{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*.example.com"]}`),
			vs("a", "gateway", []string{"a.example.com"}, "{prefix: /}", "a:80"),
			vs("b", "gateway", []string{"b.example.com"}, "{prefix: /}", "b:80")}, `
- name: a
  from: gateway istio-system/ingress
  target: http://a.example.com/
  expect: {cluster: "outbound|80||a.default.svc.cluster.local"}
- name: b
  from: gateway istio-system/ingress
  target: http://b.example.com/
  expect: {cluster: "outbound|80||b.default.svc.cluster.local"}
- name: undefined hostname
  from: gateway istio-system/ingress
  target: http://c.example.com/
  expect: {stoppedAt: virtualHost}
`},
		{"httpsRedirect without routes", []string{gw("gateway", redirect)}, `
- from: gateway istio-system/ingress
  target: http://example.com/
  expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, virtualHost: "example.com:80", redirect: 301}
`},
		{"httpsRedirect with routes", []string{gw("gateway", redirect), simple}, `
- from: gateway istio-system/ingress
  target: http://example.com/
  expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, virtualHost: "example.com:80", redirect: 301}
`},
		{"httpsRedirect on one of two servers for a host", []string{gw("gateway", redirect),
			gw("gateway2", `{port: {number: 80, name: http, protocol: HTTP}, hosts: [example.com]}`), simple}, `
- from: gateway istio-system/ingress
  target: http://example.com/
  expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, virtualHost: "example.com:80", redirect: 301}
`},
		{"httpsRedirect on an HTTPS server", []string{
			gw("gateway", `{port: {number: 443, name: https, protocol: HTTPS}, hosts: [example.com], tls: {httpsRedirect: true, mode: SIMPLE, credentialName: test}}`), simple}, `
- from: gateway istio-system/ingress
  target: https://example.com/
  expect: {listener: 0.0.0.0_443, routeConfiguration: https.443.https.gateway.default, virtualHost: "example.com:443", cluster: "outbound|443||b.default.svc.cluster.local"}
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("tests.yaml", []byte("tests:"+tc.tests))
			if err != nil {
				t.Fatal(err)
			}
			runIn(t, strings.Join(append([]string{gatewayWorkload}, tc.manifests...), "---\n"), f)
		})
	}
}

// created sets an object's creation time to the start of a year.
func created(manifest, year string) string {
	return strings.Replace(manifest, "\nmetadata:\n", "\nmetadata:\n  creationTimestamp: \""+year+"-01-01T00:00:00Z\"\n", 1)
}

// gwIn is a Gateway named name in namespace ns selecting the ingress.
func gwIn(ns, name string, servers ...string) string {
	return strings.Replace(gw(name, servers...), "namespace: default", "namespace: "+ns, 1)
}

// Situations istiod's simulation tests assert for gateway servers that
// collide: one Gateway name in two namespaces, two protocols on a port,
// two VirtualServices for one SNI host.
func TestGatewayConflictsAsIstioSimulates(t *testing.T) {
	const tcpServer = `{port: {number: 80, name: tcp, protocol: TCP}, hosts: [foo.bar]}`
	const httpServer = `{port: {number: 80, name: http, protocol: HTTP}, hosts: [foo.bar]}`
	const tcpRoute = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: bookinfo, namespace: default}
spec:
  hosts: ["*"]
  gateways: [istio-system/gateway]
  tcp: [{route: [{destination: {host: productpage, port: {number: 9080}}}]}]
`
	tlsRoute := func(name string) string {
		return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %s, namespace: default}
spec:
  gateways: [istio-system/ingressgateway]
  hosts: [mysite.example.com]
  tls: [{match: [{port: 443, sniHosts: [mysite.example.com]}], route: [{destination: {host: mysite.default.svc.cluster.local, port: {number: 443}}}]}]
`, name)
	}
	// A TCP server takes its port whole: a later server on the port is
	// dropped, even when the TCP server has no routes and builds nothing.
	cases := []struct {
		name      string
		manifests []string
		tests     string
	}{
		{"one Gateway name in istio-system and an earlier namespace", []string{gwIn("istio-system", "gateway", tcpServer), gwIn("alpha", "gateway", tcpServer), tcpRoute}, `
- {from: gateway istio-system/ingress, target: "foo.bar:80", expect: {stoppedAt: listener}}
`},
		{"one Gateway name in istio-system and a later namespace", []string{gwIn("istio-system", "gateway", tcpServer), gwIn("zeta", "gateway", tcpServer), tcpRoute}, `
- {from: gateway istio-system/ingress, target: "foo.bar:80", expect: {listener: 0.0.0.0_80, cluster: "outbound|9080||productpage.default.svc.cluster.local"}}
`},
		{"two VirtualServices for one SNI host", []string{gwIn("istio-system", "ingressgateway", `{hosts: ["*.example.com"], port: {name: https, number: 443, protocol: HTTPS}, tls: {mode: PASSTHROUGH}}`),
			tlsRoute("vs1"), tlsRoute("vs2")}, `
- {from: gateway istio-system/ingress, target: "https://mysite.example.com/", expect: {listener: 0.0.0.0_443, cluster: "outbound|443||mysite.default.svc.cluster.local"}}
`},
		{"TCP then HTTP on one port", []string{gw("alpha", tcpServer), gw("beta", httpServer)}, `
- {from: gateway istio-system/ingress, target: "foo.bar:80", expect: {stoppedAt: listener}}
`},
		{"two wildcard servers told apart by their VirtualServices' namespaces", []string{
			gw("alpha", `{hosts: ["ns-1/*.example.com"], port: {name: http, number: 80, protocol: HTTP}}`),
			gw("beta", `{hosts: ["ns-2/*.example.com"], port: {name: http, number: 80, protocol: HTTP}}`),
			strings.Replace(vs("default", "default/alpha", []string{"ns-1.example.com"}, "", "echo"), "namespace: default", "namespace: ns-1", 1),
			strings.Replace(vs("default", "default/beta", []string{"ns-2.example.com"}, "", "echo"), "namespace: default", "namespace: ns-2", 1)}, `
- {from: gateway istio-system/ingress, target: "http://ns-1.example.com/", expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, cluster: "outbound|80||echo.ns-1.svc.cluster.local"}}
- {from: gateway istio-system/ingress, target: "http://ns-2.example.com/", expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, cluster: "outbound|80||echo.ns-2.svc.cluster.local"}}
`},
		{"VirtualServices for shared and single hosts become separate virtual hosts", []string{
			gwIn("istio-system", "public-gw", `{port: {number: 80, name: http, protocol: HTTP}, hosts: [foo.example.com, bar.example.com]}`),
			created(vs("foobar-vs", "istio-system/public-gw", []string{"foo.example.com", "bar.example.com"}, "{prefix: /1}", "echo-foobar"), "2010"),
			created(vs("foo-vs", "istio-system/public-gw", []string{"foo.example.com"}, "{prefix: /foo}", "echo-foo:80"), "2015"),
			created(vs("bar-vs", "istio-system/public-gw", []string{"bar.example.com"}, "{prefix: /bar}", "echo-bar:80"), "2020")}, `
- {from: gateway istio-system/ingress, target: "http://foo.example.com/1", expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, cluster: "outbound|80||echo-foobar.default.svc.cluster.local"}}
- {from: gateway istio-system/ingress, target: "http://foo.example.com/foo", expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, cluster: "outbound|80||echo-foo.default.svc.cluster.local"}}
- {from: gateway istio-system/ingress, target: "http://bar.example.com/bar", expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, cluster: "outbound|80||echo-bar.default.svc.cluster.local"}}
`},
		{"HTTP then TCP on one port", []string{gw("beta", tcpServer), gw("alpha", httpServer)}, `
- {from: gateway istio-system/ingress, target: "http://foo.bar/", expect: {listener: 0.0.0.0_80, routeConfiguration: http.80, virtualHost: "blackhole:80", stoppedAt: route}}
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("tests.yaml", []byte("tests:"+tc.tests))
			if err != nil {
				t.Fatal(err)
			}
			runIn(t, strings.Join(append([]string{gatewayWorkload}, tc.manifests...), "---\n"), f)
		})
	}
}
