package load

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/suggest"
)

// goSchema decodes JSON values into Go types (Kubernetes API types and
// meshc's HNC structs) the way the API server's case-sensitive decoder
// does, checking as it goes so that a wrong type is reported at its exact
// path, list indexes included, and every problem is reported, not the first.
type goSchema struct {
	// types caches what reflect answers slowly about each type met: one
	// lookup per value decoded. A goSchema belongs to one worker, so the
	// cache needs no lock.
	types map[reflect.Type]*goType
	// path is memory for the paths of the fields being decoded.
	path model.Path
}

// goType is what decoding needs to know of a type. Once met, the types
// of its fields and elements are linked from it, so a walk looks up each
// type once, not once per value.
type goType struct {
	t reflect.Type
	// self marks a type with its own JSON form.
	self bool
	// fields is a struct type's JSON field table (fieldsOf).
	fields map[string]*goField
	// elem is a pointer, slice or map type's element type, once met.
	elem *goType
}

type goField struct {
	index []int // for reflect.Value.FieldByIndex, through inlined structs
	typ   reflect.Type
	// gt is typ's goType, once met.
	gt *goType
}

func newGoSchema() *goSchema {
	return &goSchema{types: map[reflect.Type]*goType{}, path: make(model.Path, 0, 32)}
}

// typeOf returns what the cache knows of t, learning it the first time.
func (g *goSchema) typeOf(t reflect.Type) *goType {
	gt, ok := g.types[t]
	if !ok {
		gt = &goType{t: t, self: reflect.PointerTo(t).Implements(unmarshalerType)}
		if t.Kind() == reflect.Struct && !gt.self {
			gt.fields = fieldsOf(t)
		}
		g.types[t] = gt
	}
	return gt
}

// elemOf is gt's element type.
func (g *goSchema) elemOf(gt *goType) *goType {
	if gt.elem == nil {
		gt.elem = g.typeOf(gt.t.Elem())
	}
	return gt.elem
}

// fieldType is f's type.
func (g *goSchema) fieldType(f *goField) *goType {
	if f.gt == nil {
		f.gt = g.typeOf(f.typ)
	}
	return f.gt
}

// Types met in nearly every object, decoded without reflect's per-element
// calls.
var (
	stringMapType   = reflect.TypeFor[map[string]string]()
	stringSliceType = reflect.TypeFor[[]string]()
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// intOrStringType is a Service's targetPort, met in every Service.
var intOrStringType = reflect.TypeFor[intstr.IntOrString]()

// decodeIntOrString decodes a string or an int32 into dst, an
// IntOrString, as its own JSON decoding does, and reports whether v was
// one; anything else is for that decoding to refuse.
func decodeIntOrString(dst reflect.Value, v jsonScalar) bool {
	switch v.kind {
	case jsonString:
		dst.Set(reflect.ValueOf(intstr.FromString(v.text)))
		return true
	case jsonNumber:
		if i, err := strconv.ParseInt(v.text, 10, 32); err == nil {
			dst.Set(reflect.ValueOf(intstr.FromInt32(int32(i))))
			return true
		}
	}
	return false
}

// decode fills dst (settable, of the type to decode) from n, a node
// decodable returned or a part of one (nil for none). With strict, fields
// the type does not have are errors; without, they are ignored as
// Kubernetes ignores them.
func (g *goSchema) decode(dst reflect.Value, n *yaml.Node, path model.Path, strict bool, errs *[]fieldError) {
	first := len(*errs)
	g.decodeAt(dst, g.typeOf(dst.Type()), n, g.scratch(path), strict, errs)
	// Keys are walked in the order they are written; sorting the few
	// errors by path gives the order of a walk through sorted keys, which
	// is what findings are reported in.
	slices.SortStableFunc((*errs)[first:], func(a, b fieldError) int { return comparePaths(a.Path, b.Path) })
}

// scratch copies path into the schema's path memory. A walk's children
// extend it in place instead of copying the path for every field; an
// error keeps a copy. The copy is valid until the next call.
func (g *goSchema) scratch(path model.Path) model.Path {
	g.path = append(g.path[:0], path...)
	return g.path
}

// comparePaths orders paths as a depth-first walk through sorted keys and
// ascending indexes meets them.
func comparePaths(a, b model.Path) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if c := cmp.Compare(x.Index, y.Index); x.IsIndex && y.IsIndex && c != 0 {
			return c
		}
		if c := strings.Compare(x.Key, y.Key); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// decodeAt is decode for gt, dst's type, at path.
func (g *goSchema) decodeAt(dst reflect.Value, gt *goType, n *yaml.Node, path model.Path, strict bool, errs *[]fieldError) {
	if isNull(n) {
		return // null leaves the zero value, as encoding/json does
	}
	t := gt.t
	fail := func(msg string) { *errs = append(*errs, fieldError{Path: slices.Clone(path), Msg: msg}) }
	switch t {
	case stringMapType:
		g.decodeStringMap(dst, n, path, errs)
		return
	case stringSliceType:
		g.decodeStringSlice(dst, n, path, errs)
		return
	}
	if gt.self {
		if t == intOrStringType && decodeIntOrString(dst, jsonOf(n)) {
			return
		}
		// Types with their own JSON form (Quantity, IntOrString, Time)
		// decode themselves.
		v := valueOf(n)
		raw, err := json.Marshal(v)
		if err == nil {
			err = kjson.UnmarshalCaseSensitivePreserveInts(raw, dst.Addr().Interface())
		}
		if err != nil {
			fail(fmt.Sprintf("invalid value %s: %s", describe(v), cleanJSONError(err)))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := reflect.New(t.Elem())
		g.decodeAt(elem.Elem(), g.elemOf(gt), n, path, strict, errs)
		dst.Set(elem)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			fail("expected an object, got " + describeNode(n))
			return
		}
		fields := gt.fields
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := keyOf(n.Content[i])
			f, ok := fields[k]
			if !ok {
				if strict {
					*errs = append(*errs, fieldError{Path: path.Key(k), Msg: fmt.Sprintf("unknown field %q", k) + suggest.DidYouMean(k, mapKeys(fields)), Unknown: true})
				}
				continue
			}
			g.decodeAt(fieldByIndex(dst, f.index), g.fieldType(f), n.Content[i+1], append(path, model.PathElem{Key: k}), strict, errs)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			s, ok := stringOf(n)
			b, err := base64.StdEncoding.DecodeString(s)
			if !ok || err != nil {
				fail("expected a base64 string, got " + describeNode(n))
				return
			}
			dst.SetBytes(b)
			return
		}
		if n.Kind != yaml.SequenceNode {
			fail("expected a list, got " + describeNode(n))
			return
		}
		out := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		elem := g.elemOf(gt)
		for i, item := range n.Content {
			g.decodeAt(out.Index(i), elem, item, append(path, model.PathElem{Index: i, IsIndex: true}), strict, errs)
		}
		dst.Set(out)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			fail("expected a map, got " + describeNode(n))
			return
		}
		out := reflect.MakeMapWithSize(t, len(n.Content)/2)
		elemType := g.elemOf(gt)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := keyOf(n.Content[i])
			elem := reflect.New(t.Elem()).Elem()
			g.decodeAt(elem, elemType, n.Content[i+1], append(path, model.PathElem{Key: k}), strict, errs)
			out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), elem)
		}
		dst.Set(out)
	case reflect.String:
		s, ok := stringOf(n)
		if !ok {
			fail("expected a string, got " + describeNode(n))
			return
		}
		dst.SetString(s)
	case reflect.Bool:
		j := jsonOf(n)
		if j.kind != jsonBool {
			fail("expected true or false, got " + describeNode(n))
			return
		}
		dst.SetBool(j.b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, msg := parseInt(jsonOf(n), t.Bits(), false)
		if msg != "" {
			fail(msg)
			return
		}
		dst.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, msg := parseUint(jsonOf(n), t.Bits(), false)
		if msg != "" {
			fail(msg)
			return
		}
		dst.SetUint(u)
	case reflect.Float32, reflect.Float64:
		j := jsonOf(n)
		f, err := strconv.ParseFloat(j.text, 64)
		if j.kind != jsonNumber || err != nil {
			fail("expected a number, got " + describeNode(n))
			return
		}
		dst.SetFloat(f)
	case reflect.Interface:
		dst.Set(reflect.ValueOf(valueOf(n)))
	}
}

