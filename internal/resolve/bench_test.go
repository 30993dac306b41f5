package resolve

import (
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
)

// generatedMesh loads the default synthetic mesh: 100 namespaces × 20
// services, ~3,000 proxies, ~8,000 objects.
func generatedMesh(b *testing.B) ([]model.Object, model.MeshConfig) {
	b.Helper()
	var objs []model.Object
	for _, f := range meshgen.Generate(meshgen.Options{}) {
		o, ds := load.Bytes(f.Name, f.Data)
		if len(ds) > 0 {
			b.Fatalf("%s: %v", f.Name, ds)
		}
		objs = append(objs, o...)
	}
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	return objs, mc
}

// BenchmarkResolve resolves every proxy of the generated mesh: scopes,
// DestinationRule decisions and VirtualService bindings.
func BenchmarkResolve(b *testing.B) {
	objs, mc := generatedMesh(b)
	b.ReportAllocs()
	b.ResetTimer()
	var m *Mesh
	for b.Loop() {
		m = Resolve(objs, Options{Mesh: mc})
	}
	b.ReportMetric(float64(len(m.Proxies)), "proxies")
	b.ReportMetric(float64(len(m.Scopes)), "scopes")
}
