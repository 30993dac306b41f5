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
// Istio object's spec, in field order. Only messages that can hold one are
// walked, and well-known types (an EnvoyFilter's patch values) are not
// Istio's, so the walk stays cheap on large meshes.
func deprecatedFields(o model.Object) []deprecatedField {
	c, ok := o.(interface{ Message() proto.Message })
	if !ok || c.Message() == nil || !holdsDeprecated(c.Message().ProtoReflect().Descriptor()) {
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
			if holdsDeprecated(fd.Message()) {
				walk(v.Message())
			}
		case protoreflect.EnumKind:
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil && isDeprecated(ev) {
				found(ev.FullName(), true)
			}
		}
	}
	walk = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			path = append(path, model.PathElem{Key: fd.JSONName()})
			if isDeprecated(fd) {
				found(fd.FullName(), false)
			}
			switch {
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
			return true
		})
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

// deprecatedHolders caches, per message type, whether a deprecated field or
// enum value can occur in it (or in a message below it).
var deprecatedHolders = struct {
	sync.Mutex
	m map[protoreflect.FullName]bool
}{m: map[protoreflect.FullName]bool{}}

func holdsDeprecated(md protoreflect.MessageDescriptor) bool {
	deprecatedHolders.Lock()
	defer deprecatedHolders.Unlock()
	var holds func(md protoreflect.MessageDescriptor) bool
	holds = func(md protoreflect.MessageDescriptor) bool {
		if v, ok := deprecatedHolders.m[md.FullName()]; ok {
			return v
		}
		if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return false
		}
		deprecatedHolders.m[md.FullName()] = false // a recursive type holds nothing through itself
		result := false
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.IsMap() {
				fd = fd.MapValue()
			}
			switch {
			case isDeprecated(fields.Get(i)):
				result = true
			case fd.Kind() == protoreflect.EnumKind:
				values := fd.Enum().Values()
				for j := range values.Len() {
					result = result || isDeprecated(values.Get(j))
				}
			case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
				result = holds(fd.Message()) || result
			}
		}
		deprecatedHolders.m[md.FullName()] = result
		return result
	}
	return holds(md)
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
	"istio.networking.v1alpha3.Port.target_port":                                        "it has no effect: remove it",
	"istio.networking.v1alpha3.SidecarPort.target_port":                                 "it has no effect: remove it",
}
