package resolve

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

const gatewayRoutesBase = `apiVersion: v1
kind: Namespace
metadata: {name: app, labels: {istio-injection: enabled}}
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
metadata: {name: web, namespace: app}
spec: {clusterIP: 10.0.0.1, selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: app, labels: {app: web}}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: client}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: other}
spec: {containers: [{name: c, image: i}]}`

// generatedVS is a VirtualService as the Gateway API conversion makes it
// for a mesh route: bound to the mesh, with the route semantics annotation.
func generatedVS(ns, name, host string) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: %s
  namespace: %s
  annotations: {internal.istio.io/route-semantics: gateway}
spec:
  hosts: [%s]
  gateways: [mesh]
  http: [{name: %s, route: [{destination: {host: web.app.svc.cluster.local, port: {number: 80}}}]}]`, name, ns, host, name)
}

func plainVS(ns, name, host string) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %s, namespace: %s}
spec:
  hosts: [%s]
  http: [{name: %s, route: [{destination: {host: web.app.svc.cluster.local}}]}]`, name, ns, host, name)
}

// TestGatewayRoutesOnSidecars checks which route a sidecar of each
// namespace takes for web.app on port 80 (docs/semantics/gateway-api.md
// §G7.4): "default" when no VirtualService applies.
func TestGatewayRoutesOnSidecars(t *testing.T) {
	const web = "web.app.svc.cluster.local"
	tests := []struct {
		name string
		docs []string
		want map[string]string // proxy namespace → route name
	}{
		{"producer route serves every namespace", []string{generatedVS("app", "producer", web)},
			map[string]string{"app": "producer", "client": "producer", "other": "producer"}},
		{"consumer route serves its namespace only", []string{generatedVS("client", "consumer", web)},
			map[string]string{"app": "default", "client": "consumer", "other": "default"}},
		{"consumer overrides producer in its namespace", []string{generatedVS("app", "producer", web), generatedVS("client", "consumer", web)},
			map[string]string{"app": "producer", "client": "consumer", "other": "producer"}},
		{"generated route of the namespace before an older VirtualService", []string{plainVS("app", "a-first", web), generatedVS("app", "producer", web)},
			map[string]string{"app": "producer", "client": "a-first", "other": "a-first"}},
		{"a VirtualService of the consumer's namespace still loses to its generated route", []string{plainVS("client", "a-first", web), generatedVS("client", "consumer", web)},
			map[string]string{"app": "a-first", "client": "consumer", "other": "a-first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mesh(t, "", append([]string{gatewayRoutesBase}, tt.docs...)...)
			for ns, want := range tt.want {
				if got := firstRoute(t, m, ns, web); got != want {
					t.Errorf("proxy in %s routes web by %q, want %q", ns, got, want)
				}
			}
		})
	}
}

// TestGatewayRouteForNoService: a generated VirtualService for a host that
// is no service makes no virtual host, where a written one would.
func TestGatewayRouteForNoService(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{{generatedVS("app", "gen", "ghost.app.svc.cluster.local"), false}, {plainVS("app", "plain", "ghost.app.svc.cluster.local"), true}} {
		m := mesh(t, "", gatewayRoutesBase, tt.doc)
		v, _ := m.View("app", "p")
		found := false
		for _, rc := range m.OutboundRoutes(v) {
			for _, vh := range rc.VirtualHosts {
				found = found || vh.Name == "ghost.app.svc.cluster.local:80"
			}
		}
		if found != tt.want {
			t.Errorf("%.60s: vhost for ghost %v, want %v", tt.doc, found, tt.want)
		}
	}
}

// TestGatewayRoutesOfServiceEntries: a mesh route of a ServiceEntry's host
// is a producer's in the ServiceEntry's namespace, a consumer's elsewhere.
func TestGatewayRoutesOfServiceEntries(t *testing.T) {
	const ext = "api.example.com"
	se := `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: app}
spec: {hosts: [api.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}`
	for _, tt := range []struct {
		route string
		want  map[string]string
	}{
		{generatedVS("app", "producer", ext), map[string]string{"app": "producer", "client": "producer", "other": "producer"}},
		{generatedVS("client", "consumer", ext), map[string]string{"app": "default", "client": "consumer", "other": "default"}},
	} {
		m := mesh(t, "", gatewayRoutesBase, se, tt.route)
		for ns, want := range tt.want {
			if got := firstRoute(t, m, ns, ext); got != want {
				t.Errorf("%.40s: proxy in %s routes %s by %q, want %q", tt.route[60:], ns, ext, got, want)
			}
		}
	}
}

// firstRoute is the name of the first route of h's virtual host on port
// 80 for the proxy ns/p, "none" without one.
func firstRoute(t *testing.T, m *Mesh, ns string, h string) string {
	t.Helper()
	v, ok := m.View(ns, "p")
	if !ok {
		t.Fatalf("no proxy %s/p", ns)
	}
	for _, rc := range m.OutboundRoutes(v) {
		for _, vh := range rc.VirtualHosts {
			if rc.Name == "80" && vh.Name == h+":80" {
				return vh.Routes[0].Name
			}
		}
	}
	return "none"
}

// TestProducerRoute: a generated route written in its Service's namespace
// (or for a host that is no Service's) may apply to other namespaces.
func TestProducerRoute(t *testing.T) {
	for _, c := range []struct {
		hosts []host.Name
		want  bool
	}{
		{[]host.Name{"web.shop.svc.cluster.local"}, true},
		{[]host.Name{"web.other.svc.cluster.local"}, false},
		{[]host.Name{"web.other.svc.cluster.local", "web.shop.svc.cluster.local"}, true},
		{[]host.Name{"web.other.svc"}, false},
		{[]host.Name{"web.other.example"}, true},
		{[]host.Name{"web.other"}, true},
		{[]host.Name{"web"}, true},
		{nil, false},
	} {
		vs := &VirtualService{Object: &model.VirtualService{ObjectMeta: model.ObjectMeta{Namespace: "shop"}}, Hosts: c.hosts}
		if got := producerRoute(vs); got != c.want {
			t.Errorf("%v: %v, want %v", c.hosts, got, c.want)
		}
	}
}

// TestNamedServicesAsLookedUp: the registry numbers kept on a generated
// VirtualService name the services that looking its hosts up names, an
// upper-case host and a host no service has included.
func TestNamedServicesAsLookedUp(t *testing.T) {
	m := mesh(t, "", gatewayRoutesBase, generatedVS("client", "consumer", "WEB.app.svc.cluster.local"), generatedVS("app", "ghost", "ghost.app.svc.cluster.local"))
	named := 0
	for _, ns := range []string{"app", "client", "other"} {
		v, ok := m.View(ns, "p")
		if !ok {
			t.Fatalf("no proxy in %s", ns)
		}
		for _, vs := range m.VirtualServices {
			if vs.regHostIDs == nil {
				t.Fatalf("%s: hosts not numbered", vs.Object.Name)
			}
			got := v.Scope.appendNamedServices(nil, vs)
			numbered := vs.regHostIDs
			vs.regHostIDs = nil
			want := v.Scope.appendNamedServices(nil, vs)
			vs.regHostIDs = numbered
			if !slices.Equal(got, want) {
				t.Errorf("%s in %s: names %v, looked up %v", vs.Object.Name, ns, got, want)
			}
			named += len(got)
		}
	}
	if named == 0 {
		t.Error("no VirtualService named a service")
	}
}
