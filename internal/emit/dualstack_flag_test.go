package emit

import (
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestIstioDualStack: testdata/fidelity/dual-stack built with istiod's
// ISTIO_DUAL_STACK off and on (resolve.Options.DualStack). On, a
// dual-stack proxy's VIP listeners also bind the service's other VIPs,
// its vhosts name them, virtualOutbound, virtualInbound and gateway
// listeners also bind "::", inbound clusters also connect from ::6, DNS
// clusters resolve both families, and a dual-stack pod behind a
// dual-stack Service or selected by a ServiceEntry is one endpoint with
// its IPv6 address extra. Off, none of it, and a single-stack Service
// has only its family's addresses. As istiod's generator builds the
// fixture both ways (checked with meshc-fidelity).
func TestIstioDualStack(t *testing.T) {
	in := fidelityFixture(t, "dual-stack")
	type want struct {
		webExtra, web6Extra, outboundExtra, gatewayExtra []string
		domains                                          []string
		inbound6                                         bool
		dns                                              clusterv3.Cluster_DnsLookupFamily
		webEndpoints, entryEndpoints, clientEndpoints    [][]string
	}
	domains := []string{"web.app.svc.cluster.local", "web.app.svc.cluster.local.", "web", "web.app.svc", "web.app", "10.96.0.5"}
	for _, tc := range []struct {
		dualStack bool
		want      want
	}{
		{false, want{
			domains: domains, dns: clusterv3.Cluster_V4_ONLY,
			webEndpoints:    [][]string{{"10.1.0.5"}, {"fd00::5"}},
			entryEndpoints:  [][]string{{"10.1.0.5"}},
			clientEndpoints: [][]string{{"10.1.0.4"}},
		}},
		{true, want{
			webExtra: []string{"fd00:10::5"}, web6Extra: []string{"10.96.0.6"}, outboundExtra: []string{"::"}, gatewayExtra: []string{"::"},
			domains: append(slices.Clone(domains), "[fd00:10::5]"), inbound6: true, dns: clusterv3.Cluster_ALL,
			webEndpoints:    [][]string{{"10.1.0.5", "fd00::5"}},
			entryEndpoints:  [][]string{{"10.1.0.5", "fd00::5"}},
			clientEndpoints: [][]string{{"10.1.0.4"}},
		}},
	} {
		m := resolvetest.MeshWith(t, resolve.Options{DualStack: tc.dualStack}, in)
		build := func(ns, name string) *Config {
			v, ok := m.View(ns, name)
			if !ok {
				t.Fatalf("no proxy %s/%s", ns, name)
			}
			return New(m, Options{Format: XDS}).Build(v)
		}
		client, gw := build("app", "client"), build("istio-system", "ingress")
		var got want
		extra := func(l *listenerv3.Listener) []string {
			var out []string
			for _, a := range l.GetAdditionalAddresses() {
				out = append(out, a.GetAddress().GetSocketAddress().GetAddress())
			}
			return out
		}
		got.webExtra = extra(listenerNamed(client, "10.96.0.5_5432"))
		got.web6Extra = extra(listenerNamed(client, "fd00:10::6_5433"))
		got.outboundExtra = extra(listenerNamed(client, "virtualOutbound"))
		if in := extra(listenerNamed(client, "virtualInbound")); !slices.Equal(in, got.outboundExtra) {
			t.Errorf("dual-stack %v: virtualInbound binds %v besides", tc.dualStack, in)
		}
		got.gatewayExtra = extra(listenerNamed(gw, "0.0.0.0_8080"))
		for _, vh := range routeNamed(client, "80").GetVirtualHosts() {
			if vh.GetName() == "web.app.svc.cluster.local:80" {
				got.domains = vh.GetDomains()
			}
		}
		got.inbound6 = len(clusterNamed(client, "inbound|9000||").GetUpstreamBindConfig().GetExtraSourceAddresses()) > 0
		got.dns = clusterNamed(client, "outbound|7000||ext.example.com").GetDnsLookupFamily()
		addrs := func(cluster string) [][]string {
			var out [][]string
			for _, cla := range client.Endpoints {
				if cla.GetClusterName() != cluster {
					continue
				}
				for _, l := range cla.GetEndpoints() {
					for _, e := range l.GetLbEndpoints() {
						set := []string{e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()}
						for _, a := range e.GetEndpoint().GetAdditionalAddresses() {
							set = append(set, a.GetAddress().GetSocketAddress().GetAddress())
						}
						out = append(out, set)
					}
				}
			}
			return out
		}
		got.webEndpoints = addrs("outbound|80||web.app.svc.cluster.local")
		got.entryEndpoints = addrs("outbound|8081||web.internal")
		got.clientEndpoints = addrs("outbound|9000||client.app.svc.cluster.local")
		w := tc.want
		eq2 := func(a, b [][]string) bool { return slices.EqualFunc(a, b, slices.Equal) }
		if !slices.Equal(got.webExtra, w.webExtra) || !slices.Equal(got.web6Extra, w.web6Extra) || !slices.Equal(got.outboundExtra, w.outboundExtra) ||
			!slices.Equal(got.gatewayExtra, w.gatewayExtra) || !slices.Equal(got.domains, w.domains) || got.inbound6 != w.inbound6 || got.dns != w.dns ||
			!eq2(got.webEndpoints, w.webEndpoints) || !eq2(got.entryEndpoints, w.entryEndpoints) || !eq2(got.clientEndpoints, w.clientEndpoints) {
			t.Errorf("dual-stack %v:\n got %+v\nwant %+v", tc.dualStack, got, w)
		}
	}
}
