package emit

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	previousprioritiesv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/priority/previous_priorities/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestRouteFeatures: a VirtualService route's CORS policy, mirror,
// retries across localities with back-off, and each weighted
// destination's consistent hash reach the Envoy route as istiod writes
// them.
func TestRouteFeatures(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: shadow, namespace: default}
spec: {clusterIP: 10.0.0.6, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec:
  host: web
  trafficPolicy: {loadBalancer: {consistentHash: {httpHeaderName: x-user}}}
  subsets: [{name: a, labels: {v: a}}, {name: b, labels: {v: b}, trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}}]`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  hosts: [web]
  http:
  - name: split
    corsPolicy:
      allowOrigins: [{exact: https://a.example}, {prefix: https://b.}]
      allowMethods: [GET, POST]
      allowHeaders: [x-a, x-b]
      maxAge: 24h
      allowCredentials: true
      unmatchedPreflights: IGNORE
    mirror: {host: shadow}
    mirrorPercentage: {value: 25}
    retries: {attempts: 3, retryRemoteLocalities: true, backoff: 250ms}
    route:
    - {destination: {host: web, subset: a}, weight: 60}
    - {destination: {host: web, subset: b}, weight: 40}`)
	rc := routeNamed(cfg, "80")
	var route *routev3.Route
	for _, vh := range rc.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			if r.GetName() == "split" {
				route = r
			}
		}
	}
	if route == nil {
		t.Fatalf("no route split in %v", rc)
	}
	var cors corsv3.CorsPolicy
	if err := route.GetTypedPerFilterConfig()[corsFilter].UnmarshalTo(&cors); err != nil {
		t.Fatalf("CORS: %v", err)
	}
	var origins []string
	for _, m := range cors.GetAllowOriginStringMatch() {
		origins = append(origins, m.GetExact()+m.GetPrefix())
	}
	if !slices.Equal(origins, []string{"https://a.example", "https://b."}) || cors.GetAllowMethods() != "GET,POST" ||
		cors.GetAllowHeaders() != "x-a,x-b" || cors.GetMaxAge() != "86400" || !cors.GetAllowCredentials().GetValue() ||
		cors.GetForwardNotMatchingPreflights().GetValue() || cors.GetFilterEnabled().GetDefaultValue().GetNumerator() != 100 {
		t.Errorf("CORS policy = %v", &cors)
	}
	action := route.GetRoute()
	mirrors := action.GetRequestMirrorPolicies()
	if len(mirrors) != 1 || mirrors[0].GetCluster() != "outbound|80||shadow.default.svc.cluster.local" ||
		!mirrors[0].GetDisableShadowHostSuffixAppend() || mirrors[0].GetRuntimeFraction().GetDefaultValue().GetNumerator() != 250000 {
		t.Errorf("mirror = %v, want 25%% to shadow keeping the Host", mirrors)
	}
	retry := action.GetRetryPolicy()
	var prio previousprioritiesv3.PreviousPrioritiesConfig
	if err := retry.GetRetryPriority().GetTypedConfig().UnmarshalTo(&prio); err != nil || prio.GetUpdateFrequency() != 2 {
		t.Errorf("retry priority = %v (%v), want previous priorities every 2 tries", retry.GetRetryPriority(), err)
	}
	if got := retry.GetRetryBackOff().GetBaseInterval().AsDuration(); got != 250*time.Millisecond {
		t.Errorf("retry back-off = %v, want 250ms", got)
	}
	// Both destinations hash, each its own way; with two, a retry may
	// still go to another host.
	hashes := action.GetHashPolicy()
	if len(hashes) != 2 || hashes[0].GetHeader().GetHeaderName() != "x-user" || !hashes[1].GetConnectionProperties().GetSourceIp() {
		t.Errorf("hash policies = %v, want subset a's header then subset b's source IP", hashes)
	}
	if retry.GetRetryHostPredicate() == nil {
		t.Errorf("retries of a split route keep avoiding previous hosts: %v", retry)
	}
}

