// Package meshtest loads and resolves inline manifests for the tests of
// the passes above resolve (emit, lint, explain), as a compile does. Those
// packages cannot import internal/compile, which imports them.
package meshtest

import (
	"context"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// Objects loads YAML documents as one file, failing t on any diagnostic
// but UnknownKind.
func Objects(t testing.TB, docs ...string) []model.Object {
	t.Helper()
	objs, ds := load.Bytes("in.yaml", []byte(strings.Join(docs, "\n---\n")))
	for _, d := range ds {
		if !diag.UnknownKind.Is(d) {
			t.Fatalf("load: %s:%d %s %s", d.Object.File, d.Object.Line, d.Code, d.Message)
		}
	}
	return objs
}

// Dir loads a directory of manifests, failing t on any diagnostic.
func Dir(t testing.TB, dir string) []model.Object {
	t.Helper()
	res, ds, err := load.Paths(context.Background(), []string{dir}, load.Options{})
	if err != nil || len(ds) > 0 {
		t.Fatalf("load %s: %v %v", dir, err, ds)
	}
	return res.Objects
}

// Resolve resolves objs with the mesh config they carry (istiod's
// defaults without one), as a compile does.
func Resolve(objs []model.Object) *resolve.Mesh {
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	return resolve.Resolve(objs, resolve.Options{Mesh: mc})
}

// Mesh loads and resolves YAML documents.
func Mesh(t testing.TB, docs ...string) *resolve.Mesh {
	t.Helper()
	return Resolve(Objects(t, docs...))
}
