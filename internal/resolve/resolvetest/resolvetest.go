// Package resolvetest resolves inline manifests for the tests of the passes
// above resolve (emit, lint, explain), as a compile does. Those packages
// cannot import internal/compile, which imports them.
package resolvetest

import (
	"context"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/gatewayapi"
	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// Resolve resolves objs with the mesh config they carry (istiod's
// defaults without one), as a compile does.
func Resolve(objs []model.Object) *resolve.Mesh {
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	m, _ := Stages(objs, mc)
	return m
}

// Stages runs the hierarchy stage, the Gateway API conversion and resolve
// over objs with mc and returns the mesh and the stages' diagnostics. None
// fails without a context that ends.
func Stages(objs []model.Object, mc model.MeshConfig) (*resolve.Mesh, []diag.Diagnostic) {
	return StagesWith(objs, resolve.Options{Mesh: mc})
}

// StagesWith is Stages with resolve's options given whole.
func StagesWith(objs []model.Object, opts resolve.Options) (*resolve.Mesh, []diag.Diagnostic) {
	mc := opts.Mesh
	h, err := hierarchy.Run(context.Background(), objs, hierarchy.Options{}, hierarchy.PropagateOptions{})
	if err != nil {
		panic(err)
	}
	conv, err := gatewayapi.Convert(context.Background(), h.Objects, gatewayapi.Options{DomainSuffix: mc.DomainSuffix, Namespaces: h.Forest.ExistingLabels()})
	if err != nil {
		panic(err)
	}
	h.Objects = conv.Objects
	m, err := resolve.Resolve(context.Background(), h, opts)
	if err != nil {
		panic(err)
	}
	return m, slices.Concat(h.Diagnostics, conv.Diagnostics, m.Diagnostics)
}

// MeshWith loads and resolves YAML documents with the mesh config they
// carry and the other options of opts.
func MeshWith(t testing.TB, opts resolve.Options, docs ...string) *resolve.Mesh {
	t.Helper()
	objs := loadtest.Objects(t, docs...)
	opts.Mesh, _ = load.MeshConfig(objs, load.MeshOptions{})
	m, _ := StagesWith(objs, opts)
	return m
}

// Mesh loads and resolves YAML documents.
func Mesh(t testing.TB, docs ...string) *resolve.Mesh {
	t.Helper()
	return Resolve(loadtest.Objects(t, docs...))
}