// TestGatewayHTTPRoutes: on a gateway's HTTP route configuration, hosts
// ("./" meaning the Gateway's namespace) given the same VirtualService
// routes share one virtual host named by the most specific host,
// httpsRedirect servers require TLS even without routes, catch-all routes
// go after the others across VirtualServices, and redirects take the
// request's port unless it is the scheme's default.
func TestGatewayHTTPRoutes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayPod("edge"),
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.8, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: default}
spec:
  selector: {istio: edge}
  servers:
  - {port: {number: 8080, name: http, protocol: HTTP}, hosts: [a.example.com, ./b.example.com, c.example.com, d.example.com, "*.c.example.com"]}
  - {port: {number: 8080, name: http-redirect, protocol: HTTP}, hosts: ["*/secure.example.com"], tls: {httpsRedirect: true}}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ab, namespace: default}
spec:
  hosts: [d.example.com, b.example.com, a.example.com]
  gateways: [edge]
  http:
  - {name: old, match: [{uri: {prefix: /old}}], redirect: {uri: /new, derivePort: FROM_REQUEST_PORT}}
  - {name: all, route: [{destination: {host: web}}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: c, namespace: default}
spec:
  hosts: ["*.c.example.com", c.example.com, a.example.com]
  gateways: [edge]
  http:
  - {name: c, match: [{uri: {prefix: /c}}], route: [{destination: {host: web}}]}`)
	rc := routeNamed(cfg, "http.8080")
	type vhost struct {
		domains, routes string
		tls             routev3.VirtualHost_TlsRequirementType
	}
	got := map[string]vhost{}
	for _, vh := range rc.GetVirtualHosts() {
		got[vh.GetName()] = vhost{strings.Join(vh.GetDomains(), ","), strings.Join(names(vh.GetRoutes()), ","), vh.GetRequireTls()}
	}
	want := map[string]vhost{
		"a.example.com:8080":      {"a.example.com", "old,c,all", routev3.VirtualHost_NONE},
		"b.example.com:8080":      {"b.example.com,d.example.com", "old,all", routev3.VirtualHost_NONE},
		"c.example.com:8080":      {"c.example.com,*.c.example.com", "c", routev3.VirtualHost_NONE},
		"secure.example.com:8080": {"secure.example.com", "", routev3.VirtualHost_ALL},
	}
	if !maps.Equal(got, want) {
		t.Errorf("virtual hosts = %+v\nwant %+v", got, want)
	}
	for _, vh := range rc.GetVirtualHosts() {
		if r := vh.GetRoutes(); len(r) > 0 && r[0].GetName() == "old" {
			if rd := r[0].GetRedirect(); rd.GetPathRedirect() != "/new" || rd.GetPortRedirect() != 8080 {
				t.Errorf("redirect = %v, want /new on the request's port 8080", rd)
			}
		}
	}
}

// TestGatewayRedirectHostsWithoutRoutes: the hosts of an httpsRedirect
// server that no VirtualService gives HTTP routes (one has only TCP
// routes, the other none) share one virtual host named after the first,
// as istiod's route collapse merges virtual hosts with equal (empty)
// routes; checked against istiod's generator.
func TestGatewayRedirectHostsWithoutRoutes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayPod("edge"),
		"apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: default}\nspec: {clusterIP: 10.0.0.9, ports: [{name: tcp, port: 9000}]}",
		"apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: default}\n"+
			"spec: {selector: {istio: edge}, servers: [{port: {number: 8080, name: http, protocol: HTTP}, hosts: [b.example.com, a.example.com], tls: {httpsRedirect: true}}]}",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a, namespace: default}\n"+
			"spec: {hosts: [a.example.com], gateways: [edge], tcp: [{route: [{destination: {host: db, port: {number: 9000}}}]}]}")
	vhs := routeNamed(cfg, "http.8080").GetVirtualHosts()
	if len(vhs) != 1 || vhs[0].GetName() != "a.example.com:8080" || strings.Join(vhs[0].GetDomains(), ",") != "a.example.com,b.example.com" ||
		vhs[0].GetRequireTls() != routev3.VirtualHost_ALL || len(vhs[0].GetRoutes()) != 0 {
		t.Errorf("virtual hosts = %v, want one, a.example.com:8080, for both hosts, requiring TLS", vhs)
	}
}

// gatewaySourceWorld is a gateway in istio-system serving a VirtualService
// of namespace shop whose matches test the gateway proxy as a source.
func gatewaySourceRoutes(t *testing.T, matches ...string) []string {
	t.Helper()
	http := ""
	for i, m := range matches {
		http += fmt.Sprintf("  - {name: r%d, match: [%s], route: [{destination: {host: web}}]}\n", i, m)
	}
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayPod("edge"),
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.0.0.8, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: public, namespace: istio-system}
spec:
  selector: {istio: edge}
  servers: [{port: {number: 8080, name: http, protocol: HTTP}, hosts: ["*"]}]`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: shop}
