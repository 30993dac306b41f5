package resolve

import (
	"testing"

	networking "istio.io/api/networking/v1alpha3"
)

// TestRouteSourcePredicates: the HTTP rule (gateways named: those decide
// alone; else labels and namespace) and the L4 rule (every predicate) for
// a sidecar and a gateway proxy.
func TestRouteSourcePredicates(t *testing.T) {
	p := &Proxy{Namespace: "shop", Labels: map[string]string{"app": "web"}}
	sidecar, gateway := SidecarSource(p, 80), GatewaySource(p, "istio-system/public", 80)
	for _, tc := range []struct {
		name           string
		gateways       []string
		labels         map[string]string
		ns             string
		port           uint32
		sidecarHTTP    bool
		gatewayHTTP    bool
		sidecarL4      bool
		gatewayL4Match bool
	}{
		{name: "no predicates", sidecarHTTP: true, gatewayHTTP: true, sidecarL4: true, gatewayL4Match: true},
		{name: "own labels", labels: map[string]string{"app": "web"}, sidecarHTTP: true, gatewayHTTP: true, sidecarL4: true, gatewayL4Match: true},
		{name: "other labels", labels: map[string]string{"app": "db"}, gatewayL4Match: true},
		{name: "other namespace", ns: "foo", gatewayL4Match: true},
		{name: "own namespace", ns: "shop", sidecarHTTP: true, gatewayHTTP: true, sidecarL4: true, gatewayL4Match: true},
		{name: "other port", port: 81},
		{name: "mesh with other labels", gateways: []string{"mesh"}, labels: map[string]string{"app": "db"}, sidecarHTTP: true},
		{name: "gateway with other labels", gateways: []string{"istio-system/public"}, labels: map[string]string{"app": "db"}, gatewayHTTP: true, gatewayL4Match: true},
		{name: "gateway by short name", gateways: []string{"public.istio-system.svc.cluster.local"}, gatewayHTTP: true, gatewayL4Match: true},
		{name: "another gateway", gateways: []string{"other/gw"}},
	} {
		h := &networking.HTTPMatchRequest{Gateways: tc.gateways, SourceLabels: tc.labels, SourceNamespace: tc.ns, Port: tc.port}
		l4 := &networking.L4MatchAttributes{Gateways: tc.gateways, SourceLabels: tc.labels, SourceNamespace: tc.ns, Port: tc.port}
		got := [4]bool{HTTPMatchApplies(h, sidecar, "shop"), HTTPMatchApplies(h, gateway, "shop"), L4MatchApplies(l4, sidecar, "shop"), gatewayL4Applies(l4, gateway, "shop")}
		if want := [4]bool{tc.sidecarHTTP, tc.gatewayHTTP, tc.sidecarL4, tc.gatewayL4Match}; got != want {
			t.Errorf("%s: sidecar HTTP, gateway HTTP, sidecar L4, gateway L4 = %v, want %v", tc.name, got, want)
		}
	}
}
