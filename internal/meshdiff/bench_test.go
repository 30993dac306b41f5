package meshdiff

import (
	"bytes"
	"context"
	"testing"

	"github.com/meshc/meshc/internal/meshgen"
)

// BenchmarkCompareOneChange diffs a generated mesh of 24 namespaces × 20
// services (~720 proxies; `meshc gen` makes the 100-namespace one the
// closing measurements use) against a copy with one VirtualService's
// weights moved, which the proxies of every namespace without a Sidecar
// see, and reports how many proxies were built per side, skipping and
// not, and what comparing allocates (its collections' cost; the peak
// memory of `meshc diff` is measured on the process). The compiles are
// not timed.
func BenchmarkCompareOneChange(b *testing.B) {
	files := meshgen.Generate(meshgen.Options{Namespaces: 24})
	edited := make([]meshgen.File, len(files))
	copy(edited, files)
	changed := false
	for i, f := range edited {
		if f.Name == "ns-010/virtual-services.yaml" {
			data := bytes.Replace(f.Data, []byte("weight: 90"), []byte("weight: 80"), 1)
			edited[i].Data = bytes.Replace(data, []byte("weight: 10"), []byte("weight: 20"), 1)
			changed = true
		}
	}
	if !changed {
		b.Fatal("no VirtualService file to edit")
	}
	base, head := compileGenerated(b, files), compileGenerated(b, edited)
	for _, full := range []bool{false, true} {
		name := "skipping"
		if full {
			name = "full"
		}
		b.Run(name, func(b *testing.B) {
			var built int
			b.ReportAllocs()
			for b.Loop() {
				r, err := Compare(context.Background(), Side{Result: base}, Side{Result: head}, Options{Full: full})
				if err != nil {
					b.Fatal(err)
				}
				built = r.built
			}
			b.ReportMetric(float64(built), "proxies-built")
		})
	}
}
