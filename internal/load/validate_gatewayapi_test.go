package load

import (
	"bytes"
	"strconv"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// gwapiDoc is one Gateway API object of kind at version (v1 when empty)
// in namespace team, named r; its spec lines start at line 5.
func gwapiDoc(version, kind, spec string) string {
	if version == "" {
		version = "v1"
	}
	return istioDoc("gateway.networking.k8s.io/"+version, kind, spec)
}

// TestGatewayAPICRDValidation checks each kind of CRD rule the API server
// applies to Gateway API objects, and its near miss, at the field's line.
func TestGatewayAPICRDValidation(t *testing.T) {
	route := func(rule string) string {
		return gwapiDoc("", "HTTPRoute", "  parentRefs: [{name: gw}]\n  rules:\n"+rule)
	}
	listeners := func(ls string) string {
		return gwapiDoc("", "Gateway", "  gatewayClassName: istio\n  listeners:\n"+ls)
	}
	runAdmission(t, []admissionCase{
		// OpenAPI: enum.
		{"allowed namespaces outside the enum", listeners("  - {name: a, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Any}}}\n"),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"},
				{"MC1003", 7, `spec.listeners[0].allowedRoutes.namespaces.from: Unsupported value: "Any": supported values: "All", "Selector", "Same"`}}},
		{"path match type outside the enum", route("  - matches:\n    - path: {type: Glob, value: /a}\n"),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"},
				{"MC1003", 8, `spec.rules[0].matches[0].path.type: Unsupported value: "Glob": supported values: "Exact", "PathPrefix", "RegularExpression"`}}},
		{"path match type in the enum", route("  - matches:\n    - path: {type: Exact, value: /a}\n"), nil},
		// OpenAPI: pattern, lengths, bounds, item counts, required.
		{"hostname with an upper-case letter", gwapiDoc("", "HTTPRoute", "  hostnames: [Shop.example.com]\n"),
			[]diagKey{{"MC1003", 5, `spec.hostnames[0]: Invalid value: "Shop.example.com": spec.hostnames[0] in body should match`}}},
		{"wildcard hostname", gwapiDoc("", "HTTPRoute", "  hostnames: ['*.example.com']\n"), nil},
		{"backend port out of range", route("  - backendRefs:\n    - {name: web, port: 70000}\n"),
			[]diagKey{{"MC1003", 8, "spec.rules[0].backendRefs[0].port: Invalid value: 70000: spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535"}}},
		{"listener name too long", listeners("  - {name: " + longName + ", port: 80, protocol: HTTP}\n"),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"}, {"MC1003", 7, "spec.listeners[0].name: Too long: may not be more than 253 bytes"}}},
		{"more than 32 parentRefs", gwapiDoc("", "HTTPRoute", "  parentRefs: ["+repeatRefs(33)+"]\n"),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"}, {"MC1003", 5, "spec.parentRefs: Too many: 33: must have at most 32 items"}}},
		{"a gateway without listeners", gwapiDoc("", "Gateway", "  gatewayClassName: istio\n"),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"}, {"MC1003", 4, "spec.listeners: Required value"}}},
		{"a ReferenceGrant with an empty from", gwapiDoc("v1beta1", "ReferenceGrant", "  from: []\n  to: [{group: '', kind: Service}]\n"),
			[]diagKey{{"MC1003", 5, "spec.from: Invalid value: 0: spec.from in body should have at least 1 items"}}},
		// List types: a listener's name is its key.
		{"two listeners of one name", listeners("  - {name: a, port: 80, protocol: HTTP}\n  - {name: a, port: 81, protocol: HTTP}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: Listener name must be unique within the Gateway"},
				{"MC1003", 8, `spec.listeners[1]: Duplicate value: {"name":"a"}`}}},
		// CEL: listener rules.
		{"hostname on a TCP listener", listeners("  - {name: a, port: 9000, protocol: TCP, hostname: db.example.com}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: hostname must not be specified for protocols ['TCP', 'UDP']"}}},
		{"TLS settings on an HTTP listener", listeners("  - {name: a, port: 80, protocol: HTTP, tls: {mode: Terminate, certificateRefs: [{name: c}]}}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"}}},
		{"a TLS listener without a TLS mode", listeners("  - {name: a, port: 443, protocol: TLS, hostname: '*.example.com'}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: tls mode must be set for protocol TLS"}}},
		{"an HTTPS listener passing TLS through", listeners("  - {name: a, port: 443, protocol: HTTPS, tls: {mode: Passthrough}}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: tls mode must be Terminate for protocol HTTPS"}}},
		{"a TLS listener passing TLS through", listeners("  - {name: a, port: 443, protocol: TLS, tls: {mode: Passthrough}}\n"), nil},
		{"listeners of one port and hostname", listeners("  - {name: a, port: 80, protocol: HTTP, hostname: a.example.com}\n  - {name: b, port: 80, protocol: HTTP, hostname: a.example.com}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: Combination of port, protocol and hostname must be unique for each listener"}}},
		{"listeners of one port, hostnames apart", listeners("  - {name: a, port: 80, protocol: HTTP, hostname: a.example.com}\n  - {name: b, port: 80, protocol: HTTP, hostname: b.example.com}\n"), nil},
		// CEL: HTTPRoute filter combinations and rules.
		{"a redirect beside backends", route("  - filters: [{type: RequestRedirect, requestRedirect: {port: 8080}}]\n    backendRefs: [{name: web, port: 80}]\n"),
			[]diagKey{{"MC1003", 7, "spec.rules[0]: Invalid value: RequestRedirect filter must not be used together with backendRefs"}}},
		{"a redirect and a rewrite in one rule", route("  - filters:\n    - {type: RequestRedirect, requestRedirect: {scheme: https}}\n    - {type: URLRewrite, urlRewrite: {hostname: a.example.com}}\n"),
			[]diagKey{{"MC1003", 7, "spec.rules[0].filters: Invalid value: May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both"}}},
		{"a filter without its settings", route("  - filters: [{type: RequestHeaderModifier}]\n"),
			[]diagKey{{"MC1003", 7, "spec.rules[0].filters[0]: Invalid value: filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type"}}},
		{"a redirect alone", route("  - filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}]\n"), nil},
		{"a relative path match", route("  - matches: [{path: {type: PathPrefix, value: api}}]\n"),
			[]diagKey{{"MC1003", 7, "spec.rules[0].matches[0].path: Invalid value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"}}},
		{"a Service backend without a port", route("  - backendRefs: [{name: web}]\n"),
			[]diagKey{{"MC1003", 7, "spec.rules[0].backendRefs[0]: Invalid value: Must have port for Service reference"}}},
		{"two parentRefs to one Gateway without sectionName or port", gwapiDoc("", "HTTPRoute", "  parentRefs: [{name: gw}, {name: gw}]\n"),
			[]diagKey{{"MC1003", 5, "spec.parentRefs: Invalid value: sectionName or port must be unique when parentRefs includes 2 or more references to the same parent"}}},
		{"two parentRefs to one Gateway by section", gwapiDoc("", "HTTPRoute", "  parentRefs: [{name: gw, sectionName: a}, {name: gw, sectionName: b}]\n"), nil},
		// CEL: timeouts.
		{"a backend timeout longer than the request's", route("  - timeouts: {request: 1s, backendRequest: 2s}\n"),
			[]diagKey{{"MC1003", 7, "spec.rules[0].timeouts: Invalid value: backendRequest timeout cannot be longer than request timeout"}}},
		{"a backend timeout within the request's", route("  - timeouts: {request: 2s, backendRequest: 1s}\n"), nil},
		{"a timeout in days", route("  - timeouts: {request: 1d}\n"),
			[]diagKey{{"MC1003", 7, `spec.rules[0].timeouts.request: Invalid value: "1d": spec.rules[0].timeouts.request in body should match`}}},
		// Other kinds.
		{"a GRPCRoute method match without service or method", gwapiDoc("", "GRPCRoute", "  rules:\n  - matches: [{method: {type: Exact}}]\n"),
			[]diagKey{{"MC1003", 6, "spec.rules[0].matches[0].method: Invalid value: One or both of 'service' or 'method' must be specified"}}},
		{"a GatewayClass controller name without a path", gwapiDoc("", "GatewayClass", "  controllerName: istio.io\n"),
			[]diagKey{{"MC1003", 5, `spec.controllerName: Invalid value: "istio.io": spec.controllerName in body should match`}}},
		{"a GatewayClass of Istio's controller", gwapiDoc("", "GatewayClass", "  controllerName: istio.io/gateway-controller\n"), nil},
		{"a BackendTLSPolicy with neither CA refs nor system certificates", gwapiDoc("", "BackendTLSPolicy",
			"  targetRefs: [{group: '', kind: Service, name: web}]\n  validation: {hostname: web.example.com}\n"),
			[]diagKey{{"MC1003", 6, "spec.validation: Invalid value: must specify either CACertificateRefs or WellKnownCACertificates"}}},
		{"a TLSRoute hostname that is an IP", gwapiDoc("", "TLSRoute", "  hostnames: [10.0.0.1]\n  rules: [{backendRefs: [{name: db, port: 443}]}]\n"),
			[]diagKey{{"MC1003", 5, "spec.hostnames: Invalid value: Hostnames cannot contain an IP"}}},
		{"a ListenerSet listener with TLS settings on TCP", gwapiDoc("", "ListenerSet",
			"  parentRef: {name: gw}\n  listeners:\n  - {name: a, port: 9000, protocol: TCP, tls: {mode: Passthrough}}\n"),
			[]diagKey{{"MC1003", 6, "spec.listeners: Invalid value: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"}}},
		{"an XBackendTrafficPolicy budget over 100 percent", istioDoc("gateway.networking.x-k8s.io/v1alpha1", "XBackendTrafficPolicy",
			"  targetRefs: [{group: '', kind: Service, name: web}]\n  retryConstraint: {budget: {percent: 150}}\n"),
			[]diagKey{{"MC1003", 6, "spec.retryConstraint.budget.percent: Invalid value: 150: spec.retryConstraint.budget.percent in body should be less than or equal to 100"}}},
		{"an XBackendTrafficPolicy budget interval over an hour", istioDoc("gateway.networking.x-k8s.io/v1alpha1", "XBackendTrafficPolicy",
			"  targetRefs: [{group: '', kind: Service, name: web}]\n  retryConstraint: {budget: {interval: 2h}}\n"),
			[]diagKey{{"MC1003", 6, "spec.retryConstraint.budget.interval: Invalid value: \"2h\": interval cannot be greater than one hour or less than one second"}}},
		{"an XBackendTrafficPolicy with an unknown field", istioDoc("gateway.networking.x-k8s.io/v1alpha1", "XBackendTrafficPolicy",
			"  targetRefs: [{group: '', kind: Service, name: web}]\n  retryBudget: {}\n"),
			[]diagKey{{"MC1003", 6, `unknown field "retryBudget"`}}},
		{"a valid XBackendTrafficPolicy", istioDoc("gateway.networking.x-k8s.io/v1alpha1", "XBackendTrafficPolicy",
			"  targetRefs: [{group: '', kind: Service, name: web}]\n  retryConstraint: {budget: {percent: 30, interval: 20s}, minRetryRate: {count: 5, interval: 1s}}\n"), nil},
		// What the API server ignores or fills in on create.
		{"status is not validated", route("  - backendRefs: [{name: web, port: 80}]\n") + "status: {parents: [{bogus: 1}]}\n", nil},
		{"a null field is dropped", gwapiDoc("", "HTTPRoute", "  hostnames: null\n  rules: [{matches: null, backendRefs: [{name: web, port: 80}]}]\n"), nil},
		{"group and kind defaulted before the rules run", gwapiDoc("", "HTTPRoute", "  parentRefs:\n  - {name: gw, port: 80}\n  - {name: gw, port: 80, kind: Gateway}\n"),
			[]diagKey{{"MC1003", 5, "spec.parentRefs: Invalid value: sectionName or port must be unique when parentRefs includes 2 or more references to the same parent"}}},
	})
}

