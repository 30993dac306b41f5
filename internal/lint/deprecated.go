package lint

import (
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/meshc/meshc/internal/model"
)

// deprecatedField is a field or enum value set in a spec that Istio's API
// marks deprecated.
type deprecatedField struct {
	at   model.Path
	name protoreflect.FullName
	enum bool
}

// deprecatedFields lists the deprecated fields and enum values set in an
// Istio object's spec, in field order. Only the fields that can lead to
// one are visited (deprecations), so the walk stays cheap on large meshes.
func deprecatedFields(o model.Object) []deprecatedField {
	c, ok := o.(interface{ Message() proto.Message })
	if !ok || c.Message() == nil {
		return nil
	}
	idx := deprecations()
	if len(idx[c.Message().ProtoReflect().Descriptor().FullName()]) == 0 {
		return nil
	}
	var out []deprecatedField
	// path is one stack, cloned only when a finding keeps it.
	path := model.Path{{Key: "spec"}}
	found := func(name protoreflect.FullName, enum bool) {
		out = append(out, deprecatedField{at: slices.Clone(path), name: name, enum: enum})
	}
	var walk func(m protoreflect.Message)
	value := func(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
		switch fd.Kind() {
		case protoreflect.MessageKind, protoreflect.GroupKind:
			walk(v.Message())
		case protoreflect.EnumKind:
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil && isDeprecated(ev) {
				found(ev.FullName(), true)
			}
		}
	}
	walk = func(m protoreflect.Message) {
		for _, f := range idx[m.Descriptor().FullName()] {
			fd := f.fd
			if !m.Has(fd) {
				continue
			}
			v := m.Get(fd)
			path = append(path, model.PathElem{Key: fd.JSONName()})
			if f.deprecated {
				found(fd.FullName(), false)
			}
			switch {
			case !f.inside:
			case fd.IsList():
				l := v.List()
				for i := range l.Len() {
					path = append(path, model.PathElem{Index: i, IsIndex: true})
					value(fd, l.Get(i))
					path = path[:len(path)-1]
				}
			case fd.IsMap():
				var keys []protoreflect.MapKey
				v.Map().Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
					keys = append(keys, k)
					return true
				})
				slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
				for _, k := range keys {
					path = append(path, model.PathElem{Key: k.String()})
					value(fd.MapValue(), v.Map().Get(k))
					path = path[:len(path)-1]
				}
			default:
				value(fd, v)
			}
			path = path[:len(path)-1]
		}
	}
	walk(c.Message().ProtoReflect())
	return out
}

// isDeprecated reports whether a field or enum value carries the
// deprecated option.
func isDeprecated(d protoreflect.Descriptor) bool {
	switch o := d.Options().(type) {
	case *descriptorpb.FieldOptions:
		return o.GetDeprecated()
	case *descriptorpb.EnumValueOptions:
		return o.GetDeprecated()
	}
	return false
}

// visitField is a field a deprecation walk visits: deprecated itself, or
// holding (inside) a deprecated enum value or message field.
type visitField struct {
	fd         protoreflect.FieldDescriptor
	deprecated bool
	inside     bool
}

// deprecations lists, per message type of the Istio kinds meshc decodes,
// the fields to visit, in field order; a type missing has none. Built
// once, read-only after.
var deprecations = sync.OnceValue(func() map[protoreflect.FullName][]visitField {
	// Every message type reachable from a kind's spec.
	types := map[protoreflect.FullName]protoreflect.MessageDescriptor{}
	var reach func(md protoreflect.MessageDescriptor)
	reach = func(md protoreflect.MessageDescriptor) {
		if _, ok := types[md.FullName()]; ok || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return
		}
		types[md.FullName()] = md
		for i := range md.Fields().Len() {
			if fd := valueField(md.Fields().Get(i)); fd.Message() != nil {
				reach(fd.Message())
			}
		}
	}
	for _, k := range model.Kinds() {
		if k.Family != model.Istio || k.New == nil {
			continue
		}
		if m, ok := k.New().(proto.Message); ok {
			reach(m.ProtoReflect().Descriptor())
		}
	}
	// Which types can hold a deprecation, to a fixed point, so that
	// recursive types are judged through themselves too.
	holds := map[protoreflect.FullName]bool{}
	for changed := true; changed; {
		changed = false
		for name, md := range types {
			if holds[name] {
				continue
			}
			for i := range md.Fields().Len() {
				if f := visit(md.Fields().Get(i), holds); f.deprecated || f.inside {
					holds[name], changed = true, true
					break
				}
			}
		}
	}
	out := map[protoreflect.FullName][]visitField{}
	for name, md := range types {
		for i := range md.Fields().Len() {
			if f := visit(md.Fields().Get(i), holds); f.deprecated || f.inside {
				out[name] = append(out[name], f)
			}
		}
	}
	return out
})

// visit says why a walk visits fd, given the types known to hold a
// deprecation.
func visit(fd protoreflect.FieldDescriptor, holds map[protoreflect.FullName]bool) visitField {
	f := visitField{fd: fd, deprecated: isDeprecated(fd)}
	switch v := valueField(fd); {
	case v.Enum() != nil:
		values := v.Enum().Values()
		for j := range values.Len() {
			f.inside = f.inside || isDeprecated(values.Get(j))
		}
	case v.Message() != nil:
		f.inside = holds[v.Message().FullName()]
	}
	return f
}

// valueField is the field whose kind a field's values have: a map's
// value field, else the field itself.
func valueField(fd protoreflect.FieldDescriptor) protoreflect.FieldDescriptor {
	if fd.IsMap() {
		return fd.MapValue()
	}
	return fd
}

// deprecatedReplacements say what replaces a deprecated field or value,
// from the comments of Istio's protos.
var deprecatedReplacements = map[protoreflect.FullName]string{
	"istio.networking.v1alpha3.HTTPRoute.mirror_percent":                                "use mirrorPercentage",
	"istio.networking.v1alpha3.CorsPolicy.allow_origin":                                 "use allowOrigins",
	"istio.networking.v1alpha3.HTTPFaultInjection.Delay.percent":                        "use percentage",
	"istio.networking.v1alpha3.OutlierDetection.consecutive_errors":                     "use consecutive5xxErrors or consecutiveGatewayErrors",
	"istio.networking.v1alpha3.LoadBalancerSettings.ConsistentHashLB.minimum_ring_size": "use ringHash.minimumRingSize",
	"istio.networking.v1alpha3.LoadBalancerSettings.LEAST_CONN":                         "use LEAST_REQUEST",
}
