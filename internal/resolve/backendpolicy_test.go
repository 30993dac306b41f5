package resolve

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

// TestBackendPolicyRuleMerge: a DestinationRule generated from a
// BackendTLSPolicy (it has the internal parents annotation) yields to a
// written rule for the same host field by field, port by port, whichever
// is older; two written rules keep first-wins (docs/semantics/gateway-api.md §G8).
func TestBackendPolicyRuleMerge(t *testing.T) {
	generated := "apiVersion: networking.istio.io/v1\nkind: DestinationRule\n" +
		"metadata: {name: echo-generated, namespace: app, annotations: {internal.istio.io/parents: BackendTLSPolicy/app.p}}\n" +
		"spec: {host: echo.app.svc.cluster.local, trafficPolicy: {tls: {mode: SIMPLE, sni: echo.example.com}," +
		" portLevelSettings: [{port: {number: 80}, tls: {mode: SIMPLE, sni: port.example.com}}, {port: {number: 443}, tls: {mode: SIMPLE}}]}}\n"
	written := func(name, created, policy string) string {
		return "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: " + name + ", namespace: app, creationTimestamp: '" + created + "'}\n" +
			"spec: {host: echo.app.svc.cluster.local, trafficPolicy: " + policy + "}\n"
	}
	tests := []struct {
		name string
		docs []string
		want string
	}{
		{"written rule fills in", []string{generated, written("user", "2024-01-01T00:00:00Z",
			"{connectionPool: {tcp: {maxConnections: 7}}, portLevelSettings: [{port: {number: 80}, loadBalancer: {simple: RANDOM}}]}")},
			`{"connectionPool":{"tcp":{"maxConnections":7}},"portLevelSettings":[{"loadBalancer":{"simple":"RANDOM"},"port":{"number":80},"tls":{"mode":"SIMPLE","sni":"port.example.com"}},{"port":{"number":443},"tls":{"mode":"SIMPLE"}}],"tls":{"mode":"SIMPLE","sni":"echo.example.com"}}`},
		{"written TLS wins", []string{generated, written("user", "2024-01-01T00:00:00Z", "{tls: {mode: DISABLE}}")},
			`{"portLevelSettings":[{"port":{"number":80},"tls":{"mode":"SIMPLE","sni":"port.example.com"}},{"port":{"number":443},"tls":{"mode":"SIMPLE"}}],"tls":{}}`},
		{"generated after the written rule", []string{strings.Replace(generated, "namespace: app,", "namespace: app, creationTimestamp: '2025-01-01T00:00:00Z',", 1),
			written("user", "2024-01-01T00:00:00Z", "{tls: {mode: DISABLE}, portLevelSettings: [{port: {number: 443}, tls: {mode: ISTIO_MUTUAL}}]}")},
			`{"portLevelSettings":[{"port":{"number":443},"tls":{"mode":"ISTIO_MUTUAL"}},{"port":{"number":80},"tls":{"mode":"SIMPLE","sni":"port.example.com"}}],"tls":{}}`},
		{"two written rules: the older's", []string{written("a", "2024-01-01T00:00:00Z", "{tls: {mode: DISABLE}}"), written("b", "2023-01-01T00:00:00Z", "{tls: {mode: SIMPLE}}")},
			`{"tls":{"mode":"SIMPLE"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := buildDRIndexes(loadDRs(t, tt.docs...), "istio-system", "cluster.local", []string{"*"})
			rules := idx.local["app"].rules["echo.app.svc.cluster.local"]
			if len(rules) != 1 {
				t.Fatalf("rules %v, want one merged rule", ruleNames(rules))
			}
			b, err := protojson.Marshal(rules[0].TrafficPolicy)
			if err != nil {
				t.Fatal(err)
			}
			if got := compactJSON(t, b); got != tt.want {
				t.Errorf("traffic policy\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// compactJSON is JSON with sorted keys and no spaces, for comparisons.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
