package crdschema

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Memo validates objects through their Schemas remembering what it has
// judged, so that content seen before costs a lookup: the API server's
// OpenAPI and CEL checks take a few hundred microseconds an HTTPRoute,
// most of it the libraries allocating as they walk it.
//
// Four things are remembered. The violations of a whole object, by its
// content less metadata, status and the values of inert fields
// (inert.go), when the schema reads no more of the metadata than its
// type (every Gateway API CRD): the same route stamped into many
// namespaces, or sending to another namespace, is judged once. The
// outcome of each subtree the CEL rules judge (a parentRef, a rule, a
// match, a backendRef), by the subtree's content: a CEL rule sees only
// its own node and what is under it, so routes that differ in one
// backend share the verdicts on their other parts. Each CEL rule that
// held, by what it read of the value (celreads.go). And, as for CEL,
// each subtree the OpenAPI schema found valid (openapi.go), for the
// objects the quick check does not pass. A Memo belongs to one
// goroutine.
type Memo struct {
	// objects is the violations of each object, by schema and key
	// (appendObjectKey); key is the buffer the key is written in.
	objects map[*Schema]map[string][]Violation
	key     []byte
	// exact is the violations of each object by schema and the caller's
	// encoding of its content (ValidateExact).
	exact map[*Schema]map[string][]Violation
	cel   map[celKey]celOutcome
	// openAPI is the match count of each subtree the OpenAPI schema
	// found valid.
	openAPI map[openAPIKey]int
	// contents numbers the subtrees the two above are keyed by.
	contents contents
	// held is the cost of each rule (by what it reads) on each value it
	// held on, by the encoding of what it read (appendReads); buf is the
	// buffer the encoding is written in.
	held map[*reads]map[string]int64
	buf  []byte
}

// remember records that the rule reading r held at cost on the value
// whose reads encode as key.
func (m *Memo) remember(r *reads, key []byte, cost int64) {
	if m.held[r] == nil {
		m.held[r] = map[string]int64{}
	}
	m.held[r][string(key)] = cost
}

type celKey struct {
	n       *celNode
	content uint32
}

