// Package meshgentest loads the synthetic meshes of internal/meshgen for
// benchmarks, in memory, so every pass benchmarks the same input.
package meshgentest

import (
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
)

// Load generates a mesh and loads it with its mesh config; a diagnostic
// fails the benchmark, as generated input must load cleanly.
func Load(tb testing.TB, opts meshgen.Options) ([]model.Object, model.MeshConfig) {
	tb.Helper()
	var objs []model.Object
	for _, f := range meshgen.Generate(opts) {
		o, ds := load.Bytes(f.Name, f.Data)
		if len(ds) > 0 {
			tb.Fatalf("%s: %v", f.Name, ds)
		}
		objs = append(objs, o...)
	}
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	return objs, mc
}
