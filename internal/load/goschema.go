package load

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	kjson "sigs.k8s.io/json"

	"github.com/meshc/meshc/internal/model"
)

// goSchema checks decoded JSON against Go struct types (Kubernetes API types
// and meshc's HNC structs) before decoding, so that a wrong type is reported
// at its exact path, list indexes included. Decoding then goes through
// sigs.k8s.io/json, the case-sensitive decoder the API server uses.
type goSchema struct {
	// fields caches each struct type's JSON field table. A goSchema belongs
	// to one worker, so the cache needs no lock.
	fields map[reflect.Type]map[string]reflect.Type
}

func newGoSchema() *goSchema {
	return &goSchema{fields: map[reflect.Type]map[string]reflect.Type{}}
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// check walks v against t. With strict, fields the type does not have are
// errors; without, they are ignored as Kubernetes ignores them.
func (g *goSchema) check(t reflect.Type, v any, path model.Path, strict bool, errs *[]fieldError) {
	if v == nil {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		// Types with their own JSON form (Quantity, IntOrString, Time):
		// let them judge the value.
		raw, err := json.Marshal(v)
		if err == nil {
			err = kjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface())
		}
		if err != nil {
			*errs = append(*errs, fieldError{Path: path, Msg: fmt.Sprintf("invalid value %s: %s", describe(v), cleanJSONError(err))})
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		g.check(t.Elem(), v, path, strict, errs)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			*errs = append(*errs, fieldError{Path: path, Msg: "expected an object, got " + describe(v)})
			return
		}
		fields := g.fieldsOf(t)
		for _, k := range sortedKeys(obj) {
			ft, ok := fields[k]
			if !ok {
				if strict {
					*errs = append(*errs, fieldError{Path: path.Key(k), Msg: fmt.Sprintf("unknown field %q", k) + didYouMean(k, mapKeys(fields))})
				}
				continue
			}
			g.check(ft, obj[k], path.Key(k), strict, errs)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok {
				*errs = append(*errs, fieldError{Path: path, Msg: "expected a base64 string, got " + describe(v)})
			}
			return
		}
		list, ok := v.([]any)
		if !ok {
			*errs = append(*errs, fieldError{Path: path, Msg: "expected a list, got " + describe(v)})
			return
		}
		for i, item := range list {
			g.check(t.Elem(), item, path.Index(i), strict, errs)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			*errs = append(*errs, fieldError{Path: path, Msg: "expected a map, got " + describe(v)})
			return
		}
		for _, k := range sortedKeys(obj) {
			g.check(t.Elem(), obj[k], path.Key(k), strict, errs)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			*errs = append(*errs, fieldError{Path: path, Msg: "expected a string, got " + describe(v)})
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			*errs = append(*errs, fieldError{Path: path, Msg: "expected true or false, got " + describe(v)})
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if msg := checkInt(v, t.Bits(), false, true); msg != "" {
			*errs = append(*errs, fieldError{Path: path, Msg: msg})
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if msg := checkInt(v, t.Bits(), false, false); msg != "" {
			*errs = append(*errs, fieldError{Path: path, Msg: msg})
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			*errs = append(*errs, fieldError{Path: path, Msg: "expected a number, got " + describe(v)})
		}
	}
}

// fieldsOf maps JSON names to field types, flattening embedded structs and
// `json:",inline"` fields as encoding/json does.
func (g *goSchema) fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := g.fields[t]; ok {
		return f
	}
	out := map[string]reflect.Type{}
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
			for k, v := range g.fieldsOf(ft) {
				if _, shadowed := out[k]; !shadowed {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	g.fields[t] = out
	return out
}

func mapKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// cleanJSONError drops the "json: " noise from decoder errors.
func cleanJSONError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	return s
}
