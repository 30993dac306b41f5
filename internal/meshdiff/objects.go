package meshdiff

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/envdiff"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/model"
)

// Object is an input object added, removed or modified.
type Object struct {
	Status    string `json:"status"`
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Base and Head are where the object is written on each side; nil on
	// the side without it.
	Base *Location `json:"base,omitempty"`
	Head *Location `json:"head,omitempty"`
	// Fields are a modified object's changed fields.
	Fields []Field `json:"fields,omitempty"`
}

// Ref names the object as diagnostics do.
func (o Object) Ref() diag.ObjectRef {
	return diag.ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Where is where the object is written: on the side holding it, or
// "BASE → HEAD" when it moved.
func (o Object) Where() string {
	switch {
	case o.Base != nil && o.Head != nil && o.Base.String() != o.Head.String():
		return o.Base.String() + " → " + o.Head.String()
	case o.Head != nil:
		return o.Head.String()
	case o.Base != nil:
		return o.Base.String()
	}
	return ""
}

// Location is a file and the line an object starts at.
type Location struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
}

func (l *Location) String() string {
	if l.Line > 0 {
		return fmt.Sprintf("%s:%d", l.File, l.Line)
	}
	return l.File
}

// Field is one changed field of an object: a path such as
// "spec.http[0].route[1].weight", what happened (changed, added, removed,
// reordered) and the values.
type Field struct {
	Path string       `json:"path"`
	Kind envdiff.Kind `json:"kind"`
	Old  string       `json:"old,omitempty"`
	New  string       `json:"new,omitempty"`
}