// TestGatewayAPIVersionSchemas checks that an object is judged by the
// schema of its own version: TCPRoute v1 allows one rule where v1alpha2
// allows sixteen, and TLSRoute v1 requires hostnames where v1alpha2 and
// v1alpha3 differ.
func TestGatewayAPIVersionSchemas(t *testing.T) {
	twoRules := "  parentRefs: [{name: gw}]\n  rules:\n  - backendRefs: [{name: a, port: 1}]\n  - backendRefs: [{name: b, port: 1}]\n"
	tls := "  parentRefs: [{name: gw}]\n  rules: [{backendRefs: [{name: a, port: 443}]}]\n"
	runAdmission(t, []admissionCase{
		{"TCPRoute v1: one rule at most", gwapiDoc("v1", "TCPRoute", twoRules),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"}, {"MC1003", 6, "spec.rules: Too many: 2: must have at most 1 item"}}},
		{"TCPRoute v1alpha2: two rules", gwapiDoc("v1alpha2", "TCPRoute", twoRules), nil},
		{"TLSRoute v1: hostnames required", gwapiDoc("v1", "TLSRoute", tls),
			[]diagKey{{"MC1003", 1, "some validation rules were not checked"}, {"MC1003", 4, "spec.hostnames: Required value"}}},
		{"TLSRoute v1alpha2: hostnames optional", gwapiDoc("v1alpha2", "TLSRoute", tls), nil},
		{"HTTPRoute v1beta1: the same rules as v1", gwapiDoc("v1beta1", "HTTPRoute", "  rules: [{backendRefs: [{name: web}]}]\n"),
			[]diagKey{{"MC1003", 5, "spec.rules[0].backendRefs[0]: Invalid value: Must have port for Service reference"}}},
	})
}

// longName is a listener name longer than the CRD's 253 bytes.
var longName = func() string {
	b := make([]byte, 254)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}()

// repeatRefs is n parentRefs to distinct Gateways.
func repeatRefs(n int) string {
	out := ""
	for i := range n {
		if i > 0 {
			out += ", "
		}
		out += "{name: gw-" + strconv.Itoa(i) + "}"
	}
	return out
}

// TestGatewayAPICRDValidationRepeated: an object whose content was judged
// before in the same load (the same route in two namespaces, a rule met
// again in another route) gets its findings all the same, at its own
// lines.
func TestGatewayAPICRDValidationRepeated(t *testing.T) {
	bad := "  - timeouts: {request: 1s, backendRequest: 2s}\n"
	doc := func(ns, rules string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: " + ns + "}\nspec:\n  parentRefs: [{name: gw}]\n  rules:\n" + rules
	}
	in := doc("a", bad) + "---\n" + doc("b", bad) + "---\n" + doc("c", "  - backendRefs: [{name: web, port: 80}]\n"+bad)
	objs, ds := Bytes("in.yaml", []byte(in))
	checkDiags(t, ds, []diagKey{
		{"MC1003", 7, "spec.rules[0].timeouts: Invalid value: backendRequest timeout cannot be longer than request timeout"},
		{"MC1003", 15, "spec.rules[0].timeouts: Invalid value: backendRequest timeout cannot be longer than request timeout"},
		{"MC1003", 24, "spec.rules[1].timeouts: Invalid value: backendRequest timeout cannot be longer than request timeout"},
	})
	if len(objs) != 0 {
		t.Errorf("%d objects loaded, want none", len(objs))
	}
}