spec:
  hosts: [shop.example.com]
  gateways: [istio-system/public]
  http:
`+http+`  - {name: rest, route: [{destination: {host: web}}]}`)
	vhs := routeNamed(cfg, "http.8080").GetVirtualHosts()
	if len(vhs) != 1 {
		t.Fatalf("%d virtual hosts", len(vhs))
	}
	return names(vhs[0].GetRoutes())
}

// TestGatewayDropsOtherSourceNamespace: on a gateway, a match whose
// sourceNamespace is not the gateway proxy's namespace never applies, as
// on a sidecar; one naming the proxy's namespace does (checked against
// istiod's generator).
func TestGatewayDropsOtherSourceNamespace(t *testing.T) {
	got := gatewaySourceRoutes(t, "{sourceNamespace: foo, uri: {prefix: /foo}}", "{sourceNamespace: istio-system, uri: {prefix: /own}}")
	if want := []string{"r1", "rest"}; !slices.Equal(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
}

// TestGatewayMatchNamingGatewaySkipsSourceLabels: a match that names the
// gateway applies on it whatever its sourceLabels, which istiod does not
// check then; sourceLabels without gateways are checked against the
// gateway proxy's labels (checked against istiod's generator).
func TestGatewayMatchNamingGatewaySkipsSourceLabels(t *testing.T) {
	got := gatewaySourceRoutes(t,
		"{gateways: [istio-system/public], sourceLabels: {app: nothing}, uri: {prefix: /named}}",
		"{sourceLabels: {app: nothing}, uri: {prefix: /labels}}",
		"{sourceLabels: {istio: edge}, uri: {prefix: /mine}}",
		"{gateways: [other], uri: {prefix: /other}}")
	if want := []string{"r0", "r2", "rest"}; !slices.Equal(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
}

// TestGatewayCatchAllEndsVirtualServiceRoutes: on a gateway as on a
// sidecar, a match of everything ends the VirtualService's routes; later
// ones never reach Envoy (checked against istiod's generator).
func TestGatewayCatchAllEndsVirtualServiceRoutes(t *testing.T) {
	got := gatewaySourceRoutes(t, "{uri: {prefix: /}}", "{uri: {prefix: /x}}")
	if want := []string{"r0"}; !slices.Equal(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
}

// TestDelegateRoutesNameTheRoot: routes a delegate VirtualService lends
// its root carry the root's name in their metadata and decorator, as
// istiod writes them.
func TestDelegateRoutesNameTheRoot(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: root, namespace: default}
spec:
  hosts: [web]
  http:
  - {match: [{uri: {prefix: /api}}], delegate: {name: api, namespace: default}}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: api, namespace: default}
spec:
  http:
  - {name: v1, route: [{destination: {host: web}, weight: 100}, {destination: {host: web}, weight: 0}]}`)
	var route *routev3.Route
	for _, vh := range routeNamed(cfg, "80").GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			if r.GetName() == "v1" {
				route = r
			}
		}
	}
	if got := route.GetMetadata().GetFilterMetadata()["istio"].GetFields()["config"].GetStringValue(); got != "/apis/networking.istio.io/v1/namespaces/default/virtual-service/root" {
		t.Errorf("delegated route config = %q, want the root's", got)
	}
	if got := route.GetDecorator().GetOperation(); got != "root:80/api*" {
		t.Errorf("decorator = %q, want root:80/api*", got)
	}
}

