// Package loadtest loads inline manifests for tests, failing them on load
// problems. It sits just above load, so the tests of every pass, resolve's
// included, can use it.
package loadtest

import (
	"context"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
)

// Objects loads YAML documents as one file, failing t on any diagnostic
// but UnknownKind. istiod's admission rules are not applied: they are
// load's to test, and a fixture need not satisfy them to test a later pass.
func Objects(t testing.TB, docs ...string) []model.Object {
	t.Helper()
	objs, ds := load.BytesWithoutAdmission("in.yaml", []byte(strings.Join(docs, "\n---\n")))
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
