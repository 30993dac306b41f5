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
			d, ok := firstOf(t, tt.code, tt.want, tt.docs)
			if !ok {
				return
			}
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
			1, "AuthorizationPolicy web/deny", []string{"the selector {app=api, version=v2} of AuthorizationPolicy web/deny"}, ""},
		{"MC6004 RequestAuthentication selector (raw kind)", "MC6004", append(web,
			secObj("security.istio.io/v1", "RequestAuthentication", "web", "jwt", "selector: {matchLabels: {app: nope}}")),
			1, "RequestAuthentication web/jwt", []string{"app=nope"}, ""},
		{"MC6004 Telemetry selector", "MC6004", append(web,
			secObj("telemetry.istio.io/v1", "Telemetry", "web", "logs", "selector: {matchLabels: {app: bogus}}, accessLogging: [{providers: [{name: envoy}]}]")),
			1, "Telemetry web/logs", []string{"app=bogus", "matches no Pod or workload in namespace web"}, ""},
		{"MC6004 Telemetry selecting another namespace's workloads", "MC6004", append(web,
			secObj("telemetry.istio.io/v1", "Telemetry", "other", "logs", "selector: {matchLabels: {app: api}}, accessLogging: [{providers: [{name: envoy}]}]")),
			1, "Telemetry other/logs", []string{"matches no workload of namespace other", "Deployment web/api-v1"}, ""},
		{"MC6004 EnvoyFilter workloadSelector", "MC6004", append(web,
			secObj("networking.istio.io/v1alpha3", "EnvoyFilter", "web", "lua", "workloadSelector: {labels: {app: apy}}, configPatches: []")),
			1, "EnvoyFilter web/lua", []string{"app=apy"}, ""},
		{"MC6004 near miss: a Telemetry with a targetRef", "MC6004", append(web,
			secObj("telemetry.istio.io/v1", "Telemetry", "web", "logs", "targetRefs: [{kind: Service, group: '', name: api}], accessLogging: [{providers: [{name: envoy}]}]")),
			0, "", nil, ""},
		{"MC6004 Gateway selector matches no workload anywhere", "MC6004", append(web,
			deployment("istio-system", "ingressgateway", "{istio: ingressgateway}"),
			obj("Gateway", "web", "gw", "selector: {istio: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]")),
			1, "Gateway web/gw", []string{"istio=ingress", "any namespace of the input, where it has gateway workloads"}, ""},
		{"MC6004 near miss: application workloads only, the gateway installed apart", "MC6004", append(web,
			obj("Gateway", "web", "gw", "selector: {istio: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]")),
			0, "", nil, ""},
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
		{"MC6004 near miss: the selector matches a WorkloadEntry (a VM)", "MC6004", append(web,
			obj("WorkloadEntry", "web", "vm-1", "address: 10.0.0.7, labels: {app: legacy}"),
			ap("web", "vm-only", "selector: {matchLabels: {app: legacy}}")),
			0, "", nil, ""},
		{"MC6004 root-namespace DestinationRule selects only there", "MC6004", append(web,
			ns("istio-system"), deployment("istio-system", "istiod", "{app: istiod}"),
			obj("DestinationRule", "istio-system", "api", "host: api.web.svc.cluster.local, workloadSelector: {matchLabels: {app: api}}")),
			1, "DestinationRule istio-system/api", []string{"matches no workload of namespace istio-system, the only namespace it applies to, but matches Deployment web/api-v1 elsewhere", "move it into their namespace"}, ""},
		// istiod applies a root-namespace Sidecar with a selector to the
		// root namespace's workloads only, whether or not the input has any.
		{"MC6004 root-namespace Sidecar selector matching workloads elsewhere", "MC6004", append(web,
			obj("Sidecar", "istio-system", "api", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['./*']}]")),
			1, "Sidecar istio-system/api", []string{"matches no workload of namespace istio-system", "Deployment web/api-v1", "a Sidecar in the root namespace applies to other namespaces only without a selector"}, ""},
		{"MC6004 a namespace's Sidecar selecting another namespace's workloads", "MC6004", append(web,
			ns("other"), deployment("other", "api-v2", "{app: api}"), deployment("other", "api-v3", "{app: api}"), deployment("other", "api-v4", "{app: api}"),
			obj("Sidecar", "shop", "api", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['./*']}]")),
			1, "Sidecar shop/api", []string{"matches Deployment other/api-v2, Deployment other/api-v3, Deployment other/api-v4, 1 more elsewhere"}, ""},
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

func gateway(ns, name, selector, servers string, meta ...string) string {
	return obj("Gateway", ns, name, "selector: "+selector+", servers: ["+servers+"]", meta...)
}