// TestEgressListenerRoutes: a port's route configuration comes from the
// first egress listener with that port (its services and VirtualServices
// only), and an egressProxy takes what no service claims, as istiod
// builds them.
func TestEgressListenerRoutes(t *testing.T) {
	svc := func(name string) string {
		return `apiVersion: v1
kind: Service
metadata: {name: ` + name + `, namespace: default}
spec: {clusterIP: 10.0.0.` + strconv.Itoa(len(name)) + `, ports: [{name: http, port: 9080}]}`
	}
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, svc("a"), svc("bb"), svc("proxy"),
		`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: client, namespace: default}
spec:
  outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: proxy.default.svc.cluster.local, port: {number: 9080}}}
  egress:
  - {port: {number: 9080, protocol: HTTP, name: http}, hosts: [./a.default.svc.cluster.local]}
  - {hosts: ["./*"]}`)
	const proxy = "outbound|9080||proxy.default.svc.cluster.local"
	rc := routeNamed(cfg, "9080")
	if got := names(rc.GetVirtualHosts()); !slices.Equal(got, []string{"a.default.svc.cluster.local:9080", "allow_any"}) {
		t.Errorf("route 9080 vhosts = %v, want only the port's listener's service and the catch-all", got)
	}
	if got := rc.GetVirtualHosts()[1].GetRoutes()[0].GetRoute().GetCluster(); got != proxy {
		t.Errorf("allow_any sends to %q, want the egress proxy", got)
	}
	for _, name := range []string{"virtualOutbound", "0.0.0.0_9080"} {
		l := listenerNamed(cfg, name)
		var def *listenerv3.FilterChain
		if name == "virtualOutbound" {
			def = l.GetFilterChains()[len(l.GetFilterChains())-1]
		} else {
			def = l.GetDefaultFilterChain()
		}
		if got := tcpCluster(t, def); got != proxy {
			t.Errorf("%s sends unknown traffic to %q, want the egress proxy", name, got)
		}
	}
}

// routesOf finds a route configuration's routes by name, in order.
func routesOf(t *testing.T, rc *routev3.RouteConfiguration, vhost string) []*routev3.Route {
	t.Helper()
	for _, vh := range rc.GetVirtualHosts() {
		if vh.GetName() == vhost {
			return vh.GetRoutes()
		}
	}
	t.Fatalf("no virtual host %s in %v", vhost, names(rc.GetVirtualHosts()))
	return nil
}

// webService is an HTTP service web on port 80 in default.
const webService = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}]}`

// TestFaultWithoutPercentageAffectsNoRequest: a delay or abort without
// percentage affects no request, as istiod translates it (a delay at
// 0/HUNDRED, an abort with no percentage); a percentage or the deprecated
// integer percent still applies.
func TestFaultWithoutPercentageAffectsNoRequest(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, webService,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  hosts: [web]
  http:
  - name: bare
    match: [{uri: {prefix: /bare}}]
    fault: {delay: {fixedDelay: 1s}, abort: {httpStatus: 503}}
    route: [{destination: {host: web}}]
  - name: set
    fault: {delay: {fixedDelay: 1s, percentage: {value: 12.5}}, abort: {httpStatus: 503, percentage: {value: 50}}}
    route: [{destination: {host: web}}]`)
	routes := routesOf(t, routeNamed(cfg, "80"), "web.default.svc.cluster.local:80")
	faultOf := func(r *routev3.Route) *faultv3.HTTPFault {
		var f faultv3.HTTPFault
		if err := r.GetTypedPerFilterConfig()[faultFilter].UnmarshalTo(&f); err != nil {
			t.Fatalf("%s: fault: %v", r.GetName(), err)
		}
		return &f
	}
	bare := faultOf(routes[0])
	if p := bare.GetDelay().GetPercentage(); p == nil || p.GetNumerator() != 0 || p.GetDenominator() != typev3.FractionalPercent_HUNDRED {
		t.Errorf("delay without percentage = %v, want 0/HUNDRED", p)
	}
	if p := bare.GetAbort().GetPercentage(); p != nil || bare.GetAbort().GetHttpStatus() != 503 {
		t.Errorf("abort without percentage = %v, want no percentage (none aborted)", bare.GetAbort())
	}
	set := faultOf(routes[1])
	if p := set.GetDelay().GetPercentage(); p.GetNumerator() != 125000 || p.GetDenominator() != typev3.FractionalPercent_MILLION {
		t.Errorf("delay at 12.5%% = %v, want 125000/MILLION", p)
	}
	if p := set.GetAbort().GetPercentage(); p.GetNumerator() != 500000 || p.GetDenominator() != typev3.FractionalPercent_MILLION {
		t.Errorf("abort at 50%% = %v, want 500000/MILLION", p)
	}
}

