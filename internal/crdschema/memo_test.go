package crdschema

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/meshc/meshc/internal/model"
)

// invalidSpecs break CEL rules at several depths, some twice, so that a
// remembered subtree is met again at another path.
var invalidSpecs = map[string][]string{
	"httproutes": {
		// The same bad match in two rules, and a redirect beside backends.
		`{"parentRefs": [{"name": "gw"}], "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/a//b"}}], "backendRefs": [{"name": "web", "port": 80}]}, {"matches": [{"path": {"type": "PathPrefix", "value": "/a//b"}}], "filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https"}}], "backendRefs": [{"name": "web", "port": 80}]}]}`,
		// Duplicate parentRefs, a backend without its port, two header
		// modifiers, a backend timeout over the request's.
		`{"parentRefs": [{"name": "gw"}, {"name": "gw"}], "rules": [{"backendRefs": [{"name": "web"}, {"name": "web"}], "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "a", "value": "b"}]}}, {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "c", "value": "d"}]}}], "timeouts": {"request": "1s", "backendRequest": "2s"}}]}`,
		// The same again, one backend moved: most subtrees are met before.
		`{"parentRefs": [{"name": "gw"}, {"name": "gw"}], "rules": [{"backendRefs": [{"name": "web"}, {"name": "api"}], "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "a", "value": "b"}]}}, {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "c", "value": "d"}]}}], "timeouts": {"request": "1s", "backendRequest": "2s"}}]}`,
		// A number as an integer and as a float.
		`{"parentRefs": [{"name": "gw", "port": 80}], "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}`,
		`{"parentRefs": [{"name": "gw", "port": 80.0}], "rules": [{"backendRefs": [{"name": "web", "port": 80.5}]}]}`,
	},
	"gateways": {
		`{"gatewayClassName": "istio", "listeners": [{"name": "a", "port": 80, "protocol": "HTTPS"}, {"name": "a", "port": 80, "protocol": "HTTP", "tls": {"mode": "Terminate"}}]}`,
	},
}

// TestMemoAgreesWithValidate validates valid, broken and hostile objects
// of every kind through one Memo, each twice under two names, and checks
// that it reports exactly what Validate reports, and that the CEL walk
// node by node, remembered or not, gives the errors and the cost of the
// library's validator.
func TestMemoAgreesWithValidate(t *testing.T) {
	hostile := []any{nil, "", "x", int64(-1), json.Number("1.0"), 1.5, true, []any{}, map[string]any{}}
	m := NewMemo()
	hits := 0
	for _, plural := range slices.Sorted(func(yield func(string) bool) {
		for p := range validSpecs {
			if !yield(p) {
				return
			}
		}
	}) {
		for vi, version := range kindOf(t, plural).Versions {
			s, _, err := GatewayAPI(plural, version)
			if err != nil {
				t.Fatal(err)
			}
			specs := append([]string{validSpecs[plural]}, invalidSpecs[plural]...)
			var objs []map[string]any
			for _, spec := range specs {
				objs = append(objs, object(t, plural, version, spec))
				if vi > 0 {
					continue // the hostile values at the first version
				}
				for _, p := range leaves(objs[len(objs)-1]["spec"], model.Path{}.Key("spec")) {
					for _, v := range hostile {
						mutated := object(t, plural, version, spec)
						set(mutated, p, v)
						objs = append(objs, mutated)
					}
				}
			}
			library := cel.NewValidator(s.structural, true, celconfig.PerCallLimit)
			for i, obj := range objs {
				want := render(s.Validate(context.Background(), obj))
				// The CEL walk, with and without the memo, against the
				// library's own, on the object as the API server has it
				// (defaulted, status dropped): errors and cost.
				u := unstructured(obj).(map[string]any)
				delete(u, "status")
				defaulting.Default(u, s.structural)
				defaulting.PruneNonNullableNullsWithoutDefaults(u, s.structural)
				libErrs, libLeft := library.Validate(context.Background(), nil, s.structural, u, nil, celconfig.RuntimeCELCostBudget)
				for _, walker := range []*Memo{nil, m} {
					errs, left := walker.validateCEL(context.Background(), s.rules, nil, u, celconfig.RuntimeCELCostBudget)
					if got, want := renderErrs(errs), renderErrs(libErrs); got != want || left != libLeft {
						t.Errorf("%s %s object %d (memo %v): the walk gives\n%s\n(budget left %d), the library\n%s\n(budget left %d)", plural, version, i, walker != nil, got, left, want, libLeft)
					}
				}
				for _, name := range []string{"a", "b"} {
					obj["metadata"].(map[string]any)["name"] = name
					before := len(m.cel)
					if got := render(m.Validate(context.Background(), s, obj)); got != want {
						t.Errorf("%s %s object %d (%s): memo gives\n%s\nValidate gives\n%s", plural, version, i, name, got, want)
					}
					if len(m.cel) == before {
						hits++
					}
				}
			}
		}
	}
	if hits == 0 {
		t.Error("the memo was never used")
	}
}

