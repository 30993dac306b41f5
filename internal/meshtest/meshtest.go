// Package meshtest resolves inline manifests for the tests of the passes
// above resolve (emit, lint, explain), as a compile does. Those packages
// cannot import internal/compile, which imports them.
package meshtest

import (
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// Resolve resolves objs with the mesh config they carry (istiod's
// defaults without one), as a compile does.
func Resolve(objs []model.Object) *resolve.Mesh {
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	return resolve.Resolve(objs, resolve.Options{Mesh: mc})
}

// Mesh loads and resolves YAML documents.
func Mesh(t testing.TB, docs ...string) *resolve.Mesh {
	t.Helper()
	return Resolve(loadtest.Objects(t, docs...))
}
