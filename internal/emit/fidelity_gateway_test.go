package emit

import (
	"slices"
	"strings"
	"testing"
)

// autoPassthroughWorld is a router whose Gateways gw1 and gw2 both serve
// AUTO_PASSTHROUGH on 15443, for the services below, one on a Mongo port.
func autoPassthroughWorld(hosts1, hosts2 string) []string {
	return []string{gatewayPod("ingress"),
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: http, port: 8080}, {name: mongo, port: 27017}]}`,
		`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw1, namespace: istio-system}
spec:
  selector: {istio: ingress}
  servers: [{port: {number: 15443, name: tls, protocol: TLS}, hosts: ` + hosts1 + `, tls: {mode: AUTO_PASSTHROUGH}}]`,
		`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw2, namespace: istio-system}
spec:
  selector: {istio: ingress}
  servers: [{port: {number: 15443, name: tls2, protocol: TLS}, hosts: ` + hosts2 + `, tls: {mode: AUTO_PASSTHROUGH}}]`,
	}
}

// TestIssue15Item5AutoPassthroughOnePort: issue 15 item 5, checked against
// istiod's generator. As istiod merges Gateways, a TLS server naming a
// host an earlier TLS server on the port named is left out, so two
// AUTO_PASSTHROUGH servers for "*" give the SNI-DNAT chains once (Envoy
// refuses repeated chain matches); servers with different hosts both
// build, as in istiod, and the listener, whose chains for the services
// both cover repeat their SNI matches, is reported as one Envoy refuses.
func TestIssue15Item5AutoPassthroughOnePort(t *testing.T) {
	tests := []struct {
		name           string
		hosts1, hosts2 string
		// chains per SNI name, and whether gw2's server is reported.
		chains   int
		reported bool
	}{
		{"same host", `["*"]`, `["*"]`, 1, true},
		{"same host, namespace any", `["*/*"]`, `["*"]`, 1, true},
		{"different hosts", `["*.local"]`, `["*"]`, 2, false},
	}
	refused := "gateway listener 0.0.0.0_15443: filter chains 0 and 2 match the same connections"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := resolveDocs(t, autoPassthroughWorld(tt.hosts1, tt.hosts2)...)
			v, _ := m.View("istio-system", "gw")
			cfg := New(m, Options{Format: XDS}).Build(v)
			reported := slices.ContainsFunc(cfg.Problems, func(p string) bool { return strings.Contains(p, "gw2 server 0") })
			repeated := slices.ContainsFunc(cfg.Problems, func(p string) bool { return strings.HasPrefix(p, refused) })
			if reported != tt.reported || repeated != (tt.chains > 1) || len(cfg.Problems) != 1 {
				t.Errorf("problems = %q, want gw2's server reported: %v, the listener refused: %v", cfg.Problems, tt.reported, tt.chains > 1)
			}
			l := listenerNamed(cfg, "0.0.0.0_15443")
			if l == nil {
				t.Fatalf("no listener 0.0.0.0_15443 in %v", names(cfg.Listeners))
			}
			count := map[string]int{}
			for _, fc := range l.GetFilterChains() {
				count[strings.Join(fc.GetFilterChainMatch().GetServerNames(), ",")]++
			}
			for _, sni := range []string{"outbound_.8080_._.web.default.svc.cluster.local", "outbound_.27017_._.web.default.svc.cluster.local"} {
				if count[sni] != tt.chains {
					t.Errorf("%d chains for SNI %s, want %d", count[sni], sni, tt.chains)
				}
			}
		})
	}
}

// TestIssue15Item15AutoPassthroughMongo: issue 15 item 15, checked against
// istiod's generator. An AUTO_PASSTHROUGH chain to a Mongo port carries
// the Mongo proxy filter before its tcp_proxy, stat prefix the SNI-DNAT
// cluster's name; other ports only the tcp_proxy.
func TestIssue15Item15AutoPassthroughMongo(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", autoPassthroughWorld(`["*.local"]`, `["*.local"]`)[:3]...)
	l := listenerNamed(cfg, "0.0.0.0_15443")
	if l == nil {
		t.Fatalf("no listener 0.0.0.0_15443 in %v", names(cfg.Listeners))
	}
	want := map[string][]string{
		"outbound_.27017_._.web.default.svc.cluster.local": {"envoy.filters.network.mongo_proxy", tcpProxyName},
		"outbound_.8080_._.web.default.svc.cluster.local":  {tcpProxyName},
	}
	for _, fc := range l.GetFilterChains() {
		sni := fc.GetFilterChainMatch().GetServerNames()[0]
		if got := names(fc.GetFilters()); !slices.Equal(got, want[sni]) {
			t.Errorf("chain %s: filters %v, want %v", sni, got, want[sni])
		}
		delete(want, sni)
	}
	if len(want) > 0 {
		t.Errorf("no chains for %v", want)
	}
}
