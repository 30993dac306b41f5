package gatewayapi

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
)

// TestStatus checks each condition istiod would set to False, as the
// diagnostic meshc reports for it, at the field's line.
func TestStatus(t *testing.T) {
	gw := gatewayHeader + `  - {name: web, port: 80, protocol: HTTP, hostname: "*.example.com"}
  - {name: db, port: 5432, protocol: TCP}
`
	svc := `apiVersion: v1
kind: Service
metadata: {name: app, namespace: edge}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: other}
spec: {ports: [{port: 80}]}`
	route := func(ns, spec string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: " + ns + "}\nspec:\n" + spec
	}
	tests := []struct {
		name string
		docs []string
		code string
		at   string // text on the line the finding is reported at
		want []string
	}{
		{"unknown class", []string{strings.Replace(gw, "gatewayClassName: istio", "gatewayClassName: contour", 1)},
			"MC7101", "gatewayClassName", []string{`class "contour"`, `("istio")`}},
		{"class of another controller", []string{strings.Replace(gw, "gatewayClassName: istio", "gatewayClassName: mine", 1),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: mine}\nspec: {controllerName: example.com/ctl}"},
			"MC7101", "gatewayClassName", []string{"controller example.com/ctl"}},
		{"listener conflict", []string{gatewayHeader + "  - {name: a, port: 80, protocol: HTTP}\n  - {name: b, port: 80, protocol: TCP}\n"},
			"MC7104", "name: b", []string{`listener "b"`, "ProtocolConflict", `earlier listener "a"`}},
		{"unsupported protocol", []string{gatewayHeader + "  - {name: a, port: 80, protocol: http}\n"},
			"MC7103", "protocol: http}", []string{"UnsupportedProtocol", `"HTTP" (uppercase)`}},
		{"https without tls", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS}\n"},
			"MC7103", "protocol: HTTPS}", []string{"NoTLS"}},
		{"route kinds the protocol cannot carry", []string{gatewayHeader + "  - {name: a, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: TCPRoute}]}}\n"},
			"MC7103", "kinds:", []string{"InvalidRouteKinds"}},
		{"missing certificate", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: nope}]}}\n", tlsSecret},
			"MC7105", "name: nope", []string{"edge/nope", "not found"}},
		{"certificate without keys", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}\n",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: cert, namespace: edge}\ndata: {ca.crt: YQ==}"},
			"MC7105", "name: cert}", []string{`found no keys "cert" and "key"`, "found: ca.crt"}},
		{"malformed certificate", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}\n",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: cert, namespace: edge}\ndata: {tls.crt: YQ==, tls.key: YQ==}"},
			"MC7105", "name: cert}", []string{"InvalidCertificateRef", "the certificate is malformed"}},
		{"certificate not in the input", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: elsewhere}]}}\n", tlsSecret},
			"MC7105", "name: elsewhere", []string{"edge/elsewhere not found", "holds Secrets of edge but not this one"}},
		{"certificate of another namespace", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert, namespace: other}]}}\n"},
			"MC7105", "namespace: other}", []string{"RefNotPermitted"}},
		{"certificate not a Secret", []string{gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert, kind: ConfigMap}]}}\n"},
			"MC7105", "kind: ConfigMap", []string{"only secret is allowed"}},
		{"address of an unusable type", []string{strings.Replace(gw, "  listeners:", "  addresses: [{type: NamedAddress, value: x}, {type: Hostname, value: ingress}]\n  listeners:", 1),
			"apiVersion: v1\nkind: Service\nmetadata: {name: ingress, namespace: edge}\nspec: {selector: {a: b}, ports: [{port: 80}]}"},
			"MC7102", "addresses:", []string{"UnsupportedAddress", "ignoring [x]"}},
		{"address naming no Service", []string{strings.Replace(gw, "  listeners:", "  addresses: [{type: Hostname, value: ingress}]\n  listeners:", 1), svc},
			"MC7102", "addresses:", []string{"ingress.edge.svc.cluster.local names no Service"}},
		{"hostname", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: web}]\n  hostnames: [a.other.org]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"NoMatchingListenerHostname", `"*.example.com"`}},
		{"namespace not allowed", []string{gw, svc, route("other", "  parentRefs: [{name: gw, namespace: edge, sectionName: web}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"NotAllowedByListeners", `namespace "other" is not allowed`}},
		{"section not found", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: nope}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"NoMatchingParent", `sectionName "nope" not found`}},
		{"port not found", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, port: 81}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"NoMatchingParent", "port 81 not found"}},
		{"kind not allowed", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: db}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"kind HTTPRoute is not allowed"}},
		{"missing gateway", []string{gw, svc, route("edge", "  parentRefs: [{name: gone}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7107", "parentRefs:", []string{"edge/gone"}},
		{"missing ListenerSet", []string{gw, svc, route("edge", "  parentRefs: [{name: gone, kind: ListenerSet}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7107", "parentRefs:", []string{"parent ListenerSet edge/gone"}},
		{"backend without grant", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: web}]\n  rules: [{backendRefs: [{name: app, namespace: other, port: 80}]}]")},
			"MC7108", "backendRefs:", []string{"Service other/app", "no ReferenceGrant in namespace other"}},
		{"missing backend", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: web}]\n  rules: [{backendRefs: [{name: nope, port: 80}]}]")},
			"MC7109", "backendRefs:", []string{"Service edge/nope", "BackendNotFound"}},
		{"backend kind", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: web}]\n  rules: [{backendRefs: [{name: pool, group: inference.networking.k8s.io, kind: InferencePool, port: 80}]}]")},
			"MC7109", "backendRefs:", []string{"InvalidKind"}},
		{"unsupported filter", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: web}]\n  rules:\n  - filters: [{type: ExtensionRef, extensionRef: {group: x.io, kind: K, name: ext}}]\n    backendRefs: [{name: app, port: 80}]")},
			"MC7110", "filters:", []string{`unsupported filter type "ExtensionRef"`}},
		{"backend without port", []string{gw, svc, route("edge", "  parentRefs: [{name: gw, sectionName: web}]\n  rules: [{backendRefs: [{name: app}]}]")},
			"MC7110", "backendRefs:", []string{"port is required"}},
		{"ListenerSet not allowed", []string{gw, svc, listenerSet("other", "  - {name: x, port: 8080, protocol: HTTP}")},
			"MC7113", "parentRef:", []string{"ListenerSet other/ls", "Gateway edge/gw", "no allowedListeners"}},
		{"ListenerSet listener conflict", []string{allowAll(gw), svc, listenerSet("edge", "  - {name: x, port: 5432, protocol: TCP}")},
			"MC7104", "name: x", []string{`listener "x" of ListenerSet edge/ls`, "ProtocolConflict", `"db"`}},
		{"ListenerSet listener without TLS", []string{allowAll(gw), svc, listenerSet("edge", "  - {name: x, port: 443, protocol: HTTPS}")},
			"MC7103", "name: x", []string{`listener "x" of ListenerSet edge/ls`, "NoTLS"}},
		{"ListenerSet certificate elsewhere", []string{allowAll(gw), svc, listenerSet("other", "  - {name: x, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: c, namespace: edge}]}}")},
			"MC7105", "name: x", []string{`listener "x" of ListenerSet other/ls`, "RefNotPermitted", `not accessible to a ListenerSet in namespace "other"`}},
		{"route of a ListenerSet, hostname", []string{allowAll(gw), svc, listenerSet("edge", "  - {name: x, port: 8080, protocol: HTTP, hostname: a.example.com}"),
			route("edge", "  parentRefs: [{name: ls, kind: ListenerSet}]\n  hostnames: [b.example.com]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"ListenerSet edge/ls", "NoMatchingListenerHostname"}},
		{"missing parent Service", []string{gw, svc, route("edge", "  parentRefs: [{name: gone, kind: Service, group: \"\"}]\n  rules: [{backendRefs: [{name: app, port: 80}]}]")},
			"MC7106", "parentRefs:", []string{"Service gone.edge.svc.cluster.local", "NoMatchingParent", `parent service: "gone" not found`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := convert(t, tt.docs...)
			var found *diag.Diagnostic
			for i, d := range res.Diagnostics {
				if d.Code == tt.code {
					found = &res.Diagnostics[i]
				}
			}
			if found == nil {
				t.Fatalf("no %s; got %v", tt.code, codes(res.Diagnostics))
			}
			if !hasDiag(res.Diagnostics, tt.code, tt.want...) {
				t.Errorf("%s message %q lacks %q", tt.code, found.Message, tt.want)
			}
			lines := strings.Split(strings.Join(tt.docs, "\n---\n"), "\n")
			if l := found.Object.Line; l < 1 || l > len(lines) || !strings.Contains(lines[l-1], tt.at) {
				t.Errorf("%s at line %d, want the line holding %q", tt.code, l, tt.at)
			}
			if found.Key == "" {
				t.Errorf("%s without key", tt.code)
			}
		})
	}
}

// listenerSet is ListenerSet ns/ls adding listeners to Gateway edge/gw.
func listenerSet(ns, listeners string) string {
	return "apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: ls, namespace: " + ns +
		"}\nspec:\n  parentRef: {name: gw, namespace: edge}\n  listeners:\n" + listeners
}

// allowAll lets a Gateway accept ListenerSets of every namespace.
func allowAll(gw string) string {
	return strings.Replace(gw, "  listeners:", "  allowedListeners: {namespaces: {from: All}}\n  listeners:", 1)
}

// TestBadInputNeverPanics converts Gateway API objects with every
// optional part missing or odd; each converts or is reported.
func TestBadInputNeverPanics(t *testing.T) {
	docs := []string{
		"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: empty, namespace: edge}\nspec: {gatewayClassName: istio}",
		gatewayHeader + "  - {name: a, port: 443, protocol: HTTPS, tls: {}}\n  - {name: b, port: 444, protocol: TLS, tls: {mode: Terminate}}\n  - {name: c, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector}}}\n  - {name: d, port: 81, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: a, operator: Bad}]}}}}\n  - {name: e, port: 82, protocol: HBONE}",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: a, namespace: edge}\nspec: {}",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: b, namespace: edge}\nspec:\n  parentRefs: [{name: gw}]\n  rules:\n  - matches: [{path: {}}, {headers: [{name: x, value: v}]}]\n    filters: [{type: RequestMirror}, {type: RequestRedirect}, {type: URLRewrite}, {type: CORS}, {type: RequestHeaderModifier}, {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch}}}]\n    backendRefs: [{name: x.y, port: 80}, {name: h, kind: Hostname, group: networking.istio.io, namespace: z, port: 80}, {name: q, weight: 0}]\n  - retry: {}\n    timeouts: {request: bogus}\n    filters: [{type: RequestMirror, requestMirror: {backendRef: {name: m}, fraction: {numerator: 1, denominator: 0}}}]",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {name: c, namespace: edge}\nspec:\n  parentRefs: [{name: gw}]\n  rules: [{matches: [{method: {}}, {method: {method: Get, type: RegularExpression}}], filters: [{type: RequestMirror, requestMirror: {backendRef: {name: nope, port: 1}}}]}]",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: TLSRoute\nmetadata: {name: d, namespace: edge}\nspec: {parentRefs: [{name: gw, sectionName: b}], rules: [{}]}",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: TCPRoute\nmetadata: {name: e, namespace: edge}\nspec: {parentRefs: [{name: gw}, {name: gw, kind: ListenerSet}, {name: x, group: example.com, kind: Thing}], rules: []}",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: f, namespace: edge}\nspec: {parentRef: {name: gw}, listeners: [{name: x, port: 1, protocol: HTTP}]}",
	}
	for i := range docs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			res := convert(t, docs...)
			if len(res.Objects) < len(docs) {
				t.Errorf("objects lost: %d", len(res.Objects))
			}
		})
		docs[0], docs[i] = docs[i], docs[0] // each document first once
	}
}

// TestExampleHasNoFindings: the bundled example converts cleanly.
func TestExampleHasNoFindings(t *testing.T) {
	var docs []string
	for _, f := range []string{"namespaces.yaml", "gateway.yaml", "routes.yaml", "services.yaml"} {
		b, err := os.ReadFile("../../examples/gateway-api/" + f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	res := convert(t, docs...)
	if len(res.Diagnostics) > 0 {
		t.Errorf("diagnostics: %v", codes(res.Diagnostics))
	}
	if len(res.Gateways) != 1 || len(res.Gateways[0].Listeners) != 4 {
		t.Fatalf("gateways %+v", res.Gateways)
	}
	for _, l := range res.Gateways[0].Listeners {
		if l.Istio == nil || len(l.Routes) == 0 {
			t.Errorf("listener %s: Istio Gateway %v, routes %v", l.Name, l.Istio, l.Routes)
		}
	}
}
