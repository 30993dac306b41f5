// Package crdschema validates custom resources against their
// CustomResourceDefinition as the API server does on create: defaulting,
// the OpenAPI schema (types, enums, patterns, lengths, required fields,
// formats), x-kubernetes-list-type uniqueness and the CEL rules
// (x-kubernetes-validations).
//
// It runs the API server's own code (k8s.io/apiextensions-apiserver), so a
// rule is judged exactly as the cluster judges it, message included; a
// second implementation of the OpenAPI subset and of CEL's Kubernetes
// libraries would drift from the one that decides. What it does without
// the library's validators only ever passes an object, and only where
// the library would find nothing: the quick OpenAPI check (quick.go) runs
// the library's checks of single values, and the CEL fast path
// (celrules.go) the library's programs; anything else goes to the
// library, which finds the problems and words them.
package crdschema

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/meshc/meshc/internal/model"
)

// Schema is one version of a CRD, compiled once: its structural schema
// (for defaulting, list types and CEL), its OpenAPI validator and its CEL
// programs. It is safe for concurrent use.
type Schema struct {
	structural *schema.Structural
	openAPI    validation.SchemaValidator
	// openAPITree is the schema openAPI validates against, as Memo
	// walks it.
	openAPITree *openAPINode
	// rules is nil when the version has no CEL rules.
	rules *celNode
	// metadataOpaque: the schema reads no more of the metadata than its
	// type (see Memo).
	metadataOpaque bool
}

// Violation is one rule an object breaks, at the field the API server
// names.
type Violation struct {
	Path model.Path
	// Msg is the API server's text of the problem, without the path.
	Msg string
}

// Compile builds the schema of version of crd, as the API server does
// when it starts serving the CRD.
func Compile(crd *apiextv1.CustomResourceDefinition, version string) (*Schema, error) {
	var v1 *apiextv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			v1 = v.Schema.OpenAPIV3Schema
		}
	}
	if v1 == nil {
		return nil, fmt.Errorf("%s: no schema for version %q", crd.Name, version)
	}
	internal := new(apiext.JSONSchemaProps)
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		return nil, fmt.Errorf("%s %s: converting the schema: %w", crd.Name, version, err)
	}
	structural, err := schema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("%s %s: schema is not structural: %w", crd.Name, version, err)
	}
	if err := defaulting.PruneDefaults(structural); err != nil {
		return nil, fmt.Errorf("%s %s: pruning defaults: %w", crd.Name, version, err)
	}
	openAPI, openAPISchema, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("%s %s: OpenAPI validator: %w", crd.Name, version, err)
	}
	rules, err := newCELTree(structural)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", crd.Name, version, err)
	}
	openAPITree := newOpenAPINode(openAPISchema)
	link(openAPITree, structural, rules)
	return &Schema{
		structural:     structural,
		openAPI:        openAPI,
		openAPITree:    openAPITree,
		rules:          rules,
		metadataOpaque: metadataOpaque(v1),
	}, nil
}

// Validate checks an object (apiVersion, kind, metadata, spec) as the API
// server checks it on create: the status is dropped (the status
// subresource ignores it on create), defaults are applied, then the
// OpenAPI schema, list types and CEL rules are checked. obj is not
// modified; its numbers may be json.Number, as a YAML or JSON reader
// leaves them.
func (s *Schema) Validate(ctx context.Context, obj map[string]any) []Violation {
	return s.validate(ctx, obj, nil)
}

// validate is Validate, remembering through m when it is not nil.
func (s *Schema) validate(ctx context.Context, obj map[string]any, m *Memo) []Violation {
	u, ok := unstructured(obj).(map[string]any)
	if !ok {
		return nil
	}
	delete(u, "status")
	defaulting.Default(u, s.structural)
	defaulting.PruneNonNullableNullsWithoutDefaults(u, s.structural)
	if m != nil {
		m.contents.object()
	}

	var errs field.ErrorList
	if !s.openAPITree.holds(u) {
		var openAPI validation.SchemaCreateValidator = s.openAPI
		if m != nil {
			openAPI = memoOpenAPI{root: s.openAPITree, m: m}
		}
		errs = validation.ValidateCustomResource(nil, u, openAPI)
	}
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, u)...)
	unchecked := s.rules != nil && blocksRules(errs)
	if s.rules != nil && !unchecked {
		celErrs, _ := m.validateCEL(ctx, s.rules, nil, u, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	out := make([]Violation, 0, len(errs)+1)
	for _, e := range errs {
		out = append(out, Violation{Path: dottedKeys(ParseFieldPath(e.Field), u), Msg: e.ErrorBody()})
	}
	if unchecked {
		// The API server runs no rule on an object whose shape is
		// wrong, and says so.
		out = append(out, Violation{Msg: RulesUnchecked})
	}
	return out
}

// RulesUnchecked is the API server's note on an object whose CEL rules
// were skipped because of other errors.
const RulesUnchecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// blocksRules reports the errors after which the API server leaves the CEL
// rules unchecked: those that say a value has the wrong shape, on which
// rules would fail to evaluate.
func blocksRules(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// unstructured deep-copies a decoded JSON value into the form the API
// server validates: json.Number becomes int64 when it is an integer and
// float64 otherwise, as the API server's JSON decoder reads numbers.
func unstructured(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = unstructured(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unstructured(e)
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	}
	return v
}

// ParseFieldPath reads the API server's field path ("spec.rules[0].name",
// "metadata.labels[app]") as a model.Path. A bracket holding digits is an
// index, anything else a map key, as field.Path writes them; "<nil>" is
// the object itself.
func ParseFieldPath(s string) model.Path {
	var p model.Path
	if s == "<nil>" {
		return p
	}
	for s != "" {
		switch {
		case s[0] == '.':
			s = s[1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return p.Key(s)
			}
			inner := s[1:end]
			if i, ok := index(inner); ok {
				p = p.Index(i)
			} else {
				p = p.Key(inner)
			}
			s = s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			p = p.Key(s[:end])
			s = s[end:]
		}
	}
	return p
}

// dottedKeys rejoins the map keys with dots that the OpenAPI validator
// writes unbracketed ("labels.app.kubernetes.io/name"), where obj has no
// key for a step but has one for the step joined with the next.
func dottedKeys(p model.Path, obj any) model.Path {
	var out model.Path
	for i := 0; i < len(p); i++ {
		e := p[i]
		switch v := obj.(type) {
		case map[string]any:
			if e.IsIndex {
				return append(out, p[i:]...)
			}
			key, j := e.Key, i
			_, ok := v[key]
			for !ok && j+1 < len(p) && !p[j+1].IsIndex {
				j++
				key += "." + p[j].Key
				_, ok = v[key]
			}
			if !ok {
				return append(out, p[i:]...)
			}
			out, obj, i = out.Key(key), v[key], j
		case []any:
			if !e.IsIndex || e.Index >= len(v) {
				return append(out, p[i:]...)
			}
			out, obj = out.Index(e.Index), v[e.Index]
		default:
			return append(out, p[i:]...)
		}
	}
	return out
}

// index reads a list index: decimal digits only.
func index(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
