package resolve

import (
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
)

// TestInjectionReadsFinalNamespaceLabels: a managed istio-injection label
// set on an ancestor's HierarchyConfiguration reaches the child, and a
// manifest's own label is stripped (docs/semantics/hierarchy.md T9, §5.1).
func TestInjectionReadsFinalNamespaceLabels(t *testing.T) {
	objs, ds := load.Bytes("h.yaml", []byte(`apiVersion: v1
kind: Namespace
metadata: {name: org}
---
apiVersion: hnc.x-k8s.io/v1alpha2
kind: HierarchyConfiguration
metadata: {name: hierarchy, namespace: org}
spec: {labels: [{key: istio-injection, value: enabled}]}
---
apiVersion: hnc.x-k8s.io/v1alpha2
kind: SubnamespaceAnchor
metadata: {name: team, namespace: org}
---
apiVersion: v1
kind: Namespace
metadata: {name: loner, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: loner}
spec: {containers: [{name: c}]}
`))
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	for _, tt := range []struct {
		managed   []string
		team, lon bool
	}{
		{nil, false, true},
		{[]string{"istio-injection"}, true, false},
	} {
		m := resolveObjects(t, objs, hierarchy.Options{ManagedLabels: tt.managed}, Options{Mesh: model.MeshConfig{}})
		_, team := m.View("team", "p")
		_, lon := m.View("loner", "p")
		if team != tt.team || lon != tt.lon {
			t.Errorf("managed %v: proxy in team %v (want %v), in loner %v (want %v)", tt.managed, team, tt.team, lon, tt.lon)
		}
	}
}

// TestDiscoverySelectorsReadTreeLabels: a discoverySelector on HNC's tree
// label selects a whole subtree (docs/semantics/hierarchy.md §5.1).
func TestDiscoverySelectorsReadTreeLabels(t *testing.T) {
	m := mesh(t, "discoverySelectors: [{matchExpressions: [{key: org.tree.hnc.x-k8s.io/depth, operator: Exists}]}]",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: org, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: team, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: outside, labels: {istio-injection: enabled}}",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: hierarchy, namespace: team}\nspec: {parent: org}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: team}\nspec: {ports: [{port: 80, name: http}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: b, namespace: outside}\nspec: {ports: [{port: 80, name: http}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: outside}\nspec: {containers: [{name: c}]}")
	if _, ok := m.View("outside", "p"); ok {
		t.Error("a namespace outside the selectors has no proxies for istiod")
	}
	v, ok := m.View("team", "p")
	if !ok {
		t.Fatal("team/p missing")
	}
	if got := hostsOf(v.Scope.Services); !slices.Equal(got, []string{"a.team.svc.cluster.local"}) {
		t.Errorf("services %v", got)
	}
}
