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
