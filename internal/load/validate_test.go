package load

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
)

// istioDoc is one Istio object of kind in namespace team, named r; its
// spec lines start at line 5.
func istioDoc(apiVersion, kind, spec string) string {
	return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata: {name: r, namespace: team}\nspec:\n" + spec
}

func vsDoc(spec string) string { return istioDoc("networking.istio.io/v1", "VirtualService", spec) }
func drDoc(spec string) string { return istioDoc("networking.istio.io/v1", "DestinationRule", spec) }
func gwDoc(spec string) string { return istioDoc("networking.istio.io/v1", "Gateway", spec) }
func seDoc(spec string) string { return istioDoc("networking.istio.io/v1", "ServiceEntry", spec) }
func scDoc(spec string) string { return istioDoc("networking.istio.io/v1", "Sidecar", spec) }
func weDoc(spec string) string { return istioDoc("networking.istio.io/v1", "WorkloadEntry", spec) }
func paDoc(spec string) string { return istioDoc("security.istio.io/v1", "PeerAuthentication", spec) }
func apDoc(spec string) string { return istioDoc("security.istio.io/v1", "AuthorizationPolicy", spec) }

// admissionCase is one rule's firing case or near miss: want nil means
// the object loads without a word.
type admissionCase struct {
	name, yaml string
	want       []diagKey
}

// runAdmission checks each case's diagnostics (code, line, message) and
// that the object is left out exactly when an MC1003 is among them.
func runAdmission(t *testing.T, cases []admissionCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			objs, all := Bytes("in.yaml", []byte(tt.yaml))
			// The policy kinds meshc does not build are named (MC1005)
			// whether or not they pass admission.
			ds := slices.DeleteFunc(all, diag.UnknownKind.Is)
			checkDiags(t, ds, tt.want)
			rejected := false
			for _, w := range tt.want {
				rejected = rejected || w.code == "MC1003"
			}
			if loaded := len(objs) == 1; loaded == rejected {
				t.Errorf("loaded: %v, want %v", loaded, !rejected)
			}
			fate := "the object is kept"
			if rejected {
				fate = "the object is left out"
			}
			for _, d := range ds {
				if d.Code == "MC1008" && (d.Severity.String() != "warning" || !strings.HasSuffix(d.Message, fate)) {
					t.Errorf("MC1008 %q: severity %s, want a warning ending %q", d.Message, d.Severity, fate)
				}
			}
		})
	}
}

const route = "  http:\n  - route: [{destination: {host: r}}]\n"