func httpsServer(hosts, cred string) string {
	return "{port: {number: 443, name: https, protocol: HTTPS}, hosts: [" + hosts + "], tls: {mode: SIMPLE, credentialName: " + cred + "}}"
}

// boundHTTPS is an HTTPS server on port 443 bound to addr.
func boundHTTPS(addr, hosts string) string {
	return "{port: {number: 443, name: https, protocol: HTTPS}, bind: " + addr + ", hosts: [" + hosts + "], tls: {mode: SIMPLE, credentialName: c}}"
}

func TestGatewayServerAnalyzers(t *testing.T) {
	ingress := []string{ns("shop"), deployment("istio-system", "ingress", "{istio: ingressgateway}"), deployment("istio-system", "internal", "{istio: internal}")}
	http := func(hosts string) string {
		return "{port: {number: 80, name: http, protocol: HTTP}, hosts: [" + hosts + "]}"
	}
	runGatewayCases(t, []gatewayCase{
		{"MC7003 TLS host served twice: the newer server is dropped", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", httpsServer("shop.example.com", "shop-cert"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", httpsServer("shop.example.com, extra.example.com", "other"), at(2))),
			1, "Gateway shop/b", []string{"shop/b server 0 (port 443) serves host shop.example.com with TLS, as older Gateway shop/a", "drops this server whole", "gateway workload istio-system/ingress"}, "istio-system/ingress"},
		{"MC7003 plain host served twice, written differently", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", http("api.example.com"), at(1)),
			gateway("web", "b", "{app: gw}", http("'*/api.example.com'"), at(2)),
			deployment("istio-system", "both", "{istio: ingressgateway, app: gw}")),
			1, "Gateway web/b", []string{"serves host api.example.com, as older Gateway shop/a", "merges the servers"}, "istio-system/both"},
		{"MC7003 without workloads: equal selectors", "MC7003", []string{ns("shop"),
			gateway("shop", "a", "{istio: ingressgateway}", httpsServer("shop.example.com", "c"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", httpsServer("shop.example.com", "c"), at(2))},
			1, "Gateway shop/b", []string{"gateway workloads selected by istio=ingressgateway"}, ""},
		{"MC7003 TCP then HTTP on one port: the HTTP server is dropped", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", "{port: {number: 80, name: tcp, protocol: TCP}, hosts: [db.example.com]}", at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", http("api.example.com"), at(2))),
			1, "Gateway shop/b", []string{"shop/b server 0 (port 80) (HTTP) listens on the port of shop/a server 0 (port 80) (TCP)", "drops this server whole", "gateway workload istio-system/ingress"}, "istio-system/ingress"},
		{"MC7003 two TCP servers of one Gateway on one port", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", "{port: {number: 5432, name: pg, protocol: TCP}, hosts: [a.example.com]}, {port: {number: 5432, name: pg2, protocol: TCP}, hosts: [b.example.com]}")),
			1, "Gateway shop/a", []string{"shop/a server 1 (port 5432) (TCP) listens on the port of shop/a server 0 (port 5432) (TCP)"}, "istio-system/ingress"},
		{"MC7003 near miss: HTTP servers on one port merge, TCP on another bind", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", http("a.example.com")+", {port: {number: 80, name: tcp, protocol: TCP}, hosts: [c.example.com], bind: 10.0.0.1}", at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", http("b.example.com"), at(2))),
			0, "", nil, ""},
		{"MC7003 TLS host served twice on one bind", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", boundHTTPS("10.0.0.1", "shop.example.com"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", boundHTTPS("10.0.0.1", "shop.example.com"), at(2))),
			1, "Gateway shop/b", []string{"shop/b server 0 (port 443 on 10.0.0.1) serves host shop.example.com with TLS, as older Gateway shop/a"}, "istio-system/ingress"},
		{"MC7003 near miss: TLS host on two binds", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", boundHTTPS("10.0.0.1", "shop.example.com"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", boundHTTPS("10.0.0.2", "shop.example.com"), at(2))),
			0, "", nil, ""},
		// istiod remembers, per TLS host, only the bind that named it last:
		// c's bind named it before b's empty one, and c is kept.
		{"MC7003 near miss: a TLS host back on an earlier bind", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", boundHTTPS("10.0.0.1", "shop.example.com"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", httpsServer("shop.example.com", "c"), at(2)),
			gateway("shop", "c", "{istio: ingressgateway}", boundHTTPS("10.0.0.1", "shop.example.com"), at(3))),
			0, "", nil, ""},
		{"MC7003 TCP then HTTP on one bind", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", "{port: {number: 80, name: tcp, protocol: TCP}, hosts: [db.example.com], bind: 10.0.0.1}", at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", "{port: {number: 80, name: http, protocol: HTTP}, hosts: [api.example.com], bind: 10.0.0.1}", at(2))),
			1, "Gateway shop/b", []string{"shop/b server 0 (port 80 on 10.0.0.1) (HTTP) listens on the port of shop/a server 0 (port 80 on 10.0.0.1) (TCP)"}, "istio-system/ingress"},
		// Servers meet the latest plain server to start a bind on the port:
		// b's, so c's HTTP server on a's bind is another listener's.
		{"MC7003 near miss: HTTP on a TCP server's bind after another bind", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", "{port: {number: 80, name: tcp, protocol: TCP}, hosts: [db.example.com], bind: 10.0.0.1}", at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", "{port: {number: 80, name: tcp, protocol: TCP}, hosts: [db.example.com], bind: 10.0.0.2}", at(2)),
			gateway("shop", "c", "{istio: ingressgateway}", "{port: {number: 80, name: http, protocol: HTTP}, hosts: [api.example.com], bind: 10.0.0.1}", at(3))),
			0, "", nil, ""},
		{"MC7003 near miss: same host on different gateway workloads", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", httpsServer("shop.example.com", "c"), at(1)),
			gateway("shop", "b", "{istio: internal}", httpsServer("shop.example.com", "c"), at(2))),
			0, "", nil, ""},
		{"MC7003 near miss: different hosts", "MC7003", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", http("a.example.com"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", http("b.example.com"), at(2))),
			0, "", nil, ""},

		{"MC7005 one credential for two Gateways' hosts", "MC7005", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", httpsServer("a.example.com", "wildcard-cert"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", httpsServer("b.example.com", "wildcard-cert"), at(2))),
			1, "Gateway shop/b", []string{"uses the credentialName wildcard-cert that shop/a server 0 (port 443) also uses", "b.example.com, there a.example.com", "404"}, "istio-system/ingress"},
		{"MC7005 the broader selector is the subject", "MC7005", append(ingress,
			deployment("istio-system", "both", "{istio: ingressgateway, type: internal}"),
			gateway("shop", "a", "{istio: ingressgateway}", httpsServer("a.example.com", "wildcard-cert"), at(1)),
			gateway("shop", "b", "{istio: ingressgateway, type: internal}", httpsServer("b.example.com", "wildcard-cert"), at(2))),
			1, "Gateway shop/a", []string{"uses the credentialName wildcard-cert that shop/b server 0 (port 443) also uses", "a.example.com, there b.example.com"}, "istio-system/both"},
		{"MC7005 near miss: own certificates, or one Gateway", "MC7005", append(ingress,
			gateway("shop", "a", "{istio: ingressgateway}", httpsServer("a.example.com", "a-cert")+", {port: {number: 443, name: https-c, protocol: HTTPS}, hosts: [c.example.com], tls: {mode: SIMPLE, credentialName: a-cert}}", at(1)),
			gateway("shop", "b", "{istio: ingressgateway}", httpsServer("b.example.com", "b-cert"), at(2))),
			0, "", nil, ""},
	})
}