// TestMirrorWithoutPercentageIsHundredPercent: a mirror without a
// percentage is written as istiod writes it, 100/HUNDRED; the deprecated
// integer mirrorPercent in hundredths too, a percentage in millionths,
// and an explicit zero drops the mirror.
func TestMirrorWithoutPercentageIsHundredPercent(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, webService,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec: {host: web, subsets: [{name: a, labels: {v: a}}, {name: b, labels: {v: b}}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  hosts: [web]
  http:
  - name: bare
    match: [{uri: {prefix: /bare}}]
    mirrors: [{destination: {host: web}}, {destination: {host: web, subset: a}}, {destination: {host: web, subset: b}, percentage: {value: 0}}]
    route: [{destination: {host: web}}]
  - name: legacy
    match: [{uri: {prefix: /legacy}}]
    mirror: {host: web}
    mirrorPercent: 30
    route: [{destination: {host: web}}]
  - name: set
    mirror: {host: web}
    mirrorPercentage: {value: 2.5}
    route: [{destination: {host: web}}]`)
	routes := routesOf(t, routeNamed(cfg, "80"), "web.default.svc.cluster.local:80")
	for i, want := range [][]string{
		{"outbound|80||web.default.svc.cluster.local 100/HUNDRED", "outbound|80|a|web.default.svc.cluster.local 100/HUNDRED"},
		{"outbound|80||web.default.svc.cluster.local 30/HUNDRED"},
		{"outbound|80||web.default.svc.cluster.local 25000/MILLION"},
	} {
		var got []string
		for _, m := range routes[i].GetRoute().GetRequestMirrorPolicies() {
			f := m.GetRuntimeFraction().GetDefaultValue()
			got = append(got, fmt.Sprintf("%s %d/%s", m.GetCluster(), f.GetNumerator(), f.GetDenominator()))
		}
		if !slices.Equal(got, want) {
			t.Errorf("route %s mirrors = %q, want %q", routes[i].GetName(), got, want)
		}
	}
}

// hiddenService is other/hidden, a single-port service exported to its
// own namespace only.
const hiddenService = `apiVersion: v1
kind: Service
metadata: {name: hidden, namespace: other, annotations: {networking.istio.io/exportTo: "."}}
spec: {clusterIP: 10.0.0.9, ports: [{name: http, port: 9000}]}`

// TestPortlessDestinationToHiddenServiceTakesListenerPort: a destination
// without a port whose service the proxy cannot see takes the listener's
// port, as istiod looks it up among the proxy's own services (a sidecar's
// TCP route, a gateway's HTTP route); a gateway's port-less mirror takes
// its service's only port, as its destinations do. Checked against
// istiod's generator.
func TestPortlessDestinationToHiddenServiceTakesListenerPort(t *testing.T) {
	t.Run("sidecar tcp route", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, hiddenService,
			`apiVersion: v1
kind: Service
metadata: {name: front, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: tcp, port: 8000}]}`,
			`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: front, namespace: default}
spec:
  hosts: [front]
  tcp: [{route: [{destination: {host: hidden.other.svc.cluster.local}}]}]`)
		l := listenerNamed(cfg, "10.0.0.7_8000")
		if l == nil {
			t.Fatalf("no listener 10.0.0.7_8000 in %v", names(cfg.Listeners))
		}
		if got, want := tcpCluster(t, l.GetFilterChains()[0]), "outbound|8000||hidden.other.svc.cluster.local"; got != want {
			t.Errorf("tcp_proxy cluster = %q, want %q", got, want)
		}
	})
	t.Run("gateway", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayPod("edge"), hiddenService,
			`apiVersion: v1
kind: Service
metadata: {name: mirror, namespace: default}
spec: {clusterIP: 10.0.0.10, ports: [{name: http, port: 7000}]}`,
			`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.11, ports: [{name: http, port: 7000}]}`,
			`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: default}
spec:
  selector: {istio: edge}
  servers: [{port: {number: 8080, name: http, protocol: HTTP}, hosts: ["*"]}]`,
			`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: edge, namespace: default}
