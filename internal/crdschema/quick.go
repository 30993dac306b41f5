package crdschema

import (
	"slices"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// quick is what a node's schema asks of a value, for holds: the checks of
// the library's validators (kube-openapi's SchemaValidator) that the
// Gateway API CRDs use. A node that asks anything else, or in a form
// holds does not follow, is not quick, and a value that reaches it is
// left to the library.
type quick struct {
	ok bool
	// typ is the schema's one type.
	typ string
	// rangeFormat is the integer format the library checks a value's
	// range against ("int32", "int64" or none).
	rangeFormat string
	// format is a string format the library knows and checks.
	format string
	enum   []string
}

// newQuick reads s's checks; ok is false where holds cannot follow the
// library.
func newQuick(s *spec.Schema) quick {
	q := quick{}
	if len(s.Type) != 1 || s.Ref.String() != "" || s.Nullable ||
		len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Not != nil || len(s.Dependencies) > 0 ||
		len(s.PatternProperties) > 0 || s.AdditionalItems != nil || s.UniqueItems || s.MultipleOf != nil ||
		s.Items != nil && (s.Items.Schema == nil || len(s.Items.Schemas) > 0) {
		return q
	}
	q.typ = s.Type[0]
	switch q.typ {
	case "integer":
		switch s.Format {
		case "int32", "int64":
			q.rangeFormat = s.Format
		}
		// The library checks a bound's own range first, and compares
		// as floats when it is out of it: not followed.
		for _, bound := range []*float64{s.Maximum, s.Minimum} {
			if bound != nil && validate.IsValueValidAgainstRange(*bound, "integer", q.rangeFormat, "", "") != nil {
				return q
			}
		}
	case "string":
		if s.Format != "" && strfmt.Default.ContainsName(s.Format) {
			q.format = s.Format
		}
	case "object", "array", "boolean":
	default:
		return q
	}
	for _, e := range s.Enum {
		str, isString := e.(string)
		if !isString {
			return q
		}
		q.enum = append(q.enum, str)
	}
	q.ok = true
	return q
}

// holds reports that v (an unstructured value: no json.Number) passes
// n's schema: the library's validator of the schema would find no error
// in it. False is no verdict: the library decides. It runs the library's
// own checks of single values (validate.MaxLength, Pattern, ...), and
// walks the value as the library does, without building a validator for
// each field and a result for each check, which most of the library's
// time goes to.
func (n *openAPINode) holds(v any) bool {
	q := &n.quick
	if !q.ok {
		return false
	}
	s := n.schema
	switch x := v.(type) {
	case string:
		if q.typ != "string" || q.enum != nil && !slices.Contains(q.enum, x) ||
			s.MaxLength != nil && validate.MaxLength("", "", x, *s.MaxLength) != nil ||
			s.MinLength != nil && validate.MinLength("", "", x, *s.MinLength) != nil ||
			s.Pattern != "" && validate.Pattern("", "", x, s.Pattern) != nil ||
			q.format != "" && !strfmt.Default.Validates(q.format, x) {
			return false
		}
	case int64:
		if q.typ != "integer" || q.enum != nil ||
			validate.IsValueValidAgainstRange(x, "integer", q.rangeFormat, "", "") != nil ||
			s.Maximum != nil && validate.MaximumNativeType("", "", x, *s.Maximum, s.ExclusiveMaximum) != nil ||
			s.Minimum != nil && validate.MinimumNativeType("", "", x, *s.Minimum, s.ExclusiveMinimum) != nil {
			return false
		}
	case bool:
		if q.typ != "boolean" || q.enum != nil {
			return false
		}
	case []any:
		size := int64(len(x))
		if q.typ != "array" || q.enum != nil || s.MaxItems != nil && size > *s.MaxItems || s.MinItems != nil && size < *s.MinItems {
			return false
		}
		if s.Items != nil {
			for _, e := range x {
				if !n.items.holds(e) {
					return false
				}
			}
		}
	case map[string]any:
		return n.holdsObject(x)
	default:
		// null, a float and anything else: the library's type and
		// number checks have more cases than are worth following.
		return false
	}
	return true
}

// holdsObject is holds for an object.
func (n *openAPINode) holdsObject(x map[string]any) bool {
	q, s := &n.quick, n.schema
	size := int64(len(x))
	if q.typ != "object" || q.enum != nil || s.MaxProperties != nil && size > *s.MaxProperties || s.MinProperties != nil && size < *s.MinProperties {
		return false
	}
	for _, k := range s.Required {
		if _, ok := x[k]; !ok {
			return false
		}
	}
	ap := s.AdditionalProperties
	for k, e := range x {
		if c := n.props[k]; c != nil {
			if !c.holds(e) {
				return false
			}
			continue
		}
		switch {
		case ap == nil:
			// The library leaves a field with no schema alone.
		case !ap.Allows:
			return false
		case ap.Schema != nil:
			if !n.additional.holds(e) {
				return false
			}
		}
	}
	return true
}