// TestGatewayAPICRDValidationInertValues: routes and grants that differ
// only in names and namespaces no rule reads are judged once, and each
// gets its findings at its own lines; a name its own schema refuses is
// reported where it is.
func TestGatewayAPICRDValidationInertValues(t *testing.T) {
	route := func(backend string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: a}\nspec:\n  parentRefs: [{name: gw}]\n  rules:\n" +
			"  - backendRefs: [{name: web, port: 80}, " + backend + "]\n    timeouts: {request: 1s, backendRequest: 2s}\n"
	}
	grant := func(ns string) string {
		return "apiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: g, namespace: a}\nspec:\n  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: " + ns + "}]\n  to: []\n"
	}
	in := route("{name: api, namespace: b, port: 80}") + "---\n" + route("{name: cart, namespace: c, port: 80}") + "---\n" +
		route("{name: cart, namespace: Bad_NS, port: 80}") + "---\n" + grant("b") + "---\n" + grant("c")
	_, ds := Bytes("in.yaml", []byte(in))
	timeouts := "spec.rules[0].timeouts: Invalid value: backendRequest timeout cannot be longer than request timeout"
	checkDiags(t, ds, []diagKey{
		{"MC1003", 8, timeouts},
		{"MC1003", 17, timeouts},
		{"MC1003", 25, `spec.rules[0].backendRefs[1].namespace: Invalid value: "Bad_NS"`},
		{"MC1003", 26, timeouts},
		{"MC1003", 33, "spec.to: Invalid value: 0: spec.to in body should have at least 1 items"},
		{"MC1003", 40, "spec.to: Invalid value: 0: spec.to in body should have at least 1 items"},
	})
}

