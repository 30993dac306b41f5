package load

import (
	"context"
	"testing"

	"github.com/meshc/meshc/internal/meshgen"
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
