package hierarchy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
)

// BenchmarkHierarchy builds and propagates a generated forest: 2,000
// namespaces in a tree 6 levels deep (each namespace has up to 4
// children), 5 Roles each: 10,000 propagatable objects.
func BenchmarkHierarchy(b *testing.B) {
	var docs []string
	for i := range 2000 {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns-%d}\n", i))
		if i > 0 {
			docs = append(docs, hc(fmt.Sprintf("ns-%d", i), fmt.Sprintf("ns-%d", (i-1)/4)))
		}
		for r := range 5 {
			docs = append(docs, role(fmt.Sprintf("ns-%d", i), fmt.Sprintf("role-%d-%d", i%7, r)))
		}
	}
	objs, ds := load.Bytes("bench.yaml", []byte(strings.Join(docs, "---\n")))
	for _, d := range ds {
		if d.Code != "MC1005" { // Roles are not modelled, only propagated
			b.Fatal(d)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var eff []model.Object
	for b.Loop() {
		f, _ := NewForest(objs, Options{})
		eff, _ = Propagate(f, objs, PropagateOptions{})
	}
	b.ReportMetric(float64(len(eff)), "objects-after")
}

// BenchmarkByID orders the default generated mesh's objects (100
// namespaces × 20 services, about 8,000 objects) by identity, as every
// compile does before anything else of the hierarchy stage.
func BenchmarkByID(b *testing.B) {
	dir := b.TempDir()
	if _, _, err := meshgen.Write(dir, meshgen.Options{}); err != nil {
		b.Fatal(err)
	}
	res, _, err := load.Paths(context.Background(), []string{dir}, load.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		byID(res.Objects)
	}
	b.ReportMetric(float64(len(res.Objects)), "objects")
}
