package crdschema

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/meshc/meshc/internal/model"
)

// brokenSpecs break the OpenAPI schemas and the CEL rules of the kinds
// meshc converts or admits by: a pattern, a length, a range, an enum, a
// required field, a list's length and uniqueness, a rule.
var brokenSpecs = map[string][]string{
	"httproutes": {
		`{"parentRefs": [{"name": "Bad_Name"}], "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}`,
		`{"parentRefs": [{"name": "gw", "port": 70000}], "rules": [{"backendRefs": [{"name": "web", "port": 0, "weight": 1000001}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"matches": [{"path": {"type": "Prefix", "value": "/"}, "method": "FETCH"}], "backendRefs": [{"port": 80}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "hostnames": ["a.example.com", "a.example.com", "-bad-"], "rules": [{"backendRefs": [{"name": "web"}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "no-slash"}}], "backendRefs": [{"name": "web", "port": 80}]}, {"name": "a"}, {"name": "a"}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"timeouts": {"request": "1s", "backendRequest": "2s"}, "filters": [{"type": "URLRewrite"}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "port": 80, "namespace": "` + strings.Repeat("n", 64) + `"}]}]}`,
	},
	"grpcroutes": {
		`{"parentRefs": [{"name": "gw"}], "rules": [{"matches": [{"method": {"type": "Exact"}}], "backendRefs": [{"name": "cart"}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"matches": [{"method": {"service": "9bad", "method": "Add"}}], "backendRefs": [{"name": "cart", "port": 9090}]}]}`,
		`{"parentRefs": [{"name": "gw"}, {"name": "gw"}], "rules": [{"matches": [{"method": {"type": "Fuzzy", "service": "a"}}], "backendRefs": [{"name": "cart", "port": -1}]}]}`,
	},
	"referencegrants": {
		`{"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}], "to": [{"group": "", "kind": "Service"}]}`,
		`{"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "Bad_NS"}], "to": []}`,
		`{"from": [{"group": "", "kind": "` + strings.Repeat("K", 64) + `", "namespace": "a"}], "to": [{"group": "", "kind": "Service", "name": ""}]}`,
	},
	"gateways": {
		`{"gatewayClassName": "istio", "listeners": [{"name": "tcp", "port": 9000, "protocol": "TCP", "hostname": "a.example.com"}, {"name": "tls", "port": 443, "protocol": "TLS"}]}`,
		`{"gatewayClassName": "", "listeners": [{"name": "http", "port": 0, "protocol": "HTTP", "tls": {"mode": "Terminate"}}]}`,
		`{"gatewayClassName": "istio", "listeners": [], "addresses": [{"type": "IPAddress", "value": "1.2.3.4"}, {"type": "IPAddress", "value": "1.2.3.4"}]}`,
		`{"gatewayClassName": "istio", "listeners": [{"name": "https", "port": 443, "protocol": "HTTPS", "tls": {"mode": "Terminate"}}], "infrastructure": {"labels": {"-x": "y"}}}`,
	},
}

// defaulted is obj as the API server validates it: unstructured, its
// status dropped, defaults applied.
func defaulted(s *Schema, obj map[string]any) map[string]any {
	u := unstructured(obj).(map[string]any)
	delete(u, "status")
	defaulting.Default(u, s.structural)
	defaulting.PruneNonNullableNullsWithoutDefaults(u, s.structural)
	return u
}

