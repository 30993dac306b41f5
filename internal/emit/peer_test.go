package emit

import (
	"maps"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve"
)

// TestPeerAuthenticationComposition: a proxy's mutual TLS mode is the
// mesh's, then its namespace's, then the oldest workload policy selecting
// it, UNSET inheriting at each step; that policy's port-level modes (UNSET
// taking the workload's) override by port. Clients infer only the
// namespace and mesh modes.
func TestPeerAuthenticationComposition(t *testing.T) {
	pa := func(ns, name, created, spec string) string {
		return "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: " + name + ", namespace: " + ns +
			", creationTimestamp: \"" + created + "\"}\nspec: " + spec
	}
	objs, _ := load.Bytes("in.yaml", []byte(strings.Join([]string{
		pa("istio-system", "mesh", "2024-01-01T00:00:00Z", "{mtls: {mode: STRICT}}"),
		pa("istio-system", "mesh-newer", "2024-02-01T00:00:00Z", "{mtls: {mode: DISABLE}}"),
		pa("istio-system", "root-selector", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}}"),
		pa("shop", "ns", "2024-01-01T00:00:00Z", "{mtls: {mode: PERMISSIVE}}"),
		pa("shop", "web", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: web}}, portLevelMtls: {8080: {mode: DISABLE}, 9090: {}}}"),
		pa("shop", "web-newer", "2024-03-01T00:00:00Z", "{selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}}"),
		pa("shop", "db", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: db}}, mtls: {mode: STRICT}}"),
		pa("other", "unset", "2024-01-01T00:00:00Z", "{mtls: {}}"),
	}, "\n---\n")))
	pp := newPeerPolicies(objs, "istio-system")
	tests := []struct {
		name, ns, app string
		mode          mtlsMode
		perPort       map[uint32]mtlsMode
	}{
		{"workload policy without a mode keeps the namespace's, adds ports", "shop", "web", mtlsPermissive, map[uint32]mtlsMode{8080: mtlsDisable, 9090: mtlsPermissive}},
		{"workload policy", "shop", "db", mtlsStrict, nil},
		{"namespace policy", "shop", "other", mtlsPermissive, nil},
		{"UNSET namespace inherits the oldest mesh policy", "other", "web", mtlsStrict, nil},
		{"mesh policy only", "empty", "x", mtlsStrict, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pp.forProxy(&resolve.Proxy{Namespace: tt.ns, Labels: map[string]string{"app": tt.app}})
			if got.mode != tt.mode || !maps.Equal(got.perPort, tt.perPort) {
				t.Errorf("got %v %v, want %v %v", got.mode, got.perPort, tt.mode, tt.perPort)
			}
		})
	}
	if got := pp.namespaceMode("shop"); got != mtlsPermissive {
		t.Errorf("clients infer %v for shop, want the namespace's PERMISSIVE whatever the workload policies", got)
	}
}

// TestPortLevelPassthrough: a port a workload policy sets a mode for, and
// no service targets, gets passthrough chains of its own in that mode.
func TestPortLevelPassthrough(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: client, namespace: default}
spec: {selector: {matchLabels: {app: client}}, mtls: {mode: STRICT}, portLevelMtls: {9999: {mode: DISABLE}}}`)
	var got []string
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		if fc.GetFilterChainMatch().GetDestinationPort().GetValue() == 9999 {
			got = append(got, fc.GetName()+" "+fc.GetFilterChainMatch().GetTransportProtocol()+" "+fc.GetFilters()[0].GetName())
		}
	}
	want := []string{"virtualInbound-catchall-http raw_buffer " + hcmName, "virtualInbound raw_buffer " + tcpProxyName}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("port 9999 chains %q, want %q", got, want)
	}
}
