package lint

import (
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestInvalidEnvoyConfig: each problem emit found in a built proxy's
// config is one MC8002 at the proxy's workload; a proxy without problems,
// or one not built, gets none.
func TestInvalidEnvoyConfig(t *testing.T) {
	m := resolvetest.Resolve(loadtest.Objects(t, ns("web"), deployment("web", "api", "{app: api}"), deployment("web", "db", "{app: db}")))
	build := &BuildOutput{Views: m.Views[:1], Result: emit.Result{Problems: map[string][]string{
		"web/api": {"route 80 names cluster outbound|80||gone.web.svc.cluster.local, which is not emitted"},
		"web/db":  {"not built, so not reported"},
	}}}
	ds := analyze(t, m, []*Analyzer{invalidEnvoyConfig}, Options{Build: build})
	if len(ds) != 1 || ds[0].Object.Name != "api" || !strings.Contains(ds[0].Message, "the Envoy config of proxy web/api is invalid: route 80 names cluster") || strings.Join(ds[0].Proxies, ",") != "web/api" {
		t.Errorf("got\n%s", describe(ds))
	}
}
