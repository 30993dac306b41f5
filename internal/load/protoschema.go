package load

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/meshc/meshc/internal/model"
)

// fieldError is a schema problem at a path inside an object.
type fieldError struct {
	Path model.Path
	Msg  string
	// Unknown marks an unknown field, which some decoders tolerate.
	Unknown bool
}

func (e fieldError) String() string {
	if len(e.Path) == 0 {
		return e.Msg
	}
	return e.Path.String() + ": " + e.Msg
}

// checkProto walks a decoded JSON value against a protobuf message schema the
// way the Istio CRDs validate it, collecting every problem with its path.
// protojson alone stops at the first error and reports byte offsets in the
// converted JSON, which mean nothing to someone reading YAML; it also
// accepts snake_case names and enum numbers that the API server refuses.
func checkProto(md protoreflect.MessageDescriptor, v any, path model.Path, errs *[]fieldError) {
	pc := protoCheck{errs: errs}
	pc.message(md, v, path)
}

// protoCheck carries one walk's settings and findings.
type protoCheck struct {
	// protoNames accepts the proto field names (snake_case) beside the JSON
	// names, as istiod's own decoder does for the mesh config.
	protoNames bool
	errs       *[]fieldError
}

func (pc protoCheck) add(path model.Path, msg string) {
	*pc.errs = append(*pc.errs, fieldError{Path: path, Msg: msg})
}

func (pc protoCheck) message(md protoreflect.MessageDescriptor, v any, path model.Path) {
	if v == nil {
		return
	}
	if pc.wellKnown(md, v, path) {
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		pc.add(path, fmt.Sprintf("expected an object, got %s", describe(v)))
		return
	}
	oneofs := map[protoreflect.FullName]string{}
	for _, key := range sortedKeys(obj) {
		val := obj[key]
		fd := md.Fields().ByJSONName(key)
		if fd == nil && pc.protoNames {
			fd = md.Fields().ByName(protoreflect.Name(key))
		}
		if fd == nil {
			*pc.errs = append(*pc.errs, fieldError{Path: path.Key(key), Msg: unknownFieldMsg(md, key), Unknown: true})
			continue
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && val != nil {
			if other, dup := oneofs[o.FullName()]; dup {
				pc.add(path.Key(key), fmt.Sprintf("%q and %q cannot both be set: they are alternatives", other, key))
				continue
			}
			oneofs[o.FullName()] = key
		}
		pc.field(fd, val, path.Key(key))
	}
}

func unknownFieldMsg(md protoreflect.MessageDescriptor, key string) string {
	if fd := md.Fields().ByName(protoreflect.Name(key)); fd != nil && fd.JSONName() != key {
		return fmt.Sprintf("unknown field %q (the API spells it %q)", key, fd.JSONName())
	}
	names := make([]string, 0, md.Fields().Len())
	for i := range md.Fields().Len() {
		names = append(names, md.Fields().Get(i).JSONName())
	}
	return fmt.Sprintf("unknown field %q", key) + didYouMean(key, names)
}

func (pc protoCheck) field(fd protoreflect.FieldDescriptor, v any, path model.Path) {
	if v == nil {
		return
	}
	switch {
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			pc.add(path, fmt.Sprintf("expected a map, got %s", describe(v)))
			return
		}
		for _, k := range sortedKeys(obj) {
			if msg := checkMapKey(fd.MapKey(), k); msg != "" {
				pc.add(path.Key(k), msg)
				continue
			}
			pc.singular(fd.MapValue(), obj[k], path.Key(k))
		}
	case fd.IsList():
		list, ok := v.([]any)
		if !ok {
			pc.add(path, fmt.Sprintf("expected a list, got %s", describe(v)))
			return
		}
		for i, item := range list {
			if item == nil {
				pc.add(path.Index(i), "null is not allowed in a list")
				continue
			}
			pc.singular(fd, item, path.Index(i))
		}
	default:
		pc.singular(fd, v, path)
	}
}

func checkMapKey(fd protoreflect.FieldDescriptor, k string) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return ""
	case protoreflect.BoolKind:
		if k == "true" || k == "false" {
			return ""
		}
	default:
		if _, err := strconv.ParseInt(k, 10, 64); err == nil {
			return ""
		}
	}
	return fmt.Sprintf("map key %q is not a %s", k, fd.Kind())
}

func (pc protoCheck) singular(fd protoreflect.FieldDescriptor, v any, path model.Path) {
	if v == nil {
		return
	}
	if msg := checkScalar(fd, v); msg != "" {
		pc.add(path, msg)
		return
	}
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		pc.message(fd.Message(), v, path)
	}
}

