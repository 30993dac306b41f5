package resolve

import (
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/hierarchy"
)

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

// TestInjectionAsInstalled: with only revision 1-24 installed, namespaces
// and pods labelled for it are injected and the default webhook's labels
// are not; --inject-namespace injects a namespace whatever its labels,
// and a pod can still opt out.
func TestInjectionAsInstalled(t *testing.T) {
	objs := objects(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: canary, labels: {istio.io/rev: 1-24}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: legacy, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: canary}\nspec: {containers: [{name: c, image: x}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: legacy}\nspec: {containers: [{name: c, image: x}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: c, namespace: app, labels: {istio.io/rev: 1-24}}\nspec: {containers: [{name: c, image: x}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: d, namespace: app}\nspec: {containers: [{name: c, image: x}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: e, namespace: app, labels: {sidecar.istio.io/inject: \"false\"}}\nspec: {containers: [{name: c, image: x}]}",
	)
	for _, tc := range []struct {
		in   Injection
		want string
	}{
		{Injection{}, "legacy/b"},
		{Injection{Revisions: []string{"1-24"}}, "app/c canary/a"},
		{Injection{Revisions: []string{"default", "1-24"}}, "app/c canary/a legacy/b"},
		{Injection{Namespaces: []string{"app"}}, "app/c app/d legacy/b"},
	} {
		m := resolveObjects(t, objs, hierarchy.Options{}, Options{Injection: tc.in})
		var got []string
		for _, p := range m.Proxies {
			got = append(got, p.ID())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%+v: proxies %v, want %s", tc.in, got, tc.want)
		}
	}
}
