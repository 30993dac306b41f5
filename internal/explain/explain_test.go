package explain

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/lint"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
	"github.com/meshc/meshc/internal/testfiles"
)

// TestBookinfoGolden explains two bookinfo proxies, a sidecar and the
// ingress gateway, in text (plain and verbose) and JSON.
func TestBookinfoGolden(t *testing.T) {
	objs := loadtest.Dir(t, filepath.Join("..", "..", "examples", "bookinfo"))
	m := resolvetest.Resolve(objs)
	diags, err := lint.Run(context.Background(), m, lint.Analyzers(), lint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []struct{ ns, name string }{{"default", "productpage-v1"}, {"istio-system", "istio-ingressgateway"}} {
		v, ok := m.View(id.ns, id.name)
		if !ok {
			t.Fatalf("no proxy %s/%s", id.ns, id.name)
		}
		rep := ProxyReport(m, v, diags)
		// Paths in the golden files are relative to the repository.
		rep.Proxy.Source.File = filepath.ToSlash(rep.Proxy.Source.File)
		var text, verbose, js bytes.Buffer
		if err := WriteText(&text, rep, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := WriteText(&verbose, rep, TextOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join("testdata", id.name)
		testfiles.Golden(t, base+".txt", text.Bytes())
		testfiles.Golden(t, base+".verbose.txt", verbose.Bytes())
		testfiles.Golden(t, base+".json", js.Bytes())
	}
}

// TestRoutesGolden: with AddRoutes the report carries resolve's route
// tables, each route with the VirtualService rule that wrote it: a
// sidecar's outbound route configurations and the gateway's routes per
// server; without it, none.
func TestRoutesGolden(t *testing.T) {
	m := resolvetest.Resolve(loadtest.Dir(t, filepath.Join("..", "..", "examples", "bookinfo")))
	for _, id := range []struct {
		ns, name string
		table    string
		routes   int
	}{{"default", "productpage-v1", "9080", 6}, {"istio-system", "istio-ingressgateway", "default/bookinfo-gateway port 80", 5}} {
		v, ok := m.View(id.ns, id.name)
		if !ok {
			t.Fatalf("no proxy %s/%s", id.ns, id.name)
		}
		rep := ProxyReport(m, v, nil)
		if rep.Routes != nil {
			t.Errorf("%s: routes without asking", id.name)
		}
		rep.AddRoutes(m, v)
		n := 0
		for _, table := range rep.Routes {
			if table.Name == id.table {
				for _, g := range table.VirtualHosts {
					n += len(g.Routes)
				}
			}
		}
		if n != id.routes {
			t.Errorf("%s: %d routes in table %q, want %d", id.name, n, id.table, id.routes)
		}
		var text, js bytes.Buffer
		if err := WriteText(&text, rep, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join("testdata", id.name+".routes")
		testfiles.Golden(t, base+".txt", text.Bytes())
		testfiles.Golden(t, base+".json", js.Bytes())
	}
}

// TestMutualTLSAndUnbuiltPolicies: the report names the PeerAuthentication
// deciding the proxy's mode (a workload policy over the mesh's) and its
// port-level modes, and the policies meshc leaves out of the proxy's
// config; one that selects other workloads is not listed.
func TestMutualTLSAndUnbuiltPolicies(t *testing.T) {
	m := resolvetest.Mesh(t, `apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: mesh, namespace: istio-system}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: web, namespace: shop}
spec: {selector: {matchLabels: {app: web}}, mtls: {mode: PERMISSIVE}, portLevelMtls: {9090: {mode: DISABLE}}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-all, namespace: shop}
spec: {}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: db-only, namespace: shop}
spec: {selector: {matchLabels: {app: db}}}
`)
	v, ok := m.View("shop", "web")
	if !ok {
		t.Fatal("no proxy shop/web")
	}
	rep := ProxyReport(m, v, nil)
	var text, js bytes.Buffer
	if err := WriteText(&text, rep, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	testfiles.Golden(t, filepath.Join("testdata", "mtls.txt"), text.Bytes())
	testfiles.Golden(t, filepath.Join("testdata", "mtls.json"), js.Bytes())
}
