package resolve

import (
	"context"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/model"
)

func hierarchyMesh(t *testing.T, docs ...string) *Mesh {
	t.Helper()
	return mesh(t, "", docs...)
}

const orgTeam = `apiVersion: v1
kind: Namespace
metadata: {name: org, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {istio-injection: enabled}}
---
apiVersion: hnc.x-k8s.io/v1alpha2
kind: HierarchyConfiguration
metadata: {name: hierarchy, namespace: team}
spec: {parent: org}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: team}
spec: {ports: [{port: 80, name: http}]}
---
apiVersion: v1
kind: Service
metadata: {name: other, namespace: org}
spec: {ports: [{port: 80, name: http}]}`

func TestM01InheritedDefaultSidecar(t *testing.T) {
	m := hierarchyMesh(t, orgTeam,
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{group: networking.istio.io, resource: sidecars, mode: AllowPropagate}]}",
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: org, annotations: {propagate.hnc.x-k8s.io/all: 'true'}}\nspec: {egress: [{hosts: ['./*', 'istio-system/*']}]}")
	v, ok := m.View("team", "p")
	if !ok {
		t.Fatal("no proxy team/p")
	}
	sc := v.Choice.Sidecar
	if sc == nil || sc.Namespace != "team" || sc.InheritedFrom == nil || sc.InheritedFrom.Namespace != "org" {
		t.Fatalf("sidecar %+v", v.Choice)
	}
	if got := hostsOf(v.Scope.Services); !slices.Equal(got, []string{"svc.team.svc.cluster.local"}) {
		t.Errorf("./* must mean team: %v", got)
	}
}

func TestM02SlotConflict(t *testing.T) {
	// The conflict is the hierarchy stage's finding: resolve never sees it.
	h, err := hierarchy.Run(context.Background(), objects(t, orgTeam,
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{group: networking.istio.io, resource: sidecars, mode: AllowPropagate}]}",
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: org, annotations: {propagate.hnc.x-k8s.io/all: 'true'}}\nspec: {egress: [{hosts: ['./*']}]}",
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: team-default, namespace: team}\nspec: {egress: [{hosts: ['*/*']}]}"), hierarchy.Options{}, hierarchy.PropagateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(h.Diagnostics, func(d diag.Diagnostic) bool { return d.Code == "MC2006" && d.Object.Namespace == "team" }) {
		t.Errorf("want MC2006: %v", h.Diagnostics)
	}
}

func TestM03DestinationRuleShadowing(t *testing.T) {
	m := hierarchyMesh(t, orgTeam,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: backend}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: backend}\nspec: {ports: [{port: 80, name: http}]}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: elsewhere, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: elsewhere}\nspec: {containers: [{name: c}]}",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{group: networking.istio.io, resource: destinationrules, mode: Propagate}]}",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r, namespace: org}\nspec: {host: svc.backend.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}}",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r2, namespace: backend}\nspec: {host: svc.backend.svc.cluster.local, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}")
	for _, tt := range []struct{ ns, rule, from string }{{"team", "team/r", "org"}, {"elsewhere", "backend/r2", ""}} {
		v, _ := m.View(tt.ns, "p")
		d, ok := v.Scope.DestinationRule("svc.backend.svc.cluster.local")
		if !ok || d.Rule == nil {
			t.Fatalf("%s: no rule", tt.ns)
		}
		got := d.Rule.First()
		if got.Namespace+"/"+got.Name != tt.rule {
			t.Errorf("proxies in %s use %s/%s, want %s", tt.ns, got.Namespace, got.Name, tt.rule)
		}
		if tt.from != "" && (got.InheritedFrom == nil || got.InheritedFrom.Namespace != tt.from) {
			t.Errorf("%s: the copy should remember its source", tt.ns)
		}
	}
}

func TestM04RootNamespaceAsParent(t *testing.T) {
	m := hierarchyMesh(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: team}",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: hierarchy, namespace: team}\nspec: {parent: istio-system}",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{group: security.istio.io, resource: peerauthentications, mode: Propagate}]}",
		"apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: sel, namespace: istio-system}\nspec: {selector: {matchLabels: {app: x}}, mtls: {mode: STRICT}}")
	if !slices.ContainsFunc(m.Diagnostics, func(d diag.Diagnostic) bool { return d.Code == "MC2009" }) {
		t.Errorf("want MC2009: %v", m.Diagnostics)
	}
	if !slices.ContainsFunc(m.Objects, func(o model.Object) bool {
		return o.Meta().Kind == "PeerAuthentication" && o.Meta().Namespace == "team" && o.Meta().InheritedFrom != nil
	}) {
		t.Error("the PeerAuthentication copy team/sel is missing")
	}
}
