package diag

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/meshc/meshc/internal/testfiles"
)

// sample covers what renderers must handle: positions and none, related
// objects, proxies, environments, and characters that need escaping.
func sample() []Diagnostic {
	vs := ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: "reviews", File: "manifests/shop/vs.yaml", Line: 12}
	return []Diagnostic{
		DuplicateObject.At(vs, "VirtualService.networking.istio.io shop/reviews is defined twice; the first definition (manifests/a.yaml:3) is kept and this one is left out"),
		{
			Code: "MC1001", Name: "InvalidYAML", Severity: Error,
			Message: "mapping values are not allowed in this context",
			Object:  ObjectRef{File: "manifests/broken.yaml", Line: 4},
		},
		{
			Code: "MC1005", Name: "UnknownKind", Severity: Info,
			Message: "meshc does not model v1 Secret; 2 objects ignored",
			Object:  ObjectRef{Kind: "Secret", Namespace: "shop", Name: "a", File: "manifests/shop/secrets.yaml", Line: 1},
			Related: []Related{{ObjectRef: ObjectRef{Kind: "Secret", Namespace: "shop", Name: "b", File: "manifests/shop/secrets.yaml", Line: 7}, Note: "also ignored"}},
		},
		{
			Code: "MC1003", Name: "SchemaViolation", Severity: Warning,
			Message: "mesh config: unknown field \"a,b:c\"\nsecond line 100%; istiod ignores it",
			Object:  ObjectRef{Kind: "ConfigMap", File: "/abs/path/mesh config.yaml", Line: 3},
			Proxies: []string{"shop/productpage-v1", "shop/reviews-v2"},
		},
		{
			Code: "MC1006", Name: "UnreadableInput", Severity: Error,
			Message: "cannot read nope: no such file or directory",
			Object:  ObjectRef{File: "nope"},
		},
		{
			Code: "MC4003", Name: "UnknownSubset", Severity: Error,
			Message:      "shop/reviews routes to subset \"v2\" of reviews.shop.svc.cluster.local, which no DestinationRule defines",
			Object:       ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: "reviews", File: "charts/mesh/templates/vs.yaml", Line: 19, Origin: "line of the rendered template, not of the template"},
			Environments: []string{"prod", "staging"},
		},
	}
}

var sampleInput = Input{Files: 3, Objects: 42}

func render(t testing.TB, format string, opts Options, ds []Diagnostic) []byte {
	t.Helper()
	r, err := NewRenderer(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Render(&b, ds); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name, format string
		opts         Options
		ds           []Diagnostic
	}{
		{"text", "text", Options{Input: sampleInput}, sample()},
		{"text-color", "text", Options{Color: true, Input: sampleInput}, sample()},
		{"text-empty", "text", Options{Input: Input{Files: 1, Objects: 1}}, nil},
		{"json", "json", Options{Input: sampleInput}, sample()},
		{"json-empty", "json", Options{Input: sampleInput}, nil},
		{"sarif", "sarif", Options{ToolVersion: "v0.0.0-test"}, sample()},
		{"github", "github", Options{}, sample()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext := map[string]string{"text": ".txt", "json": ".json", "sarif": ".sarif", "github": ".txt"}[tt.format]
			testfiles.Golden(t, filepath.Join("testdata", tt.name+ext), render(t, tt.format, tt.opts, tt.ds))
		})
	}
}

func TestRenderDoesNotReorderInput(t *testing.T) {
	ds := sample()
	first := ds[0].Code
	render(t, "text", Options{}, ds)
	if ds[0].Code != first {
		t.Error("a renderer sorted the caller's slice")
	}
}

func TestJSONFields(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(render(t, "json", Options{Input: sampleInput}, sample()), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc["summary"].(map[string]any); s["error"] != 4.0 || s["warning"] != 1.0 || s["info"] != 1.0 || len(s) != 3 {
		t.Errorf("summary = %v", s)
	}
	for _, d := range doc["diagnostics"].([]any) {
		for k := range d.(map[string]any) {
			switch k {
			case "code", "name", "severity", "message", "key", "object", "related", "proxies", "environments":
			default:
				t.Errorf("unexpected diagnostic field %q", k)
			}
		}
	}
}

// sarifSchema is the SARIF 2.1.0 schema, compiled.
func sarifSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

func TestSARIFMatchesSchema(t *testing.T) {
	schema := sarifSchema(t)
	for name, ds := range map[string][]Diagnostic{"sample": sample(), "empty": nil} {
		out := render(t, "sarif", Options{ToolVersion: "v1.2.3"}, ds)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: SARIF output fails the 2.1.0 schema: %v", name, err)
		}
		// Completeness: every diagnostic is a result with its rule and
		// position, and every catalog code is a rule.
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct{ ID, HelpURI string }
					}
				}
				Results []struct {
					RuleID    string
					Level     string
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string }
							Region           struct{ StartLine int }
						}
					}
				}
			}
		}
		if err := json.Unmarshal(out, &log); err != nil {
			t.Fatal(err)
		}
		run := log.Runs[0]
		if len(run.Tool.Driver.Rules) != len(Catalog()) {
			t.Errorf("%d rules, want %d", len(run.Tool.Driver.Rules), len(Catalog()))
		}
		for _, r := range run.Tool.Driver.Rules {
			if !strings.HasPrefix(r.HelpURI, DocsURL+"#mc") {
				t.Errorf("rule %s help %q", r.ID, r.HelpURI)
			}
		}
		if len(run.Results) != len(ds) {
			t.Fatalf("%d results for %d diagnostics", len(run.Results), len(ds))
		}
	}
}

func TestGitHubEscaping(t *testing.T) {
	out := string(render(t, "github", Options{}, sample()[3:4]))
	want := "::warning file=/abs/path/mesh config.yaml,line=3,title=MC1003 SchemaViolation::mesh config: unknown field \"a,b:c\"%0Asecond line 100%25; istiod ignores it%0Aproxies: shop/productpage-v1, shop/reviews-v2\n"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

func TestNewRendererRejectsUnknownFormat(t *testing.T) {
	if _, err := NewRenderer("xml", Options{}); err == nil || !strings.Contains(err.Error(), "text, json, sarif, github") {
		t.Errorf("err = %v", err)
	}
}
