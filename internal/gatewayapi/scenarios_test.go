package gatewayapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

// TestScenarios converts each fixture of testdata/scenarios (the
// situations of istiod's own conversion tests, written for meshc) and
// compares what it generates and reports with the .golden file beside it:
// every generated object with its annotations and spec, then every
// finding with its line. A fixture with the line
// "# meshc: --alpha-gateway-api" converts with that option.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{AlphaGatewayAPI: strings.Contains(string(data), "# meshc: --alpha-gateway-api\n")}
			res := convertWith(t, opts, string(data))
			testfiles.Golden(t, strings.TrimSuffix(f, ".yaml")+".golden", dump(t, res))
		})
	}
}

// dump writes what a conversion generated and reported, one block per
// object, sorted by kind, namespace and name.
func dump(t *testing.T, res *Result) []byte {
	var b strings.Builder
	objs := slices.Clone(res.Generated)
	slices.SortFunc(objs, func(x, y model.Object) int { return x.Meta().ID().Compare(y.Meta().ID()) })
	for _, o := range objs {
		m := o.Meta()
		fmt.Fprintf(&b, "%s %s/%s\n", m.Kind, m.Namespace, m.Name)
		keys := make([]string, 0, len(m.Annotations))
		for k := range m.Annotations {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %q\n", k, m.Annotations[k])
		}
		for _, p := range m.Derived.Parts {
			fmt.Fprintf(&b, "  from %s %s/%s %s %s\n", p.From.Kind, p.From.Namespace, p.From.Name, p.Path, p.Route)
		}
		switch x := o.(type) {
		case *model.Gateway:
			b.WriteString("  " + indentJSON(t, x.Spec) + "\n")
		case *model.VirtualService:
			b.WriteString("  " + indentJSON(t, x.Spec) + "\n")
		case *model.DestinationRule:
			b.WriteString("  " + indentJSON(t, x.Spec) + "\n")
		case *model.Service:
			j, _ := json.Marshal(x.Spec)
			fmt.Fprintf(&b, "  labels %v\n  %s\n", x.Labels, j)
		case *model.Workload:
			fmt.Fprintf(&b, "  pod labels %v\n  service account %s\n", x.Template.Labels, x.Template.Spec.ServiceAccountName)
		}
	}
	b.WriteString("findings\n")
	for _, d := range res.Diagnostics {
		fmt.Fprintf(&b, "  %d %s %s\n", d.Object.Line, d.Code, d.Message)
	}
	return []byte(b.String())
}

func indentJSON(t *testing.T, m proto.Message) string {
	t.Helper()
	raw, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(v, "  ", "  ")
	return string(out)
}