// libraryValidate is Validate with the library's validators alone (rules
// is cel.NewValidator of s): no quick check, no memo, no CEL fast path.
func libraryValidate(s *Schema, rules *cel.Validator, obj map[string]any) []Violation {
	u := defaulted(s, obj)
	errs := validation.ValidateCustomResource(nil, u, s.openAPI)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, u)...)
	unchecked := s.rules != nil && blocksRules(errs)
	if s.rules != nil && !unchecked {
		celErrs, _ := rules.Validate(context.Background(), nil, s.structural, u, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	var out []Violation
	for _, e := range errs {
		out = append(out, Violation{Path: dottedKeys(ParseFieldPath(e.Field), u), Msg: e.ErrorBody()})
	}
	if unchecked {
		out = append(out, Violation{Msg: RulesUnchecked})
	}
	return out
}

// mutants are objects made from the valid and broken specs of a kind at
// version: the valid one with every field in turn replaced by hostile
// values, and each as written and with random edits (mutate) piled up.
// The valid object as written is the first.
func mutants(t *testing.T, plural, version string) []map[string]any {
	hostile := []any{nil, "", "x", int64(-1), int64(1 << 31), json.Number("1.0"), 1.5, true, []any{}, map[string]any{}}
	rng := rand.New(rand.NewPCG(uint64(len(plural)), uint64(len(version))))
	valid := validSpecs[plural]
	out := []map[string]any{object(t, plural, version, valid)}
	for _, p := range leaves(object(t, plural, version, valid)["spec"], model.Path{}.Key("spec")) {
		for _, v := range hostile {
			obj := object(t, plural, version, valid)
			set(obj, p, v)
			out = append(out, obj)
		}
	}
	for i, spec := range append([]string{valid}, append(invalidSpecs[plural], brokenSpecs[plural]...)...) {
		if i > 0 {
			out = append(out, object(t, plural, version, spec))
		}
		for range 50 {
			obj := object(t, plural, version, spec)
			for range 1 + rng.IntN(3) {
				ps := leaves(obj["spec"], model.Path{}.Key("spec"))
				p := ps[rng.IntN(len(ps))]
				set(obj, p, mutate(rng, get(obj, p)))
			}
			out = append(out, obj)
		}
	}
	return out
}

// mutate is v edited a little, as a hand or a generator gets it wrong:
// a string lengthened, emptied, or given a character names refuse; a
// number pushed past a bound; a list grown by a copy of an element or
// emptied; an object missing a field or with a field too many.
func mutate(rng *rand.Rand, v any) any {
	switch x := v.(type) {
	case string:
		return []string{"", x + x, strings.Repeat(x+"a", 40), x + "_", strings.ToUpper(x), "/" + x, x + "//", "*." + x}[rng.IntN(8)]
	case json.Number:
		return json.Number([]string{"0", "-1", "65536", "2147483648", "1000000", "3.5", "1e3"}[rng.IntN(7)])
	case []any:
		if len(x) == 0 || rng.IntN(4) == 0 {
			return []any{}
		}
		return append(slices.Clone(x), x[rng.IntN(len(x))])
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = e
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		})
		if len(keys) > 0 && rng.IntN(2) == 0 {
			delete(out, keys[rng.IntN(len(keys))])
		} else {
			out["extra"] = "x"
		}
		return out
	}
	return nil
}

// get is the value at p in obj.
func get(obj map[string]any, p model.Path) any {
	var cur any = obj
	for _, e := range p {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[e.Key]
		case []any:
			cur = c[e.Index]
		}
	}
	return cur
}

// TestHoldsOnlyWhereTheLibraryFindsNothing: the quick check passes a
// value only when the library's OpenAPI validator finds nothing wrong
// with it, and passes every valid object.
func TestHoldsOnlyWhereTheLibraryFindsNothing(t *testing.T) {
	forEachSchema(t, func(plural, version string, s *Schema) {
		held, refused := 0, 0
		for i, obj := range mutants(t, plural, version) {
			u := defaulted(s, obj)
			errs := validation.ValidateCustomResource(nil, u, s.openAPI)
			switch holds := s.openAPITree.holds(u); {
			case i == 0 && !holds:
				t.Errorf("%s %s: the valid object does not hold (library: %v)", plural, version, errs)
			case holds && len(errs) > 0:
				t.Errorf("%s %s object %d holds, but the library finds %v in %v", plural, version, i, errs, u["spec"])
			case holds:
				held++
			case len(errs) > 0:
				refused++
			}
		}
		if held == 0 || refused == 0 {
			t.Errorf("%s %s: %d objects held and %d were refused by the library; want both", plural, version, held, refused)
		}
	})
}

// TestValidateAgreesWithTheLibrary: Validate and Memo.Validate, with
// their quick check, memo and CEL fast path, report exactly what the
// library's validators report, on valid, broken and mutated objects.
func TestValidateAgreesWithTheLibrary(t *testing.T) {
	for plural, version := range map[string]string{"httproutes": "v1", "grpcroutes": "v1", "referencegrants": "v1beta1", "gateways": "v1"} {
		s, _, err := GatewayAPI(plural, version)
		if err != nil {
			t.Fatal(err)
		}
		m := NewMemo()
		rules := cel.NewValidator(s.structural, true, celconfig.PerCallLimit)
		reported := 0
		for i, obj := range mutants(t, plural, version) {
			want := render(libraryValidate(s, rules, obj))
			if want != "" {
				reported++
			}
			if got := render(s.Validate(context.Background(), obj)); got != want {
				t.Errorf("%s %s object %d: Validate gives\n%s\nthe library\n%s", plural, version, i, got, want)
			}
			if got := render(m.Validate(context.Background(), s, obj)); got != want {
				t.Errorf("%s %s object %d: the memo gives\n%s\nthe library\n%s", plural, version, i, got, want)
			}
		}
		if reported == 0 {
			t.Errorf("%s: no object broke a rule", plural)
		}
	}
}

