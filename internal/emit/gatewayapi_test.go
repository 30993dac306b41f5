package emit

import (
	"os"
	"slices"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// TestGatewayAPIRoutes: routes generated from Gateway API routes are built
// with that API's semantics (docs/semantics/gateway-api.md §G4), and a
// route attached to a Service reaches the proxies of its own namespace and,
// when it is the Service's namespace, every proxy (§G3.6).
func TestGatewayAPIRoutes(t *testing.T) {
	docs := []string{`apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Namespace
metadata: {name: client, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {clusterIP: 10.0.0.1, ports: [{name: http, port: 9080}]}
---
apiVersion: v1
kind: Service
metadata: {name: reviews-v2, namespace: shop}
spec: {clusterIP: 10.0.0.2, ports: [{name: http, port: 9080}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop}
spec: {clusterIP: 10.0.0.3, ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: producer, namespace: shop}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews, port: 9080}]
  rules: [{matches: [{path: {value: /v2/}}], backendRefs: [{name: reviews-v2, port: 9080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: consumer, namespace: client}
spec:
  parentRefs: [{group: "", kind: Service, name: ratings, namespace: shop}]
  rules: [{backendRefs: [{name: ratings, namespace: shop, port: 8080}], timeouts: {request: 3s}}]`,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: client}\nspec: {containers: [{name: app, image: x}]}\nstatus: {podIP: 1.1.1.1}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: tool, namespace: other}\nspec: {containers: [{name: app, image: x}]}\nstatus: {podIP: 1.1.1.2}",
	}
	m := resolveDocs(t, docs...)
	if v, _ := m.View("other", "tool"); len(v.Scope.VirtualServices) != 1 || v.Scope.VirtualServices[0].Host != "reviews.shop.svc.cluster.local" {
		t.Errorf("other/tool is in force for %+v, want the producer's route of reviews only", v.Scope.VirtualServices)
	}
	for _, tt := range []struct {
		proxy, ratings string
	}{
		{"client/web", "client.consumer.0"},
		{"other/tool", "default"},
	} {
		cfg := compile(t, Options{}, tt.proxy, docs...)
		reviews := routesOf(t, routeNamed(cfg, "9080"), "reviews.shop.svc.cluster.local:9080")
		r := reviews[0]
		if r.GetName() != "shop.producer.0" || r.GetMatch().GetPathSeparatedPrefix() != "/v2" ||
			r.GetRoute().GetClusterNotFoundResponseCode().String() != "INTERNAL_SERVER_ERROR" {
			t.Errorf("%s: producer route %v", tt.proxy, r)
		}
		if got := routesOf(t, routeNamed(cfg, "8080"), "ratings.shop.svc.cluster.local:8080")[0].GetName(); got != tt.ratings {
			t.Errorf("%s: ratings route %q, want %q", tt.proxy, got, tt.ratings)
		}
	}
}

// TestListenerSetOnGatewayProxy: a ListenerSet's listener in another
// namespace lands on its parent Gateway's proxy, on a port of its own
// that the deployed Service gets too, with the routes attached to the
// ListenerSet (docs/semantics/gateway-api.md §G2.6, §G2.7).
func TestListenerSetOnGatewayProxy(t *testing.T) {
	docs := []string{`apiVersion: v1
kind: Namespace
metadata: {name: edge}
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: team}
spec: {clusterIP: 10.0.0.1, ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: edge}
spec:
  gatewayClassName: istio
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: web, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: edge}
  listeners: [{name: alt, port: 8080, protocol: HTTP, hostname: alt.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec:
  parentRefs: [{name: extra, kind: ListenerSet}]
  rules: [{backendRefs: [{name: app, port: 80}]}]`}
	cfg := compile(t, Options{}, "edge/gw-istio", docs...)
	rc := routeNamed(cfg, "http.8080")
	if rc == nil {
		t.Fatal("no route configuration http.8080 on the gateway proxy")
	}
	if got := routesOf(t, rc, "alt.example.com:8080"); len(got) != 1 || got[0].GetName() != "team.r.0" {
		t.Errorf("alt.example.com:8080 routes %v", got)
	}
}

