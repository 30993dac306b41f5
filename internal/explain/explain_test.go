package explain

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/golden"
	"github.com/meshc/meshc/internal/lint"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve"
)

// TestBookinfoGolden explains two bookinfo proxies, a sidecar and the
// ingress gateway, in text (plain and verbose) and JSON.
func TestBookinfoGolden(t *testing.T) {
	res, ds, err := load.Paths(context.Background(), []string{filepath.Join("..", "..", "examples", "bookinfo")}, load.Options{})
	if err != nil || len(ds) > 0 {
		t.Fatalf("load: %v %v", err, ds)
	}
	mc, _ := load.MeshConfig(res.Objects, load.MeshOptions{})
	m := resolve.Resolve(res.Objects, resolve.Options{Mesh: mc})
	diags := lint.Run(m, res.Objects, lint.Analyzers(), lint.Options{})
	for _, id := range []struct{ ns, name string }{{"default", "productpage-v1"}, {"istio-system", "istio-ingressgateway"}} {
		v, ok := m.View(id.ns, id.name)
		if !ok {
			t.Fatalf("no proxy %s/%s", id.ns, id.name)
		}
		rep := Build(m, v, diags)
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
		golden.Check(t, base+".txt", text.Bytes())
		golden.Check(t, base+".verbose.txt", verbose.Bytes())
		golden.Check(t, base+".json", js.Bytes())
	}
}
