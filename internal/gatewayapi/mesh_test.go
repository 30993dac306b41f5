package gatewayapi

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

const meshServices = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {ports: [{name: http, port: 80}, {name: alt, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-v2, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: app}
spec: {hosts: [a.example.com, b.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}`

func meshRoute(kind, ns, name, spec string) string {
	return "apiVersion: gateway.networking.k8s.io/v1\nkind: " + kind + "\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n" + spec
}

// tcpGateway is a Gateway gw of ns with a TCP listener open to every
// namespace.
func tcpGateway(ns string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ` + ns + `}
spec:
  gatewayClassName: istio
  listeners: [{name: tcp, port: 5000, protocol: TCP, allowedRoutes: {namespaces: {from: All}}}]`
}

// waypointDocs are a Service (its metadata given) and a waypoint Gateway
// app/wp whose class belongs to controller.
func waypointDocs(controller, svcMeta string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: " + svcMeta + "\nspec: {ports: [{port: 80}]}\n---\n" +
		"apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: wp-class}\nspec: {controllerName: " + controller + "}\n---\n" +
		"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: wp, namespace: app}\n" +
		"spec: {gatewayClassName: wp-class, listeners: [{name: mesh, port: 15008, protocol: HBONE}]}"
}

// meshVS is a generated VirtualService in one line: namespace/name,
// gateways, hosts, the parents annotation and the spec's routes as JSON.
func meshVS(t *testing.T, vs *model.VirtualService) string {
	t.Helper()
	spec := vs.Spec
	routes := specJSON(t, spec)
	return fmt.Sprintf("%s/%s gateways=%v hosts=%v parents=%s %s", vs.Namespace, vs.Name, spec.GetGateways(), spec.GetHosts(),
		vs.Annotations[annParents], routes)
}

// generatedVSs lists the generated VirtualServices bound to gateway.
func generatedVSs(t *testing.T, res *Result, gateway string) []string {
	var out []string
	for _, o := range res.Generated {
		if vs, ok := o.(*model.VirtualService); ok && slices.Contains(vs.Spec.GetGateways(), gateway) {
			out = append(out, meshVS(t, vs))
		}
	}
	slices.Sort(out)
	return out
}

// TestMeshRouteKinds checks the VirtualServices istiod makes of routes whose
// parent is a Service or ServiceEntry (docs/semantics/gateway-api.md §G7).
func TestMeshRouteKinds(t *testing.T) {
	gw := tcpGateway("zone")
	tests := []struct {
		name string
		docs []string
		want []string // the mesh VirtualServices, sorted
	}{
		{"producer route", []string{meshRoute("HTTPRoute", "app", "split", `  parentRefs: [{group: "", kind: Service, name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: web-v2, port: 80}]
  - backendRefs: [{name: web, port: 80, weight: 9}, {name: web-v2, port: 80, weight: 1}]`)},
			[]string{`app/app~web.app.svc.cluster.local gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=HTTPRoute/split.app {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"http":[{"match":[{"uri":{"prefix":"/v2"}}],"name":"app.split.0","route":[{"destination":{"host":"web-v2.app.svc.cluster.local","port":{"number":80}}}]},{"match":[{"uri":{"prefix":"/"}}],"name":"app.split.1","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}},"weight":9},{"destination":{"host":"web-v2.app.svc.cluster.local","port":{"number":80}},"weight":1}]}]}`}},
		{"consumer route in its own namespace, no grant needed", []string{meshRoute("HTTPRoute", "client", "mine", `  parentRefs: [{group: "", kind: Service, name: web, namespace: app}]
  rules: [{backendRefs: [{name: web-v2, namespace: app, port: 80}]}]`)},
			[]string{`client/client~web.app.svc.cluster.local gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=HTTPRoute/mine.client {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"http":[{"match":[{"uri":{"prefix":"/"}}],"name":"client.mine.0","route":[{"destination":{"host":"web-v2.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"port parentRef narrows every match", []string{meshRoute("HTTPRoute", "app", "alt", `  parentRefs: [{group: "", kind: Service, name: web, port: 8080}, {group: "", kind: Service, name: web-v2}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]`)},
			[]string{
				`app/app~8080~web.app.svc.cluster.local gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=HTTPRoute/alt.app {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"http":[{"match":[{"port":8080,"uri":{"prefix":"/"}}],"name":"app.alt.0","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":8080}}}]}]}`,
				`app/app~web-v2.app.svc.cluster.local gateways=[mesh] hosts=[web-v2.app.svc.cluster.local] parents=HTTPRoute/alt.app {"gateways":["mesh"],"hosts":["web-v2.app.svc.cluster.local"],"http":[{"match":[{"uri":{"prefix":"/"}}],"name":"app.alt.0","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":8080}}}]}]}`}},
		{"HTTP and gRPC routes of one namespace merge", []string{
			meshRoute("GRPCRoute", "app", "rpc", `  parentRefs: [{group: "", kind: Service, name: web}]
  rules: [{matches: [{method: {service: pkg.Svc}}], backendRefs: [{name: web-v2, port: 80}]}]`),
			meshRoute("HTTPRoute", "app", "http", `  parentRefs: [{group: "", kind: Service, name: web}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)},
			[]string{`app/app~web.app.svc.cluster.local gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=HTTPRoute/http.app,GRPCRoute/rpc.app {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"http":[{"match":[{"uri":{"prefix":"/pkg.Svc/"}}],"name":"app.rpc.0","route":[{"destination":{"host":"web-v2.app.svc.cluster.local","port":{"number":80}}}]},{"match":[{"uri":{"prefix":"/"}}],"name":"app.http.0","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"gRPC rule without match gets the port alone", []string{meshRoute("GRPCRoute", "app", "rpc", `  parentRefs: [{group: "", kind: Service, name: web, port: 80}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)},
			[]string{`app/app~80~web.app.svc.cluster.local gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=GRPCRoute/rpc.app {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"http":[{"match":[{"port":80}],"name":"app.rpc.0","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"ServiceEntry parent: one VirtualService per host", []string{meshRoute("HTTPRoute", "app", "ext", `  parentRefs: [{group: networking.istio.io, kind: ServiceEntry, name: ext}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)},
			[]string{
				`app/app~a.example.com gateways=[mesh] hosts=[a.example.com] parents=HTTPRoute/ext.app {"gateways":["mesh"],"hosts":["a.example.com"],"http":[{"match":[{"uri":{"prefix":"/"}}],"name":"app.ext.0","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}}}]}]}`,
				`app/app~b.example.com gateways=[mesh] hosts=[b.example.com] parents=HTTPRoute/ext.app {"gateways":["mesh"],"hosts":["b.example.com"],"http":[{"match":[{"uri":{"prefix":"/"}}],"name":"app.ext.0","route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"TCP route with a port", []string{meshRoute("TCPRoute", "app", "db", `  parentRefs: [{group: "", kind: Service, name: web, port: 8080}]
  rules: [{backendRefs: [{name: web-v2, port: 80}]}]`)},
			[]string{`app/db~tcp~0~istio-autogenerated-k8s-gateway gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=TCPRoute/db.app {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"tcp":[{"match":[{"port":8080}],"route":[{"destination":{"host":"web-v2.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"TLS route without hostnames matches the parent's hosts", []string{meshRoute("TLSRoute", "app", "tls", `  parentRefs: [{group: networking.istio.io, kind: ServiceEntry, name: ext}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)},
			[]string{
				`app/tls~tls~0~istio-autogenerated-k8s-gateway gateways=[mesh] hosts=[a.example.com] parents=TLSRoute/tls.app {"gateways":["mesh"],"hosts":["a.example.com"],"tls":[{"match":[{"sniHosts":["a.example.com"]}],"route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}}}]}]}`,
				`app/tls~tls~1~istio-autogenerated-k8s-gateway gateways=[mesh] hosts=[b.example.com] parents=TLSRoute/tls.app {"gateways":["mesh"],"hosts":["b.example.com"],"tls":[{"match":[{"sniHosts":["b.example.com"]}],"route":[{"destination":{"host":"web.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"TCP route numbered with its Gateway parents by name", []string{gw, meshRoute("TCPRoute", "app", "db", `  parentRefs: [{name: gw, namespace: zone}, {group: "", kind: Service, name: web}]
  rules: [{backendRefs: [{name: web-v2, port: 80}]}]`)},
			[]string{`app/db~tcp~0~istio-autogenerated-k8s-gateway gateways=[mesh] hosts=[web.app.svc.cluster.local] parents=TCPRoute/db.app {"gateways":["mesh"],"hosts":["web.app.svc.cluster.local"],"tcp":[{"route":[{"destination":{"host":"web-v2.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"missing Service makes nothing", []string{meshRoute("HTTPRoute", "app", "gone", `  parentRefs: [{group: "", kind: Service, name: gone}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)}, nil},
		{"a waypoint of another controller takes the route", []string{waypointDocs("example.com/mesh", "{name: api, namespace: app, labels: {istio.io/use-waypoint: wp}}"),
			meshRoute("HTTPRoute", "app", "r", `  parentRefs: [{group: "", kind: Service, name: api}]
  rules: [{backendRefs: [{name: api, port: 80}]}]`)}, nil},
		{"a waypoint of another controller named by the namespace", []string{waypointDocs("example.com/mesh", "{name: api, namespace: app}"),
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {istio.io/use-waypoint: wp, istio.io/use-waypoint-namespace: app}}",
			meshRoute("HTTPRoute", "app", "r", `  parentRefs: [{group: "", kind: Service, name: api}]
  rules: [{backendRefs: [{name: api, port: 80}]}]`)}, nil},
		{"istiod's own waypoint leaves the route to the mesh", []string{waypointDocs("istio.io/mesh-controller", "{name: api, namespace: app, labels: {istio.io/use-waypoint: wp}}"),
			meshRoute("HTTPRoute", "app", "r", `  parentRefs: [{group: "", kind: Service, name: api}]
  rules: [{backendRefs: [{name: api, port: 80}]}]`)},
			[]string{`app/app~api.app.svc.cluster.local gateways=[mesh] hosts=[api.app.svc.cluster.local] parents=HTTPRoute/r.app {"gateways":["mesh"],"hosts":["api.app.svc.cluster.local"],"http":[{"match":[{"uri":{"prefix":"/"}}],"name":"app.r.0","route":[{"destination":{"host":"api.app.svc.cluster.local","port":{"number":80}}}]}]}`}},
		{"Gateway parents stay apart", []string{meshRoute("HTTPRoute", "app", "gwonly", `  parentRefs: [{name: gw, namespace: zone}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := convert(t, append([]string{meshServices}, tt.docs...)...)
			if got := generatedVSs(t, res, MeshGateway); !slices.Equal(got, tt.want) {
				t.Errorf("mesh VirtualServices:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, o := range res.Generated {
				if vs, ok := o.(*model.VirtualService); ok && vs.Annotations[annRouteSemantics] != model.RouteSemanticsGateway {
					t.Errorf("%s lacks the route semantics annotation", vs.Name)
				}
			}
		})
	}
}

// TestMeshL4Numbering: a TCP route's VirtualServices are numbered across
// its parents in istiod's order, Gateways of namespaces sorting after
// "mesh" numbered after the mesh ones.
func TestMeshL4Numbering(t *testing.T) {
	res := convert(t, meshServices, tcpGateway("alpha"), tcpGateway("zulu"), meshRoute("TCPRoute", "app", "db", `  parentRefs: [{name: gw, namespace: zulu}, {group: "", kind: Service, name: web}, {name: gw, namespace: alpha}]
  rules: [{backendRefs: [{name: web-v2, port: 80}]}]`))
	got := map[string]string{}
	for _, o := range res.Generated {
		if vs, ok := o.(*model.VirtualService); ok {
			got[vs.Spec.GetGateways()[0]] = vs.Name
		}
	}
	want := map[string]string{
		"alpha/gw~istio-autogenerated-k8s-gateway~tcp": "db~tcp~0~istio-autogenerated-k8s-gateway",
		"mesh": "db~tcp~1~istio-autogenerated-k8s-gateway",
		"zulu/gw~istio-autogenerated-k8s-gateway~tcp": "db~tcp~2~istio-autogenerated-k8s-gateway",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("names by gateway %v, want %v", got, want)
	}
}

// TestMeshStatus: a mesh parent that does not exist is not accepted, a
// port the parent lacks is reported, and a rule problem of a route with
// both kinds of parents is reported once.
func TestMeshStatus(t *testing.T) {
	const gw = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: istio
  listeners: [{name: web, port: 80, protocol: HTTP}]`
	tests := []struct {
		name  string
		route string
		code  string
		at    string
		want  []string
		count int
	}{
		{"missing Service", meshRoute("HTTPRoute", "app", "r", "  parentRefs:\n  - {group: \"\", kind: Service, name: gone}\n  rules: [{backendRefs: [{name: web, port: 80}]}]"),
			"MC7106", "name: gone", []string{"Service gone.app.svc.cluster.local", "NoMatchingParent", `parent service: "gone" not found`}, 1},
		{"missing ServiceEntry", meshRoute("TCPRoute", "app", "r", "  parentRefs:\n  - {group: networking.istio.io, kind: ServiceEntry, name: gone}\n  rules: [{backendRefs: [{name: web, port: 80}]}]"),
			"MC7106", "name: gone", []string{"ServiceEntry app/gone", `parent service entry: "gone" not found`}, 1},
		{"port not on the Service", meshRoute("HTTPRoute", "app", "r", "  parentRefs:\n  - {group: \"\", kind: Service, name: web, port: 9090}\n  rules: [{backendRefs: [{name: web, port: 80}]}]"),
			"MC7112", "port: 9090", []string{"port 9090 of Service app/web", "never applies"}, 1},
		{"rule problem once for both kinds of parents", meshRoute("HTTPRoute", "app", "r", "  parentRefs: [{name: gw}, {group: \"\", kind: Service, name: web}]\n  rules:\n  - filters: [{type: ExtensionRef, extensionRef: {group: x.io, kind: K, name: ext}}]\n    backendRefs: [{name: web, port: 80}]"),
			"MC7110", "filters:", []string{"ExtensionRef"}, 1},
		{"rule problem of a mesh route alone", meshRoute("GRPCRoute", "app", "r", "  parentRefs: [{group: \"\", kind: Service, name: web}]\n  rules:\n  - backendRefs:\n    - {name: web}"),
			"MC7110", "name: web}", []string{"port is required"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := []string{meshServices, gw, tt.route}
			res := convert(t, docs...)
			var found []diag.Diagnostic
			for _, d := range res.Diagnostics {
				if d.Code == tt.code {
					found = append(found, d)
				}
			}
			if len(found) != tt.count {
				t.Fatalf("%d %s, want %d; got %v", len(found), tt.code, tt.count, codes(res.Diagnostics))
			}
			if !hasDiag(found, tt.code, tt.want...) {
				t.Errorf("%s message %q lacks %q", tt.code, found[0].Message, tt.want)
			}
			lines := strings.Split(strings.Join(docs, "\n---\n"), "\n")
			if l := found[0].Object.Line; l < 1 || l > len(lines) || !strings.Contains(lines[l-1], tt.at) {
				t.Errorf("%s at line %d, want the line holding %q", tt.code, l, tt.at)
			}
		})
	}
}

// TestMeshGolden converts testdata/mesh.yaml: the mesh VirtualServices
// and findings, in one golden file.
func TestMeshGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "mesh.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := convert(t, string(b))
	var out strings.Builder
	for _, vs := range generatedVSs(t, res, MeshGateway) {
		out.WriteString(vs + "\n")
	}
	for _, d := range codes(res.Diagnostics) {
		out.WriteString(d + "\n")
	}
	testfiles.Golden(t, filepath.Join("testdata", "mesh.golden"), []byte(out.String()))
}