// compareObjects pairs the input objects by identity (group, kind,
// namespace, name; the first of duplicates) and compares their labels,
// annotations and content. An object moved to another file or line with
// the same content is not a change.
func compareObjects(base, head Side) []Object {
	index := func(objs []model.Object) map[model.ID]model.Object {
		m := map[model.ID]model.Object{}
		for _, o := range objs {
			if id := o.Meta().ID(); m[id] == nil {
				m[id] = o
			}
		}
		return m
	}
	bs, hs := index(base.Result.Objects), index(head.Result.Objects)
	var out []Object
	for _, id := range slices.SortedFunc(maps.Keys(union(bs, hs)), model.ID.Compare) {
		b, h := bs[id], hs[id]
		o := Object{Group: id.Group, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
		if b != nil {
			o.Base = &Location{File: base.file(b.Meta().Source.File), Line: b.Meta().Source.Line}
		}
		if h != nil {
			o.Head = &Location{File: head.file(h.Meta().Source.File), Line: h.Meta().Source.Line}
		}
		switch {
		case b == nil:
			o.Status = StatusAdded
		case h == nil:
			o.Status = StatusRemoved
		default:
			if o.Fields = objectFields(b, h); len(o.Fields) == 0 {
				continue
			}
			o.Status = StatusModified
		}
		out = append(out, o)
	}
	return out
}

// union is the keys of a and b.
func union[K comparable, V any](a, b map[K]V) map[K]bool {
	out := map[K]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// objectFields compares two versions of an object: labels and
// annotations as maps, an Istio spec as its proto message (elements with
// unique names paired by name, enums by name), anything else as the JSON
// of what meshc keeps of it.
func objectFields(b, h model.Object) []Field {
	var out []Field
	bm, hm := b.Meta(), h.Meta()
	if maps.Equal(bm.Labels, hm.Labels) && maps.Equal(bm.Annotations, hm.Annotations) && sameContent(b, h) {
		return nil
	}
	jsonDiff("metadata.labels", anyMap(bm.Labels), anyMap(hm.Labels), &out)
	jsonDiff("metadata.annotations", anyMap(bm.Annotations), anyMap(hm.Annotations), &out)
	type protoSpec interface{ Message() proto.Message }
	if bp, ok := b.(protoSpec); ok {
		if hp, ok := h.(protoSpec); ok {
			for _, c := range envdiff.Resources(envoycfg.Key{}, bp.Message(), hp.Message()) {
				p := "spec"
				if s := c.Path.String(); s != "" {
					p += "." + s
				}
				out = append(out, Field{Path: p, Kind: c.Kind, Old: c.Old, New: c.New})
			}
			return out
		}
	}
	jsonDiff("", content(b), content(h), &out)
	return out
}

// sameContent reports, without rendering them, that two versions of an
// object hold the same content beyond their metadata: the same spec
// message, or the same values in every field but ObjectMeta (a
// comparison stricter than their JSON's, so false may still be no
// change). Most objects of a diff are unchanged, and rendering each as
// JSON to find so was most of the cost of comparing objects.
func sameContent(b, h model.Object) bool {
	type protoSpec interface{ Message() proto.Message }
	if bp, ok := b.(protoSpec); ok {
		hp, ok := h.(protoSpec)
		return ok && proto.Equal(bp.Message(), hp.Message())
	}
	bv, hv := reflect.ValueOf(b), reflect.ValueOf(h)
	if bv.Type() != hv.Type() || bv.Kind() != reflect.Pointer || bv.Elem().Kind() != reflect.Struct {
		return false
	}
	// Shallow copies with the metadata zeroed.
	bc, hc := reflect.New(bv.Type().Elem()).Elem(), reflect.New(hv.Type().Elem()).Elem()
	bc.Set(bv.Elem())
	hc.Set(hv.Elem())
	for _, c := range []reflect.Value{bc, hc} {
		meta := c.FieldByName("ObjectMeta")
		if !meta.IsValid() || meta.Type() != reflect.TypeFor[model.ObjectMeta]() {
			return false
		}
		meta.SetZero()
	}
	return reflect.DeepEqual(bc.Interface(), hc.Interface())
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// metaFields are ObjectMeta's fields, which embedding promotes into an
// object's JSON: identity and provenance, compared apart or not at all.
var metaFields = []string{"APIVersion", "Kind", "Namespace", "Name", "Labels", "Annotations", "Created", "Finalizers", "InheritedFrom", "Source", "Seq"}

// content is what meshc keeps of an object beyond its metadata, as JSON
// values: an unmodelled kind's document without metadata and status, a
// modelled kind's fields (spec, data, ...) named as in the manifest.
func content(o model.Object) map[string]any {
	if u, ok := o.(*model.Unknown); ok {
		out := maps.Clone(u.Raw)
		for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
			delete(out, k)
		}
		return out
	}
	raw, err := json.Marshal(o)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return map[string]any{"error": err.Error()}
	}
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(metaFields, k) {
			out[lowerFirst(k)] = v
		}
	}
	return out
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// jsonDiff compares two JSON values: maps by key, lists by position.
func jsonDiff(path string, a, b any, out *[]Field) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(union(av, bv))) {
				x, inA := av[k]
				y, inB := bv[k]
				p := joinKey(path, k)
				switch {
				case !inA:
					*out = append(*out, Field{Path: p, Kind: envdiff.Added, New: jsonText(y)})
				case !inB:
					*out = append(*out, Field{Path: p, Kind: envdiff.Removed, Old: jsonText(x)})
				default:
					jsonDiff(p, x, y, out)
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := range max(len(av), len(bv)) {
				p := fmt.Sprintf("%s[%d]", path, i)
				switch {
				case i >= len(av):
					*out = append(*out, Field{Path: p, Kind: envdiff.Added, New: jsonText(bv[i])})
				case i >= len(bv):
					*out = append(*out, Field{Path: p, Kind: envdiff.Removed, Old: jsonText(av[i])})
				default:
					jsonDiff(p, av[i], bv[i], out)
				}
			}
			return
		}
	}
	if x, y := jsonText(a), jsonText(b); x != y {
		*out = append(*out, Field{Path: path, Kind: envdiff.Changed, Old: x, New: y})
	}
}

// joinKey appends a map key to a path, bracketed when it is not a plain
// name (label keys hold dots and slashes).
func joinKey(path, k string) string {
	if strings.ContainsAny(k, "./[] ") || k == "" {
		return path + "[" + k + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// jsonText renders a value: a string as is, anything else as compact JSON
// (encoding/json sorts map keys).
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(raw)
}