spec:
  hosts: ["*"]
  gateways: [edge]
  http:
  - name: hidden
    match: [{uri: {prefix: /hidden}}]
    route: [{destination: {host: hidden.other.svc.cluster.local}}]
  - name: web
    mirror: {host: mirror}
    route: [{destination: {host: web}}]`)
		routes := routesOf(t, routeNamed(cfg, "http.8080"), "*:8080")
		if got, want := routes[0].GetRoute().GetCluster(), "outbound|8080||hidden.other.svc.cluster.local"; got != want {
			t.Errorf("route to the hidden service: cluster %q, want %q", got, want)
		}
		var got []string
		for _, m := range routes[1].GetRoute().GetRequestMirrorPolicies() {
			got = append(got, m.GetCluster())
		}
		if want := []string{"outbound|7000||mirror.default.svc.cluster.local"}; !slices.Equal(got, want) {
			t.Errorf("mirror clusters = %q, want %q", got, want)
		}
	})
}

// TestConsistentHashAsIstiodPicksIt: route hash policies, tcp_proxy
// source-IP hashing and retries under a hash, as istiod's generator writes
// them: a port-level entry without a hash keeps the top-level hash on
// routes (the cluster it replaces); a destination without a port uses no
// port-level hash, whatever port its cluster gets; tcp_proxy hashes on the
// source IP by the top-level or the subset's load balancer, outbound and
// on AUTO_PASSTHROUGH chains; a default route keeps avoiding previous hosts
// under a hash, while a VirtualService's single hashed destination does not.
func TestConsistentHashAsIstiodPicksIt(t *testing.T) {
	svc := func(name string, ip, port int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %s, namespace: default}
spec: {clusterIP: 10.0.2.%d, selector: {app: backend}, ports: [{name: p, port: %d, appProtocol: %s}]}`, name, ip, port, map[bool]string{true: "tcp", false: "http"}[port >= 9000])
	}
	dr := func(name, spec string) string {
		return `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ` + name + `, namespace: default}
spec:
  host: ` + name + "\n" + spec
	}
	vs := func(name, spec string) string {
		return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ` + name + `, namespace: default}
spec:
  hosts: [` + name + "]\n" + spec
	}
	plsNoHash := `  trafficPolicy:
    loadBalancer: {consistentHash: {httpHeaderName: x-user}}
    portLevelSettings: [{port: {number: 80}, connectionPool: {http: {maxRetries: 3}}}]`
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Pod
metadata: {name: backend, namespace: default, labels: {app: backend, v: a}}
spec: {containers: [{name: c, image: x}]}`,
		svc("plain", 1, 80), dr("plain", plsNoHash),
		svc("routed", 2, 80), dr("routed", plsNoHash), vs("routed", "  http: [{route: [{destination: {host: routed, port: {number: 80}}}]}]"),
		svc("portless", 3, 80), dr("portless", `  trafficPolicy:
    loadBalancer: {consistentHash: {httpHeaderName: x-a}}
    portLevelSettings: [{port: {number: 80}, loadBalancer: {consistentHash: {httpHeaderName: x-b}}}]`),
		vs("portless", "  http: [{route: [{destination: {host: portless}}]}]"),
		svc("source", 4, 80), dr("source", "  trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}"),
		svc("tcp", 5, 9000), dr("tcp", "  trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}"),
		svc("tcpsub", 6, 9001), dr("tcpsub", "  subsets: [{name: a, labels: {v: a}, trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}}]"),
		vs("tcpsub", "  tcp: [{route: [{destination: {host: tcpsub, subset: a}}]}]"),
		svc("tcpoff", 7, 9002), dr("tcpoff", `  trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}
  subsets: [{name: a, labels: {v: a}, trafficPolicy: {loadBalancer: {simple: RANDOM}}}]`),
		vs("tcpoff", "  tcp: [{route: [{destination: {host: tcpoff, subset: a}}]}]"),
	}
	cfg := compile(t, Options{Format: XDS}, "default/client", docs...)
	rc := routeNamed(cfg, "80")
	for _, tc := range []struct {
		host          string
		hash          string // the one hash policy, "" for none
		previousHosts bool
	}{
		{"plain", "header x-user", true},
		{"routed", "header x-user", false},
		{"portless", "header x-a", false},
		{"source", "source ip", true},
	} {
		r := routesOf(t, rc, tc.host+".default.svc.cluster.local:80")[0]
		var got []string
		for _, h := range r.GetRoute().GetHashPolicy() {
			switch {
			case h.GetHeader() != nil:
				got = append(got, "header "+h.GetHeader().GetHeaderName())
			case h.GetConnectionProperties().GetSourceIp():
				got = append(got, "source ip")
			}
		}
		if want := []string{tc.hash}; !slices.Equal(got, want) {
			t.Errorf("%s: hash policies %q, want %q", tc.host, got, want)
		}
		if ph := r.GetRoute().GetRetryPolicy().GetRetryHostPredicate() != nil; ph != tc.previousHosts {
			t.Errorf("%s: retries avoid previous hosts: %v, want %v", tc.host, ph, tc.previousHosts)
		}
	}
	for _, tc := range []struct {
		listener string
		sourceIP bool
	}{{"10.0.2.5_9000", true}, {"10.0.2.6_9001", true}, {"10.0.2.7_9002", false}} {
		if got := tcpSourceIPHash(t, listenerNamed(cfg, tc.listener).GetFilterChains()[0]); got != tc.sourceIP {
			t.Errorf("%s: tcp_proxy hashes on the source IP: %v, want %v", tc.listener, got, tc.sourceIP)
		}
	}

	gw := compile(t, Options{Format: XDS}, "istio-system/gw", append(docs, gatewayPod("eastwest"), `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: eastwest, namespace: istio-system}
spec:
  selector: {istio: eastwest}
  servers: [{port: {number: 15443, name: tls, protocol: TLS}, tls: {mode: AUTO_PASSTHROUGH}, hosts: ["*.local"]}]`)...)
	var hashed []string
	for _, fc := range listenerNamed(gw, "0.0.0.0_15443").GetFilterChains() {
		if tcpSourceIPHash(t, fc) {
			hashed = append(hashed, fc.GetFilterChainMatch().GetServerNames()...)
		}
	}
	want := []string{"outbound_.80_._.source.default.svc.cluster.local", "outbound_.9000_._.tcp.default.svc.cluster.local",
		"outbound_.9001_.a_.tcpsub.default.svc.cluster.local", "outbound_.9002_._.tcpoff.default.svc.cluster.local"}
	if slices.Sort(hashed); !slices.Equal(hashed, want) {
		t.Errorf("AUTO_PASSTHROUGH chains hashing on the source IP: %q, want %q", hashed, want)
	}
}

