package crdschema

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
)

// TestAdaptedAnswersAsTheLibrary walks every served schema of every
// embedded CRD and checks that the adapter, which builds the schemas
// under a node once, answers as model.Structural, which builds them on
// each call: the same properties, items and additional properties, down
// to the leaves.
func TestAdaptedAnswersAsTheLibrary(t *testing.T) {
	forEachSchema(t, func(plural, version string, s *Schema) {
		compareSchemas(t, plural+" "+version, adapt(s.structural), &model.Structural{Structural: s.structural})
	})
}

// forEachSchema calls f with every served version of every embedded CRD.
func forEachSchema(t *testing.T, f func(plural, version string, s *Schema)) {
	t.Helper()
	for plural := range validSpecs {
		for _, version := range kindOf(t, plural).Versions {
			s, _, err := GatewayAPI(plural, version)
			if err != nil {
				t.Fatal(err)
			}
			f(plural, version, s)
		}
	}
}

func compareSchemas(t *testing.T, at string, got, want common.Schema) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s: schema %v, want %v", at, got, want)
	}
	if got == nil {
		return
	}
	if got.Type() != want.Type() || got.Format() != want.Format() || got.IsXIntOrString() != want.IsXIntOrString() || got.IsXEmbeddedResource() != want.IsXEmbeddedResource() {
		t.Errorf("%s: type %q %q, want %q %q", at, got.Type(), got.Format(), want.Type(), want.Format())
	}
	gp, wp := got.Properties(), want.Properties()
	if (gp == nil) != (wp == nil) || len(gp) != len(wp) {
		t.Fatalf("%s: properties %v, want %v", at, gp, wp)
	}
	for k, w := range wp {
		compareSchemas(t, at+"."+k, gp[k], w)
	}
	compareSchemas(t, at+"[]", got.Items(), want.Items())
	ga, wa := got.AdditionalProperties(), want.AdditionalProperties()
	if (ga == nil) != (wa == nil) {
		t.Fatalf("%s: additional properties %v, want %v", at, ga, wa)
	}
	if wa != nil {
		if ga.Allows() != wa.Allows() {
			t.Errorf("%s: additional properties allowed %v, want %v", at, ga.Allows(), wa.Allows())
		}
		compareSchemas(t, at+"{}", ga.Schema(), wa.Schema())
	}
}

// TestCELRulesHoldAsTheLibrary: a rule's value that holds is judged
// without the library's validator and leaves the budget the library
// leaves; one that breaks a rule goes to the library, message and all.
func TestCELRulesHoldAsTheLibrary(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	rule := s.rules.props["spec"].props["rules"].items
	if rule == nil || rule.own == nil {
		t.Fatal("spec.rules[] has no rules of its own")
	}
	r := rule.own()
	if r.programs == nil {
		t.Fatal("spec.rules[] goes to the library")
	}
	ruleSchema := s.structural.Properties["spec"].Properties["rules"].Items
	for _, c := range []struct {
		value string
		holds bool
	}{
		{`{"backendRefs": [{"name": "web", "port": 80}], "matches": [{"path": {"type": "PathPrefix", "value": "/a"}}]}`, true},
		{`{"filters": [{"type": "RequestRedirect", "requestRedirect": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/b"}}}], "matches": [{"path": {"type": "PathPrefix", "value": "/a"}}]}`, true},
		{`{"backendRefs": [{"name": "web", "port": 80}], "filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https"}}]}`, false},
		{`{"filters": [{"type": "RequestRedirect", "requestRedirect": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/b"}}}], "matches": [{"path": {"type": "Exact", "value": "/a"}}]}`, false},
	} {
		v := unstructured(decodeJSON(t, c.value))
		defaulting.Default(v, ruleSchema)
		// The library's validator of the node alone, whose children's
		// rules their own nodes judge.
		own := withoutChildRules(ruleSchema)
		library := cel.NewValidator(own, false, celconfig.PerCallLimit)
		wantErrs, wantLeft := library.Validate(context.Background(), nil, own, v, nil, celconfig.RuntimeCELCostBudget)
		left, ok := r.hold(context.Background(), nil, v, celconfig.RuntimeCELCostBudget)
		if ok != c.holds || ok && left != wantLeft {
			t.Errorf("%s: holds %v leaving %d, want %v leaving %d", c.value, ok, left, c.holds, wantLeft)
		}
		errs, left := r.validate(context.Background(), nil, nil, v, celconfig.RuntimeCELCostBudget)
		if got, want := renderErrs(errs), renderErrs(wantErrs); got != want || left != wantLeft {
			t.Errorf("%s: %s leaving %d, want %s leaving %d", c.value, got, left, want, wantLeft)
		}
		if _, ok := r.hold(context.Background(), nil, v, 0); ok {
			t.Errorf("%s: holds with no budget", c.value)
		}
	}
}