func TestEgressHostMatchesNothing(t *testing.T) {
	web := []string{ns("web"), ns("client"), service("web", "api"), service("web", "db", "{port: 5432, name: tcp-db}"), deployment("client", "caller", "{app: caller}")}
	sidecar := func(egress string) string { return obj("Sidecar", "client", "default", "egress: ["+egress+"]") }
	runGatewayCases(t, []gatewayCase{
		{"MC6003 misspelt host", "MC6003", append(web, sidecar("{hosts: ['web/apii.web.svc.cluster.local', './*']}")),
			1, "Sidecar client/default", []string{`egress host "web/apii.web.svc.cluster.local" of Sidecar client/default imports no service`, "no Service or ServiceEntry in namespace web"}, ""},
		{"MC6003 wildcard in a namespace of the input", "MC6003", append(web, sidecar("{hosts: ['web/*.example.com']}")),
			1, "Sidecar client/default", []string{"namespace web has a host matching *.example.com"}, ""},
		{"MC6003 hidden by exportTo", "MC6003", append(web,
			"apiVersion: v1\nkind: Service\nmetadata: {name: private, namespace: web, annotations: {networking.istio.io/exportTo: '.'}}\nspec: {ports: [{port: 80, name: http}]}\n",
			sidecar("{hosts: ['web/private.web.svc.cluster.local']}")),
			1, "Sidecar client/default", []string{"not exported to namespace client"}, ""},
		{"MC6003 port the service lacks", "MC6003", append(web, sidecar("{port: {number: 80, protocol: HTTP, name: http}, hosts: ['web/db.web.svc.cluster.local']}")),
			1, "Sidecar client/default", []string{"lack the egress listener's port 80"}, ""},
		{"MC6003 near miss: namespace with no services in the input, */*, exclusions", "MC6003", append(web,
			sidecar("{hosts: ['shared/*', 'other/x.other.svc.cluster.local', '*/*', '~/*', 'web/api.web.svc.cluster.local']}")),
			0, "", nil, ""},
		{"MC6003 near miss: no services in the input at all", "MC6003", []string{ns("client"), sidecar("{hosts: ['*/api.example.com', './*']}")},
			0, "", nil, ""},
	})
}

