package load

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	meshv1 "istio.io/api/mesh/v1alpha1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// meshLayer is one mesh config the istiod chart merges into the one it
// renders: a values.meshConfig or an IstioOperator's spec.meshConfig.
type meshLayer struct {
	raw map[string]any
	// at points at a path of raw where it is written.
	at func(model.Path) diag.ObjectRef
}

// chartValues are the chart values besides meshConfig that shape the
// mesh config it renders (docs/semantics/registry.md §1.7).
type chartValues struct {
	istioNamespace, meshID, revision string
}

// read takes the values a Helm values tree sets, later ones winning.
func (c *chartValues) read(values map[string]any) {
	global, _ := values["global"].(map[string]any)
	if s, ok := global["istioNamespace"].(string); ok && s != "" {
		c.istioNamespace = s
	}
	if s, ok := global["meshID"].(string); ok && s != "" {
		c.meshID = s
	}
	if s, ok := values["revision"].(string); ok && s != "" {
		c.revision = s
	}
}

// base is the mesh config the chart writes before merging meshConfig
// over it, as far as it sets MeshConfig fields of its own.
func (c chartValues) base() map[string]any {
	ns := cmp.Or(c.istioNamespace, "istio-system")
	istiod := "istiod"
	if c.revision != "" {
		istiod += "-" + c.revision
	}
	proxy := map[string]any{"discoveryAddress": fmt.Sprintf("%s.%s.svc:15012", istiod, ns)}
	if c.meshID != "" {
		proxy["meshId"] = c.meshID
	}
	return map[string]any{"trustDomain": "cluster.local", "rootNamespace": ns, "defaultConfig": proxy}
}

// written lists the mesh config fields that values the authors set
// decide.
func (c chartValues) written() []model.Path {
	var out []model.Path
	if c.istioNamespace != "" {
		out = append(out, model.Path{}.Key("rootNamespace"))
	}
	if c.meshID != "" {
		out = append(out, model.Path{}.Key("defaultConfig").Key("meshId"))
	}
	if c.istioNamespace != "" || c.revision != "" {
		out = append(out, model.Path{}.Key("defaultConfig").Key("discoveryAddress"))
	}
	return out
}

// operatorMesh is the mesh config istioctl renders from IstioOperators.
// Several are merged in input order, as `istioctl install -f a -f b`
// merges its files; spec.meshConfig goes over spec.values.meshConfig, as
// istioctl moves the one into the other.
func operatorMesh(iops []*model.IstioOperator) meshInput {
	var values, top []meshLayer
	var chart chartValues
	for _, iop := range iops {
		chart.read(iop.Spec.Values)
		if iop.Spec.Revision != "" {
			chart.revision = iop.Spec.Revision
		}
		if mc, ok := iop.Spec.Values["meshConfig"].(map[string]any); ok {
			values = append(values, objectLayer(iop, mc, model.Path{}.Key("spec").Key("values").Key("meshConfig")))
		}
		if iop.Spec.MeshConfig != nil {
			top = append(top, objectLayer(iop, iop.Spec.MeshConfig, model.Path{}.Key("spec").Key("meshConfig")))
		}
	}
	labels := make([]string, len(iops))
	for i, iop := range iops {
		labels[i] = operatorLabel(iop)
	}
	first := iops[0]
	return chartMesh(chart, append(values, top...), first.Source, strings.Join(labels, ", "), first.Ref())
}

// operatorLabel names an IstioOperator, a nameless one by its place.
func operatorLabel(iop *model.IstioOperator) string {
	if iop.Name == "" {
		return "IstioOperator at " + iop.Ref().Location()
	}
	return iop.Ref().String()
}

func objectLayer(iop *model.IstioOperator, raw map[string]any, prefix model.Path) meshLayer {
	return meshLayer{raw: raw, at: func(p model.Path) diag.ObjectRef { return iop.RefAt(joinPath(prefix, p)) }}
}

// valuesMesh is the mesh config the istiod chart renders from a values
// file (src), read whole.
func valuesMesh(values map[string]any, src model.Source) meshInput {
	var chart chartValues
	chart.read(values)
	var layers []meshLayer
	prefix := model.Path{}.Key("meshConfig")
	if mc, ok := values["meshConfig"].(map[string]any); ok {
		layers = append(layers, meshLayer{raw: mc, at: func(p model.Path) diag.ObjectRef {
			return diag.ObjectRef{File: src.File, Line: src.FieldLine(joinPath(prefix, p))}
		}})
	}
	return chartMesh(chart, layers, src, src.File, diag.ObjectRef{File: src.File, Line: src.FieldLine(prefix)})
}