// TestAppendContentKey: objects get one content key when their values
// differ in metadata alone, and different keys when their values may
// differ anywhere else; an object whose metadata is no mapping gets none.
func TestAppendContentKey(t *testing.T) {
	const base = "apiVersion: v1\nkind: K\nmetadata: {name: a, namespace: x}\nspec: {port: 80, name: web}\n"
	for _, tc := range []struct {
		name, other string
		same, ok    bool
	}{
		{"metadata differs", "apiVersion: v1\nkind: K\nmetadata: {name: b, labels: {a: b}}\nspec: {port: 80, name: web}\n", true, true},
		{"spec value differs", "apiVersion: v1\nkind: K\nmetadata: {name: a}\nspec: {port: 81, name: web}\n", false, true},
		{"quoted number", "apiVersion: v1\nkind: K\nmetadata: {name: a}\nspec: {port: '80', name: web}\n", false, true},
		{"no metadata", "apiVersion: v1\nkind: K\nspec: {port: 80, name: web}\n", false, true},
		{"status set", base + "status: {}\n", false, true},
		{"metadata a string", "apiVersion: v1\nkind: K\nmetadata: a\nspec: {port: 80, name: web}\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := func(doc string) ([]byte, bool) {
				var n yaml.Node
				if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
					t.Fatal(err)
				}
				return appendContentKey(nil, n.Content[0])
			}
			want, _ := key(base)
			got, ok := key(tc.other)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && bytes.Equal(got, want) != tc.same {
				t.Errorf("same key = %v, want %v", !tc.same, tc.same)
			}
		})
	}
}