// TestHoldsFollowsEachCheck: each check the quick way follows, on a
// value that passes it and one that does not, agrees with the library;
// a schema or a value it does not follow gets no verdict.
func TestHoldsFollowsEachCheck(t *testing.T) {
	const followed, notFollowed = true, false
	for _, c := range []struct {
		schema   string
		value    any
		followed bool
	}{
		{`{"type": "string", "format": "ipv4"}`, "10.0.0.1", followed},
		{`{"type": "string", "format": "ipv4"}`, "10.0.0", followed},
		{`{"type": "string", "format": "no-such-format"}`, "x", followed},
		{`{"type": "string", "maxLength": 2}`, "éé", followed},
		{`{"type": "string", "maxLength": 2}`, "abc", followed},
		{`{"type": "string", "minLength": 1}`, "", followed},
		{`{"type": "string", "pattern": "^a+$"}`, "aa", followed},
		{`{"type": "string", "pattern": "^a+$"}`, "ab", followed},
		{`{"type": "string", "enum": ["a", "b"]}`, "b", followed},
		{`{"type": "string", "enum": ["a", "b"]}`, "c", followed},
		{`{"type": "string"}`, int64(1), followed},
		{`{"type": "integer", "format": "int32"}`, int64(1<<31 - 1), followed},
		{`{"type": "integer", "format": "int32"}`, int64(1 << 31), followed},
		{`{"type": "integer", "minimum": 1, "maximum": 3}`, int64(3), followed},
		{`{"type": "integer", "minimum": 1, "maximum": 3}`, int64(4), followed},
		{`{"type": "integer", "minimum": 1, "maximum": 3}`, int64(0), followed},
		{`{"type": "integer", "maximum": 3, "exclusiveMaximum": true}`, int64(3), followed},
		{`{"type": "boolean"}`, true, followed},
		{`{"type": "boolean"}`, "true", followed},
		{`{"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}`, []any{int64(1), int64(2)}, followed},
		{`{"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}`, []any{}, followed},
		{`{"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}`, []any{int64(1), int64(2), int64(3)}, followed},
		{`{"type": "array", "items": {"type": "integer"}}`, []any{"1"}, followed},
		{`{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}`, map[string]any{"a": "x", "b": int64(1)}, followed},
		{`{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}`, map[string]any{"b": "x"}, followed},
		{`{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}`, map[string]any{"a": "x"}, followed},
		{`{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}`, map[string]any{"b": "x"}, followed},
		{`{"type": "object", "additionalProperties": {"type": "string", "maxLength": 1}}`, map[string]any{"a": "x"}, followed},
		{`{"type": "object", "additionalProperties": {"type": "string", "maxLength": 1}}`, map[string]any{"a": "xy"}, followed},
		{`{"type": "object", "maxProperties": 1, "minProperties": 1}`, map[string]any{"a": "x"}, followed},
		{`{"type": "object", "maxProperties": 1}`, map[string]any{"a": "x", "b": "y"}, followed},
		{`{"type": "object", "minProperties": 1}`, map[string]any{}, followed},
		{`{"type": "object"}`, nil, notFollowed},
		{`{"type": "integer"}`, 1.0, notFollowed},
		{`{"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}`, "10.0.0.1", notFollowed},
		{`{"type": "object", "patternProperties": {"^a": {"type": "string"}}}`, map[string]any{"a": "x"}, notFollowed},
		{`{"type": "array", "uniqueItems": true, "items": {"type": "string"}}`, []any{"a"}, notFollowed},
		{`{"type": "integer", "multipleOf": 2}`, int64(2), notFollowed},
		{`{"type": "integer", "enum": [1]}`, int64(1), notFollowed},
		{`{"type": "number"}`, int64(1), notFollowed},
		{`{"type": ["string", "integer"]}`, "x", notFollowed},
	} {
		s := new(spec.Schema)
		if err := json.Unmarshal([]byte(c.schema), s); err != nil {
			t.Fatal(err)
		}
		got := newOpenAPINode(s).holds(c.value)
		valid := validate.NewSchemaValidator(s, nil, "", strfmt.Default).Validate(c.value).IsValid()
		if c.followed && got != valid || !c.followed && got {
			t.Errorf("%s on %#v: holds %v, the library finds it valid: %v", c.schema, c.value, got, valid)
		}
	}
}
