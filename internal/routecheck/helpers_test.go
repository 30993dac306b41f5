package routecheck

import (
	"context"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/testfiles"
)

// runIn compiles manifests (one YAML stream) and runs the files' cases on
// them; each case that fails is an error with its failures and trace.
func runIn(t *testing.T, manifests string, files ...*File) {
	t.Helper()
	for _, r := range results(t, manifests, files...) {
		if !r.Passed() {
			t.Errorf("%s: %s\n%s", r.Case.Name, strings.Join(r.Failures, "; "), trace(r.Report))
		}
	}
}

// results compiles manifests and runs the files' cases on them.
func results(t *testing.T, manifests string, files ...*File) []Result {
	t.Helper()
	ctx := context.Background()
	run, err := compile.Run(ctx, compile.Inputs{Paths: []string{testfiles.Write(t, map[string]string{"mesh.yaml": manifests})}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Run(ctx, run, files)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