// celOutcome is what validating a subtree gave: its errors, with the
// subtree's path as prefix of their fields, and the CEL cost it took.
type celOutcome struct {
	errs   field.ErrorList
	prefix string
	cost   int64
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo {
	return &Memo{objects: map[*Schema]map[string][]Violation{}, exact: map[*Schema]map[string][]Violation{}, cel: map[celKey]celOutcome{}, openAPI: map[openAPIKey]int{}, contents: newContents(), held: map[*reads]map[string]int64{}}
}

// Validate is s.Validate(ctx, obj), remembered.
func (m *Memo) Validate(ctx context.Context, s *Schema, obj map[string]any) []Violation {
	key, ok := s.appendObjectKey(m.key[:0], obj)
	m.key = key
	if !ok {
		return s.validate(ctx, obj, m)
	}
	vs, ok := m.objects[s][string(key)]
	if !ok {
		vs = s.validate(ctx, obj, m)
		if m.objects[s] == nil {
			m.objects[s] = map[string][]Violation{}
		}
		m.objects[s][string(key)] = vs
	}
	return cloneViolations(vs)
}

// ValidateExact is Validate for the object build returns, whose content
// less its metadata (an object, or none) content encodes: objects with
// the same encoding must be the same but for their metadata. An object
// met before costs a lookup, without building it or its whole-object key,
// when the schema judges no more of the metadata than its type, as every
// Gateway API CRD's does.
func (m *Memo) ValidateExact(ctx context.Context, s *Schema, content []byte, build func() map[string]any) []Violation {
	if !s.metadataOpaque {
		return m.Validate(ctx, s, build())
	}
	vs, ok := m.exact[s][string(content)]
	if !ok {
		vs = m.Validate(ctx, s, build())
		if m.exact[s] == nil {
			m.exact[s] = map[string][]Violation{}
		}
		m.exact[s][string(content)] = vs
	}
	return cloneViolations(vs)
}

// cloneViolations copies remembered violations for a caller to own, the
// remembered paths left intact.
func cloneViolations(vs []Violation) []Violation {
	out := slices.Clone(vs)
	for i := range out {
		out[i].Path = slices.Clone(out[i].Path)
	}
	return out
}

// appendObjectKey appends obj's whole-object memo key to b: ok is false
// when the schema may judge the metadata beyond its type, or obj's
// metadata is no object.
func (s *Schema) appendObjectKey(b []byte, obj map[string]any) ([]byte, bool) {
	if !s.metadataOpaque {
		return b, false
	}
	if meta, ok := obj["metadata"]; !ok {
		b = append(b, '-')
	} else if _, ok := meta.(map[string]any); ok {
		b = append(b, 'm')
	} else {
		return b, false
	}
	return s.openAPITree.appendKey(b, obj, "metadata", "status")
}

// metadataOpaque reports whether a CRD version's schema checks no more of
// an object's metadata than that it is an object: no rule at the root,
// where CEL sees the metadata, no combinator there, and the metadata
// property exactly {type: object}. The violations of such a schema
// depend on the rest of the object alone.
func metadataOpaque(root *apiextv1.JSONSchemaProps) bool {
	if len(root.XValidations) > 0 || len(root.AllOf) > 0 || len(root.AnyOf) > 0 || len(root.OneOf) > 0 || root.Not != nil {
		return false
	}
	meta, ok := root.Properties["metadata"]
	return ok && reflect.DeepEqual(meta, apiextv1.JSONSchemaProps{Type: "object"})
}

// appendContent appends an encoding of a decoded or unstructured value
// that tells apart every two values a validator could tell apart: map
// keys sorted, and each number with its Go type, as CEL treats 5 and 5.0
// differently. A map's keys in skip are left out (at the top only). ok is
// false for a type it does not know.
func appendContent(b []byte, v any, skip ...string) ([]byte, bool) {
	ok := true
	switch x := v.(type) {
	case map[string]any:
		b = append(b, '{')
		var small [16]string
		for _, k := range sortedKeys(small[:0], x) {
			if slices.Contains(skip, k) {
				continue
			}
			b = strconv.AppendQuote(b, k)
			b = append(b, ':')
			if b, ok = appendContent(b, x[k]); !ok {
				return b, false
			}
			b = append(b, ',')
		}
		b = append(b, '}')
	case []any:
		b = append(b, '[')
		for _, e := range x {
			if b, ok = appendContent(b, e); !ok {
				return b, false
			}
			b = append(b, ',')
		}
		b = append(b, ']')
	case string:
		b = strconv.AppendQuote(b, x)
	case json.Number:
		b = append(append(b, 'N'), x...)
	case int64:
		b = strconv.AppendInt(append(b, 'i'), x, 10)
	case float64:
		b = strconv.AppendFloat(append(b, 'f'), x, 'g', -1, 64)
	case bool:
		b = strconv.AppendBool(b, x)
	case nil:
		b = append(b, "null"...)
	default:
		return b, false
	}
	return b, true
}

// validateCEL is cel.Validator.Validate on n's subtree at path, with the
// library's order (own rules, then additional properties, then
// properties, or items) and cost accounting. With m, each subtree below
// the root whose node has rules is looked up in the memo first; a
// remembered outcome stands only when the budget left exceeds the cost
// it took, as the library would then run the subtree to its end as
// before.
func (m *Memo) validateCEL(ctx context.Context, n *celNode, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	var key celKey
	remember := false
	// A node with no rules of its own costs less to walk through than
	// to look up.
	if m != nil && path != nil && n.own != nil {
		content, ok := m.contents.id(obj)
		key, remember = celKey{n: n, content: content}, ok
		if o, ok := m.cel[key]; ok && budget > o.cost {
			return o.at(path), budget - o.cost
		}
	}
	var errs field.ErrorList
	left := budget
	if n.own != nil {
		errs, left = n.own().validate(ctx, m, path, obj, budget)
	}
	// child validates one child, reporting whether budget is left.
	child := func(c *celNode, at *field.Path, v any) bool {
		var more field.ErrorList
		more, left = m.validateCEL(ctx, c, at, v, left)
		errs = append(errs, more...)
		return left >= 0
	}
	switch x := obj.(type) {
	case map[string]any:
		var small [16]string
		keys := sortedKeys(small[:0], x)
		for _, k := range keys {
			if left < 0 || n.additional != nil && !child(n.additional, path.Key(k), x[k]) {
				break
			}
		}
		for _, k := range keys {
			if c := n.props[k]; left < 0 || c != nil && !child(c, path.Child(k), x[k]) {
				break
			}
		}
	case []any:
		for i, e := range x {
			if left < 0 || n.items != nil && !child(n.items, path.Index(i), e) {
				break
			}
		}
	}
	if remember && left >= 0 {
		prefix := path.String()
		if !slices.ContainsFunc(errs, func(e *field.Error) bool { return !strings.HasPrefix(e.Field, prefix) }) {
			m.cel[key] = celOutcome{errs: errs, prefix: prefix, cost: budget - left}
		}
	}
	return errs, left
}

// sortedKeys appends m's keys to keys, in order: given a caller's array
// it allocates nothing for a small map.
func sortedKeys(keys []string, m map[string]any) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// at is the remembered errors with their fields moved to path.
func (o celOutcome) at(path *field.Path) field.ErrorList {
	if len(o.errs) == 0 {
		return nil
	}
	to := path.String()
	out := make(field.ErrorList, len(o.errs))
	for i, e := range o.errs {
		c := *e
		c.Field = to + e.Field[len(o.prefix):]
		out[i] = &c
	}
	return out
}
