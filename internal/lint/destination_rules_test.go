package lint

import (
	"fmt"
	"strings"
	"testing"
)

func peerAuth(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: %s, namespace: %s}\nspec: {%s}\n", name, ns, spec)
}

const tlsEntry = "hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS"

// hnc puts docs in a tree where namespace team-a is a child of acme and
// HNC propagates DestinationRules.
func hnc(docs ...string) []string {
	return append([]string{ns("acme"), service("web", "api"),
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: team-a, namespace: acme}\n",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{group: networking.istio.io, resource: destinationrules, mode: Propagate}]}\n"},
		docs...)
}

// TestDestinationRuleAnalyzers has, for each MC4004-MC4009 code, cases
// where it fires and near misses where it must not.
func TestDestinationRuleAnalyzers(t *testing.T) {
	// web/api is served by web/api-v1; client/caller calls it.
	web := []string{ns("web"), ns("client"), service("web", "api"), deployment("web", "api-v1", "{app: api, version: v1}"), deployment("client", "caller", "{app: caller}")}
	// web/frontend also calls api, from the service's own namespace.
	front := append(web[:len(web):len(web)], deployment("web", "frontend", "{app: frontend}"))
	front = front[:len(front):len(front)] // each case appends to a copy
	// web/bare is a service whose workloads the input does not carry.
	bare := []string{ns("web"), ns("client"), service("web", "bare"), deployment("client", "caller", "{app: caller}")}
	tests := []struct {
		name    string
		code    string
		docs    []string
		want    int      // diagnostics of code
		object  string   // the first one's subject, namespace/name
		message []string // fragments of its message
		proxies string   // its proxies, joined with ","
	}{
		{"MC4004 misspelt short host", "MC4004", append(web,
			obj("DestinationRule", "web", "api", "host: apii")),
			1, "web/api", []string{"the host apii.web.svc.cluster.local of web/api matches no service", "no Service or ServiceEntry has that hostname"}, ""},
		{"MC4004 external host next to a ServiceEntry", "MC4004", append(web,
			obj("ServiceEntry", "web", "ext", tlsEntry),
			obj("DestinationRule", "web", "ext", "host: api.exmple.com")),
			1, "web/ext", []string{"the host api.exmple.com of web/ext matches no service"}, ""},
		{"MC4004 wildcard host covering nothing", "MC4004", append(web,
			obj("ServiceEntry", "web", "ext", tlsEntry),
			obj("DestinationRule", "web", "ext", "host: '*.example.org'")),
			1, "web/ext", []string{"no Service or ServiceEntry hostname falls under it"}, ""},
		{"MC4004 dotted host", "MC4004", append(web,
			obj("ServiceEntry", "web", "ext", tlsEntry),
			obj("DestinationRule", "client", "api", "host: api.nowhere")),
			1, "client/api", []string{"a name with one dot is not expanded"}, ""},
		{"MC4004 host in a namespace that is not declared", "MC4004", append(web,
			obj("DestinationRule", "web", "other", "host: api.other.svc.cluster.local")),
			1, "web/other", []string{"the host api.other.svc.cluster.local of web/other matches no service"}, ""},
		{"MC4004 near miss: MC3004 and MC3005 name the fix", "MC4004", append(web,
			obj("DestinationRule", "client", "api-dotted", "host: api.web"),
			obj("DestinationRule", "client", "api-short", "host: api")),
			0, "", nil, ""},
		{"MC4004 near miss: a namespace HNC creates, without objects in the input", "MC4004", hnc(
			obj("DestinationRule", "acme", "team-api", "host: api.team-a.svc.cluster.local")),
			0, "", nil, ""},
		{"MC4004 near miss: the namespace is not in the input", "MC4004", []string{service("web", "api"),
			obj("DestinationRule", "web", "other", "host: api.other.svc.cluster.local"),
			obj("DestinationRule", "web", "others", "host: '*.other.svc.cluster.local'")},
			0, "", nil, ""},
		{"MC4004 wildcard host over a namespace without services", "MC4004", append(web,
			obj("DestinationRule", "web", "client-all", "host: '*.client.svc.cluster.local'")),
			1, "web/client-all", []string{"no Service or ServiceEntry hostname falls under it"}, ""},
		{"MC4004 near miss: external host, no ServiceEntry in the input", "MC4004", append(web,
			obj("DestinationRule", "web", "ext", "host: api.example.com")),
			0, "", nil, ""},
		{"MC4004 near miss: wildcard rule over a ServiceEntry host, rule under a wildcard entry", "MC4004", append(web,
			obj("ServiceEntry", "web", "ext", tlsEntry),
			obj("ServiceEntry", "web", "wild", "hosts: ['*.example.net'], ports: [{number: 443, name: tls, protocol: TLS}], resolution: NONE"),
			obj("DestinationRule", "web", "all-example", "host: '*.example.com'"),
			obj("DestinationRule", "web", "one-net", "host: a.example.net"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local")),
			0, "", nil, ""},

		{"MC4005 client-side rule exported everywhere", "MC4005", append(web,
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, exportTo: [web, '*']")),
			1, "client/api", []string{"client/api is exported to all other namespaces, but proxies there never consult it",
				"only in web (where the service is) and the root namespace istio-system", "only proxies in client use it"}, ""},
		{"MC4005 rule exported only elsewhere is dead", "MC4005", append(web,
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, exportTo: [web, other]")),
			1, "client/api", []string{"exported to namespaces other, web", "no proxy uses it at all"}, ""},
		{"MC4005 selector rule exported", "MC4005", append(web,
			obj("DestinationRule", "web", "api", "host: api, workloadSelector: {matchLabels: {app: api}}, exportTo: [client]")),
			1, "web/api", []string{"it has a workloadSelector, so only the workloads it selects in web use it"}, ""},
		{"MC4005 external host defined elsewhere", "MC4005", append(web,
			obj("ServiceEntry", "web", "ext", tlsEntry),
			obj("DestinationRule", "client", "ext", "host: api.example.com, exportTo: ['.', other]")),
			1, "client/ext", []string{"exported to namespace other", "only in web (where the service is)"}, ""},
		{"MC4005 near misses: next to the service, root namespace, private, external host at home", "MC4005", append(web,
			ns("istio-system"),
			obj("ServiceEntry", "client", "ext", tlsEntry),
			obj("DestinationRule", "web", "api", "host: api, exportTo: ['*']"),
			obj("DestinationRule", "istio-system", "api", "host: api.web.svc.cluster.local, exportTo: ['*']"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, exportTo: ['.']"),
			obj("DestinationRule", "client", "ext", "host: api.example.com, exportTo: ['*']"),
			obj("DestinationRule", "client", "unknown", "host: x.example.org, exportTo: ['*']")),
			0, "", nil, ""},

		{"MC4006 selector rule without the plain rule's subsets", "MC4006", append(front,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]", at(1)),
			obj("DestinationRule", "web", "api-frontend", "host: api, workloadSelector: {matchLabels: {app: frontend}}, trafficPolicy: {connectionPool: {tcp: {maxConnections: 10}}}", at(2))),
			1, "web/api-frontend", []string{`web/api-frontend replaces web/api for workload web/frontend, but lacks subsets "v1", "v2" that web/api defines`},
			"web/frontend"},
		{"MC4006 near miss: the selector rule has the subsets", "MC4006", append(front,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]", at(1)),
			obj("DestinationRule", "web", "api-frontend", "host: api, workloadSelector: {matchLabels: {app: frontend}}, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]", at(2))),
			0, "", nil, ""},
		{"MC4006 near miss: the selector matches no proxy", "MC4006", append(front,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}]", at(1)),
			obj("DestinationRule", "web", "api-batch", "host: api, workloadSelector: {matchLabels: {app: batch}}", at(2))),
			0, "", nil, ""},

		{"MC4007 subset label no workload has", "MC4007", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v3, labels: {version: v3}}]")),
			1, "web/api", []string{`subset "v3" of web/api selects no workload of api.web.svc.cluster.local`, "its selector {app: api}",
				"the labels {version: v3} (they have version: v1)"}, ""},
		{"MC4007 several subsets of one rule: one finding", "MC4007", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}, {name: canary, labels: {track: canary}}]")),
			1, "web/api", []string{`2 subsets of web/api select no workload of api.web.svc.cluster.local`, "its selector {app: api}",
				`the labels of "v2" {version: v2}, "canary" {track: canary} (they have no track label; version: v1)`, "these subsets fail with 503"}, ""},
		{"MC4007 Pods without IPs, a label value istiod never adds", "MC4007", []string{service("web", "api"),
			"apiVersion: v1\nkind: Pod\nmetadata: {name: api-0, namespace: web, labels: {app: api, version: v1}}\nspec: {containers: [{name: app, image: x}]}\n",
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: nowhere, labels: {topology.kubernetes.io/zone: ''}}]")},
			1, "web/api", []string{`subset "nowhere" of web/api`, `the labels {topology.kubernetes.io/zone: ""} (they have no topology.kubernetes.io/zone label)`}, ""},
		{"MC4007 a selector of two labels: a workload with one of them is not the service's", "MC4007", []string{ns("web"),
			"apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: web}\nspec: {selector: {app: api, tier: back}, ports: [{port: 80, name: http}]}\n",
			deployment("web", "api-v1", "{app: api, tier: back, version: v1}"), deployment("web", "api-v2", "{app: api, tier: front, version: v2}"),
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]")},
			1, "web/api", []string{`subset "v2" of web/api selects no workload of api.web.svc.cluster.local`, "the labels {version: v2} (they have version: v1)"}, ""},
		{"MC4007 near miss: labels istiod adds from the cluster", "MC4007", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: west, labels: {topology.kubernetes.io/region: us-west1}}, {name: v1-west, labels: {version: v1, topology.kubernetes.io/zone: a}}]")),
			0, "", nil, ""},
		{"MC4007 near miss: every subset selects a workload", "MC4007", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: all}]")),
			0, "", nil, ""},
		{"MC4007 near miss: no workloads of the service in the input", "MC4007", append(bare,
			obj("DestinationRule", "web", "bare", "host: bare, subsets: [{name: v3, labels: {version: v3}}]")),
			0, "", nil, ""},

		{"MC4008 SIMPLE without caCertificates to a Kubernetes service", "MC4008", append(web,
			obj("DestinationRule", "web", "tls", "host: api, trafficPolicy: {tls: {mode: SIMPLE}}")),
			1, "web/tls", []string{"web/tls originates TLS (SIMPLE) to api, a server inside the mesh, without caCertificates", "system CA bundle"}, ""},
		{"MC4008 port level and subset of a MESH_INTERNAL entry", "MC4008", append(web,
			obj("ServiceEntry", "web", "db", "hosts: [db.corp.internal], location: MESH_INTERNAL, resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}]"),
			obj("DestinationRule", "web", "ext", "host: db.corp.internal, trafficPolicy: {portLevelSettings: [{port: {number: 443}, tls: {mode: MUTUAL, clientCertificate: /c, privateKey: /k}}]}, subsets: [{name: s, trafficPolicy: {tls: {mode: SIMPLE}}}]")),
			2, "web/ext", []string{"(MUTUAL) to db.corp.internal on port 443, a server inside the mesh, without caCertificates"}, ""},
		{"MC4008 near misses: caCertificates, credentialName, insecureSkipVerify, ISTIO_MUTUAL", "MC4008", append(web,
			obj("DestinationRule", "web", "a", "host: api, trafficPolicy: {tls: {mode: SIMPLE, caCertificates: /etc/ca.pem}}"),
			obj("DestinationRule", "web", "b", "host: api, trafficPolicy: {portLevelSettings: [{port: {number: 80}, tls: {mode: SIMPLE, credentialName: b-cred}}]}"),
			obj("DestinationRule", "web", "c", "host: api, trafficPolicy: {tls: {mode: SIMPLE, insecureSkipVerify: true}}"),
			obj("DestinationRule", "web", "d", "host: api, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}")),
			0, "", nil, ""},
		// The system CAs are the right check for a server on the
		// internet, as istiod verifies against them by default.
		{"MC4008 near misses: servers outside the mesh", "MC4008", append(web,
			obj("ServiceEntry", "web", "googleapis", "hosts: [www.googleapis.com], location: MESH_EXTERNAL, resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}]"),
			obj("DestinationRule", "web", "google", "host: www.googleapis.com, trafficPolicy: {tls: {mode: SIMPLE}}"),
			obj("DestinationRule", "web", "ext", "host: api.example.com, trafficPolicy: {tls: {mode: SIMPLE}}")),
			0, "", nil, ""},

		{"MC4009 namespace STRICT, client rule DISABLE", "MC4009", append(web,
			peerAuth("web", "strict", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "api-plain", "host: api.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")),
			1, "client/api-plain", []string{"client/api-plain sets tls.mode DISABLE for api.web.svc.cluster.local (port 80)", "PeerAuthentication web/strict"},
			"client/caller"},
		{"MC4009 workload port-level STRICT, port-level DISABLE", "MC4009", append(web,
			peerAuth("web", "api-port", "selector: {matchLabels: {app: api}}, mtls: {mode: PERMISSIVE}, portLevelMtls: {80: {mode: STRICT}}"),
			obj("DestinationRule", "web", "api", "host: api, trafficPolicy: {portLevelSettings: [{port: {number: 80}, tls: {mode: DISABLE}}]}")),
			1, "web/api", []string{"web/api sets tls.mode DISABLE", "PeerAuthentication web/api-port"},
			"client/caller,web/api-v1"},
		{"MC4009 mesh-wide STRICT with the workloads in the input", "MC4009", append(web,
			ns("istio-system"),
			peerAuth("istio-system", "default", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "web", "api", "host: api, trafficPolicy: {tls: {mode: DISABLE}}")),
			1, "web/api", []string{"PeerAuthentication istio-system/default"}, "client/caller,web/api-v1"},
		{"MC4009 server Pod without IP, named target port", "MC4009", []string{ns("web"), ns("client"), deployment("client", "caller", "{app: caller}"),
			service("web", "api", "{port: 80, name: http, targetPort: web}"),
			"apiVersion: v1\nkind: Pod\nmetadata: {name: api-0, namespace: web, labels: {app: api}}\nspec: {containers: [{name: app, image: x, ports: [{name: web, containerPort: 8080}]}]}\n",
			peerAuth("web", "api", "selector: {matchLabels: {app: api}}, portLevelMtls: {8080: {mode: STRICT}}"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")},
			1, "client/api", []string{"(port 80)", "PeerAuthentication web/api"}, "client/caller"},
		{"MC4009 near miss: PERMISSIVE", "MC4009", append(web,
			peerAuth("web", "permissive", "mtls: {mode: PERMISSIVE}"),
			obj("DestinationRule", "client", "api-plain", "host: api.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")),
			0, "", nil, ""},
		{"MC4009 near miss: ISTIO_MUTUAL", "MC4009", append(web,
			peerAuth("web", "strict", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}")),
			0, "", nil, ""},
		{"MC4009 near miss: DISABLE for another port", "MC4009", append(web,
			peerAuth("web", "strict", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, trafficPolicy: {portLevelSettings: [{port: {number: 9090}, tls: {mode: DISABLE}}]}")),
			0, "", nil, ""},
		{"MC4009 near miss: STRICT port-level on another port", "MC4009", append(web,
			peerAuth("web", "api-port", "selector: {matchLabels: {app: api}}, mtls: {mode: PERMISSIVE}, portLevelMtls: {9090: {mode: STRICT}}"),
			obj("DestinationRule", "web", "api", "host: api, trafficPolicy: {tls: {mode: DISABLE}}")),
			0, "", nil, ""},
		{"MC4009 near miss: the servers have no sidecar", "MC4009", append(web[1:],
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n",
			peerAuth("web", "strict", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")),
			0, "", nil, ""},
		{"MC4009 near miss: mesh-wide STRICT, no workloads of the service in the input", "MC4009", append(bare,
			ns("istio-system"),
			peerAuth("istio-system", "default", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "bare", "host: bare.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")),
			0, "", nil, ""},
		{"MC4009 namespace STRICT, no workloads of the service in the input", "MC4009", append(bare,
			peerAuth("web", "strict", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "bare", "host: bare.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")),
			1, "client/bare", []string{"PeerAuthentication web/strict"}, "client/caller"},

		// HNC copies: per-object findings are the source's.
		{"MC4005 reports an HNC source once", "MC4005", hnc(
			obj("DestinationRule", "acme", "api", "host: api.web.svc.cluster.local, exportTo: ['*'], trafficPolicy: {tls: {mode: SIMPLE}}")),
			1, "acme/api", []string{"acme/api is exported to all other namespaces"}, ""},
		{"MC4008 reports an HNC source once", "MC4008", hnc(
			obj("DestinationRule", "acme", "api", "host: api.web.svc.cluster.local, exportTo: ['*'], trafficPolicy: {tls: {mode: SIMPLE}}")),
			1, "acme/api", []string{"acme/api originates TLS (SIMPLE)"}, ""},
		{"MC4004 judges an HNC copy where its short host expands elsewhere", "MC4004", hnc(
			deployment("team-a", "worker", "{app: worker}"),
			obj("DestinationRule", "acme", "cache", "host: cache")),
			1, "team-a/cache", []string{"the host cache.team-a.svc.cluster.local of team-a/cache matches no service"}, ""},
		{"MC4004 an HNC copy of a full host: the source's finding only", "MC4004", hnc(
			deployment("acme", "worker", "{app: worker}"),
			obj("DestinationRule", "acme", "cache", "host: cache.acme.svc.cluster.local")),
			1, "acme/cache", []string{"the host cache.acme.svc.cluster.local of acme/cache matches no service"}, ""},

		// Configuration repositories without workloads: stand-in proxies.
		{"MC4009 without any workload: stand-in callers", "MC4009", []string{service("web", "api"),
			peerAuth("web", "strict", "mtls: {mode: STRICT}"),
			obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}")},
			1, "client/api", []string{"client/api sets tls.mode DISABLE for api.web.svc.cluster.local (port 80)"}, "client/*"},
		{"MC4006 near miss without any workload: stand-ins match no selector", "MC4006", []string{service("web", "api"),
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}]", at(1)),
			obj("DestinationRule", "web", "api-all", "host: api, workloadSelector: {matchLabels: {app: frontend}}", at(2))},
			0, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := firstOf(t, tt.code, tt.want, tt.docs)
			if !ok {
				return
			}
			if o := d.Object.Namespace + "/" + d.Object.Name; o != tt.object {
				t.Errorf("subject %s, want %s", o, tt.object)
			}
			for _, m := range tt.message {
				if !strings.Contains(d.Message, m) {
					t.Errorf("message %q lacks %q", d.Message, m)
				}
			}
			if p := strings.Join(d.Proxies, ","); p != tt.proxies {
				t.Errorf("proxies %q, want %q", p, tt.proxies)
			}
			if d.Object.File != "in.yaml" || d.Object.Line == 0 {
				t.Errorf("diagnostic lacks its field's position: %+v", d.Object)
			}
		})
	}
}

// TestSubsetSelectsNoWorkloadCapped: a rule with a thousand subsets that
// select nothing is one finding, naming a few subsets and counting the
// rest, at the first one's labels.
func TestSubsetSelectsNoWorkloadCapped(t *testing.T) {
	var subsets []string
	for i := range 1000 {
		subsets = append(subsets, fmt.Sprintf("{name: s%d, labels: {version: s%d}}", i, i))
	}
	docs := []string{ns("web"), service("web", "api"), deployment("web", "api-v1", "{app: api, version: v1}"),
		obj("DestinationRule", "web", "api", "host: api, subsets: ["+strings.Join(subsets, ", ")+"]")}
	d, ok := firstOf(t, "MC4007", 1, docs)
	if !ok {
		return
	}
	for _, want := range []string{`1000 subsets of web/api select no workload`, `"s0" {version: s0}, "s1" {version: s1}`, `"s4" {version: s4} and 995 more (they have version: v1)`} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, d.Message)
		}
	}
	if len(d.Message) > 1000 || len(d.Related) != 1 {
		t.Errorf("%d bytes of message, %d related", len(d.Message), len(d.Related))
	}
	docs[len(docs)-1] = obj("DestinationRule", "web", "api", "host: api, subsets: ["+subsets[0]+"]")
	if one, ok := firstOf(t, "MC4007", 1, docs); ok && one.Object != d.Object {
		t.Errorf("at %+v, want %+v, the first subset's labels", d.Object, one.Object)
	}
}