// fixture reads a Gateway API scenario of the conversion's tests, written
// so that istiod's generator can read it too.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../gatewayapi/testdata/scenarios/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGatewayAPITLSModes: a TLSRoute on a terminating listener forwards
// the terminated stream by the listener's SNI name (docs/semantics/gateway-api.md
// §G3.4); ISTIO_SIMPLE presents the workload certificate without asking
// for the client's (§G2.4); two certificateRefs give two certificates.
func TestGatewayAPITLSModes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "modes/edge-istio", fixture(t, "tls-modes"))
	chainFor := func(listener, sni string) *listenerv3.FilterChain {
		t.Helper()
		for _, fc := range listenerNamed(cfg, listener).GetFilterChains() {
			if slices.Equal(fc.GetFilterChainMatch().GetServerNames(), []string{sni}) {
				return fc
			}
		}
		t.Fatalf("%s: no chain for SNI %s", listener, sni)
		return nil
	}
	for _, tt := range []struct{ listener, sni, secret string }{
		{"0.0.0.0_443", "secure.example.com", "edge-cert"},
		{"0.0.0.0_9443", "*.wild.example.com", "wild-cert"},
	} {
		fc := chainFor(tt.listener, tt.sni)
		if got := tcpCluster(t, fc); got != "outbound|8080||backend.modes.svc.cluster.local" {
			t.Errorf("%s %s: tcp_proxy to %q", tt.listener, tt.sni, got)
		}
		sds := downstreamTLS(t, fc).GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()
		if len(sds) != 1 || sds[0].GetName() != "kubernetes-gateway://modes/"+tt.secret || sds[0].GetSdsConfig().GetAds() == nil {
			t.Errorf("%s %s: certificate %v, want the listener's Secret over ADS", tt.listener, tt.sni, sds)
		}
	}

	builtin := downstreamTLS(t, chainFor("0.0.0.0_8443", "builtin.example.com"))
	sds := builtin.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()
	if len(sds) != 1 || sds[0].GetName() != "default" ||
		sds[0].GetSdsConfig().GetApiConfigSource().GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName() != SDSCluster {
		t.Errorf("ISTIO_SIMPLE certificate %v, want the workload's (default over %s)", sds, SDSCluster)
	}
	if builtin.GetRequireClientCertificate().GetValue() || builtin.GetCommonTlsContext().GetValidationContextType() != nil {
		t.Errorf("ISTIO_SIMPLE asks for a client certificate: %v", builtin)
	}

	var names []string
	for _, s := range downstreamTLS(t, chainFor("0.0.0.0_8443", "dual.example.com")).GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
		names = append(names, s.GetName())
	}
	if want := []string{"kubernetes-gateway://modes/edge-cert", "kubernetes-gateway://modes/edge-cert-ecdsa"}; !slices.Equal(names, want) {
		t.Errorf("two certificateRefs give certificates %v, want %v", names, want)
	}
}

// TestGatewayAPIUnresolvedBackends: routes whose backends cannot be
// resolved keep their virtual hosts and answer 500; UnknownService being
// no outbound cluster, the decorator names the VirtualService
// (docs/semantics/gateway-api.md §G3.5).
func TestGatewayAPIUnresolvedBackends(t *testing.T) {
	cfg := compile(t, Options{}, "edge/gw-istio", fixture(t, "backends-invalid"))
	rc := routeNamed(cfg, "http.80")
	for _, tt := range []struct{ vhost, cluster, operation string }{
		{"first.domain.example:80", "UnknownService", "edge~gw~istio-autogenerated-k8s-gateway~web~first.domain.example:80/*"},
		{"second.domain.example:80", "outbound|80||nonexistent.apps.svc.cluster.local", "nonexistent.apps.svc.cluster.local:80/*"},
		{"third.domain.example:80", "", "edge~gw~istio-autogenerated-k8s-gateway~web~third.domain.example:80/*"},
	} {
		r := routesOf(t, rc, tt.vhost)[0]
		if r.GetRoute().GetCluster() != tt.cluster || r.GetDecorator().GetOperation() != tt.operation ||
			r.GetRoute().GetClusterNotFoundResponseCode() != routev3.RouteAction_INTERNAL_SERVER_ERROR {
			t.Errorf("%s: route %v, want cluster %q and decorator %q", tt.vhost, r, tt.cluster, tt.operation)
		}
	}
	if got := len(routesOf(t, rc, "third.domain.example:80")[0].GetRoute().GetWeightedClusters().GetClusters()); got != 3 {
		t.Errorf("mixed backends: %d weighted clusters, want 3", got)
	}
}

// TestGatewayAPICrossNetwork: on a Gateway labelled with a network, the
// passthrough listener on the network's gateway port forwards Istio
// clients by the SNI naming a service's cluster; another passthrough
// listener of the Gateway keeps its TLSRoutes
// (docs/semantics/gateway-api.md §G2.4).
func TestGatewayAPICrossNetwork(t *testing.T) {
	cfg := compile(t, Options{}, "istio-system/eastwest-port-istio", fixture(t, "eastwest"))
	var sni []string
	for _, fc := range listenerNamed(cfg, "0.0.0.0_35443").GetFilterChains() {
		sni = append(sni, fc.GetFilterChainMatch().GetServerNames()...)
	}
	if !slices.Contains(sni, "outbound_.9090_._.web.apps.svc.cluster.local") {
		t.Errorf("cross-network listener matches %v, want the SNI of web's port 9090 among them", sni)
	}
	plain := listenerNamed(cfg, "0.0.0.0_15443").GetFilterChains()
	if len(plain) != 1 || !slices.Equal(plain[0].GetFilterChainMatch().GetServerNames(), []string{"*.example.com"}) ||
		tcpCluster(t, plain[0]) != "outbound|15012||istiod.istio-system.svc.cluster.local" {
		t.Errorf("port 15443 of a Gateway whose network port is 35443: chains %v, want the TLSRoute's only", plain)
	}
}
