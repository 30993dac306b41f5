package load

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/suggest"
)

// fieldError is a schema problem at a path inside an object.
type fieldError struct {
	Path model.Path
	Msg  string
	// Unknown marks an unknown field, which some decoders tolerate.
	Unknown bool
	// Warn marks what istiod's validation warns about but admits: the
	// object is kept (MC1008).
	Warn bool
}

func (e fieldError) String() string {
	if len(e.Path) == 0 {
		return e.Msg
	}
	return e.Path.String() + ": " + e.Msg
}

// decodeProto fills m from n (see goSchema.decode), checking it against m's
// schema the way the Istio CRDs validate it and collecting every problem
// with its path. protojson alone stops at the first error and reports byte
// offsets in converted JSON, which mean nothing to someone reading YAML; it
// also accepts snake_case names and enum numbers the API server refuses. On
// problems, m holds whatever was valid and the caller decides its fate.
func decodeProto(m protoreflect.Message, n *yaml.Node, path model.Path, errs *[]fieldError) {
	protoDecoder{errs: errs}.message(m, n, privatePath(path))
}

// privatePath copies a path into a buffer of its own: the walk extends it
// in place for each field instead of copying it, and an error keeps a
// copy (see add).
func privatePath(p model.Path) model.Path {
	return append(make(model.Path, 0, len(p)+16), p...)
}

// protoDecoder carries one walk's settings and findings.
type protoDecoder struct {
	// protoNames accepts the proto field names (snake_case) beside the JSON
	// names, as istiod's own decoder does for the mesh config.
	protoNames bool
	errs       *[]fieldError
}

func (pd protoDecoder) add(path model.Path, msg string) {
	*pd.errs = append(*pd.errs, fieldError{Path: slices.Clone(path), Msg: msg})
}

// oneofSet is the field set first, in key order, of a oneof.
type oneofSet struct {
	oneof protoreflect.FullName
	key   string
}

func (pd protoDecoder) message(m protoreflect.Message, n *yaml.Node, path model.Path) {
	if isNull(n) {
		return
	}
	md := m.Descriptor()
	if pd.wellKnown(m, n, path) {
		return
	}
	if n.Kind != yaml.MappingNode {
		pd.add(path, fmt.Sprintf("expected an object, got %s", describeNode(n)))
		return
	}
	var oneofs []oneofSet
	var buf [16]int
	for _, i := range sortedPairs(n, buf[:]) {
		key, val := keyOf(n.Content[i]), n.Content[i+1]
		fd := md.Fields().ByJSONName(key)
		if fd == nil && pd.protoNames {
			fd = md.Fields().ByName(protoreflect.Name(key))
		}
		if fd == nil {
			*pd.errs = append(*pd.errs, fieldError{Path: path.Key(key), Msg: unknownFieldMsg(md, key), Unknown: true})
			continue
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && !isNull(val) {
			if j := slices.IndexFunc(oneofs, func(s oneofSet) bool { return s.oneof == o.FullName() }); j >= 0 {
				pd.add(path.Key(key), fmt.Sprintf("%q and %q cannot both be set: they are alternatives", oneofs[j].key, key))
				continue
			}
			oneofs = append(oneofs, oneofSet{o.FullName(), key})
		}
		pd.field(m, fd, val, append(path, model.PathElem{Key: key}))
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
	return fmt.Sprintf("unknown field %q", key) + suggest.DidYouMean(key, names)
}

func (pd protoDecoder) field(m protoreflect.Message, fd protoreflect.FieldDescriptor, n *yaml.Node, path model.Path) {
	if isNull(n) {
		return
	}
	switch {
	case fd.IsMap():
		if n.Kind != yaml.MappingNode {
			pd.add(path, fmt.Sprintf("expected a map, got %s", describeNode(n)))
			return
		}
		mp := m.Mutable(fd).Map()
		var buf [16]int
		for _, i := range sortedPairs(n, buf[:]) {
			k, item := keyOf(n.Content[i]), n.Content[i+1]
			key, msg := mapKey(fd.MapKey(), k)
			if msg != "" {
				pd.add(path.Key(k), msg)
				continue
			}
			if isNull(item) {
				continue
			}
			val := mp.NewValue()
			if val, ok := pd.singular(fd.MapValue(), val, item, append(path, model.PathElem{Key: k})); ok {
				mp.Set(key, val)
			}
		}
	case fd.IsList():
		if n.Kind != yaml.SequenceNode {
			pd.add(path, fmt.Sprintf("expected a list, got %s", describeNode(n)))
			return
		}
		lst := m.Mutable(fd).List()
		for i, item := range n.Content {
			if isNull(item) {
				pd.add(path.Index(i), "null is not allowed in a list")
				continue
			}
			if val, ok := pd.singular(fd, lst.NewElement(), item, append(path, model.PathElem{Index: i, IsIndex: true})); ok {
				lst.Append(val)
			}
		}
	case fd.Message() != nil:
		pd.message(m.Mutable(fd).Message(), n, path)
	default:
		if val, ok := pd.singular(fd, protoreflect.Value{}, n, path); ok {
			m.Set(fd, val)
		}
	}
}

// singular decodes one value of fd's type; for messages, into blank (a new
// element of the list or map being filled).
func (pd protoDecoder) singular(fd protoreflect.FieldDescriptor, blank protoreflect.Value, n *yaml.Node, path model.Path) (protoreflect.Value, bool) {
	if fd.Message() != nil {
		before := len(*pd.errs)
		pd.message(blank.Message(), n, path)
		return blank, len(*pd.errs) == before
	}
	val, msg := scalarValue(fd, jsonOf(n))
	if msg != "" {
		pd.add(path, msg)
		return val, false
	}
	return val, true
}

func mapKey(fd protoreflect.FieldDescriptor, k string) (protoreflect.MapKey, string) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(k).MapKey(), ""
	case protoreflect.BoolKind:
		if b, err := strconv.ParseBool(k); err == nil && (k == "true" || k == "false") {
			return protoreflect.ValueOfBool(b).MapKey(), ""
		}
	default:
		if v, msg := scalarValue(fd, jsonScalar{kind: jsonNumber, text: k}); msg == "" {
			return v.MapKey(), ""
		}
	}
	return protoreflect.MapKey{}, fmt.Sprintf("map key %q is not a %s", k, fd.Kind())
}