// render is violations in a stable order.
func render(vs []Violation) string {
	var lines []string
	for _, v := range vs {
		lines = append(lines, fmt.Sprintf("%s: %s", v.Path, v.Msg))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func renderErrs(errs field.ErrorList) string {
	var lines []string
	for _, e := range errs {
		lines = append(lines, e.Field+": "+e.ErrorBody())
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestMemoRemembersSubtrees: a rule met at another index, in another
// object, is judged from the memo and reported at its own path.
func TestMemoRemembersSubtrees(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemo()
	bad := `{"matches": [{"path": {"type": "PathPrefix", "value": "/a//b"}}], "backendRefs": [{"name": "web", "port": 80}]}`
	first := m.Validate(context.Background(), s, object(t, "httproutes", "v1", `{"rules": [`+bad+`]}`))
	known := len(m.cel)
	second := m.Validate(context.Background(), s, object(t, "httproutes", "v1", `{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "api", "port": 80}]}, `+bad+`]}`))
	if got := render(first); !strings.HasPrefix(got, "spec.rules[0].matches[0].path: ") {
		t.Errorf("first object: %s", got)
	}
	if got := render(second); !strings.HasPrefix(got, "spec.rules[1].matches[0].path: ") {
		t.Errorf("second object: %s", got)
	}
	if added := len(m.cel) - known; added == 0 || added > 12 {
		t.Errorf("the second object added %d subtrees; want some, not all again", added)
	}
}

func TestMetadataOpaque(t *testing.T) {
	meta := apiextv1.JSONSchemaProps{Type: "object"}
	for _, c := range []struct {
		name string
		root apiextv1.JSONSchemaProps
		want bool
	}{
		{"metadata is an object", apiextv1.JSONSchemaProps{Properties: map[string]apiextv1.JSONSchemaProps{"metadata": meta}}, true},
		{"no metadata property", apiextv1.JSONSchemaProps{}, false},
		{"a rule at the root", apiextv1.JSONSchemaProps{Properties: map[string]apiextv1.JSONSchemaProps{"metadata": meta}, XValidations: apiextv1.ValidationRules{{Rule: "self.metadata.name.size() < 10"}}}, false},
		{"metadata with properties", apiextv1.JSONSchemaProps{Properties: map[string]apiextv1.JSONSchemaProps{"metadata": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"name": {Type: "string", MaxLength: new(int64)}}}}}, false},
		{"anyOf at the root", apiextv1.JSONSchemaProps{Properties: map[string]apiextv1.JSONSchemaProps{"metadata": meta}, AnyOf: []apiextv1.JSONSchemaProps{{Required: []string{"spec"}}}}, false},
	} {
		if got := metadataOpaque(&c.root); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAppendContentTellsNumbersApart: 80 and 80.0 are different values to
// CEL and must not share a memo entry.
func TestAppendContentTellsNumbersApart(t *testing.T) {
	vals := []any{int64(80), 80.0, json.Number("80"), json.Number("80.0"), "80", nil, true, []any{}, map[string]any{}}
	seen := map[string]any{}
	for _, v := range vals {
		b, ok := appendContent(nil, v)
		if !ok {
			t.Fatalf("%#v: no content", v)
		}
		if w, dup := seen[string(b)]; dup {
			t.Errorf("%#v and %#v encode alike: %s", v, w, b)
		}
		seen[string(b)] = v
	}
	if _, ok := appendContent(nil, int32(1)); ok {
		t.Error("an unknown type was encoded")
	}
}

// TestCompileRefusesAllOfRules: the node-by-node walk compiles each
// node's rules against the node itself, which rules under allOf are not.
func TestCompileRefusesAllOfRules(t *testing.T) {
	crd := &apiextv1.CustomResourceDefinition{}
	crd.Name = "things.example.com"
	crd.Spec.Versions = []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"metadata": {Type: "object"},
			"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"a": {Type: "string"}},
				AllOf: []apiextv1.JSONSchemaProps{{XValidations: apiextv1.ValidationRules{{Rule: "self.a != 'x'"}}}}},
		},
	}}}}
	if _, err := Compile(crd, "v1"); err == nil || !strings.Contains(err.Error(), "allOf") {
		t.Errorf("err %v, want allOf refused", err)
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"a": {Type: "string"}},
		XValidations: apiextv1.ValidationRules{{Rule: "self.a != 'x'"}}}
	s, err := Compile(crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}, "spec": map[string]any{"a": "x"}}
	if got := render(s.Validate(context.Background(), obj)); !strings.HasPrefix(got, "spec: Invalid value") {
		t.Errorf("the rule beside the properties: %q", got)
	}
}

