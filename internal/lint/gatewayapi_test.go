package lint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestGeneratedObjectsQuiet runs every analyzer over the Gateway API
// example and conversion scenarios: what istiod generates from Gateway API
// objects (its Gateways, VirtualServices, Deployment and Service) is no
// subject of a finding — their problems are the conversion's to report,
// at the Gateway API object — except where the finding is about the routes
// themselves: a rule no request reaches (an older route's equal match wins),
// a port the backend lacks.
func TestGeneratedObjectsQuiet(t *testing.T) {
	files, _ := filepath.Glob("../gatewayapi/testdata/scenarios/*.yaml")
	example, _ := filepath.Glob("../../examples/gateway-api/*.yaml")
	var docs []string
	for _, f := range example {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	cases := map[string][]string{"example": docs}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases[filepath.Base(f)] = []string{string(b)}
	}
	allowed := map[string]bool{"MC5003": true, "MC5009": true}
	for name, docs := range cases {
		t.Run(name, func(t *testing.T) {
			m := resolvetest.Mesh(t, docs...)
			generated := map[string]bool{}
			for _, o := range m.Objects {
				if meta := o.Meta(); meta.Derived != nil {
					generated[meta.Kind+" "+meta.Namespace+"/"+meta.Name] = true
				}
			}
			ds, err := Run(context.Background(), m, Analyzers(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if generated[d.Object.Kind+" "+d.Object.Namespace+"/"+d.Object.Name] && !allowed[d.Code] {
					t.Errorf("%s about generated %s %s/%s: %s", d.Code, d.Object.Kind, d.Object.Namespace, d.Object.Name, d.Message)
				}
			}
		})
	}
}

// TestGeneratedFindingLines: a finding about a generated route is at the
// rule of the Gateway API route that made it.
func TestGeneratedFindingLines(t *testing.T) {
	b, err := os.ReadFile("../gatewayapi/testdata/scenarios/route-precedence.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := resolvetest.Mesh(t, string(b))
	ds, err := Run(context.Background(), m, []*Analyzer{unreachableRoute}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, d := range ds {
		lines = append(lines, d.Object.Line)
	}
	// b-newer's first rule, and a-older's regex rule.
	if want := []int{17, 33}; !slices.Equal(lines, want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
}
