package lint

import (
	"testing"

	"github.com/meshc/meshc/internal/benchmesh"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/resolve"
)

// BenchmarkRun runs every analyzer over the resolved default synthetic
// mesh: 100 namespaces × 20 services, ~3,000 proxies, ~8,000 objects.
func BenchmarkRun(b *testing.B) {
	objs, mc := benchmesh.Load(b, meshgen.Options{})
	m := resolve.Resolve(objs, resolve.Options{Mesh: mc})
	b.ReportAllocs()
	b.ResetTimer()
	var ds int
	for b.Loop() {
		ds = len(Run(m, Analyzers(), Options{}))
	}
	b.ReportMetric(float64(ds), "diagnostics")
}