// TestMemoRemembersValidOpenAPISubtrees: the OpenAPI schema's verdict on
// a subtree met before stands at another path, in another object; only
// a valid subtree is remembered, so an invalid one is still reported at
// its own path.
func TestMemoRemembersValidOpenAPISubtrees(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemo()
	ref := `{"name": "web", "port": 80}`
	bad := `{"name": "web", "port": 80, "weight": -1}`
	for i, c := range []struct {
		spec string
		// The subtrees the object adds to the memo, at least and at
		// most.
		least, most int
	}{
		{`{"rules": [{"backendRefs": [` + ref + `]}]}`, 10, 100},
		// One backend more: the object, its spec, rules, rule, list and
		// the new backend with its name and port.
		{`{"rules": [{"backendRefs": [` + ref + `, {"name": "api", "port": 81}]}]}`, 6, 8},
		// An invalid backend beside a rule met before, which is all
		// that is valid in the object, in either order.
		{`{"rules": [{"backendRefs": [` + bad + `]}, {"backendRefs": [` + ref + `]}]}`, 0, 0},
		{`{"rules": [{"backendRefs": [` + ref + `]}, {"backendRefs": [` + bad + `]}]}`, 0, 0},
	} {
		// The library's validator, with and without the memo: a
		// valid object takes the quick way in Validate (quick.go).
		u := defaulted(s, object(t, "httproutes", "v1", c.spec))
		before := len(m.openAPI)
		m.contents.object()
		got := renderErrs(validation.ValidateCustomResource(nil, u, memoOpenAPI{root: s.openAPITree, m: m}))
		want := renderErrs(validation.ValidateCustomResource(nil, u, s.openAPI))
		if got != want {
			t.Errorf("object %d: memo gives\n%s\nthe library gives\n%s", i, got, want)
		}
		if added := len(m.openAPI) - before; added < c.least || added > c.most {
			t.Errorf("object %d added %d subtrees, want %d to %d", i, added, c.least, c.most)
		}
		if strings.Contains(c.spec, bad) && !strings.Contains(got, ".weight: Invalid value") {
			t.Errorf("object %d: the bad weight is not reported: %s", i, got)
		}
	}
}

// TestOpenAPITreeStopsAtOtherSubschemas: a field matching
// patternProperties, or an index past the items, is validated by a
// schema the tree does not follow, so the tree stops there.
func TestOpenAPITreeStopsAtOtherSubschemas(t *testing.T) {
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}
	for _, c := range []struct {
		name string
		s    spec.Schema
		want bool
	}{
		{"properties and additional properties", spec.Schema{SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{"a": str}, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &str}}}, true},
		{"pattern properties", spec.Schema{SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{"a": str}, PatternProperties: map[string]spec.Schema{"^b": str}, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &str}}}, false},
		{"items", spec.Schema{SchemaProps: spec.SchemaProps{Items: &spec.SchemaOrArray{Schema: &str}}}, true},
		{"additional items", spec.Schema{SchemaProps: spec.SchemaProps{Items: &spec.SchemaOrArray{Schema: &str}, AdditionalItems: &spec.SchemaOrBool{Allows: true, Schema: &str}}}, false},
	} {
		n := newOpenAPINode(&c.s)
		if got := n.props != nil || n.additional != nil || n.items != nil; got != c.want {
			t.Errorf("%s: children %v, want %v", c.name, got, c.want)
		}
	}
}
