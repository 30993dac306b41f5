package resolve

import (
	"testing"

	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
)

// TestInjectionReadsFinalNamespaceLabels: a managed istio-injection label
// set on an ancestor's HierarchyConfiguration reaches the child, and a
// manifest's own label is stripped (hierarchy.md trap 9, §5.1).
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
		m := Resolve(objs, Options{Mesh: model.MeshConfig{}, Hierarchy: hierarchy.Options{ManagedLabels: tt.managed}})
		_, team := m.View("team", "p")
		_, lon := m.View("loner", "p")
		if team != tt.team || lon != tt.lon {
			t.Errorf("managed %v: proxy in team %v (want %v), in loner %v (want %v)", tt.managed, team, tt.team, lon, tt.lon)
		}
	}
}
