package job

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/outdir"
)

// build runs the transaction over in into out with b, after the checks a
// command makes.
func build(t *testing.T, s Settings, out string, b Build) (*compile.Built, error) {
	t.Helper()
	o, err := CheckOut(out, s, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Merge(s)
	if err != nil {
		t.Fatal(err)
	}
	if b.Options.Format == "" {
		b.Options = compile.BuildOptions{Format: "bootstrap", Endpoints: "inline", TLS: "istio"}
	}
	return p.Build(context.Background(), o, b)
}

// TestBuild: a build is written, its diagnostics delivered, its progress
// told, and it is swapped in.
func TestBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var delivered, written, total int
	finished := false
	res, err := build(t, settings(bookinfo), out, Build{
		Writing: func(n int) (func(int, int), func()) {
			total = n
			return func(done, _ int) { written = done }, func() { finished = true }
		},
		Deliver: func(_ *compile.Result, ds []diag.Diagnostic) error { delivered++; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Index) != 7 || total != 7 || written != 7 || !finished || delivered != 1 {
		t.Errorf("%d proxies written, %d of %d told, finished %v, delivered %d times", len(res.Index), written, total, finished, delivered)
	}
	if !outdir.IsOutput(out) {
		t.Errorf("%s is not a build", out)
	}
}

// TestBuildLeavesOUT: whatever stops a build — findings at --fail-on, the
// budget, diagnostics that cannot be delivered, a proxy pattern matching
// nothing — OUT is left as it was, and the error says why.
func TestBuildLeavesOUT(t *testing.T) {
	hierarchy := settings("../../examples/hierarchy")
	hierarchy.FailOn = "warning"
	for _, tc := range []struct {
		name    string
		s       Settings
		b       Build
		refused bool
		want    string
	}{
		{"findings", hierarchy, Build{}, true, "nothing written: findings reach --fail-on"},
		{"budget", settings(bookinfo), Build{Budget: 1024}, false, "over the budget of 1 KiB"},
		{"undelivered", settings(bookinfo), Build{Deliver: func(*compile.Result, []diag.Diagnostic) error { return errors.New("stderr closed") }}, false, "stderr closed; "},
		{"no such proxy", settings(bookinfo), Build{Proxies: []string{"shop/*"}}, false, `--proxy "shop/*" matches no proxy`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := build(t, tc.s, out, tc.b)
			var r *Refused
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &r) != tc.refused {
				t.Fatalf("Build: %v, want an error with %q (refused: %v)", err, tc.want, tc.refused)
			}
			if !tc.refused && !strings.Contains(err.Error(), out) && tc.name != "no such proxy" {
				t.Errorf("error %q does not say OUT was left", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("OUT written: %v", err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
				t.Errorf("left beside OUT: %v", entries)
			}
		})
	}
}

// TestCheckOutProtectsInputs: OUT may not hold an input, nor the project
// config or mesh config named.
func TestCheckOutProtectsInputs(t *testing.T) {
	dir := repo(t, map[string]string{"m/ns.yaml": "", "cfg/.meshc.yaml": ""})
	for _, tc := range []struct {
		name string
		s    Settings
		out  string
	}{
		{"input", settings(filepath.Join(dir, "m")), dir},
		{"project config", func() Settings {
			s := settings(filepath.Join(dir, "m", "ns.yaml"))
			s.ProjectConfig = filepath.Join(dir, "cfg", ".meshc.yaml")
			return s
		}(), filepath.Join(dir, "cfg")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := CheckOut(tc.out, tc.s, true); err == nil {
				t.Errorf("OUT %s allowed", tc.out)
			}
		})
	}
}
