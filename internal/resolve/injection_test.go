package resolve

import "testing"

// TestC49InjectionTable: docs/semantics/cases.md C49 (derived), which pods get a
// sidecar.
func TestC49InjectionTable(t *testing.T) {
	ns := func(name, labels string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + ", labels: {" + labels + "}}"
	}
	pod := func(ns, name, label, extra string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + ", labels: {" + label + "}}\nspec: {" + extra + "containers: [{name: app, image: x}]}"
	}
	m := mesh(t, "",
		ns("inject-on", "istio-injection: enabled"), ns("inject-off", "istio-injection: disabled"), ns("plain", ""), ns("rev", "istio.io/rev: default"),
		pod("inject-on", "opted-out", `sidecar.istio.io/inject: "false"`, ""),
		pod("inject-on", "host-net", "", "hostNetwork: true, "),
		pod("inject-on", "normal", "", ""),
		pod("inject-off", "opted-in", `sidecar.istio.io/inject: "true"`, ""),
		pod("plain", "opted-in", `sidecar.istio.io/inject: "true"`, ""),
		pod("plain", "nothing", "", ""),
		pod("rev", "revision", "", ""),
		pod("kube-system", "system", `sidecar.istio.io/inject: "true"`, ""),
	)
	tests := []struct {
		id    string
		proxy bool
	}{
		{"inject-on/opted-out", false},
		{"inject-on/host-net", false},
		{"inject-on/normal", true},
		{"inject-off/opted-in", false},
		{"plain/opted-in", true},
		{"plain/nothing", false},
		{"rev/revision", true},
		{"kube-system/system", false},
	}
	have := map[string]bool{}
	for _, p := range m.Proxies {
		have[p.ID()] = true
	}
	for _, tt := range tests {
		if have[tt.id] != tt.proxy {
			t.Errorf("%s: proxy = %v, want %v", tt.id, have[tt.id], tt.proxy)
		}
	}
}