func secret(ns, name string, keys ...string) string {
	var data []string
	for _, k := range keys {
		data = append(data, k+": eA==")
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: kubernetes.io/tls\ndata: {%s}\n", name, ns, strings.Join(data, ", "))
}

func TestGatewayWorkloadAnalyzers(t *testing.T) {
	ingress := []string{ns("shop"), deployment("istio-system", "ingress", "{istio: ingressgateway}")}
	ingressSvc := "apiVersion: v1\nkind: Service\nmetadata: {name: ingress, namespace: istio-system}\nspec: {selector: {istio: ingressgateway}, ports: [{port: 80, targetPort: 8080, name: http2}, {port: 443, targetPort: 8443, name: https}]}\n"
	port := func(n int) string {
		return fmt.Sprintf("{port: {number: %d, name: http, protocol: HTTP}, hosts: ['*']}", n)
	}
	mtls := func(cred string) string {
		return "{port: {number: 443, name: https, protocol: HTTPS}, hosts: ['*'], tls: {mode: MUTUAL, credentialName: " + cred + "}}"
	}
	runGatewayCases(t, []gatewayCase{
		{"MC7004 server port the Service lacks", "MC7004", append(ingress, ingressSvc,
			gateway("shop", "gw", "{istio: ingressgateway}", port(80)+", "+port(9000))),
			1, "Gateway shop/gw", []string{"server 1 of Gateway shop/gw listens on port 9000", "istio-system/ingress"}, "istio-system/ingress"},
		{"MC7004 near miss: service port and target port both count", "MC7004", append(ingress, ingressSvc,
			gateway("shop", "gw", "{istio: ingressgateway}", port(80)+", "+port(8443))),
			0, "", nil, ""},
		{"MC7004 near miss: a Gateway without selector applies to gateway workloads, not application Pods", "MC7004", []string{
			ns("web"), service("web", "api"), deployment("web", "api", "{app: api}"), gateway("web", "any", "{}", port(9443))},
			0, "", nil, ""},
		{"MC7004 near miss: no Service selects the gateway workload", "MC7004", append(ingress,
			gateway("shop", "gw", "{istio: ingressgateway}", port(9000))),
			0, "", nil, ""},

		{"MC7006 credential absent from the gateway workload's namespace", "MC7006", append(ingress,
			secret("istio-system", "other-cert", "tls.crt", "tls.key"), secret("shop", "shop-cert", "tls.crt", "tls.key"),
			gateway("shop", "gw", "{istio: ingressgateway}", httpsServer("shop.example.com", "shop-cert"))),
			1, "Gateway shop/gw", []string{"uses credential shop-cert, but no Secret shop-cert is in namespace istio-system"}, ""},
		{"MC7006 Secret without a key", "MC7006", append(ingress,
			secret("istio-system", "shop-cert", "tls.crt"),
			gateway("shop", "gw", "{istio: ingressgateway}", httpsServer("shop.example.com", "shop-cert"))),
			1, "Gateway shop/gw", []string{"Secret istio-system/shop-cert lacks a certificate and key", "it has tls.crt"}, ""},
		{"MC7006 mutual TLS without a CA", "MC7006", append(ingress,
			secret("istio-system", "shop-cert", "tls.crt", "tls.key"),
			gateway("shop", "gw", "{istio: ingressgateway}", mtls("shop-cert"))),
			1, "Gateway shop/gw", []string{"lacks a CA certificate for mutual TLS", "shop-cert-cacert"}, ""},
		{"MC7006 near miss: CA in a -cacert Secret, a Certificate makes the other", "MC7006", append(ingress,
			secret("istio-system", "shop-cert", "cert", "key"), secret("istio-system", "shop-cert-cacert", "cacert"),
			"apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: api, namespace: istio-system}\nspec: {secretName: api-cert, dnsNames: [api.example.com]}\n",
			gateway("shop", "gw", "{istio: ingressgateway}", mtls("shop-cert")+", "+httpsServer("api.example.com", "api-cert"))),
			0, "", nil, ""},
		{"MC7006 near miss: no Secrets in the gateway's namespace", "MC7006", append(ingress,
			secret("shop", "shop-cert", "tls.crt", "tls.key"),
			gateway("shop", "gw", "{istio: ingressgateway}", httpsServer("shop.example.com", "missing"))),
			0, "", nil, ""},
	})
}

func TestListenerAnalyzers(t *testing.T) {
	web := []string{ns("web"), ns("client"), service("web", "api"), deployment("web", "api-v1", "{app: api}"), deployment("client", "caller", "{app: caller}")}
	se := func(name, host, port, extra string, meta ...string) string {
		return obj("ServiceEntry", "web", name, "hosts: ["+host+"], ports: ["+port+"], resolution: DNS, location: MESH_EXTERNAL"+extra, meta...)
	}
	tcp := "{number: 5432, name: tcp, protocol: TCP}"
	captureDNS := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    defaultConfig: {proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"true\"}}\n"
	runGatewayCases(t, []gatewayCase{
		{"MC7002 TCP ServiceEntry without addresses", "MC7002", append(web, se("db", "db.example.com", tcp, "")),
			1, "ServiceEntry web/db", []string{"db.example.com (port 5432, TCP) has no address of its own", "0.0.0.0_5432 matches every connection", "to the service's endpoints"}, "client/caller,web/api-v1"},
		{"MC7002 without workloads: the namespace's stand-in", "MC7002", []string{ns("web"), se("db", "db.example.com", tcp, "")},
			1, "ServiceEntry web/db", []string{"0.0.0.0_5432"}, "web/*"},
		{"MC7002 near miss: an address, or TLS", "MC7002", append(web,
			se("db", "db.example.com", tcp, ", addresses: [240.0.0.1]"),
			se("api", "api.example.com", "{number: 443, name: tls, protocol: TLS}", "")),
			0, "", nil, ""},
		{"MC7002 near miss: every proxy captures DNS, so uses the address istiod allocates", "MC7002", append(web, captureDNS,
			se("db", "db.example.com", tcp, "")),
			0, "", nil, ""},
		{"MC7002 when capturing DNS: no address is allocated with resolution NONE or the opt-out label", "MC7002", append(web, captureDNS,
			strings.Replace(se("none", "none.example.com", tcp, ""), "resolution: DNS", "resolution: NONE", 1),
			se("optout", "optout.example.com", "{number: 5433, name: tcp, protocol: TCP}", "", "labels: {networking.istio.io/enable-autoallocate-ip: 'false'}")),
			2, "ServiceEntry web/none", []string{"none.example.com (port 5432, TCP) has no address of its own"}, "client/caller,web/api-v1"},

		{"MC7001 two TCP ServiceEntries without addresses on one port", "MC7001", append(web,
			se("db-a", "a.example.com", tcp, "", at(1)), se("db-b", "b.example.com", tcp, "", at(2))),
			1, "ServiceEntry web/db-b", []string{"port 5432 of b.example.com (TCP) is dropped from outbound listener 0.0.0.0_5432, which a.example.com port 5432 (TCP) already holds", "connections meant for b.example.com reach a.example.com"}, "client/caller,web/api-v1"},
		{"MC7001 without workloads: the namespace's stand-in", "MC7001", []string{ns("web"),
			se("db-a", "a.example.com", tcp, "", at(1)), se("db-b", "b.example.com", tcp, "", at(2))},
			1, "ServiceEntry web/db-b", []string{"dropped from outbound listener 0.0.0.0_5432"}, "web/*"},
		{"MC7001 one VIP and port for two TCP services", "MC7001", append(web,
			se("db-a", "a.example.com", tcp, ", addresses: [240.0.0.9]", at(1)), se("db-b", "b.example.com", tcp, ", addresses: [240.0.0.9]", at(2))),
			1, "ServiceEntry web/db-b", []string{"outbound listener 240.0.0.9_5432"}, "client/caller,web/api-v1"},
		{"MC7001 near miss: TLS services are told apart by SNI, addresses by VIP", "MC7001", append(web,
			se("a", "a.example.com", "{number: 443, name: tls, protocol: TLS}", "", at(1)), se("b", "b.example.com", "{number: 443, name: tls, protocol: TLS}", "", at(2)),
			se("db-a", "c.example.com", tcp, ", addresses: [240.0.0.1]", at(1)), se("db-b", "d.example.com", tcp, ", addresses: [240.0.0.2]", at(2))),
			0, "", nil, ""},
	})
}
