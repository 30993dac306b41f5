package load

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/testfiles"
)

// BenchmarkLoadGeneratedMesh loads the default synthetic mesh (~8,000
// objects in ~500 files) from disk.
func BenchmarkLoadGeneratedMesh(b *testing.B) {
	dir := b.TempDir()
	_, objects, err := meshgen.Write(dir, meshgen.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, ds, err := Paths(context.Background(), []string{dir}, Options{})
		if err != nil || len(ds) > 0 || len(res.Objects) != objects {
			b.Fatalf("loaded %d of %d objects, %d diagnostics, err %v", len(res.Objects), objects, len(ds), err)
		}
	}
	b.ReportMetric(float64(objects), "objects/op")
}

// BenchmarkLoadChart renders and loads a chart of 200 objects (100
// Services and their VirtualServices, from two templates ranging over the
// values), what a mesh chart of a mid-sized team holds.
func BenchmarkLoadChart(b *testing.B) {
	const services = 100
	var values strings.Builder
	values.WriteString("services:\n")
	for i := range services {
		fmt.Fprintf(&values, "  - {name: svc-%d, port: %d}\n", i, 8000+i)
	}
	dir := testfiles.Write(b, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"values.yaml": values.String(),
		"templates/services.yaml": "{{- range .Values.services }}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: {{ .name }}, namespace: shop}\n" +
			"spec:\n  selector: {app: {{ .name }}}\n  ports: [{name: http, port: {{ .port }}}]\n{{- end }}\n",
		"templates/routes.yaml": "{{- range .Values.services }}\n---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: {{ .name }}, namespace: shop}\n" +
			"spec:\n  hosts: [{{ .name }}]\n  http:\n    - route: [{destination: {host: {{ .name }}}}]\n      timeout: 5s\n{{- end }}\n",
	})
	for b.Loop() {
		res, ds, err := Paths(context.Background(), []string{dir}, Options{})
		if err != nil || len(ds) > 0 || len(res.Objects) != 2*services {
			b.Fatalf("loaded %d objects, diagnostics %v, err %v", len(res.Objects), ds, err)
		}
	}
}

// BenchmarkLoadHTTPRoutes loads 500 HTTPRoutes in 50 files, each validated
// against the HTTPRoute CRD's schema and CEL rules; the CRD is compiled
// once per process, outside the loop.
func BenchmarkLoadHTTPRoutes(b *testing.B) {
	const files, perFile = 50, 10
	in := map[string]string{}
	for f := range files {
		var doc strings.Builder
		for r := range perFile {
			fmt.Fprintf(&doc, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r-%d, namespace: ns-%d}\n"+
				"spec:\n  parentRefs: [{group: '', kind: Service, name: svc-%d, port: 8080}]\n  rules:\n"+
				"  - matches: [{path: {type: PathPrefix, value: /api}}]\n    backendRefs: [{name: svc-%d, port: 8080, weight: 90}, {name: svc-%d-canary, port: 8080, weight: 10}]\n"+
				"    timeouts: {request: 5s}\n", r, f, r, r, r)
		}
		in[fmt.Sprintf("ns-%d/routes.yaml", f)] = doc.String()
	}
	dir := testfiles.Write(b, in)
	load := func() {
		res, ds, err := Paths(context.Background(), []string{dir}, Options{})
		if err != nil || len(ds) > 0 || len(res.Objects) != files*perFile {
			b.Fatalf("loaded %d objects, diagnostics %v, err %v", len(res.Objects), ds, err)
		}
	}
	load()
	b.ResetTimer()
	for b.Loop() {
		load()
	}
}

// BenchmarkLoadRouteTwins loads the generated mesh's twins of issue 25's
// yardstick: the same routes written as VirtualServices and as
// HTTPRoutes (with the ReferenceGrants their shares to other namespaces
// need). Their difference is what loading Gateway API objects costs
// (decoding, the CRDs' schemas and CEL rules); the CRDs are compiled
// once per process, outside the loop.
func BenchmarkLoadRouteTwins(b *testing.B) {
	for _, twin := range []struct {
		name string
		opts meshgen.Options
	}{
		{"virtualservices", meshgen.Options{VersionServices: true}},
		{"httproutes", meshgen.Options{HTTPRoutes: true}},
	} {
		b.Run("routes="+twin.name, func(b *testing.B) {
			dir := b.TempDir()
			_, objects, err := meshgen.Write(dir, twin.opts)
			if err != nil {
				b.Fatal(err)
			}
			load := func() {
				res, ds, err := Paths(context.Background(), []string{dir}, Options{})
				if err != nil || len(ds) > 0 || len(res.Objects) != objects {
					b.Fatalf("loaded %d of %d objects, %d diagnostics, err %v", len(res.Objects), objects, len(ds), err)
				}
			}
			load()
			start := testfiles.CPUTime()
			for b.Loop() {
				load()
			}
			b.ReportMetric(float64((testfiles.CPUTime()-start).Microseconds())/1000/float64(b.N), "ms-cpu/op")
		})
	}
}
