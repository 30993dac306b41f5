package emit

import (
	"slices"
	"testing"
)

// TestIssue15Item6TCPPortVirtualService: issue 15 item 6, checked against
// istiod's generator (docs/semantics/virtual-services.md §6.4 step 3). A
// VirtualService owning a service whose port is TCP adds no vhost to the
// HTTP route configuration of that port number; on another port where the
// service speaks HTTP it does, and on port 80 its plain hosts still do.
func TestIssue15Item6TCPPortVirtualService(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: tcpsvc, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: tcp, port: 9000}, {name: http, port: 9001}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: websvc, namespace: default}
spec: {clusterIP: 10.0.0.8, ports: [{name: http, port: 9000}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: tcp80, namespace: default}
spec: {clusterIP: 10.0.0.9, ports: [{name: tcp, port: 80}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: web80, namespace: default}
spec: {clusterIP: 10.0.0.10, ports: [{name: http, port: 80}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: tcpsvc, namespace: default}
spec:
  hosts: [tcpsvc]
  http:
  - route: [{destination: {host: websvc}}]`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: tcp80, namespace: default}
spec:
  hosts: [tcp80, plain80.example.com]
  http:
  - route: [{destination: {host: web80}}]`)
	tests := []struct {
		route  string
		vhosts []string
	}{
		{"9000", []string{"websvc.default.svc.cluster.local:9000", "allow_any"}},
		{"9001", []string{"tcpsvc.default.svc.cluster.local:9001", "allow_any"}},
		// tcpsvc has no port 80: on 80 its name is a plain host, as in
		// istiod.
		{"80", []string{"plain80.example.com:80", "tcpsvc.default.svc.cluster.local:80", "web80.default.svc.cluster.local:80", "allow_any"}},
	}
	for _, tt := range tests {
		rc := routeNamed(cfg, tt.route)
		if got := names(rc.GetVirtualHosts()); !slices.Equal(got, tt.vhosts) {
			t.Errorf("route %s: vhosts %v, want %v", tt.route, got, tt.vhosts)
		}
	}
}

// TestIssue15Item20DiscardedHTTPChainRoute: issue 15 item 20, checked
// against istiod's generator. An older Mongo ServiceEntry holds 0.0.0.0_27017,
// so a newer HTTP Service on the port is discarded
// (docs/semantics/envoy-output.md §7.4); its HTTP chain never reaches the
// listener and the xDS output names no route configuration "27017", as
// neither istiod nor the bootstrap format has one.
func TestIssue15Item20DiscardedHTTPChainRoute(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: mongo, namespace: default, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  hosts: [mongo.example.com]
  ports: [{number: 27017, name: mongo, protocol: MONGO}]
  resolution: DNS`,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default, creationTimestamp: "2021-01-01T00:00:00Z"}
spec: {clusterIP: 10.0.0.8, ports: [{name: http, port: 27017}]}`}
	for _, format := range []Format{XDS, Bootstrap} {
		cfg := compile(t, Options{Format: format}, "default/client", docs...)
		l := listenerNamed(cfg, "0.0.0.0_27017")
		if l == nil {
			t.Fatalf("%s: no listener 0.0.0.0_27017 in %v", format, names(cfg.Listeners))
		}
		for _, fc := range append(l.GetFilterChains(), l.GetDefaultFilterChain()) {
			if fc != nil && fc.GetFilters()[0].GetName() == hcmName {
				t.Errorf("%s: 0.0.0.0_27017 has an HTTP chain; the Mongo entry holds the port", format)
			}
		}
		if got := names(cfg.Routes); len(got) > 0 {
			t.Errorf("%s: route configurations %v, want none", format, got)
		}
	}
}