// decodeStringMap is decodeAt for a map[string]string: what the generic
// walk does, element by element, without reflect.
func (g *goSchema) decodeStringMap(dst reflect.Value, n *yaml.Node, path model.Path, errs *[]fieldError) {
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, fieldError{Path: slices.Clone(path), Msg: "expected a map, got " + describeNode(n)})
		return
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := keyOf(n.Content[i]), n.Content[i+1]
		s, ok := stringOf(val)
		if !ok && !isNull(val) {
			*errs = append(*errs, fieldError{Path: path.Key(k), Msg: "expected a string, got " + describeNode(val)})
		}
		out[k] = s
	}
	dst.Set(reflect.ValueOf(out))
}

// decodeStringSlice is decodeAt for a []string, without reflect.
func (g *goSchema) decodeStringSlice(dst reflect.Value, n *yaml.Node, path model.Path, errs *[]fieldError) {
	if n.Kind != yaml.SequenceNode {
		*errs = append(*errs, fieldError{Path: slices.Clone(path), Msg: "expected a list, got " + describeNode(n)})
		return
	}
	out := make([]string, len(n.Content))
	for i, item := range n.Content {
		s, ok := stringOf(item)
		if !ok && !isNull(item) {
			*errs = append(*errs, fieldError{Path: path.Index(i), Msg: "expected a string, got " + describeNode(item)})
		}
		out[i] = s
	}
	dst.Set(reflect.ValueOf(out))
}

// fieldByIndex is reflect's FieldByIndex, allocating nil embedded pointers
// on the way.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// fieldsOf maps JSON names to fields, flattening embedded structs and
// `json:",inline"` fields as encoding/json does: a field of the outer
// struct shadows one of the same name inside an inlined one.
// typeOf caches the table.
func fieldsOf(t reflect.Type) map[string]*goField {
	out := map[string]*goField{}
	var inlined []map[string]*goField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name == "" && ft.Kind() == reflect.Struct && (f.Anonymous || strings.Contains(opts, "inline")) {
			inner := map[string]*goField{}
			for k, sub := range fieldsOf(ft) {
				inner[k] = &goField{index: append([]int{i}, sub.index...), typ: sub.typ}
			}
			inlined = append(inlined, inner)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = &goField{index: []int{i}, typ: f.Type}
	}
	for _, inner := range inlined {
		for k, f := range inner {
			if _, shadowed := out[k]; !shadowed {
				out[k] = f
			}
		}
	}
	return out
}

func mapKeys(m map[string]*goField) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// cleanJSONError drops the "json: " noise from decoder errors.
func cleanJSONError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}