// TestCELRulesLeftToTheLibrary: the rules of a resource root, and those
// of a node with a rule that reads oldSelf, may read it, does not parse
// or is not a bool, are judged by the library's validator alone.
func TestCELRulesLeftToTheLibrary(t *testing.T) {
	optional := true
	for _, c := range []struct {
		name  string
		rules apiextv1.ValidationRules
		root  bool
	}{
		{"root", apiextv1.ValidationRules{{Rule: "self.a != 'x'"}}, true},
		{"oldSelf", apiextv1.ValidationRules{{Rule: "self.a != 'x'"}, {Rule: "self.a == oldSelf.a"}}, false},
		{"optionalOldSelf", apiextv1.ValidationRules{{Rule: "self.a != 'x'", OptionalOldSelf: &optional}}, false},
		{"parse", apiextv1.ValidationRules{{Rule: "self.a != 'x'"}, {Rule: "self.a =="}}, false},
		{"check", apiextv1.ValidationRules{{Rule: "self.a != 'x'"}, {Rule: "self.b"}}, false},
		{"bool", apiextv1.ValidationRules{{Rule: "self.a != 'x'"}, {Rule: "self.a"}}, false},
	} {
		s := structural(t, apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"a": {Type: "string"}}, XValidations: c.rules})
		r := newCELRules(s, c.root, nil)
		if r.programs != nil {
			t.Errorf("%s: judged without the library", c.name)
		}
		obj := map[string]any{"a": "x"}
		errs, left := r.validate(context.Background(), nil, nil, obj, celconfig.RuntimeCELCostBudget)
		wantErrs, wantLeft := cel.NewValidator(s, c.root, celconfig.PerCallLimit).Validate(context.Background(), nil, s, obj, nil, celconfig.RuntimeCELCostBudget)
		if got, want := renderErrs(errs), renderErrs(wantErrs); got != want || left != wantLeft || len(errs) == 0 {
			t.Errorf("%s: %s leaving %d, want %s leaving %d", c.name, got, left, want, wantLeft)
		}
	}
}

func structural(t *testing.T, v1 apiextv1.JSONSchemaProps) *schema.Structural {
	t.Helper()
	return compile(t, v1).structural
}

// compile is the Schema of a CRD whose one version's schema is v1.
func compile(t *testing.T, v1 apiextv1.JSONSchemaProps) *Schema {
	t.Helper()
	crd := &apiextv1.CustomResourceDefinition{}
	crd.Spec.Versions = []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &v1}}}
	s, err := Compile(crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestContentsNumbersByContent: subtrees alike in content share a
// number, in one object or across objects; any difference, a number's
// type included, tells them apart.
func TestContentsNumbersByContent(t *testing.T) {
	c := newContents()
	ids := map[uint32]string{}
	for i, doc := range []string{
		`{"a": [1, {"b": "x"}], "c": {"b": "x"}}`,
		`{"a": [1, {"b": "x"}], "c": {"b": "y"}}`,
		`{"a": [1.0, {"b": "x"}], "c": {}}`,
		`{"a": [], "c": [], "d": null}`,
	} {
		c.object()
		obj := unstructured(decodeJSON(t, doc)).(map[string]any)
		var walk func(v any)
		walk = func(v any) {
			id, ok := c.id(v)
			if !ok {
				t.Fatalf("object %d: %v has no number", i, v)
			}
			b, _ := appendContent(nil, v)
			if prev, seen := ids[id]; seen && prev != string(b) {
				t.Errorf("object %d: %s and %s share number %d", i, prev, b, id)
			}
			ids[id] = string(b)
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					walk(x[k])
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(obj)
	}
	byContent := map[string]uint32{}
	for id, content := range ids {
		if prev, dup := byContent[content]; dup {
			t.Errorf("%s has numbers %d and %d", content, prev, id)
		}
		byContent[content] = id
	}
	if _, ok := c.id(int32(1)); ok {
		t.Error("an unknown type was numbered")
	}
}

// decodeJSON reads doc as meshc's YAML reader leaves it (numbers as
// json.Number).
func decodeJSON(t *testing.T, doc string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return v
}

// TestCompileRulesAsTheLibrary compiles the rules of every node below
// the root of every served schema, and of nodes whose rules name a
// field by a CEL keyword, as the fast path does and as the library does
// (cel.Compile, for cel.NewValidator): see compileAsTheLibrary.
func TestCompileRulesAsTheLibrary(t *testing.T) {
	nodes := 0
	forEachServedOwnRules(t, func(at string, own *schema.Structural, v any) {
		if compileAsTheLibrary(t, at, own, v) {
			nodes++
		}
	})
	if nodes == 0 {
		t.Error("no node was compiled")
	}
	for _, rule := range []string{"self.namespace == 'x'", "self.__namespace__ == 'x'", "has(self.namespace)", "self.namespace.startsWith('x')"} {
		own := structural(t, apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"namespace": {Type: "string"}}})
		own.XValidations = apiextv1.ValidationRules{{Rule: rule}}
		if !compileAsTheLibrary(t, rule, own, map[string]any{"namespace": "xy"}) {
			t.Errorf("%s: goes to the library", rule)
		}
	}
}

