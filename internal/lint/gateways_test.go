package lint

import (
	"fmt"
	"strings"
	"testing"
)

// secObj is a security.istio.io (or other group's) object.
func secObj(apiVersion, kind, ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: %s}\nspec: {%s}\n", apiVersion, kind, name, ns, spec)
}

// gatewayCase is one input and what one code must say about it.
type gatewayCase struct {
	name    string
	code    string
	docs    []string
	want    int      // diagnostics of code
	object  string   // "Kind ns/name" of the first one
	message []string // fragments of its message
	proxies string   // its proxies, joined; "" when not checked
}

func runGatewayCases(t *testing.T, tests []gatewayCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := run(t, Options{}, tt.docs...)
			got := only(all, tt.code)
			if len(got) != tt.want {
				t.Fatalf("%d %s diagnostics, want %d:\n%s", len(got), tt.code, tt.want, describe(all))
			}
			if tt.want == 0 {
				return
			}
			d := got[0]
			if o := d.Object.Kind + " " + d.Object.Namespace + "/" + d.Object.Name; o != tt.object {
				t.Errorf("object %s, want %s", o, tt.object)
			}
			for _, m := range tt.message {
				if !strings.Contains(d.Message, m) {
					t.Errorf("message %q lacks %q", d.Message, m)
				}
			}
			if tt.proxies != "" && strings.Join(d.Proxies, ",") != tt.proxies {
				t.Errorf("proxies %v, want %s", d.Proxies, tt.proxies)
			}
			if d.Object.File != "in.yaml" || d.Object.Line == 0 {
				t.Errorf("diagnostic lacks its position: %+v", d.Object)
			}
		})
	}
}

func TestSelectorAnalyzers(t *testing.T) {
	web := []string{ns("web"), service("web", "api"), deployment("web", "api-v1", "{app: api, version: v1}")}
	ap := func(ns, name, spec string) string {
		return secObj("security.istio.io/v1", "AuthorizationPolicy", ns, name, spec)
	}
	runGatewayCases(t, []gatewayCase{
		{"MC6004 Sidecar selector with a typo", "MC6004", append(web,
			obj("Sidecar", "web", "api", "workloadSelector: {labels: {app: apii}}, egress: [{hosts: ['./*']}]")),
			1, "Sidecar web/api", []string{"app=apii", "matches no Pod or workload in namespace web"}, ""},
		{"MC6004 AuthorizationPolicy selector", "MC6004", append(web,
			ap("web", "deny", "selector: {matchLabels: {app: api, version: v2}}")),
			1, "AuthorizationPolicy web/deny", []string{"app=api,version=v2"}, ""},
		{"MC6004 RequestAuthentication selector (raw kind)", "MC6004", append(web,
			secObj("security.istio.io/v1", "RequestAuthentication", "web", "jwt", "selector: {matchLabels: {app: nope}}")),
			1, "RequestAuthentication web/jwt", []string{"app=nope"}, ""},
		{"MC6004 Gateway selector matches no workload anywhere", "MC6004", append(web,
			obj("Gateway", "web", "gw", "selector: {istio: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]")),
			1, "Gateway web/gw", []string{"istio=ingress", "any namespace of the input"}, ""},
		{"MC6004 near miss: selector matches an uninjected gateway in another namespace", "MC6004", append(web,
			deployment("edge", "ingress", "{istio: ingress}"),
			obj("Gateway", "web", "gw", "selector: {istio: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]")),
			0, "", nil, ""},
		{"MC6004 near miss: no workloads in the selector's namespace", "MC6004", append(web,
			ns("other"), obj("Sidecar", "other", "s", "workloadSelector: {labels: {app: x}}, egress: [{hosts: ['./*']}]")),
			0, "", nil, ""},
		{"MC6004 near miss: no workloads in the input at all", "MC6004", []string{ns("web"), service("web", "api"),
			obj("Gateway", "web", "gw", "selector: {istio: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]"),
			ap("web", "deny", "selector: {matchLabels: {app: x}}")},
			0, "", nil, ""},
		{"MC6004 near miss: root-namespace policy matches a workload elsewhere", "MC6004", append(web,
			ap("istio-system", "mesh", "selector: {matchLabels: {app: api}}")),
			0, "", nil, ""},

		{"MC6005 Sidecar with empty labels", "MC6005", append(web,
			obj("Sidecar", "web", "all", "workloadSelector: {labels: {}}, egress: [{hosts: ['./*']}]")),
			1, "Sidecar web/all", []string{"has no labels", "competes with the namespace's other selector Sidecars"}, ""},
		{"MC6005 PeerAuthentication with an empty selector", "MC6005", append(web,
			secObj("security.istio.io/v1", "PeerAuthentication", "web", "strict", "selector: {}, mtls: {mode: STRICT}")),
			1, "PeerAuthentication web/strict", []string{"every workload of namespace web"}, ""},
		{"MC6005 near miss: no selector, one with labels", "MC6005", append(web,
			obj("Sidecar", "web", "default", "egress: [{hosts: ['./*']}]"),
			secObj("security.istio.io/v1", "PeerAuthentication", "web", "strict", "selector: {matchLabels: {app: api}}, mtls: {mode: STRICT}")),
			0, "", nil, ""},
	})
}