// scalarValue converts v to a value of a non-message field kind, or says
// what is wrong with it.
func scalarValue(fd protoreflect.FieldDescriptor, v jsonScalar) (protoreflect.Value, string) {
	var none protoreflect.Value
	switch fd.Kind() {
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.FullName() == "google.protobuf.NullValue" {
			return protoreflect.ValueOfEnum(0), ""
		}
		if v.kind != jsonString {
			return none, fmt.Sprintf("expected one of %s, got %s", enumNames(ed), describe(v.value()))
		}
		s := v.text
		ev := ed.Values().ByName(protoreflect.Name(s))
		if ev == nil {
			return none, fmt.Sprintf("invalid value %q, want one of %s", s, enumNames(ed))
		}
		return protoreflect.ValueOfEnum(ev.Number()), ""
	case protoreflect.BoolKind:
		if v.kind != jsonBool {
			return none, "expected true or false, got " + describe(v.value())
		}
		return protoreflect.ValueOfBool(v.b), ""
	case protoreflect.StringKind:
		if v.kind != jsonString {
			return none, "expected a string, got " + describe(v.value())
		}
		return protoreflect.ValueOfString(v.text), ""
	case protoreflect.BytesKind:
		if v.kind != jsonString {
			return none, "expected a base64 string, got " + describe(v.value())
		}
		s := v.text
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			if b, err = base64.URLEncoding.DecodeString(s); err != nil {
				return none, "expected a base64 string"
			}
		}
		return protoreflect.ValueOfBytes(b), ""
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, msg := parseInt(v, 32, false)
		return protoreflect.ValueOfInt32(int32(n)), msg
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, msg := parseInt(v, 64, true)
		return protoreflect.ValueOfInt64(n), msg
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, msg := parseUint(v, 32, false)
		return protoreflect.ValueOfUint32(uint32(n)), msg
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, msg := parseUint(v, 64, true)
		return protoreflect.ValueOfUint64(n), msg
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		var f float64
		switch v.kind {
		case jsonNumber:
			var err error
			f, err = strconv.ParseFloat(v.text, 64)
			if err != nil || (fd.Kind() == protoreflect.FloatKind && math.Abs(f) > math.MaxFloat32) {
				return none, fmt.Sprintf("number %s is out of range", v.text)
			}
		case jsonString:
			switch v.text {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return none, "expected a number, got " + describe(v.value())
			}
		default:
			return none, "expected a number, got " + describe(v.value())
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), ""
		}
		return protoreflect.ValueOfFloat64(f), ""
	}
	return none, fmt.Sprintf("unsupported field kind %s", fd.Kind())
}