// compileAsTheLibrary checks that the fast path takes own, a node with
// rules below the root, exactly when the library compiles each of its
// rules to a program without oldSelf, and that each program of the two
// gives the same value at the same cost on v (unless nil). It reports
// whether the fast path takes the node.
func compileAsTheLibrary(t *testing.T, at string, own *schema.Structural, v any) bool {
	t.Helper()
	programs, _ := compileRules(own, nil)
	compiled, err := cel.Compile(own, model.SchemaDeclType(own, false), celconfig.PerCallLimit, environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	takes := true
	for _, c := range compiled {
		takes = takes && c.Error == nil && !c.UsesOldSelf
	}
	if (programs != nil) != takes {
		t.Fatalf("%s: fast path takes the node %v, want %v", at, programs != nil, takes)
	}
	if programs == nil || v == nil {
		return takes
	}
	ctx := context.Background()
	self := selfActivation{common.UnstructuredToVal(v, adapt(own))}
	for i, c := range compiled {
		if (programs[i] == nil) != (c.Program == nil) {
			t.Fatalf("%s rule %d: program %v, want %v", at, i, programs[i] != nil, c.Program != nil)
		}
		if c.Program == nil {
			continue
		}
		got, gotDetails, gotErr := programs[i].ContextEval(ctx, self)
		want, wantDetails, wantErr := c.Program.ContextEval(ctx, self)
		if fmt.Sprint(got, gotErr) != fmt.Sprint(want, wantErr) || *gotDetails.ActualCost() != *wantDetails.ActualCost() {
			t.Errorf("%s rule %d on %v: %v %v cost %d, want %v %v cost %d", at, i, v, got, gotErr, *gotDetails.ActualCost(), want, wantErr, *wantDetails.ActualCost())
		}
	}
	return takes
}

// forEachServedOwnRules calls forEachOwnRules with every served schema
// of every embedded CRD and its valid and broken specs, at the path
// after the resource and version.
func forEachServedOwnRules(t *testing.T, f func(at string, own *schema.Structural, v any)) {
	t.Helper()
	forEachSchema(t, func(plural, version string, s *Schema) {
		var values []any
		for _, spec := range append([]string{validSpecs[plural]}, invalidSpecs[plural]...) {
			u := unstructured(object(t, plural, version, spec)).(map[string]any)
			defaulting.Default(u, s.structural)
			values = append(values, u)
		}
		forEachOwnRules(s, values, func(at string, own *schema.Structural, v any) {
			f(plural+" "+version+" "+at, own, v)
		})
	})
}

// forEachOwnRules calls f with every node below the root of s that has
// rules of its own, at its path, as the fast path compiles it (the
// rules under it cleared), once with no value and once with each value
// at the node in values.
func forEachOwnRules(s *Schema, values []any, f func(at string, own *schema.Structural, v any)) {
	var walk func(at string, n *celNode, st *schema.Structural, values []any)
	walk = func(at string, n *celNode, st *schema.Structural, values []any) {
		if n == nil {
			return
		}
		if n.own != nil && st != s.structural {
			own := withoutChildRules(st)
			f(at, own, nil)
			for _, v := range values {
				f(at, own, v)
			}
		}
		var items, additional []any
		props := map[string][]any{}
		for _, v := range values {
			switch x := v.(type) {
			case []any:
				items = append(items, x...)
			case map[string]any:
				for k, e := range x {
					props[k] = append(props[k], e)
					additional = append(additional, e)
				}
			}
		}
		walk(at+"[]", n.items, st.Items, items)
		for _, k := range slices.Sorted(maps.Keys(n.props)) {
			p := st.Properties[k]
			walk(at+"."+k, n.props[k], &p, props[k])
		}
		if n.additional != nil {
			walk(at+"{}", n.additional, st.AdditionalProperties.Structural, additional)
		}
	}
	walk("", s.rules, s.structural, values)
}

// TestWithoutChildRules: a node's own schema keeps its rules and none
// under it, and leaves the node's schema, which it shares parts of, as
// it was, for every node with rules of every served version.
func TestWithoutChildRules(t *testing.T) {
	nodes := 0
	for plural := range validSpecs {
		// Schemas of their own: the package's are shared with other
		// tests, which a change would hide from this one.
		crd, err := readCRD("gatewayapi/" + plural + ".pb")
		if err != nil {
			t.Fatal(err)
		}
		for _, version := range kindOf(t, plural).Versions {
			s, err := Compile(crd, version)
			if err != nil {
				t.Fatal(err)
			}
			before := s.structural.DeepCopy()
			var walk func(at string, st *schema.Structural)
			walk = func(at string, st *schema.Structural) {
				if st == nil || !hasRules(st) {
					return
				}
				if len(st.XValidations) > 0 {
					own := withoutChildRules(st)
					if len(own.XValidations) != len(st.XValidations) || hasChildRules(own) {
						t.Errorf("%s %s %s: own rules %d, want %d; rules under it %v", plural, version, at, len(own.XValidations), len(st.XValidations), hasChildRules(own))
					}
					nodes++
				}
				walk(at+"[]", st.Items)
				if a := st.AdditionalProperties; a != nil {
					walk(at+"{}", a.Structural)
				}
				for name, p := range st.Properties {
					walk(at+"."+name, &p)
				}
			}
			walk("", s.structural)
			if !reflect.DeepEqual(before, s.structural) {
				t.Errorf("%s %s: withoutChildRules changed the schema", plural, version)
			}
		}
	}
	if nodes == 0 {
		t.Error("no node with rules")
	}
}

// TestTreeTypesAsDerived: the CEL type the tree gives a node with rules
// (derived from its parent's) is, as compileRules keys stored rules by
// it, the type of the node's schema alone; else the node would miss its
// stored rules and compile them from their text.
func TestTreeTypesAsDerived(t *testing.T) {
	nodes := 0
	forEachSchema(t, func(plural, version string, s *Schema) {
		var walk func(at string, n *celNode, st *schema.Structural)
		walk = func(at string, n *celNode, st *schema.Structural) {
			if n == nil || st == nil {
				return
			}
			if n.own != nil && st != s.structural {
				own := withoutChildRules(st)
				fromTree, err := selfType(own, n.declType)
				if err != nil {
					t.Fatalf("%s %s %s: %v", plural, version, at, err)
				}
				alone, err := selfType(own, nil)
				if err != nil {
					t.Fatalf("%s %s %s: %v", plural, version, at, err)
				}
				if storedKeyPrefix(fromTree) != storedKeyPrefix(alone) {
					t.Errorf("%s %s %s: the tree's type is not the schema's", plural, version, at)
				}
				nodes++
			}
			walk(at+"[]", n.items, st.Items)
			for k, c := range n.props {
				p := st.Properties[k]
				walk(at+"."+k, c, &p)
			}
			if a := st.AdditionalProperties; a != nil {
				walk(at+"{}", n.additional, a.Structural)
			}
		}
		walk("", s.rules, s.structural)
	})
	if nodes == 0 {
		t.Error("no node with rules")
	}
}