// tcpSourceIPHash says whether a chain's tcp_proxy hashes on the source
// IP.
func tcpSourceIPHash(t *testing.T, fc *listenerv3.FilterChain) bool {
	t.Helper()
	for _, f := range fc.GetFilters() {
		var tp tcpv3.TcpProxy
		if f.GetName() == "envoy.filters.network.tcp_proxy" {
			if err := f.GetTypedConfig().UnmarshalTo(&tp); err != nil {
				t.Fatal(err)
			}
			hp := tp.GetHashPolicy()
			return len(hp) == 1 && hp[0].GetSourceIp() != nil
		}
	}
	return false
}

// TestCookieHashKeepsAttributes: a consistent hash by cookie carries the
// cookie's attributes (name and value, in order, a value left empty when
// not given) into the route's hash policy, as istiod's generator writes it.
func TestCookieHashKeepsAttributes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec:
  host: web
  trafficPolicy:
    loadBalancer:
      consistentHash:
        httpCookie:
          name: sess
          path: /
          ttl: 10s
          attributes: [{name: SameSite, value: Strict}, {name: Secure}]`)
	r := routesOf(t, routeNamed(cfg, "80"), "web.default.svc.cluster.local:80")[0]
	want := &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Cookie_{
		Cookie: &routev3.RouteAction_HashPolicy_Cookie{Name: "sess", Path: "/", Ttl: durationpb.New(10 * time.Second),
			Attributes: []*routev3.RouteAction_HashPolicy_CookieAttribute{{Name: "SameSite", Value: "Strict"}, {Name: "Secure"}}}}}
	if got := r.GetRoute().GetHashPolicy(); len(got) != 1 || !proto.Equal(got[0], want) {
		t.Errorf("hash policies = %v, want only %v", got, want)
	}
}

// TestAliasDestinationHashesByItsOwnRule: a VirtualService destination
// naming an ExternalName alias goes to the concrete service's cluster, but
// its hash policy comes from the DestinationRule for the alias's own host,
// as istiod looks the rule up by the destination's host: the alias's rule
// when it has one, no hash when only the concrete service has a rule. A
// TCP route's tcp_proxy likewise takes the alias's rule: its source-IP
// hash, idle timeout and maximum connection duration.
func TestAliasDestinationHashesByItsOwnRule(t *testing.T) {
	t.Run("tcp", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
			`apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: tcp, port: 9000}]}`,
			`apiVersion: v1
kind: Service
metadata: {name: dbfront, namespace: default}
spec: {clusterIP: 10.0.0.8, ports: [{name: tcp, port: 9000}]}`,
			`apiVersion: v1
kind: Service
metadata: {name: dbalias, namespace: default}
spec: {type: ExternalName, externalName: db.default.svc.cluster.local, ports: [{name: tcp, port: 9000}]}`,
			`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: dbalias, namespace: default}