func TestAdmissionVirtualService(t *testing.T) {
	runAdmission(t, []admissionCase{
		{"no routes", vsDoc("  hosts: [r]\n"), []diagKey{{"MC1003", 4, "spec: a VirtualService without http, tcp or tls routes is rejected"}}},
		{"http route", vsDoc("  hosts: [r]\n" + route), nil},
		{"tcp route only", vsDoc("  hosts: [r]\n  tcp:\n  - route: [{destination: {host: r}}]\n"), nil},
		{"delegate with gateways", vsDoc("  gateways: [team/gw]\n" + route), []diagKey{{"MC1003", 5, "spec.gateways: a delegate VirtualService (one without hosts) with gateways is rejected"}}},
		{"delegate with http only", vsDoc(route), nil},
		{"host star for the mesh", vsDoc("  hosts: ['*']\n" + route), []diagKey{{"MC1003", 5, `spec.hosts[0]: host "*" is rejected by istiod's validation for a VirtualService of the mesh`}}},
		{"host star on a gateway", vsDoc("  hosts: ['*']\n  gateways: [team/gw]\n" + route), nil},
		{"bad host", vsDoc("  hosts: [a_b.example.com]\n" + route), []diagKey{{"MC1003", 5, `host "a_b.example.com" is rejected by istiod's validation: label "a_b" is not a DNS label`}}},
		{"partial wildcard host", vsDoc("  hosts: [a*.example.com]\n" + route), []diagKey{{"MC1003", 5, `label "a*" is not a DNS label`}}},
		{"wildcard label prefix", vsDoc("  hosts: ['*a.example.com']\n" + route), nil},
		{"wildcard inside host", vsDoc("  hosts: [a.*.example.com]\n" + route), []diagKey{{"MC1003", 5, `label "*" is not a DNS label`}}},
		{"IP host", vsDoc("  hosts: [10.0.0.1]\n" + route), nil},
		{"overlapping hosts", vsDoc("  hosts:\n  - '*.example.com'\n  - a.example.com\n" + route), []diagKey{{"MC1003", 7, `hosts "*.example.com" and "a.example.com" overlap`}}},
		{"distinct hosts", vsDoc("  hosts:\n  - '*.example.com'\n  - a.example.org\n" + route), nil},
		{"gateway reference with bad namespace", vsDoc("  hosts: [r]\n  gateways: [te_am/gw]\n" + route), []diagKey{{"MC1003", 6, `gateway "te_am/gw" is rejected by istiod's validation: namespace "te_am" is not a DNS label`}}},
		{"legacy gateway reference", vsDoc("  hosts: [r]\n  gateways: [gw.team]\n" + route), []diagKey{{"MC1008", 6, `gateway "gw.team" uses the legacy name.namespace form: istiod warns; write "team/gw"`}}},
		{"gateway reference", vsDoc("  hosts: [r]\n  gateways: [team/gw, mesh]\n" + route), nil},
		{"JWT claim on sidecars", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - headers: {'@request.auth.claims.group': {exact: a}}\n    route: [{destination: {host: r}}]\n"),
			[]diagKey{{"MC1003", 8, `routing on JWT claim "@request.auth.claims.group" is rejected by istiod's validation for sidecars`}}},
		{"JWT claim on a gateway", vsDoc("  hosts: [r]\n  gateways: [team/gw]\n  http:\n  - match:\n    - headers: {'@request.auth.claims.group': {exact: a}}\n    route: [{destination: {host: r}}]\n"), nil},
		{"route without action", vsDoc("  hosts: [r]\n  http:\n  - name: empty\n"), []diagKey{{"MC1003", 7, "spec.http[0]: an HTTP route without route, redirect or directResponse is rejected"}}},
		{"redirect and route", vsDoc("  hosts: [r]\n  http:\n  - redirect: {uri: /x}\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 8, "spec.http[0].route: a route with both redirect and route is rejected"}}},
		{"redirect alone", vsDoc("  hosts: [r]\n  http:\n  - redirect: {uri: /x}\n"), nil},
		{"redirect that changes nothing", vsDoc("  hosts: [r]\n  http:\n  - redirect: {redirectCode: 301}\n"), []diagKey{{"MC1003", 7, "a redirect that changes nothing is rejected"}}},
		{"redirect code", vsDoc("  hosts: [r]\n  http:\n  - redirect: {uri: /x, redirectCode: 200}\n"), []diagKey{{"MC1003", 7, "spec.http[0].redirect.redirectCode: redirectCode 200 is rejected by istiod's validation: it must be 3xx"}}},
		{"direct response and fault", vsDoc("  hosts: [r]\n  http:\n  - directResponse: {status: 503}\n    fault: {abort: {httpStatus: 500}}\n"), []diagKey{{"MC1003", 8, "a route with both directResponse and fault"}}},
		{"direct response status", vsDoc("  hosts: [r]\n  http:\n  - directResponse: {status: 150}\n"), []diagKey{{"MC1003", 7, "HTTP status 150 is rejected"}}},
		{"direct response", vsDoc("  hosts: [r]\n  http:\n  - directResponse: {status: 503, body: {string: down}}\n"), nil},
		{"delegate route with route", vsDoc("  hosts: [r]\n  http:\n  - delegate: {name: d}\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 8, "a route with delegate and route is rejected"}}},
		{"delegate route", vsDoc("  hosts: [r]\n  http:\n  - delegate: {name: d}\n"), nil},
		{"nested delegate", vsDoc("  http:\n  - delegate: {name: d}\n"), []diagKey{{"MC1003", 6, "delegation is one level deep"}, {"MC1003", 6, "without route, redirect or directResponse"}}},
		{"negative weight", vsDoc("  hosts: [r]\n  http:\n  - route:\n    - destination: {host: r}\n      weight: -1\n"), []diagKey{{"MC1003", 9, "weight -1 is rejected"}}},
		{"weights adding up to 0", vsDoc("  hosts: [r]\n  http:\n  - route:\n    - {destination: {host: a}, weight: 0}\n    - {destination: {host: b}, weight: 0}\n"), []diagKey{{"MC1003", 7, "spec.http[0].route: destinations whose weights add up to 0"}}},
		{"weights", vsDoc("  hosts: [r]\n  http:\n  - route:\n    - {destination: {host: a}, weight: 90}\n    - {destination: {host: b}, weight: 10}\n"), nil},
		{"destination host star", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: '*'}}]\n"), []diagKey{{"MC1003", 7, `destination host "*" is rejected`}}},
		{"subset name", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r, subset: v1.2}}]\n"), []diagKey{{"MC1003", 7, `subset name "v1.2" is rejected`}}},
		{"subset name valid", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r, subset: v1-2}}]\n"), nil},
		{"destination port", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r, port: {number: 70000}}}]\n"), []diagKey{{"MC1003", 7, "port 70000 is rejected"}}},
		{"header name", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - headers:\n        'x foo': {exact: a}\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 9, `header name "x foo" is rejected`}}},
		{"pseudo-header match", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - headers:\n        ':authority': {exact: a}\n    route: [{destination: {host: r}}]\n"), nil},
		{"invalid regex", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - uri: {regex: '/(?!admin)'}\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 8, `spec.http[0].match[0].uri.regex: regex "/(?!admin)" is rejected by istiod's validation`}}},
		{"RE2 regex", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - uri: {regex: '/(a|b)+'}\n    route: [{destination: {host: r}}]\n"), nil},
		{"empty header prefix", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - headers: {x-a: {prefix: ''}}\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 8, "an empty prefix match is rejected"}}},
		{"empty uri prefix", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - uri: {prefix: ''}\n    route: [{destination: {host: r}}]\n"), nil},
		{"source namespace", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - sourceNamespace: Team_A\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 8, `sourceNamespace "Team_A" is rejected`}}},
		{"source labels", vsDoc("  hosts: [r]\n  http:\n  - match:\n    - sourceLabels: {app: 'a b'}\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 8, `label value "a b" is rejected`}}},
		{"set Host response header", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      response:\n        set: {Host: a}\n"), []diagKey{{"MC1003", 10, `header "Host" is rejected by istiod's validation here`}}},
		{"set pseudo-header", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      request:\n        set: {':path': /a}\n"), []diagKey{{"MC1003", 10, "pseudo-headers"}}},
		{"set request Host", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      request:\n        set: {Host: a}\n"), nil},
		{"authority twice", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    rewrite: {authority: a}\n    headers:\n      request:\n        set: {Host: b}\n"), []diagKey{{"MC1003", 11, `the authority is set twice ("a", then "b")`}}},
		{"header value with open variable", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      request:\n        add: {x-a: '%START_TIME'}\n"), []diagKey{{"MC1003", 10, "is not closed"}}},
		{"header value with time format", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      request:\n        set: {x-t: '%START_TIME(%Y-%m-%dT%H:%M:%S)%', x-u: '%REQ([\"x-a\", \"x-b\"])%'}\n"), nil},
		{"header value with bad arguments", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      request:\n        set: {x-u: '%REQ([x-a])%'}\n"), []diagKey{{"MC1003", 10, "argument must be a quoted string"}}},
		{"header value with variable", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    headers:\n      request:\n        add: {x-a: '%START_TIME% 100%%'}\n"), nil},
		{"CORS method", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    corsPolicy:\n      allowMethods: [get]\n"), []diagKey{{"MC1003", 9, `CORS method "get" is rejected`}}},
		{"CORS max age fraction", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    corsPolicy:\n      allowMethods: [GET]\n      maxAge: 1500ms\n"), []diagKey{{"MC1003", 10, "whole seconds"}}},
		{"CORS", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    corsPolicy:\n      allowOrigins: [{exact: 'https://a.example.com'}]\n      allowMethods: [GET]\n      allowHeaders: ['*']\n      maxAge: 24h\n"), nil},
		{"fault without abort or delay", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    fault: {}\n"), []diagKey{{"MC1003", 8, "a fault without abort or delay is rejected"}}},
		{"abort percentage", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    fault:\n      abort: {httpStatus: 503, percentage: {value: 120}}\n"), []diagKey{{"MC1003", 9, "percentage 120 is rejected"}}},
		{"abort gRPC status", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    fault:\n      abort: {grpcStatus: GONE}\n"), []diagKey{{"MC1003", 9, `grpcStatus "GONE" is rejected`}}},
		{"abort without error type", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    fault:\n      abort: {percentage: {value: 10}}\n"), []diagKey{{"MC1008", 9, "spec.http[0].fault.abort: an abort without httpStatus or grpcStatus: istiod warns"}}},
		{"abort", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    fault:\n      abort: {grpcStatus: UNAVAILABLE, percentage: {value: 10}}\n      delay: {fixedDelay: 1s}\n"), nil},
		{"retries attempts 0 with perTryTimeout", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    retries: {attempts: 0, perTryTimeout: 2s}\n"), []diagKey{{"MC1003", 8, "a retry policy with attempts 0 (retries off) and perTryTimeout"}}},
		{"retryOn", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    retries: {attempts: 2, retryOn: '5xx, reset'}\n"), []diagKey{{"MC1003", 8, `retryOn " reset" is rejected`}}},
		{"retries", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    retries: {attempts: 2, retryOn: '5xx,reset,503'}\n"), nil},
		{"rewrite uri and regex", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    rewrite: {uri: /a, uriRegexRewrite: {match: a, rewrite: b}}\n"), []diagKey{{"MC1003", 8, "a rewrite with both uri and uriRegexRewrite"}}},
		{"rewrite regex", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    rewrite: {uriRegexRewrite: {match: '^/a/(.*)', rewrite: '/\\1'}}\n"), nil},
		{"mirrorPercent", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    mirror: {host: m}\n    mirrorPercent: 50\n"), []diagKey{{"MC1008", 9, "mirrorPercent is deprecated: istiod warns; use mirrorPercentage"}}},
		{"mirrorPercentage over 100", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    mirror: {host: m}\n    mirrorPercentage: {value: 150}\n"), []diagKey{{"MC1003", 9, "mirrorPercentage 150 is rejected"}}},
		{"mirrorPercentage", vsDoc("  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    mirror: {host: m}\n    mirrorPercentage: {value: 50}\n"), nil},
		{"TLS route without match", vsDoc("  hosts: [a.example.com]\n  tls:\n  - route: [{destination: {host: a.example.com}}]\n"), []diagKey{{"MC1003", 7, "a TLS route without match is rejected"}}},
		{"SNI host outside hosts", vsDoc("  hosts: [a.example.com]\n  tls:\n  - match: [{sniHosts: [b.example.com]}]\n    route: [{destination: {host: a.example.com}}]\n"), []diagKey{{"MC1003", 7, `SNI host "b.example.com" is rejected by istiod's validation: it is not within the VirtualService's hosts [a.example.com]`}}},
		{"SNI host IP", vsDoc("  hosts: ['*.example.com']\n  tls:\n  - match: [{sniHosts: [10.0.0.1]}]\n    route: [{destination: {host: a.example.com}}]\n"), []diagKey{{"MC1008", 7, `SNI host "10.0.0.1" is an IP address: istiod warns`}}},
		{"SNI host", vsDoc("  hosts: ['*.example.com']\n  tls:\n  - match: [{sniHosts: [a.example.com]}]\n    route: [{destination: {host: a.example.com}}]\n"), nil},
		{"TCP destination subnet", vsDoc("  hosts: [r]\n  tcp:\n  - match: [{destinationSubnets: [10.0.0.0/33]}]\n    route: [{destination: {host: r}}]\n"), []diagKey{{"MC1003", 7, `destination subnet "10.0.0.0/33" is rejected`}}},
		{"TCP route without destinations", vsDoc("  hosts: [r]\n  tcp:\n  - match: [{port: 5432}]\n"), []diagKey{{"MC1003", 7, "a TCP route without route destinations"}}},
		{"exportTo duplicate", vsDoc("  hosts: [r]\n  exportTo: [team, .]\n" + route), []diagKey{{"MC1003", 6, `exportTo lists both "." and its own namespace "team"`}}},
		{"exportTo star and more", vsDoc("  hosts: [r]\n  exportTo: ['*', a]\n" + route), []diagKey{{"MC1003", 6, `exportTo mixes "*" (everyone) with other entries`}}},
		{"exportTo no one", vsDoc("  hosts: [r]\n  exportTo: ['~']\n" + route), []diagKey{{"MC1003", 6, `exportTo "~" (no one) is rejected by istiod's validation here`}}},
		{"exportTo", vsDoc("  hosts: [r]\n  exportTo: [., istio-system]\n" + route), nil},
	})
}

func TestAdmissionDestinationRule(t *testing.T) {
	runAdmission(t, []admissionCase{
		{"bad host", drDoc("  host: r_1\n"), []diagKey{{"MC1003", 5, `host "r_1" is rejected`}}},
		{"host", drDoc("  host: r.team.svc.cluster.local\n"), nil},
		{"empty traffic policy", drDoc("  host: r\n  trafficPolicy: {}\n"), []diagKey{{"MC1003", 6, "spec.trafficPolicy: an empty trafficPolicy is rejected"}}},
		{"empty connection pool", drDoc("  host: r\n  trafficPolicy:\n    connectionPool: {}\n"), []diagKey{{"MC1003", 7, "an empty connectionPool is rejected"}}},
		{"negative pool count", drDoc("  host: r\n  trafficPolicy:\n    connectionPool:\n      tcp: {maxConnections: -1}\n"), []diagKey{{"MC1003", 8, "maxConnections -1 is rejected"}}},
		{"negative http count", drDoc("  host: r\n  trafficPolicy:\n    connectionPool:\n      http: {http2MaxRequests: -5}\n"), []diagKey{{"MC1003", 8, "spec.trafficPolicy.connectionPool.http.http2MaxRequests: http2MaxRequests -5"}}},
		{"pool", drDoc("  host: r\n  trafficPolicy:\n    connectionPool:\n      tcp: {maxConnections: 100}\n      http: {http2MaxRequests: 1000, maxRetries: 3}\n"), nil},
		{"upgrade with client protocol", drDoc("  host: r\n  trafficPolicy:\n    connectionPool:\n      http: {h2UpgradePolicy: UPGRADE, useClientProtocol: true}\n"), []diagKey{{"MC1003", 8, "useClientProtocol with h2UpgradePolicy UPGRADE"}}},
		{"outlier percent", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection:\n      maxEjectionPercent: 150\n"), []diagKey{{"MC1003", 8, "maxEjectionPercent 150 is rejected"}}},
		{"outlier consecutiveErrors", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection:\n      consecutiveErrors: 5\n"), []diagKey{{"MC1008", 8, "outlierDetection.consecutiveErrors is deprecated"}}},
		{"outlier local origin", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection:\n      consecutiveLocalOriginFailures: 5\n"), []diagKey{{"MC1003", 8, "consecutiveLocalOriginFailures without splitExternalLocalOriginErrors"}}},
		{"outlier", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection: {consecutive5xxErrors: 5, interval: 10s, maxEjectionPercent: 50, splitExternalLocalOriginErrors: true, consecutiveLocalOriginFailures: 5}\n"), nil},
		{"cookie without name", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      consistentHash:\n        httpCookie: {ttl: 10s}\n"), []diagKey{{"MC1003", 9, "an httpCookie hash without name is rejected"}}},
		{"maglev table size", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      consistentHash:\n        httpHeaderName: x-user\n        maglev: {tableSize: 1000}\n"), []diagKey{{"MC1003", 10, "maglev tableSize 1000 is rejected by istiod's validation: it must be a prime"}}},
		{"minimumRingSize", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      consistentHash:\n        httpHeaderName: x-user\n        minimumRingSize: 1024\n"), []diagKey{{"MC1008", 10, "consistentHash.minimumRingSize is deprecated"}}},
		{"consistent hash", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      consistentHash:\n        httpHeaderName: x-user\n        maglev: {tableSize: 65537}\n"), nil},
		{"locality distribute and failover", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection: {consecutive5xxErrors: 5}\n    loadBalancer:\n      localityLbSetting:\n        distribute: [{from: a/*, to: {b/*: 100}}]\n        failover: [{from: a, to: b}]\n"),
			[]diagKey{{"MC1003", 9, "localityLbSetting with both distribute and failover"}}},
		{"locality weights", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      localityLbSetting:\n        distribute:\n        - from: a/*\n          to: {b/*: 60, c/*: 30}\n"), []diagKey{{"MC1003", 11, "spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[0].to: locality weights adding up to 90"}}},
		{"failover without outlier detection", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      localityLbSetting:\n        failover: [{from: a, to: b}]\n"), []diagKey{{"MC1008", 8, "failover without outlierDetection: istiod warns"}}},
		{"failover to itself", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection: {consecutive5xxErrors: 5}\n    loadBalancer:\n      localityLbSetting:\n        failover: [{from: a, to: a}]\n"), []diagKey{{"MC1003", 10, `failover from "a" to itself`}}},
		{"locality", drDoc("  host: r\n  trafficPolicy:\n    outlierDetection: {consecutive5xxErrors: 5}\n    loadBalancer:\n      localityLbSetting:\n        distribute:\n        - from: a/*\n          to: {b/*: 60, c/*: 40}\n"), nil},
		{"overlapping localities", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      localityLbSetting:\n        distribute:\n        - {from: us-east/*, to: {us-east/*: 100}}\n        - {from: us-east/z1, to: {us-east/*: 100}}\n"),
			[]diagKey{{"MC1003", 11, `spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[1].from: locality "us-east/z1" is rejected by istiod's validation: it overlaps a locality listed before it`}}},
		{"wildcard inside a locality", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      localityLbSetting:\n        distribute:\n        - {from: us-*/z1, to: {us-east/*: 100}}\n"),
			[]diagKey{{"MC1003", 10, `locality "us-*/z1" is rejected by istiod's validation: a wildcard "*" may appear once, at the end`}}},
		{"distinct localities", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      localityLbSetting:\n        distribute:\n        - {from: us-east/z1, to: {us-east/*: 100}}\n        - {from: us-east/z2, to: {us-east/z2: 50, us-west/*: 50}}\n"), nil},
		{"warmup without duration", drDoc("  host: r\n  trafficPolicy:\n    loadBalancer:\n      simple: ROUND_ROBIN\n      warmup: {aggression: 2}\n"), []diagKey{{"MC1003", 9, "a warmup without duration"}}},
		{"mutual TLS without certificates", drDoc("  host: r\n  trafficPolicy:\n    tls: {mode: MUTUAL}\n"), []diagKey{{"MC1003", 7, "without clientCertificate"}, {"MC1003", 7, "without privateKey"}}},
		{"mutual TLS with credential", drDoc("  host: r\n  trafficPolicy:\n    tls: {mode: MUTUAL, credentialName: client}\n"), nil},
		{"credential and inline CA", drDoc("  host: r\n  trafficPolicy:\n    tls: {mode: SIMPLE, credentialName: c, caCertificates: /ca.pem}\n"), []diagKey{{"MC1003", 7, "credentialName with clientCertificate, privateKey, caCertificates or caCrl"}}},
		{"insecureSkipVerify with SANs", drDoc("  host: r\n  trafficPolicy:\n    tls: {mode: SIMPLE, insecureSkipVerify: true, subjectAltNames: [a]}\n"), []diagKey{{"MC1003", 7, "insecureSkipVerify with caCertificates, credentialName or subjectAltNames"}}},
		{"insecureSkipVerify", drDoc("  host: r\n  trafficPolicy:\n    tls: {mode: SIMPLE, insecureSkipVerify: true}\n"), nil},
		{"port-level entry without port", drDoc("  host: r\n  trafficPolicy:\n    portLevelSettings:\n    - tls: {mode: ISTIO_MUTUAL}\n"), []diagKey{{"MC1003", 8, "a portLevelSettings entry without port"}}},
		{"port-level entry without settings", drDoc("  host: r\n  trafficPolicy:\n    portLevelSettings:\n    - port: {number: 80}\n"), []diagKey{{"MC1003", 8, "a portLevelSettings entry without settings"}}},
		{"tunnel protocol", drDoc("  host: r\n  trafficPolicy:\n    tunnel: {protocol: GET, targetHost: egress.example.com, targetPort: 443}\n"), []diagKey{{"MC1003", 7, `tunnel protocol "GET" is rejected`}}},
		{"tunnel", drDoc("  host: r\n  trafficPolicy:\n    tunnel: {protocol: CONNECT, targetHost: egress.example.com, targetPort: 443}\n"), nil},
		{"duplicate subsets", drDoc("  host: r\n  subsets:\n  - name: v1\n  - name: v1\n"), []diagKey{{"MC1003", 8, `subset "v1" is defined twice`}}},
		{"subset name", drDoc("  host: r\n  subsets:\n  - name: V_1\n"), []diagKey{{"MC1003", 7, `subset name "V_1" is rejected`}}},
		{"subset label", drDoc("  host: r\n  subsets:\n  - name: v1\n    labels: {version: 'v1/a'}\n"), []diagKey{{"MC1003", 8, `label value "v1/a" is rejected`}}},
		{"subsets", drDoc("  host: r\n  subsets:\n  - {name: v1, labels: {version: v1}}\n  - {name: v2, labels: {app.kubernetes.io/version: v2}}\n"), nil},
		{"selector exported", drDoc("  host: r\n  workloadSelector: {matchLabels: {app: a}}\n  exportTo: ['*']\n"), []diagKey{{"MC1003", 7, "a DestinationRule with a workloadSelector exported beyond its namespace"}}},
		{"selector without labels", drDoc("  host: r\n  workloadSelector: {}\n"), []diagKey{{"MC1008", 6, "DestinationRule has a workload selector without labels: istiod warns"}}},
		{"selector wildcard", drDoc("  host: r\n  workloadSelector: {matchLabels: {app: 'a*'}}\n"), []diagKey{{"MC1003", 6, "wildcard in selector label app=a* is rejected"}}},
		{"selector kept local", drDoc("  host: r\n  workloadSelector: {matchLabels: {app: a}}\n  exportTo: [.]\n"), nil},
	})
}

func TestAdmissionGatewayAndSidecar(t *testing.T) {
	const server = "  selector: {istio: ingressgateway}\n  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['*/a.example.com']\n"
	runAdmission(t, []admissionCase{
		{"server", gwDoc(server), nil},
		{"dotted name", "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: gw.v1, namespace: team}\nspec:\n" + server, []diagKey{{"MC1003", 3, `Gateway name "gw.v1" is rejected by istiod's validation: it must be a DNS label`}}},
		{"no servers", gwDoc("  selector: {istio: ingressgateway}\n"), []diagKey{{"MC1003", 4, "a Gateway without servers"}}},
		{"server without hosts", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n"), []diagKey{{"MC1003", 6, "spec.servers[0].hosts: a server without hosts"}}},
		{"short host", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: [web]\n"), []diagKey{{"MC1003", 7, `host "web" is rejected by istiod's validation: short names are not allowed`}}},
		{"partial wildcard host", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['team/a*.example.com']\n"), []diagKey{{"MC1003", 7, "a wildcard must be a whole first label"}}},
		{"bad host namespace", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['Team_A/a.example.com']\n"), []diagKey{{"MC1003", 7, `namespace "Team_A" is not`}}},
		{"IP host", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: [10.1.2.3]\n"), nil},
		{"port without name", gwDoc("  servers:\n  - port: {number: 80, protocol: HTTP}\n    hosts: ['*']\n"), []diagKey{{"MC1003", 6, "a server port without name"}}},
		{"duplicate port names", gwDoc("  servers:\n  - port: {number: 80, name: web, protocol: HTTP}\n    hosts: ['*']\n  - port: {number: 8080, name: web, protocol: HTTP}\n    hosts: ['*']\n"), []diagKey{{"MC1003", 8, `server port name "web" is used twice`}}},
		{"unknown protocol", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: WS}\n    hosts: ['*']\n"), []diagKey{{"MC1003", 6, `protocol "WS" is rejected`}}},
		{"HTTPS without tls", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n"), []diagKey{{"MC1003", 6, "a HTTPS server without tls settings"}}},
		{"HTTPS without credentials", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: SIMPLE}\n"), []diagKey{{"MC1003", 8, "tls mode SIMPLE without privateKey"}, {"MC1003", 8, "tls mode SIMPLE without serverCertificate"}}},
		{"HTTPS", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: web-cert}\n"), nil},
		{"MUTUAL without CA", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: MUTUAL, serverCertificate: /c.pem, privateKey: /k.pem}\n"), []diagKey{{"MC1003", 8, "tls mode MUTUAL without caCertificates"}}},
		{"ISTIO_MUTUAL with credential", gwDoc("  servers:\n  - port: {number: 443, name: tls, protocol: TLS}\n    hosts: ['*']\n    tls: {mode: ISTIO_MUTUAL, credentialName: c}\n"), []diagKey{{"MC1003", 8, "credentialName with mode ISTIO_MUTUAL"}}},
		{"passthrough with credential", gwDoc("  servers:\n  - port: {number: 443, name: tls, protocol: TLS}\n    hosts: ['*']\n    tls: {mode: PASSTHROUGH, credentialName: c}\n"), []diagKey{{"MC1008", 8, "certificates with mode PASSTHROUGH: istiod warns and ignores them"}}},
		{"two certificate sources", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: c, serverCertificate: /c.pem, privateKey: /k.pem}\n"), []diagKey{{"MC1003", 8, "several certificate sources"}}},
		{"TLS on TCP", gwDoc("  servers:\n  - port: {number: 9000, name: tcp, protocol: TCP}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: c}\n"), []diagKey{{"MC1003", 8, "tls settings on a TCP server"}}},
		{"httpsRedirect on HTTP", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['*']\n    tls: {httpsRedirect: true}\n"), nil},
		{"httpsRedirect on HTTPS", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: c, httpsRedirect: true}\n"), []diagKey{{"MC1008", 8, "tls.httpsRedirect on a HTTPS server: istiod warns"}}},
		{"unknown cipher", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: c, cipherSuites: [ECDHE-RSA-AES128-GCM-SHA256, RC4]}\n"), []diagKey{{"MC1008", 8, `cipher suites "RC4" are unknown`}}},
		{"TLS 1.0 without ciphers", gwDoc("  servers:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    hosts: ['*']\n    tls: {mode: SIMPLE, credentialName: c, minProtocolVersion: TLSV1_0}\n"), []diagKey{{"MC1008", 8, "minProtocolVersion TLSV1_0 without cipherSuites"}}},
		{"targetPort", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP, targetPort: 8080}\n    hosts: ['*']\n"), []diagKey{{"MC1003", 6, "targetPort on a Gateway server"}}},
		{"bind", gwDoc("  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['*']\n    bind: localhost\n"), []diagKey{{"MC1003", 8, `bind "localhost" is rejected`}}},

		{"egress host without namespace", scDoc("  egress:\n  - hosts: [a.example.com]\n"), []diagKey{{"MC1003", 6, `egress host "a.example.com" is rejected by istiod's validation: write namespace/host, e.g. "*/a.example.com"`}}},
		{"egress host", scDoc("  egress:\n  - hosts: [./*, istio-system/*, '*/a.example.com', '~b/*']\n"), nil},
		{"egress host repeated", scDoc("  egress:\n  - hosts: [./*, team/web.team.svc.cluster.local]\n"), []diagKey{{"MC1008", 6, `egress host "team/web.team.svc.cluster.local" repeats or is covered by an earlier host`}}},
		{"egress catch-all beside others", scDoc("  egress:\n  - hosts: ['*/*', ./*]\n"), []diagKey{{"MC1008", 6, `egress hosts list "*/*"`}}},
		{"egress listener without hosts", scDoc("  egress:\n  - port: {number: 80, name: http, protocol: HTTP}\n"), []diagKey{{"MC1003", 6, "an egress listener without hosts"}}},
		{"portless egress not last", scDoc("  egress:\n  - hosts: [./*]\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: [./*]\n"), []diagKey{{"MC1003", 6, "an egress listener without port that is not the last"}}},
		{"duplicate egress ports", scDoc("  egress:\n  - port: {number: 80, name: a, protocol: HTTP}\n    hosts: [./*]\n  - port: {number: 80, name: b, protocol: HTTP}\n    hosts: [./*]\n"), []diagKey{{"MC1003", 8, "egress port 80 is listed twice"}}},
		{"egress port name", scDoc("  egress:\n  - port: {number: 80, name: http_1, protocol: HTTP}\n    hosts: [./*]\n"), []diagKey{{"MC1003", 6, `port name "http_1" is rejected`}}},
		{"egress unix socket", scDoc("  egress:\n  - port: {number: 0, name: uds, protocol: HTTP}\n    bind: unix:///var/run/a.sock\n    hosts: [./*]\n"), nil},
		{"egress port 0 without socket", scDoc("  egress:\n  - port: {number: 0, name: uds, protocol: HTTP}\n    hosts: [./*]\n"), []diagKey{{"MC1003", 6, "an egress port 0 without a unix:// bind"}}},
		{"ingress default endpoint", scDoc("  ingress:\n  - port: {number: 80, name: http, protocol: HTTP}\n    defaultEndpoint: 10.0.0.1:8080\n"), []diagKey{{"MC1003", 7, "the host must be 127.0.0.1, 0.0.0.0, [::1] or [::]"}}},
		{"ingress", scDoc("  ingress:\n  - port: {number: 80, name: http, protocol: HTTP}\n    defaultEndpoint: 127.0.0.1:8080\n"), nil},
		{"ingress tls mode", scDoc("  ingress:\n  - port: {number: 443, name: https, protocol: HTTPS}\n    defaultEndpoint: 127.0.0.1:8443\n    tls: {mode: ISTIO_MUTUAL}\n"), []diagKey{{"MC1003", 8, "tls mode ISTIO_MUTUAL in Sidecar ingress is rejected"}}},
		{"ingress HTTP pool on TCP", scDoc("  ingress:\n  - port: {number: 5432, name: tcp, protocol: TCP}\n    defaultEndpoint: 127.0.0.1:5432\n    connectionPool: {http: {http1MaxPendingRequests: 10}}\n"), []diagKey{{"MC1008", 8, `HTTP pool settings on port 5432 of protocol "TCP": istiod warns`}}},
		{"empty Sidecar", scDoc("  {}\n"), []diagKey{{"MC1003", 4, "a Sidecar with no egress, ingress, outboundTrafficPolicy or inboundConnectionPool is rejected"}}},
		{"near miss: only an outbound policy", scDoc("  outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n"), nil},
		{"short egress host", scDoc("  egress:\n  - hosts: [./reviews]\n"), []diagKey{{"MC1003", 6, `host "./reviews" is rejected by istiod's validation: short names are not allowed`}}},
		{"near miss: full egress host", scDoc("  egress:\n  - hosts: [./reviews.team.svc.cluster.local]\n"), nil},
		{"selector without labels", scDoc("  workloadSelector: {}\n  egress:\n  - hosts: [./*]\n"), []diagKey{{"MC1008", 5, "Sidecar has a workload selector without labels: istiod warns"}}},
		{"egress proxy without ALLOW_ANY", scDoc("  outboundTrafficPolicy:\n    mode: REGISTRY_ONLY\n    egressProxy: {host: egress.example.com, port: {number: 443}}\n"), []diagKey{{"MC1003", 7, "egressProxy without mode ALLOW_ANY"}}},
		{"egress proxy", scDoc("  outboundTrafficPolicy:\n    mode: ALLOW_ANY\n    egressProxy: {host: egress.example.com, port: {number: 443}}\n"), nil},
	})
}

func TestAdmissionServiceEntryAndWorkloadEntry(t *testing.T) {
	runAdmission(t, []admissionCase{
		{"no hosts", seDoc("  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS\n"), []diagKey{{"MC1003", 4, "a ServiceEntry without hosts"}}},
		{"host star", seDoc("  hosts: ['*']\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: NONE\n"), []diagKey{{"MC1003", 5, `host "*" is rejected by istiod's validation in a ServiceEntry`}}},
		{"partial wildcard", seDoc("  hosts: ['*api.example.com']\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: NONE\n"), []diagKey{{"MC1008", 5, `host "*api.example.com" has a partial wildcard: istiod warns`}}},
		{"wildcard inside a label", seDoc("  hosts: ['api*.example.com']\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: NONE\n"), []diagKey{{"MC1003", 5, `label "api*" is not a DNS label`}, {"MC1008", 5, "has a partial wildcard"}}},
		{"DNS", seDoc("  hosts: [api.example.com]\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS\n"), nil},
		{"DNS with a wildcard host and no endpoints", seDoc("  hosts: ['*.example.com']\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS\n"), []diagKey{{"MC1003", 5, `host "*.example.com" with resolution DNS and no endpoints is rejected`}}},
		{"NONE with endpoints", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0.0/16]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: NONE\n  endpoints: [{address: 10.1.0.5}]\n"), []diagKey{{"MC1003", 9, "endpoints with resolution NONE are rejected"}}},
		{"STATIC with a DNS endpoint", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0.9]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: STATIC\n  endpoints: [{address: db1.example.com}]\n"), []diagKey{{"MC1003", 9, `endpoint address "db1.example.com" is rejected by istiod's validation: with resolution STATIC it must be an IP`}}},
		{"STATIC", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0.9]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: STATIC\n  endpoints: [{address: 10.1.0.5, ports: {tcp: 15432}}]\n"), nil},
		{"endpoint port not declared", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0.9]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: STATIC\n  endpoints: [{address: 10.1.0.5, ports: {sql: 15432}}]\n"), []diagKey{{"MC1003", 9, `endpoint port "sql" is rejected by istiod's validation: the ServiceEntry has no port of that name`}}},
		{"selector and endpoints", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0.9]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: STATIC\n  workloadSelector: {labels: {app: db}}\n  endpoints: [{address: 10.1.0.5}]\n"), []diagKey{{"MC1003", 10, "a ServiceEntry with both workloadSelector and endpoints"}}},
		{"CIDR with DNS", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0.0/16]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: DNS\n"), []diagKey{{"MC1003", 6, "CIDR addresses with resolution DNS are rejected"}}},
		{"bad address", seDoc("  hosts: [db.example.com]\n  addresses: [10.1.0]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: DNS\n"), []diagKey{{"MC1003", 6, `address "10.1.0" is rejected`}}},
		{"TCP port without addresses", seDoc("  hosts: [db.example.com]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: NONE\n"), []diagKey{{"MC1008", 6, "TCP port 5432 without addresses and without IP auto-allocation"}}},
		{"TCP port with auto-allocation opted out", "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: r, namespace: team, labels: {networking.istio.io/enable-autoallocate-ip: 'false'}}\nspec:\n  hosts: [db.example.com]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: DNS\n", []diagKey{{"MC1008", 6, "without IP auto-allocation"}}},
		{"TCP port with auto-allocation", seDoc("  hosts: [db.example.com]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: DNS\n"), nil},
		{"duplicate port names", seDoc("  hosts: [api.example.com]\n  ports:\n  - {number: 443, name: https, protocol: HTTPS}\n  - {number: 8443, name: https, protocol: HTTPS}\n  resolution: DNS\n"), []diagKey{{"MC1003", 8, `port name "https" is used twice`}}},
		{"unknown protocol", seDoc("  hosts: [api.example.com]\n  ports: [{number: 443, name: https, protocol: QUIC}]\n  resolution: DNS\n"), []diagKey{{"MC1003", 6, `protocol "QUIC" is rejected`}}},
		{"several hosts with a TCP port", seDoc("  hosts: [a.example.com, b.example.com]\n  addresses: [10.1.0.9]\n  ports: [{number: 5432, name: tcp, protocol: TCP}]\n  resolution: DNS\n"),
			[]diagKey{{"MC1008", 5, "several hosts with addresses and a TCP port: istiod warns"}, {"MC1003", 7, "several hosts with a TCP port are rejected"}}},
		{"several hosts with HTTPS", seDoc("  hosts: [a.example.com, b.example.com]\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS\n"), nil},
		{"DNS_ROUND_ROBIN endpoints", seDoc("  hosts: [api.example.com]\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS_ROUND_ROBIN\n  endpoints: [{address: a.example.com}, {address: b.example.com}]\n"), []diagKey{{"MC1003", 8, "more than one endpoint with resolution DNS_ROUND_ROBIN"}}},
		{"exportTo no one", seDoc("  hosts: [api.example.com]\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS\n  exportTo: ['~']\n"), nil},
		{"exportTo no one and more", seDoc("  hosts: [api.example.com]\n  ports: [{number: 443, name: https, protocol: HTTPS}]\n  resolution: DNS\n  exportTo: ['~', .]\n"), []diagKey{{"MC1003", 8, `exportTo mixes "~"`}}},

		{"workload without address", weDoc("  labels: {app: vm}\n"), []diagKey{{"MC1003", 4, "a workload without address is rejected"}}},
		{"workload on a network without address", weDoc("  network: remote\n"), []diagKey{{"MC1008", 4, `a workload without address on network "remote": istiod warns`}}},
		{"workload", weDoc("  address: vm1.example.com\n  ports: {http: 8080}\n  labels: {app: vm}\n"), nil},
		{"workload port", weDoc("  address: 10.0.0.9\n  ports: {http: 0}\n"), []diagKey{{"MC1003", 6, "port 0 is rejected"}}},
		{"workload label", weDoc("  address: 10.0.0.9\n  labels: {'-app': vm}\n"), []diagKey{{"MC1003", 6, `label key "-app" is rejected`}}},
	})
}

func TestAdmissionSecurity(t *testing.T) {
	runAdmission(t, []admissionCase{
		{"port-level mTLS without selector", paDoc("  mtls: {mode: STRICT}\n  portLevelMtls:\n    8080: {mode: PERMISSIVE}\n"), []diagKey{{"MC1003", 6, "portLevelMtls in a namespace- or mesh-wide PeerAuthentication"}}},
		{"port-level mTLS", paDoc("  selector: {matchLabels: {app: web}}\n  mtls: {mode: STRICT}\n  portLevelMtls:\n    8080: {mode: PERMISSIVE}\n"), nil},
		{"empty port-level mTLS", paDoc("  selector: {matchLabels: {app: web}}\n  portLevelMtls: {}\n"), []diagKey{{"MC1003", 6, "an empty portLevelMtls is rejected"}}},
		{"port 0", paDoc("  selector: {matchLabels: {app: web}}\n  portLevelMtls:\n    0: {mode: PERMISSIVE}\n"), []diagKey{{"MC1003", 7, "port 0 is rejected"}}},
		{"selector without labels", paDoc("  selector: {}\n  mtls: {mode: STRICT}\n"), []diagKey{{"MC1008", 5, "PeerAuthentication has a workload selector without labels"}}},
		{"namespace-wide", paDoc("  mtls: {mode: STRICT}\n"), nil},

		{"DENY without rules", apDoc("  action: DENY\n"), []diagKey{{"MC1003", 4, "a DENY AuthorizationPolicy without rules is rejected"}}},
		{"DENY everything", apDoc("  action: DENY\n  rules: [{}]\n"), nil},
		{"ALLOW nothing", apDoc("  {}\n"), nil},
		{"provider without CUSTOM", apDoc("  action: ALLOW\n  provider: {name: ext}\n  rules: [{}]\n"), []diagKey{{"MC1003", 6, "provider with action ALLOW is rejected"}}},
		{"CUSTOM without provider", apDoc("  action: CUSTOM\n  rules: [{}]\n"), []diagKey{{"MC1003", 4, "without provider.name"}}},
		{"CUSTOM with principals", apDoc("  action: CUSTOM\n  provider: {name: ext}\n  rules:\n  - from: [{source: {principals: [a]}}]\n"), []diagKey{{"MC1003", 8, "source principals in a CUSTOM AuthorizationPolicy"}}},
		{"CUSTOM", apDoc("  action: CUSTOM\n  provider: {name: ext}\n  rules:\n  - to: [{operation: {paths: [/admin]}}]\n"), nil},
		{"empty source", apDoc("  rules:\n  - from: [{source: {}}]\n"), []diagKey{{"MC1003", 6, "an empty source is rejected"}}},
		{"empty operation", apDoc("  rules:\n  - to: [{operation: {}}]\n"), []diagKey{{"MC1003", 6, "an empty operation is rejected"}}},
		{"service accounts with namespaces", apDoc("  rules:\n  - from: [{source: {namespaces: [a], serviceAccounts: [a/b]}}]\n"), []diagKey{{"MC1003", 6, "serviceAccounts with principals or namespaces"}}},
		{"bad IP block", apDoc("  rules:\n  - from: [{source: {ipBlocks: [10.0.0.0/40]}}]\n"), []diagKey{{"MC1003", 6, `"10.0.0.0/40" is rejected`}}},
		{"bad port", apDoc("  rules:\n  - to: [{operation: {ports: ['http']}}]\n"), []diagKey{{"MC1003", 6, `port "http" is rejected`}}},
		{"path template", apDoc("  rules:\n  - to: [{operation: {paths: ['/a/{**}/b/{*}']}}]\n"), []diagKey{{"MC1003", 6, "{**} must be the last operator"}}},
		{"empty value", apDoc("  rules:\n  - to: [{operation: {methods: [GET, '']}}]\n"), []diagKey{{"MC1003", 6, "an empty value is rejected"}}},
		{"unknown condition", apDoc("  rules:\n  - when:\n    - key: request.method\n      values: [GET]\n"), []diagKey{{"MC1003", 7, `condition key "request.method" is rejected`}}},
		{"condition without values", apDoc("  rules:\n  - when:\n    - key: source.ip\n"), []diagKey{{"MC1003", 7, `condition "source.ip" without values or notValues`}}},
		{"header condition", apDoc("  rules:\n  - when:\n    - key: request.headers\n      values: [a]\n"), []diagKey{{"MC1003", 7, "write it as name[key]"}}},
		{"conditions", apDoc("  rules:\n  - when:\n    - {key: 'request.headers[x-a]', values: [a]}\n    - {key: source.ip, notValues: [10.0.0.0/8]}\n"), nil},
		{"DENY on HTTP attributes only", apDoc("  action: DENY\n  rules:\n  - to: [{operation: {methods: [POST]}}]\n"), []diagKey{{"MC1008", 7, "spec.rules[0]: this DENY rule matches HTTP attributes only: istiod warns"}}},
		{"DENY on ports", apDoc("  action: DENY\n  rules:\n  - to: [{operation: {methods: [POST], ports: ['8080']}}]\n"), nil},
		{"targetRef and selector", apDoc("  selector: {matchLabels: {app: a}}\n  targetRef: {kind: Service, group: '', name: web}\n  rules: [{}]\n"), []diagKey{{"MC1003", 4, "more than one of selector, targetRef and targetRefs"}}},
		{"targetRef kind", apDoc("  targetRefs: [{kind: Deployment, group: apps, name: web}]\n  rules: [{}]\n"), []diagKey{{"MC1003", 5, "targetRef to apps/Deployment is rejected"}}},
		{"targetRef", apDoc("  targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: web}]\n  rules: [{}]\n"), nil},
		{"dry-run annotation", "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: r\n  namespace: team\n  annotations: {istio.io/dry-run: 'yes'}\nspec:\n  rules: [{}]\n",
			[]diagKey{{"MC1003", 6, `annotation istio.io/dry-run value "yes" is rejected`}}},
		{"dry-run", "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: r\n  namespace: team\n  annotations: {istio.io/dry-run: 'true'}\nspec:\n  rules: [{}]\n", nil},
		{"dry-run on a Sidecar", "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata:\n  name: r\n  namespace: team\n  annotations: {istio.io/dry-run: 'true'}\nspec:\n  egress: [{hosts: [./*]}]\n",
			[]diagKey{{"MC1003", 6, "annotation istio.io/dry-run is rejected by istiod's validation on a Sidecar"}}},
	})
}

func TestAdmissionUndecodedPolicies(t *testing.T) {
	ra := func(spec string) string { return istioDoc("security.istio.io/v1", "RequestAuthentication", spec) }
	tel := func(spec string) string { return istioDoc("telemetry.istio.io/v1", "Telemetry", spec) }
	wasm := func(spec string) string { return istioDoc("extensions.istio.io/v1alpha1", "WasmPlugin", spec) }
	ef := func(spec string) string { return istioDoc("networking.istio.io/v1alpha3", "EnvoyFilter", spec) }
	pc := func(spec string) string { return istioDoc("networking.istio.io/v1beta1", "ProxyConfig", spec) }
	wg := func(spec string) string { return istioDoc("networking.istio.io/v1", "WorkloadGroup", spec) }
	runAdmission(t, []admissionCase{
		{"JWT rule without issuer", ra("  jwtRules:\n  - audiences: [web]\n"), []diagKey{{"MC1003", 6, "spec.jwtRules[0]: a JWT rule without issuer or jwksUri is rejected"}}},
		{"jwksUri scheme", ra("  jwtRules:\n  - issuer: https://id.example.com\n    jwksUri: ftp://id.example.com/keys\n"), []diagKey{{"MC1003", 7, `jwksUri "ftp://id.example.com/keys" is rejected`}}},
		{"empty audience", ra("  jwtRules:\n  - issuer: https://id.example.com\n    audiences: ['']\n"), []diagKey{{"MC1003", 7, "an empty audience is rejected"}}},
		{"output header", ra("  jwtRules:\n  - issuer: https://id.example.com\n    outputClaimToHeaders: [{header: 'x user', claim: sub}]\n"), []diagKey{{"MC1003", 7, `header "x user" is rejected`}}},
		{"private jwks", ra("  jwtRules:\n  - issuer: https://id.example.com\n    jwks: '{\"keys\": [{\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"a\", \"y\": \"b\", \"d\": \"c\"}]}'\n"), []diagKey{{"MC1008", 7, "jwks key 0 holds private or symmetric key material: istiod warns"}}},
		{"bad jwks", ra("  jwtRules:\n  - issuer: https://id.example.com\n    jwks: 'not json'\n"), []diagKey{{"MC1003", 7, "jwks is rejected"}}},
		{"JWT rule", ra("  selector: {matchLabels: {app: web}}\n  jwtRules:\n  - issuer: https://id.example.com\n    jwksUri: https://id.example.com/keys\n    fromHeaders: [{name: x-token}]\n"), nil},
		{"RequestAuthentication selector without labels", ra("  selector: {}\n  jwtRules: [{issuer: a}]\n"), []diagKey{{"MC1008", 5, "RequestAuthentication has a workload selector without labels"}}},

		{"sampling over 100", tel("  tracing:\n  - randomSamplingPercentage: 120\n"), []diagKey{{"MC1003", 6, "randomSamplingPercentage 120 is rejected"}}},
		{"two tracing providers", tel("  tracing:\n  - providers: [{name: a}, {name: b}]\n"), []diagKey{{"MC1008", 6, "several tracing providers: istiod warns"}}},
		{"provider without name", tel("  accessLogging:\n  - providers: [{}]\n"), []diagKey{{"MC1003", 6, "a provider without name is rejected"}}},
		{"UPSERT without value", tel("  metrics:\n  - overrides:\n    - tagOverrides:\n        request_host: {operation: UPSERT}\n"), []diagKey{{"MC1003", 8, "a tag override UPSERT without value is rejected"}}},
		{"telemetry", tel("  tracing:\n  - randomSamplingPercentage: 10\n    providers: [{name: otel}]\n  metrics:\n  - overrides:\n    - tagOverrides:\n        request_host: {operation: REMOVE}\n"), nil},

		{"wasm without url", wasm("  pluginName: p\n"), []diagKey{{"MC1003", 4, "a WasmPlugin without url is rejected"}}},
		{"wasm url scheme", wasm("  url: s3://bucket/p.wasm\n"), []diagKey{{"MC1003", 5, `url "s3://bucket/p.wasm" is rejected`}}},
		{"wasm sha256", wasm("  url: oci://ghcr.io/org/p:1\n  sha256: ABC\n"), []diagKey{{"MC1003", 6, `sha256 "ABC" is rejected`}}},
		{"wasm env twice", wasm("  url: oci://ghcr.io/org/p:1\n  vmConfig:\n    env: [{name: A, value: one}, {name: A, value: two}]\n"), []diagKey{{"MC1003", 7, `env "A" is set twice`}}},
		{"wasm", wasm("  url: ghcr.io/org/p:1\n  sha256: " + strings.Repeat("ab", 32) + "\n  vmConfig:\n    env: [{name: A, value: x}, {name: B, valueFrom: HOST}]\n"), nil},

		{"patch without value", ef("  configPatches:\n  - applyTo: HTTP_FILTER\n    patch: {operation: INSERT_BEFORE}\n"), []diagKey{{"MC1003", 7, "spec.configPatches[0].patch: a INSERT_BEFORE patch without value is rejected"}}},
		{"patch without applyTo", ef("  configPatches:\n  - patch: {operation: REMOVE}\n"), []diagKey{{"MC1003", 6, "a config patch without applyTo is rejected"}}},
		{"cluster patch on a listener match", ef("  configPatches:\n  - applyTo: CLUSTER\n    match: {listener: {portNumber: 80}}\n    patch: {operation: REMOVE}\n"), []diagKey{{"MC1003", 7, "applyTo CLUSTER with a match that is not on a cluster"}}},
		{"proxyVersion regex", ef("  configPatches:\n  - applyTo: CLUSTER\n    match: {proxy: {proxyVersion: '1.2('}}\n    patch: {operation: REMOVE}\n"), []diagKey{{"MC1003", 7, `proxyVersion regex "1.2(" is rejected`}}},
		{"subFilter without HTTP_FILTER", ef("  configPatches:\n  - applyTo: NETWORK_FILTER\n    match:\n      listener:\n        filterChain:\n          filter:\n            name: envoy.filters.network.http_connection_manager\n            subFilter: {name: envoy.filters.http.router}\n    patch: {operation: REMOVE}\n"),
			[]diagKey{{"MC1003", 12, "a subFilter match is rejected by istiod's validation unless applyTo is HTTP_FILTER"}}},
		{"negative concurrency", pc("  concurrency: -1\n"), []diagKey{{"MC1003", 5, "concurrency -1 is rejected"}}},
		{"concurrency", pc("  selector: {matchLabels: {app: web}}\n  concurrency: 2\n"), nil},
		{"WorkloadGroup without template", wg("  metadata: {labels: {app: vm}}\n"), []diagKey{{"MC1003", 4, "a WorkloadGroup without template"}}},
		{"WorkloadGroup probe port", wg("  template: {serviceAccount: vm}\n  probe:\n    httpGet: {path: /ready, port: 0}\n"), []diagKey{{"MC1003", 7, "port 0 is rejected"}}},
		{"WorkloadGroup gRPC probe", wg("  template: {serviceAccount: vm}\n  probe:\n    grpc: {port: 9000}\n"), []diagKey{{"MC1003", 6, "a probe without httpGet, tcpSocket or exec (grpc included)"}}},
		{"WorkloadGroup", wg("  metadata: {labels: {app: vm}}\n  template: {serviceAccount: vm}\n  probe:\n    periodSeconds: 5\n    httpGet: {path: /ready, port: 8080}\n"), nil},
		{"deprecated filter name", ef("  configPatches:\n  - applyTo: HTTP_FILTER\n    match:\n      listener:\n        filterChain:\n          filter:\n            name: envoy.http_connection_manager\n            subFilter: {name: envoy.router}\n    patch: {operation: REMOVE}\n"),
			[]diagKey{{"MC1008", 11, `filter name "envoy.http_connection_manager" is deprecated: istiod warns; match envoy.filters.network.http_connection_manager`}, {"MC1008", 12, `filter name "envoy.router" is deprecated`}}},
		{"patch", ef("  workloadSelector: {labels: {app: web}}\n  configPatches:\n  - applyTo: HTTP_FILTER\n    match:\n      context: SIDECAR_INBOUND\n      listener:\n        filterChain:\n          filter:\n            name: envoy.filters.network.http_connection_manager\n            subFilter: {name: envoy.filters.http.router}\n    patch:\n      operation: INSERT_BEFORE\n      value: {name: my.lua}\n"), nil},
	})
}
