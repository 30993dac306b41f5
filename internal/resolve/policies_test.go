package resolve

import (
	"slices"
	"testing"
)

// TestPoliciesFor: policies meshc does not build apply as istiod applies
// them: from the root namespace everywhere, otherwise in their namespace,
// to the workloads their selector matches; targeted ones to every proxy of
// their namespace.
func TestPoliciesFor(t *testing.T) {
	pod := func(ns, name, app string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + ", labels: {app: " + app + "}}\nspec: {containers: [{name: c, image: x}]}"
	}
	nsDoc := func(ns string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + ", labels: {istio-injection: enabled}}"
	}
	m := mesh(t, "", nsDoc("a"), nsDoc("b"),
		pod("a", "web", "web"), pod("a", "db", "db"), pod("b", "web", "web"),
		`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-all, namespace: istio-system}
spec: {}`,
		`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: web-only, namespace: a}
spec: {selector: {matchLabels: {app: web}}, action: ALLOW, rules: [{}]}`,
		`apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: db-patch, namespace: istio-system}
spec: {workloadSelector: {labels: {app: db}}, configPatches: []}`,
		`apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: gw, namespace: b}
spec: {targetRefs: [{kind: Gateway, name: edge}]}`,
		`apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: nobody, namespace: b}
spec: {selector: {matchLabels: {app: nobody}}}`)
	want := map[string][]string{
		"a/web": {"deny-all", "web-only"},
		"a/db":  {"db-patch", "deny-all"},
		"b/web": {"deny-all", "gw"},
	}
	for id, names := range want {
		var p *Proxy
		for _, x := range m.Proxies {
			if x.ID() == id {
				p = x
			}
		}
		if p == nil {
			t.Fatalf("no proxy %s", id)
		}
		got := mapSlice(m.PoliciesFor(p), func(pol *Policy) string { return pol.Object.Name })
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("%s: policies %v, want %v", id, got, names)
		}
	}
}
