package load

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the decoder. It must never panic (a
// recovered parser panic counts as a failure too), and every position it
// reports must lie inside the input.
func FuzzLoad(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
		"--- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n...\n---\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: s}}\n- 3\n",
		"apiVersion: v1\nkind: ServiceList\nitems: [{metadata: {name: x}}, {kind: Pod}]\n",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec: {hosts: [r], http: [{route: [{destination: {host: r}, weight: 1}], timeout: 1s, match: [{uri: {exact: /a, prefix: /b}}]}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r}\nspec: {host: r, trafficPolicy: {portLevelSettings: [{port: {number: 80}}]}, subsets: [{name: v1, labels: {a: b}}]}\n",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{resource: x, mode: Bad}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: nope}\nspec: {containers: [{name: c, resources: {limits: {cpu: lots}}}]}\n",
		"a: &a [x, *a]\n",
		"a: &x 1\nb: *y\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"j\"}}\n{\"a\": 1}",
		"apiVersion: v1\r\nkind: Namespace\r\nmetadata:\r\n\tname: a\r\n",
		"key: |\n  ---\n  text\n---\nkey: >\n  more\n",
		"%YAML 1.2\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
		"? [complex, key]\n: value\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 99999999999999999999}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: e}\nspec: {ports: [{number: 1e3}], endpoints: [{ports: {http: -1}}]}\n",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec: {parentRefs: [{name: gw}, {name: gw}], rules: [{matches: [{path: {type: Exact, value: a}}], filters: [{type: RequestRedirect}], backendRefs: [{name: w}], timeouts: {request: 1s, backendRequest: 2s}}]}\n",
		"apiVersion: gateway.networking.k8s.io/v1beta1\nkind: Gateway\nmetadata: {name: g}\nspec: {gatewayClassName: istio, listeners: [{name: a, port: 80, protocol: TCP, hostname: x}, {name: a, port: 0, protocol: TLS}]}\nstatus: {x: 1}\n",
		strings.Repeat("- ", 200) + "x\n",
		"\xef\xbb\xbfapiVersion: v1\n",
		"'unterminated\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, ds := Bytes("fuzz.yaml", data)
		lines := bytes.Count(normalizeBreaks(data), []byte("\n")) + 1
		for _, d := range ds {
			if strings.Contains(d.Message, "parser failure") {
				t.Fatalf("recovered panic: %s", d.Message)
			}
			if d.Object.File != "fuzz.yaml" || d.Object.Line < 1 || d.Object.Line > lines {
				t.Fatalf("%s at %s:%d outside the %d-line input: %s", d.Code, d.Object.File, d.Object.Line, lines, d.Message)
			}
		}
		for _, o := range objs {
			m := o.Meta()
			if m.Name == "" || m.Kind == "" || m.Source.Line < 1 || m.Source.Line > lines {
				t.Fatalf("object %v at line %d of %d", m.ID(), m.Source.Line, lines)
			}
		}
	})
}