// parseInt accepts JSON integers in range; 64-bit fields also accept
// decimal strings, as protobuf's JSON mapping writes them.
func parseInt(v jsonScalar, bits int, allowString bool) (int64, string) {
	s, msg := intText(v, allowString)
	if msg != "" {
		return 0, msg
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, intError(s, bits, err, "integer")
	}
	return n, ""
}

func parseUint(v jsonScalar, bits int, allowString bool) (uint64, string) {
	s, msg := intText(v, allowString)
	if msg != "" {
		return 0, msg
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Sprintf("%s is negative; a non-negative integer is required", s)
	}
	n, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, intError(s, bits, err, "unsigned integer")
	}
	return n, ""
}

func intText(v jsonScalar, allowString bool) (string, string) {
	if v.kind == jsonNumber || v.kind == jsonString && allowString {
		return v.text, ""
	}
	return "", "expected an integer, got " + describe(v.value())
}

func intError(s string, bits int, err error, what string) string {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Sprintf("%s is out of range for a %d-bit %s", s, bits, what)
	}
	return "expected an integer, got " + describe(json.Number(s))
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
func (pd protoDecoder) wellKnown(m protoreflect.Message, n *yaml.Node, path model.Path) bool {
	md := m.Descriptor()
	switch md.FullName() {
	case "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue",
		"google.protobuf.Int32Value", "google.protobuf.Int64Value", "google.protobuf.UInt32Value",
		"google.protobuf.UInt64Value", "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		fd := md.Fields().ByName("value")
		val, msg := scalarValue(fd, jsonOf(n))
		if msg != "" {
			pd.add(path, msg)
			return true
		}
		m.Set(fd, val)
		return true
	case "google.protobuf.Duration", "google.protobuf.Timestamp", "google.protobuf.FieldMask":
		s, ok := stringOf(n)
		if !ok {
			pd.add(path, fmt.Sprintf("expected a %s string, got %s", wktWord(md), describeNode(n)))
			return true
		}
		if md.FullName() == "google.protobuf.Duration" {
			// istiod reads Istio kinds and mesh config with the legacy jsonpb
			// decoder, which takes Go durations ("500ms", "1m30s", "24h")
			// where protojson wants seconds only; the CRDs' CEL checks take
			// them too.
			d, err := time.ParseDuration(s)
			if err != nil {
				pd.add(path, fmt.Sprintf("invalid duration %q (want a number and a unit, like \"1.5s\", \"500ms\" or \"1h\")", s))
				return true
			}
			m.Set(md.Fields().ByName("seconds"), protoreflect.ValueOfInt64(int64(d/time.Second)))
			m.Set(md.Fields().ByName("nanos"), protoreflect.ValueOfInt32(int32(d%time.Second)))
			return true
		}
		// protojson knows these formats exactly; reuse it on the one value.
		if err := protojson.Unmarshal([]byte(strconv.Quote(s)), m.Interface()); err != nil {
			pd.add(path, fmt.Sprintf("invalid %s %q", wktWord(md), s))
		}
		return true
	case "google.protobuf.Struct", "google.protobuf.ListValue", "google.protobuf.Value", "google.protobuf.Any", "google.protobuf.Empty":
		v := valueOf(n)
		js, err := json.Marshal(v)
		if err == nil {
			err = protojson.Unmarshal(js, m.Interface())
		}
		if err != nil {
			pd.add(path, fmt.Sprintf("invalid %s: %s", md.Name(), describe(v)))
		}
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

// rejects reports whether any finding is fatal to its object (not a
// warning istiod admits).
func rejects(errs []fieldError) bool {
	return slices.ContainsFunc(errs, func(e fieldError) bool { return !e.Warn })
}
