package crdschema

import (
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// openAPINode is one node of a version's OpenAPI schema, with its
// property, additional-property and item schemas: the identity under
// which Memo remembers the library's verdict on a subtree. The library
// hands a sub-validator a copy of the property's schema, never the same
// pointer twice, so the node is known by its parent and the field.
type openAPINode struct {
	schema     *spec.Schema
	props      map[string]*openAPINode
	additional *openAPINode
	items      *openAPINode
	// names are the properties' names in order, and quoted each quoted
	// with a colon after it, as appendKey writes them.
	names  []string
	quoted [][]byte
	// quick is what the schema asks of a value, for holds.
	quick quick

	// Where the node is (link): its parent, how it is reached from
	// there, by which field, and its structural schema.
	parent     *openAPINode
	step       step
	field      string
	structural *schema.Structural
	// inert reports whether the node is an inert string field (inert.go);
	// flow is what reaches it.
	inert func() bool
	flow  func() flow
}

// newOpenAPINode is the tree of s. The library's sub-validator of a field
// is the property's, else the additional properties' (a structural schema
// has no patternProperties), and that of an index the items' (it has one
// items schema and no additionalItems); where a schema has the others
// the tree stops, and what it lacks is validated without the memo.
func newOpenAPINode(s *spec.Schema) *openAPINode {
	n := &openAPINode{schema: s, quick: newQuick(s)}
	if len(s.PatternProperties) > 0 || s.AdditionalItems != nil {
		return n
	}
	for k := range s.Properties {
		p := s.Properties[k]
		if n.props == nil {
			n.props = map[string]*openAPINode{}
		}
		n.props[k] = newOpenAPINode(&p)
		n.names = append(n.names, k)
	}
	slices.Sort(n.names)
	for _, k := range n.names {
		n.quoted = append(n.quoted, append(strconv.AppendQuote(nil, k), ':'))
	}
	if a := s.AdditionalProperties; a != nil && a.Schema != nil {
		n.additional = newOpenAPINode(a.Schema)
	}
	if i := s.Items; i != nil && i.Schema != nil {
		n.items = newOpenAPINode(i.Schema)
	}
	return n
}

// openAPIKey is a subtree's content under a node.
type openAPIKey struct {
	n       *openAPINode
	content uint32
}

// memoOpenAPI is the library's OpenAPI validator of a version (what
// validation.NewSchemaValidator builds for a create: kube-openapi's
// SchemaValidator on the converted schema), whose sub-validators look a
// subtree up in the memo first. Only a subtree found valid is
// remembered, with the match count the library gave it: a verdict with
// errors names the path it was found at, and is worked out again.
type memoOpenAPI struct {
	root *openAPINode
	m    *Memo
}

var _ validation.SchemaCreateValidator = memoOpenAPI{}

func (v memoOpenAPI) Validate(value any, _ ...validation.ValidationOption) *validate.Result {
	return validate.NewSchemaValidator(v.root.schema, nil, "", strfmt.Default, v.m.openAPIOption(v.root)).Validate(value)
}

// openAPIOption makes the sub-validators of node n's validator
// remembering ones.
func (m *Memo) openAPIOption(n *openAPINode) validate.Option {
	return func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = func(field string, schema *spec.Schema, root any, path string, formats strfmt.Registry, _ ...validate.Option) validate.ValueValidator {
			c := n.props[field]
			if c == nil {
				c = n.additional
			}
			return m.subValidator(c, schema, root, path, formats)
		}
		o.NewValidatorForIndex = func(_ int, schema *spec.Schema, root any, path string, formats strfmt.Registry, _ ...validate.Option) validate.ValueValidator {
			return m.subValidator(n.items, schema, root, path, formats)
		}
	}
}

// subValidator is the validator of schema at path, remembering under n;
// with no n, the library's own.
func (m *Memo) subValidator(n *openAPINode, schema *spec.Schema, root any, path string, formats strfmt.Registry) validate.ValueValidator {
	if n == nil {
		return validate.NewSchemaValidator(schema, root, path, formats)
	}
	return &rememberingValidator{m: m, n: n, schema: schema, root: root, path: path, formats: formats}
}

// rememberingValidator is a kube-openapi sub-validator that remembers in
// its Memo the valid subtrees under its node.
type rememberingValidator struct {
	m       *Memo
	n       *openAPINode
	schema  *spec.Schema
	root    any
	path    string
	formats strfmt.Registry
}

func (v *rememberingValidator) SetPath(path string) { v.path = path }

func (v *rememberingValidator) Applies(source any, _ reflect.Kind) bool {
	_, ok := source.(*spec.Schema)
	return ok
}

func (v *rememberingValidator) Validate(data any) *validate.Result {
	content, ok := v.m.contents.id(data)
	key := openAPIKey{n: v.n, content: content}
	if ok {
		if matches, ok := v.m.openAPI[key]; ok {
			return &validate.Result{MatchCount: matches}
		}
	}
	r := validate.NewSchemaValidator(v.schema, v.root, v.path, v.formats, v.m.openAPIOption(v.n)).Validate(data)
	if ok && len(r.Errors) == 0 && len(r.Warnings) == 0 {
		v.m.openAPI[key] = r.MatchCount
	}
	return r
}