spec:
  host: dbalias
  trafficPolicy:
    loadBalancer: {consistentHash: {useSourceIp: true}}
    connectionPool: {tcp: {idleTimeout: 30s, maxConnectionDuration: 60s}}`,
			`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: dbfront, namespace: default}
spec:
  hosts: [dbfront]
  tcp: [{route: [{destination: {host: dbalias}}]}]`)
		var tp tcpv3.TcpProxy
		for _, f := range listenerNamed(cfg, "10.0.0.8_9000").GetFilterChains()[0].GetFilters() {
			if f.GetName() == "envoy.filters.network.tcp_proxy" {
				if err := f.GetTypedConfig().UnmarshalTo(&tp); err != nil {
					t.Fatal(err)
				}
			}
		}
		want := &tcpv3.TcpProxy{StatPrefix: "outbound|9000||db.default.svc.cluster.local",
			ClusterSpecifier: &tcpv3.TcpProxy_Cluster{Cluster: "outbound|9000||db.default.svc.cluster.local"},
			HashPolicy:       []*typev3.HashPolicy{{PolicySpecifier: &typev3.HashPolicy_SourceIp_{SourceIp: &typev3.HashPolicy_SourceIp{}}}},
			IdleTimeout:      durationpb.New(30 * time.Second), MaxDownstreamConnectionDuration: durationpb.New(60 * time.Second)}
		if !proto.Equal(&tp, want) {
			t.Errorf("tcp_proxy = %v, want %v", &tp, want)
		}
	})
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: front, namespace: default}
spec: {clusterIP: 10.0.0.6, ports: [{name: http, port: 80}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: alias, namespace: default}
spec: {type: ExternalName, externalName: web.default.svc.cluster.local, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec: {host: web, trafficPolicy: {loadBalancer: {consistentHash: {httpHeaderName: x-web}}}}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: front, namespace: default}
spec:
  hosts: [front]
  http: [{route: [{destination: {host: alias}}]}]`,
	}
	aliasRule := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: alias, namespace: default}
spec: {host: alias, trafficPolicy: {loadBalancer: {consistentHash: {httpHeaderName: x-alias}}}}`
	for _, tc := range []struct {
		name string
		docs []string
		hash string // the header hashed on, "" for no hash
	}{
		{"alias rule", append(slices.Clone(docs), aliasRule), "x-alias"},
		{"target rule only", docs, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := compile(t, Options{Format: XDS}, "default/client", tc.docs...)
			r := routesOf(t, routeNamed(cfg, "80"), "front.default.svc.cluster.local:80")[0]
			if c := r.GetRoute().GetCluster(); c != "outbound|80||web.default.svc.cluster.local" {
				t.Errorf("cluster %q, want the concrete service's", c)
			}
			var got []string
			for _, h := range r.GetRoute().GetHashPolicy() {
				got = append(got, h.GetHeader().GetHeaderName())
			}
			var want []string
			if tc.hash != "" {
				want = []string{tc.hash}
			}
			if !slices.Equal(got, want) {
				t.Errorf("hash headers %q, want %q", got, want)
			}
			if ph := r.GetRoute().GetRetryPolicy().GetRetryHostPredicate() != nil; ph != (tc.hash == "") {
				t.Errorf("retries avoid previous hosts: %v, want %v", ph, tc.hash == "")
			}
		})
	}
}

// TestGatewayPodWithoutIPMapsServerPorts: a gateway Pod the manifests give
// no IP still maps a server port through its Service's targetPort, as
// istiod maps it through the services selecting the pod; checked against
// istiod's generator.
func TestGatewayPodWithoutIPMapsServerPorts(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "gw/ingress",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: ingress, namespace: gw, labels: {istio: edge, sidecar.istio.io/inject: 'true'}}\nspec: {containers: [{name: istio-proxy, image: x}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: ingress, namespace: gw}\nspec: {selector: {istio: edge}, clusterIP: 10.0.0.10, ports: [{port: 80, name: http2, targetPort: 8080}]}",
		"apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: gw}\n"+
			"spec: {selector: {istio: edge}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}")
	if listenerNamed(cfg, "0.0.0.0_8080") == nil || routeNamed(cfg, "http.8080") == nil {
		var names []string
		for _, l := range cfg.Listeners {
			names = append(names, l.GetName())
		}
		t.Errorf("listeners %v, want 0.0.0.0_8080 with route http.8080", names)
	}
}
