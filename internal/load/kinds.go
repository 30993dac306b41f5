package load

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/crdschema"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/suggest"
)

// lookupKind returns the registry entry of (group, kind) if meshc decodes
// it; kinds known by name only load as Unknown, as unregistered ones do.
func lookupKind(group, kind string) (*model.Kind, bool) {
	k, ok := model.LookupKind(group, kind)
	if !ok || !k.Decoded() {
		return nil, false
	}
	return k, true
}

// decodeKind decodes one object of k from its node (see
// goSchema.decode), as its family is decoded. unknownMeta are the unknown
// fields of a Kubernetes object's metadata, which object decoded already.
// Findings with Warn set leave the object loaded; any other is fatal to it.
func (d *decoder) decodeKind(k *model.Kind, meta model.ObjectMeta, n *yaml.Node, unknownMeta []fieldError) (model.Object, []fieldError) {
	v := k.New()
	var errs []fieldError
	switch k.Family {
	case model.Kubernetes:
		// A type check for exact paths, then the API server's
		// case-sensitive decoder. An unknown field is dropped with a
		// warning, as the API server's default field validation does.
		// The metadata is meta's: the typed object's own is not read.
		d.schema.decode(reflect.ValueOf(v).Elem(), withoutField(n, "metadata"), nil, true, &errs)
		errs = append(errs, unknownMeta...)
		slices.SortStableFunc(errs, func(a, b fieldError) int { return comparePaths(a.Path, b.Path) })
		for i := range errs {
			errs[i].Warn = errs[i].Warn || errs[i].Unknown
		}
	case model.Istio:
		errs = checkTopLevel(n)
		protoDecoder{errs: &errs}.message(v.(proto.Message).ProtoReflect(), field(n, "spec"), d.schema.scratch(model.Path{}.Key("spec")))
		if len(errs) == 0 && !d.noAdmission {
			errs = checkIstio(v.(proto.Message), meta)
		}
	case model.HNC, model.GatewayAPI, model.Install:
		errs = checkTopLevel(n)
		d.schema.decode(reflect.ValueOf(v).Elem(), field(n, "spec"), model.Path{}.Key("spec"), true, &errs)
		if c, ok := v.(*model.HNCConfigSpec); ok && len(errs) == 0 {
			errs = checkSyncModes(*c)
		}
		// The CRD's rules stand in for the API server's admission, off
		// like istiod's for the fixtures of later passes.
		if k.Family == model.GatewayAPI && len(errs) == 0 && !d.noAdmission {
			errs = d.checkCRD(k, meta.APIVersion, n)
		}
	}
	if rejects(errs) {
		return nil, errs
	}
	obj := k.Build(meta, v)
	if se, ok := obj.(*model.ServiceEntry); ok {
		se.StatusAddresses = statusAddresses(valueOf(field(n, "status")))
	}
	return obj, errs
}

// statusAddresses reads a ServiceEntry's status.addresses, which istiod
// reads back as the addresses it allocated. The API server does not check
// status against a schema on create, so a malformed entry is skipped, as
// istiod skips an address it cannot parse.
func statusAddresses(status any) []model.HostAddress {
	st, _ := status.(map[string]any)
	list, _ := st["addresses"].([]any)
	var out []model.HostAddress
	for _, a := range list {
		m, _ := a.(map[string]any)
		h, _ := m["host"].(string)
		v, _ := m["value"].(string)
		if h != "" && v != "" {
			out = append(out, model.HostAddress{Host: h, Value: v})
		}
	}
	return out
}

// customResourceFields are the top-level fields a custom resource may have;
// the API server prunes or, with strict validation, rejects others.
func checkTopLevel(n *yaml.Node) []fieldError {
	fields := []string{"apiVersion", "kind", "metadata", "spec", "status"}
	var errs []fieldError
	var buf [16]int
	for _, i := range sortedPairs(n, buf[:]) {
		if k := keyOf(n.Content[i]); !slices.Contains(fields, k) {
			errs = append(errs, fieldError{Path: model.Path{}.Key(k), Msg: fmt.Sprintf("unknown field %q", k) + suggest.DidYouMean(k, fields)})
		}
	}
	return errs
}

// checkSyncModes applies the HNCConfiguration CRD's enum on modes.
func checkSyncModes(c model.HNCConfigSpec) []fieldError {
	var errs []fieldError
	modes := []string{"Propagate", "AllowPropagate", "Remove", "Ignore"}
	for i, r := range c.Resources {
		if r.Mode != "" && !slices.Contains(modes, r.Mode) {
			errs = append(errs, fieldError{Path: model.Path{}.Key("spec").Key("resources").Index(i).Key("mode"), Msg: fmt.Sprintf("invalid value %q, want one of %s", r.Mode, strings.Join(modes, ", "))})
		}
	}
	return errs
}

// checkCRD validates a Gateway API object, n, against its CRD's schema
// at the object's version, as the API server does on create: OpenAPI
// rules, list types and CEL rules. It runs after strict decoding found
// nothing, so a problem is reported once. An object whose content (less
// metadata) was met before is not converted for the schema again: most
// of the cost of one the memo judged already.
func (d *decoder) checkCRD(k *model.Kind, apiVersion string, n *yaml.Node) []fieldError {
	_, version := splitAPIVersion(apiVersion)
	s, ok, err := crdschema.GatewayAPI(k.Plural, version)
	if !ok || err != nil {
		// Every served version has a schema that compiles
		// (internal/crdschema's tests); nothing to check against.
		return nil
	}
	raw := func() map[string]any {
		m, _ := valueOf(n).(map[string]any)
		return m
	}
	var vs []crdschema.Violation
	if d.crdKey, ok = appendContentKey(d.crdKey[:0], n); ok {
		vs = d.crd.ValidateExact(context.Background(), s, d.crdKey, raw)
	} else {
		vs = d.crd.Validate(context.Background(), s, raw())
	}
	var errs []fieldError
	for _, v := range vs {
		errs = append(errs, fieldError{Path: v.Path, Msg: v.Msg})
	}
	return errs
}

// appendContentKey appends to b an encoding of object n, a mapping, that
// tells apart any two objects whose values (valueOf) differ but for their
// metadata, which it leaves out. It tells apart more: a key order, a
// quoted number. ok is false when n is no mapping or its metadata no
// mapping, whose content the schema may judge.
func appendContentKey(b []byte, n *yaml.Node) ([]byte, bool) {
	if n.Kind != yaml.MappingNode {
		return b, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		b = appendNodeKey(b, k)
		if keyOf(k) != "metadata" {
			b = appendNodeKey(b, v)
		} else if v.Kind == yaml.MappingNode {
			b = append(b, 'm')
		} else {
			return b, false
		}
	}
	return b, true
}

// appendNodeKey appends to b all of n that its value depends on: kind,
// style, tag, text and children, each length-prefixed. n holds no alias
// (decodable), whose value is elsewhere.
func appendNodeKey(b []byte, n *yaml.Node) []byte {
	b = append(b, byte(n.Kind))
	b = binary.AppendUvarint(b, uint64(n.Style))
	b = binary.AppendUvarint(b, uint64(len(n.Tag)))
	b = append(b, n.Tag...)
	b = binary.AppendUvarint(b, uint64(len(n.Value)))
	b = append(b, n.Value...)
	b = binary.AppendUvarint(b, uint64(len(n.Content)))
	for _, c := range n.Content {
		b = appendNodeKey(b, c)
	}
	return b
}
