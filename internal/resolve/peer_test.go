package resolve

import (
	"maps"
	"testing"

	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/model"
)

// TestPeerAuthenticationComposition: a proxy's mutual TLS mode is the
// mesh's, then its namespace's, then the oldest workload policy selecting
// it, UNSET inheriting at each step; that policy's port-level modes (UNSET
// taking the workload's) override by port. Each result names the policy
// that decided it. Clients infer only the namespace and mesh modes.
func TestPeerAuthenticationComposition(t *testing.T) {
	const (
		permissive = security.PeerAuthentication_MutualTLS_PERMISSIVE
		strict     = security.PeerAuthentication_MutualTLS_STRICT
		disable    = security.PeerAuthentication_MutualTLS_DISABLE
	)
	pa := func(ns, name, created, spec string) string {
		return "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: " + name + ", namespace: " + ns +
			", creationTimestamp: \"" + created + "\"}\nspec: " + spec
	}
	m := mesh(t, "",
		pa("istio-system", "mesh", "2024-01-01T00:00:00Z", "{mtls: {mode: STRICT}}"),
		pa("istio-system", "mesh-newer", "2024-02-01T00:00:00Z", "{mtls: {mode: DISABLE}}"),
		pa("istio-system", "root-selector", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}}"),
		pa("shop", "ns", "2024-01-01T00:00:00Z", "{mtls: {mode: PERMISSIVE}}"),
		pa("shop", "web", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: web}}, portLevelMtls: {8080: {mode: DISABLE}, 9090: {}}}"),
		pa("shop", "web-newer", "2024-03-01T00:00:00Z", "{selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}}"),
		pa("shop", "db", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: db}}, mtls: {mode: STRICT}}"),
		pa("other", "unset", "2024-01-01T00:00:00Z", "{mtls: {}}"),
		pa("bare", "unset", "2024-01-01T00:00:00Z", "{selector: {matchLabels: {app: x}}, portLevelMtls: {80: {mode: STRICT}}}"),
	)
	tests := []struct {
		name, ns, app string
		mode          MTLSMode
		by            string
		ports         map[uint32]MTLSMode
		portsBy       string
	}{
		{"workload policy without a mode keeps the namespace's, adds ports", "shop", "web", permissive, "shop/ns",
			map[uint32]MTLSMode{8080: disable, 9090: permissive}, "shop/web"},
		{"workload policy", "shop", "db", strict, "shop/db", nil, ""},
		{"namespace policy", "shop", "other", permissive, "shop/ns", nil, ""},
		{"UNSET namespace inherits the oldest mesh policy", "other", "web", strict, "istio-system/mesh", nil, ""},
		{"mesh policy only", "empty", "x", strict, "istio-system/mesh", nil, ""},
		{"port-level modes under the mesh's", "bare", "x", strict, "istio-system/mesh", map[uint32]MTLSMode{80: strict}, "bare/unset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.ProxyMTLS(&Proxy{Namespace: tt.ns, Labels: map[string]string{"app": tt.app}})
			if got.Mode != tt.mode || !maps.Equal(got.Ports, tt.ports) {
				t.Errorf("got %v %v, want %v %v", got.Mode, got.Ports, tt.mode, tt.ports)
			}
			if by := metaKey(got.By); by != tt.by || (by == "") != (got.Level == MTLSDefault) {
				t.Errorf("decided by %q (%q level), want %q", by, got.Level, tt.by)
			}
			if by := metaKey(got.PortsBy); by != tt.portsBy {
				t.Errorf("ports decided by %q, want %q", by, tt.portsBy)
			}
		})
	}
	if got := m.ProxyMTLS(&Proxy{Namespace: "shop", Labels: map[string]string{"app": "db"}}); got.Level != MTLSWorkload {
		t.Errorf("shop/db decided at %q, want the workload level", got.Level)
	}
	if got := m.ProxyMTLS(&Proxy{Namespace: "other"}); got.Level != MTLSMesh {
		t.Errorf("other decided at %q, want the mesh level", got.Level)
	}
	if got := m.NamespaceMTLS("shop"); got.Mode != permissive || metaKey(got.By) != "shop/ns" || got.Level != MTLSNamespace {
		t.Errorf("clients infer %v (%s) for shop, want the namespace's PERMISSIVE whatever the workload policies", got.Mode, metaKey(got.By))
	}
	if got := mesh(t, "").NamespaceMTLS("shop"); got.Mode != permissive || got.By != nil {
		t.Errorf("without policies: %v by %v, want the default PERMISSIVE by none", got.Mode, got.By)
	}
}

// metaKey is "namespace/name" of m, "" for nil.
func metaKey(m *model.ObjectMeta) string {
	if m == nil {
		return ""
	}
	return m.Namespace + "/" + m.Name
}
