package emit

import (
	"os"
	"slices"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
)

// TestGatewayBind: a router listens once per workload port and bind
// address of its Gateway servers, names HTTP routes http.<port>.<bind>,
// and merges or drops servers per bind, on the fixture
// testdata/gateway-bind, whose output matches istiod's generator
// (cmd/meshc-fidelity -mesh). Each listener is written as its name and
// chains (SNI names → route or cluster), each HTTP route as its name
// and domains.
func TestGatewayBind(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/gateway-bind/mesh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := resolveDocs(t, strings.Split(string(raw), "\n---\n")...)
	db, tlsapp := "outbound|5432||db.apps.svc.cluster.local", "outbound|8443||tlsapp.apps.svc.cluster.local"
	tests := []struct {
		proxy     string
		listeners []string
		routes    []string
		problems  int
		// mention is in a problem, when given.
		mention string
	}{
		{"two-binds", []string{
			"10.10.0.1_8080: →http.8080.10.10.0.1",
			"10.10.0.2_8080: →http.8080.10.10.0.2",
		}, []string{
			"http.8080.10.10.0.1: a.example.com c.example.com",
			"http.8080.10.10.0.2: b.example.com",
		}, 0, ""},
		{"bind-and-none", []string{
			"0.0.0.0_8080: →http.8080, d.example.com→https.8080.https-none.bind-and-none.istio-system",
			"10.10.0.1_8080: →http.8080.10.10.0.1",
		}, []string{
			"http.8080: a.example.com c.example.com",
			"http.8080.10.10.0.1: b.example.com",
		}, 0, ""},
		{"https-binds", []string{
			"10.10.0.1_8443: a.example.com→https.8443.https-a.https-binds.istio-system.10.10.0.1, a.example.com→https.8443.https-again.https-binds.istio-system.10.10.0.1, c.example.com→https.8443.https-c.https-binds.istio-system.10.10.0.1",
			"10.10.0.2_8443: a.example.com→https.8443.https-b.https-binds.istio-system.10.10.0.2",
			"0.0.0.0_8443: a.example.com,b.example.com→https.8443.https.https-binds.istio-system",
		}, nil, 1, ""},
		{"tcp-binds", []string{
			"10.10.0.1_5432: →" + db + ", →http.5432.10.10.0.1",
			"10.10.0.2_5432: →" + db,
		}, []string{"http.5432.10.10.0.1: a.example.com"}, 1, ""},
		{"mixed", []string{
			"0.0.0.0_9443: a.example.com→https.9443.https.mixed.istio-system, b.example.com→https.9443.https-2.mixed.istio-system, tls.example.com→" + db + ", →http.9443",
			"10.10.0.1_9443: →http.9443.10.10.0.1, d.example.com→https.9443.https-bound.mixed.istio-system.10.10.0.1",
		}, []string{
			"http.9443: a.example.com e.example.com",
			"http.9443.10.10.0.1: c.example.com",
		}, 0, ""},
		{"passthrough", []string{
			"10.10.0.1_8443: tls.example.com→" + tlsapp + ", other.example.com→" + tlsapp,
			"10.10.0.2_8443: tls.example.com→" + tlsapp + ", other.example.com→" + tlsapp,
		}, nil, 2, ""},
		{"conflicts", []string{
			"10.10.0.1_8080: →http.8080.10.10.0.1",
			"10.10.0.2_8080: a.example.com→https.8080.https.conflicts.istio-system.10.10.0.2",
		}, []string{"http.8080.10.10.0.1: a.example.com b.example.com"}, 2, "server 1 (port 8080 on 10.10.0.1, TCP)"},
		{"respelt", []string{
			"10.10.0.1_8080: →http.8080.10.10.0.1, →http.8080.10.10.0.1",
			"10.10.0.2_8080: →http.8080.10.10.0.2",
		}, []string{"http.8080.10.10.0.1: c.example.com", "http.8080.10.10.0.2: b.example.com"}, 1, "listener 10.10.0.1_8080: filter chains 0 and 1 match the same connections"},
	}
	for _, tt := range tests {
		t.Run(tt.proxy, func(t *testing.T) {
			v, ok := m.View("istio-system", tt.proxy)
			if !ok {
				t.Fatalf("no proxy %s", tt.proxy)
			}
			cfg := New(m, Options{Format: XDS}).Build(v)
			if len(cfg.Problems) != tt.problems {
				t.Errorf("problems %q, want %d", cfg.Problems, tt.problems)
			}
			if tt.mention != "" && !slices.ContainsFunc(cfg.Problems, func(p string) bool { return strings.Contains(p, tt.mention) }) {
				t.Errorf("problems %q, want one saying %q", cfg.Problems, tt.mention)
			}
			var got []string
			for _, l := range cfg.Listeners {
				if l.GetAddress().GetSocketAddress().GetAddress() != strings.Split(l.GetName(), "_")[0] {
					t.Errorf("listener %s binds %s", l.GetName(), l.GetAddress().GetSocketAddress().GetAddress())
				}
				var chains []string
				for _, fc := range l.GetFilterChains() {
					chains = append(chains, strings.Join(fc.GetFilterChainMatch().GetServerNames(), ",")+"→"+chainTarget(t, fc))
				}
				got = append(got, l.GetName()+": "+strings.Join(chains, ", "))
			}
			if !slices.Equal(got, tt.listeners) {
				t.Errorf("listeners\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.listeners, "\n"))
			}
			var routes []string
			for _, rc := range cfg.Routes {
				if !strings.HasPrefix(rc.GetName(), "http.") {
					continue
				}
				var domains []string
				for _, vh := range rc.GetVirtualHosts() {
					domains = append(domains, vh.GetDomains()...)
				}
				routes = append(routes, rc.GetName()+": "+strings.Join(domains, " "))
			}
			if !slices.Equal(routes, tt.routes) {
				t.Errorf("routes %q, want %q", routes, tt.routes)
			}
		})
	}
}

// chainTarget is the route configuration a chain's HTTP connection
// manager names, or the cluster its TCP proxy sends to.
func chainTarget(t *testing.T, fc *listenerv3.FilterChain) string {
	t.Helper()
	for _, f := range fc.GetFilters() {
		h := &hcmv3.HttpConnectionManager{}
		if f.GetTypedConfig().UnmarshalTo(h) == nil {
			return h.GetRds().GetRouteConfigName()
		}
		tp := &tcpv3.TcpProxy{}
		if f.GetTypedConfig().UnmarshalTo(tp) == nil {
			return tp.GetCluster()
		}
	}
	return ""
}