// checkScalar checks v against a non-message field kind and returns the
// problem, or "".
func checkScalar(fd protoreflect.FieldDescriptor, v any) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return ""
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.FullName() == "google.protobuf.NullValue" {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("expected one of %s, got %s", enumNames(ed), describe(v))
		}
		if ed.Values().ByName(protoreflect.Name(s)) == nil {
			return fmt.Sprintf("invalid value %q, want one of %s", s, enumNames(ed))
		}
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			return "expected true or false, got " + describe(v)
		}
	case protoreflect.StringKind:
		if _, ok := v.(string); !ok {
			return "expected a string, got " + describe(v)
		}
	case protoreflect.BytesKind:
		s, ok := v.(string)
		if !ok {
			return "expected a base64 string, got " + describe(v)
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			if _, err := base64.URLEncoding.DecodeString(s); err != nil {
				return "expected a base64 string"
			}
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return checkInt(v, 32, false, true)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return checkInt(v, 64, true, true)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return checkInt(v, 32, false, false)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return checkInt(v, 64, true, false)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		switch x := v.(type) {
		case json.Number:
			f, err := x.Float64()
			if err != nil || (fd.Kind() == protoreflect.FloatKind && math.Abs(f) > math.MaxFloat32) {
				return fmt.Sprintf("number %s is out of range", x)
			}
		case string:
			if x != "NaN" && x != "Infinity" && x != "-Infinity" {
				return "expected a number, got " + describe(v)
			}
		default:
			return "expected a number, got " + describe(v)
		}
	}
	return ""
}

// checkInt accepts JSON integers in range; 64-bit fields also accept
// decimal strings, as protobuf's JSON mapping writes them.
func checkInt(v any, bits int, allowString, signed bool) string {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		if !allowString {
			return "expected an integer, got " + describe(v)
		}
		s = x
	default:
		return "expected an integer, got " + describe(v)
	}
	var err error
	if signed {
		_, err = strconv.ParseInt(s, 10, bits)
	} else {
		_, err = strconv.ParseUint(s, 10, bits)
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return fmt.Sprintf("%s is out of range for a %d-bit %s", s, bits, map[bool]string{true: "integer", false: "unsigned integer"}[signed])
		}
		if !signed && strings.HasPrefix(s, "-") {
			return fmt.Sprintf("%s is negative; a non-negative integer is required", s)
		}
		return "expected an integer, got " + describe(v)
	}
	return ""
}

func enumNames(ed protoreflect.EnumDescriptor) string {
	names := make([]string, 0, ed.Values().Len())
	for i := range ed.Values().Len() {
		names = append(names, string(ed.Values().Get(i).Name()))
	}
	return strings.Join(names, ", ")
}

// wellKnown handles the google.protobuf types whose JSON form is not an
// object of fields. It reports whether md was one of them.
func (pc protoCheck) wellKnown(md protoreflect.MessageDescriptor, v any, path model.Path) bool {
	switch md.FullName() {
	case "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue",
		"google.protobuf.Int32Value", "google.protobuf.Int64Value", "google.protobuf.UInt32Value",
		"google.protobuf.UInt64Value", "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		if msg := checkScalar(md.Fields().ByName("value"), v); msg != "" {
			pc.add(path, msg)
		}
		return true
	case "google.protobuf.Duration", "google.protobuf.Timestamp", "google.protobuf.FieldMask":
		s, ok := v.(string)
		if !ok {
			pc.add(path, fmt.Sprintf("expected a %s string, got %s", wktWord(md), describe(v)))
			return true
		}
		// protojson knows these formats exactly; reuse it on the one value.
		if err := protojson.Unmarshal([]byte(strconv.Quote(s)), dynamicpb.NewMessage(md)); err != nil {
			pc.add(path, fmt.Sprintf("invalid %s %q%s", wktWord(md), s, wktHint(md)))
		}
		return true
	case "google.protobuf.Struct":
		if _, ok := v.(map[string]any); !ok {
			pc.add(path, "expected an object, got "+describe(v))
		}
		return true
	case "google.protobuf.ListValue":
		if _, ok := v.([]any); !ok {
			pc.add(path, "expected a list, got "+describe(v))
		}
		return true
	case "google.protobuf.Value", "google.protobuf.Any":
		return true
	}
	return false
}

func wktWord(md protoreflect.MessageDescriptor) string {
	switch md.FullName() {
	case "google.protobuf.Duration":
		return "duration"
	case "google.protobuf.Timestamp":
		return "RFC 3339 timestamp"
	}
	return "field mask"
}

func wktHint(md protoreflect.MessageDescriptor) string {
	if md.FullName() == "google.protobuf.Duration" {
		return " (want seconds with an s suffix, like \"1.5s\" or \"30s\")"
	}
	return ""
}

// describe names a JSON value's type for messages, with the value when it is
// short.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("a boolean (%t)", x)
	case json.Number:
		return fmt.Sprintf("a number (%s)", x)
	case string:
		if len(x) > 40 {
			x = x[:37] + "..."
		}
		return fmt.Sprintf("a string (%q)", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
