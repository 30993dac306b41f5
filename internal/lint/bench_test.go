package lint

import (
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// BenchmarkRun runs every analyzer over the resolved default synthetic
// mesh: 100 namespaces × 20 services, ~3,000 proxies, ~8,000 objects.
func BenchmarkRun(b *testing.B) {
	var objs []model.Object
	for _, f := range meshgen.Generate(meshgen.Options{}) {
		o, ds := load.Bytes(f.Name, f.Data)
		if len(ds) > 0 {
			b.Fatalf("%s: %v", f.Name, ds)
		}
		objs = append(objs, o...)
	}
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	m := resolve.Resolve(objs, resolve.Options{Mesh: mc})
	b.ReportAllocs()
	b.ResetTimer()
	var ds int
	for b.Loop() {
		ds = len(Run(m, m.Objects, Analyzers(), Options{}))
	}
	b.ReportMetric(float64(ds), "diagnostics")
}