// chartMesh merges layers over the chart's base, as the chart's
// mergeOverwrite does: maps key by key, anything else replaced whole. A
// finding about a field points at the last layer that writes it.
func chartMesh(chart chartValues, layers []meshLayer, src model.Source, label string, fallback diag.ObjectRef) meshInput {
	raw := chart.base()
	for _, l := range layers {
		raw = mergeValues(raw, l.raw)
	}
	refs := func(paths []model.Path) []diag.ObjectRef {
		out := make([]diag.ObjectRef, len(paths))
		for i, p := range paths {
			out[i] = fallback
		found:
			for n := len(p); n >= 0; n-- {
				for _, l := range slices.Backward(layers) {
					if hasPath(l.raw, p[:n]) {
						out[i] = l.at(p[:n])
						break found
					}
				}
			}
		}
		return out
	}
	all := append(chart.written(), written(layers)...)
	slices.SortFunc(all, func(a, b model.Path) int { return strings.Compare(a.String(), b.String()) })
	all = slices.CompactFunc(all, func(a, b model.Path) bool { return a.String() == b.String() })
	return meshInput{raw: raw, src: src, label: label, refs: refs, written: all}
}

// mergeValues returns over merged onto base without changing either.
func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		b, bok := out[k].(map[string]any)
		o, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeValues(b, o)
			continue
		}
		out[k] = v
	}
	return out
}

// hasPath reports whether p leads somewhere in raw (an empty p does, in
// a layer that is there).
func hasPath(raw any, p model.Path) bool {
	for _, e := range p {
		switch v := raw.(type) {
		case map[string]any:
			next, ok := v[e.Key]
			if e.IsIndex || !ok {
				return false
			}
			raw = next
		case []any:
			if !e.IsIndex || e.Index < 0 || e.Index >= len(v) {
				return false
			}
			raw = v[e.Index]
		default:
			return false
		}
	}
	return true
}

func joinPath(prefix, p model.Path) model.Path {
	return append(append(make(model.Path, 0, len(prefix)+len(p)), prefix...), p...)
}

// differentFields lists the fields of written (paths of YAML names, as
// the source writes them, at most two deep) that a and b set differently.
func differentFields(a, b *meshv1.MeshConfig, written []model.Path) string {
	var out []string
	for _, p := range written {
		x, y := a.ProtoReflect(), b.ProtoReflect()
		for i, e := range p {
			fd := fieldNamed(x.Descriptor(), e.Key)
			if fd == nil {
				break // not a MeshConfig field: reported as unknown already
			}
			if i == len(p)-1 || fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
				if !equalField(x, y, fd) {
					out = append(out, p.String())
				}
				break
			}
			x, y = x.Get(fd).Message(), y.Get(fd).Message()
		}
	}
	return strings.Join(out, ", ")
}

// fieldNamed finds a field by its JSON or proto name.
func fieldNamed(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(name); fd != nil {
		return fd
	}
	return md.Fields().ByName(protoreflect.Name(name))
}

// written lists what layers set, in no order: their keys, and the keys
// of a defaultConfig, which istiod merges field by field.
func written(layers []meshLayer) []model.Path {
	var out []model.Path
	for _, l := range layers {
		for k, v := range l.raw {
			sub, ok := v.(map[string]any)
			if k != "defaultConfig" || !ok {
				out = append(out, model.Path{}.Key(k))
				continue
			}
			for sk := range sub {
				out = append(out, model.Path{}.Key(k).Key(sk))
			}
		}
	}
	return out
}

func equalField(a, b protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	if a.Has(fd) != b.Has(fd) {
		return false
	}
	x, y := proto.Clone(a.Interface()), proto.Clone(b.Interface())
	// Compare the one field: clear every other in copies.
	for _, m := range []protoreflect.Message{x.ProtoReflect(), y.ProtoReflect()} {
		m.Range(func(f protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			if f != fd {
				m.Clear(f)
			}
			return true
		})
	}
	return proto.Equal(x, y)
}
