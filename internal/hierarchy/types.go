package hierarchy

import (
	"cmp"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Synchronization modes (docs/semantics/hierarchy.md §1.1).
const (
	ModePropagate      = "Propagate"
	ModeAllowPropagate = "AllowPropagate"
	ModeRemove         = "Remove"
	ModeIgnore         = "Ignore"
)

// GroupKind names a type HNC can propagate.
type GroupKind struct{ Group, Kind string }

// resourceKind is one entry of meshc's built-in resource table: HNC asks
// the API server for these; offline, the table answers.
type resourceKind struct {
	group, plural, singular, kind string
	// version is what `config describe` prints.
	version string
}

// resourceTable lists the namespaced types meshc knows by their resource
// names: the kind registry's, less HNC's own (docs/semantics/hierarchy.md
// §1.1a [POLICY]).
func resourceTable() []resourceKind {
	return registryKinds(func(k *model.Kind) bool { return !k.ClusterScoped && k.Group != model.GroupHNC })
}

// clusterScoped are resource names HNC refuses as not namespaced.
func clusterScoped() []resourceKind {
	return registryKinds(func(k *model.Kind) bool { return k.ClusterScoped })
}

func registryKinds(keep func(*model.Kind) bool) []resourceKind {
	var out []resourceKind
	for _, k := range model.Kinds() {
		if keep(k) {
			out = append(out, resourceOf(k))
		}
	}
	return out
}

func resourceOf(k *model.Kind) resourceKind {
	return resourceKind{k.Group, k.Plural, k.Singular, k.Kind, k.Versions[0]}
}

// crdKinds registers the namespaced types CustomResourceDefinitions in the
// input declare, so HNCConfiguration may name them (docs/semantics/hierarchy.md §1.1a).
func crdKinds(objs []model.Object) []resourceKind {
	var out []resourceKind
	for _, o := range objs {
		u, ok := o.(*model.Unknown)
		if !ok || u.Kind != "CustomResourceDefinition" {
			continue
		}
		spec, _ := u.Raw["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		plural, _ := names["plural"].(string)
		singular, _ := names["singular"].(string)
		kind, _ := names["kind"].(string)
		if scope, _ := spec["scope"].(string); scope == "Namespaced" && plural != "" && kind != "" {
			version := ""
			if vs, _ := spec["versions"].([]any); len(vs) > 0 {
				if v, _ := vs[0].(map[string]any); v != nil {
					version, _ = v["name"].(string)
				}
			}
			out = append(out, resourceKind{group, plural, singular, kind, version})
		}
	}
	return out
}

// enforced types always propagate (docs/semantics/hierarchy.md §1.1).
func enforced() map[GroupKind]string {
	return map[GroupKind]string{
		{"rbac.authorization.k8s.io", "Role"}:        ModePropagate,
		{"rbac.authorization.k8s.io", "RoleBinding"}: ModePropagate,
	}
}

// typeModes resolves the HNCConfiguration into a mode per type
// (docs/semantics/hierarchy.md §1.1a): enforced types stay Propagate, the first entry for
// a type wins, unknown or ambiguous resources are reported and ignored.
func typeModes(cfg *model.HNCConfiguration, known []resourceKind) (map[GroupKind]string, []diag.Diagnostic) {
	modes, _, diags := resolveTypes(cfg, known)
	return modes, diags
}

// resolveTypes is typeModes, also returning the resource of each type.
func resolveTypes(cfg *model.HNCConfiguration, known []resourceKind) (map[GroupKind]string, map[GroupKind]resourceKind, []diag.Diagnostic) {
	modes := enforced()
	kinds := map[GroupKind]resourceKind{}
	for gk := range modes {
		k, _ := model.LookupKind(gk.Group, gk.Kind)
		kinds[gk] = resourceOf(k)
	}
	if cfg == nil {
		return modes, kinds, nil
	}
	var diags []diag.Diagnostic
	seen := map[GroupKind]bool{}
	for i, r := range cfg.Spec.Resources {
		path := model.Path{}.Key("spec").Key("resources").Index(i)
		at, field := cfg.RefAt(path), diag.Part("field", path.String())
		name := strings.ToLower(r.Resource)
		matches := func(k resourceKind) bool {
			return (r.Group == "" || r.Group == k.group) && (name == k.plural || name == k.singular)
		}
		hits := slices.DeleteFunc(append(resourceTable(), known...), func(k resourceKind) bool { return !matches(k) })
		switch {
		case len(hits) == 0 && slices.ContainsFunc(clusterScoped(), matches):
			gr := r.Resource
			if r.Group != "" {
				gr += "." + r.Group
			}
			diags = append(diags, diag.HNCResourceNotNamespaced.At(at, gr).Keyed(field))
			continue
		case len(hits) == 0:
			diags = append(diags, diag.HNCResourceUnknown.At(at, r.Resource, r.Group).Keyed(field))
			continue
		case len(hits) > 1:
			diags = append(diags, diag.HNCResourceAmbiguous.At(at, r.Resource).Keyed(field))
			continue
		}
		gk := GroupKind{hits[0].group, hits[0].kind}
		mode := r.Mode
		if mode == "" {
			mode = ModePropagate
		}
		switch _, isEnforced := enforced()[gk]; {
		case isEnforced:
			diags = append(diags, diag.HNCModeEnforced.At(at, groupResource(hits[0])).Keyed(field).WithSeverity(diag.Warning))
		case seen[gk]:
			diags = append(diags, diag.HNCModeRepeated.At(at, groupResource(hits[0]), string(modes[gk])).Keyed(field).WithSeverity(diag.Warning))
		default:
			seen[gk] = true
			modes[gk] = mode
			kinds[gk] = hits[0]
		}
	}
	return modes, kinds, diags
}

// ResourceStatus is one entry of the HNCConfiguration status HNC would
// write (docs/semantics/hierarchy.md §2.5).
type ResourceStatus struct {
	Group, Version, Resource, Mode string
	// NumPropagated counts copies; nil for Ignore.
	NumPropagated *int
	// NumSource counts non-copies in managed namespaces; nil unless the
	// mode propagates.
	NumSource *int
}

// ConfigStatus computes the HNCConfiguration status from the input and
// the effective object set after propagation.
func ConfigStatus(f *Forest, objs, effective []model.Object) []ResourceStatus {
	var cfg *model.HNCConfiguration
	for _, o := range objs {
		if c, ok := o.(*model.HNCConfiguration); ok {
			cfg = c
		}
	}
	modes, kinds, _ := resolveTypes(cfg, crdKinds(objs))
	var out []ResourceStatus
	for gk, mode := range modes {
		k := kinds[gk]
		st := ResourceStatus{Group: k.group, Version: cmp.Or(k.version, "v1"), Resource: k.plural, Mode: mode}
		if mode != ModeIgnore {
			n := 0
			for _, o := range effective {
				if m := o.Meta(); m.Group() == gk.Group && m.Kind == gk.Kind && m.InheritedFrom != nil {
					n++
				}
			}
			st.NumPropagated = &n
		}
		if mode == ModePropagate || mode == ModeAllowPropagate {
			n := 0
			for _, o := range objs {
				m := o.Meta()
				if ns := f.Namespaces[m.Namespace]; ns != nil && ns.Managed && m.Group() == gk.Group && m.Kind == gk.Kind {
					if _, isCopy := m.Labels[LabelInheritedFrom]; !isCopy {
						n++
					}
				}
			}
			st.NumSource = &n
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b ResourceStatus) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	return out
}

// groupResource prints "resource.group", or "resource" for core.
func groupResource(k resourceKind) string {
	if k.group == "" {
		return k.plural
	}
	return k.plural + "." + k.group
}
