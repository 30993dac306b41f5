package hierarchy

import (
	"cmp"
	"slices"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// SlotConflicts finds namespaces where an inherited copy and a local object
// both fill a one-per-namespace Istio slot: the selector-less Sidecar and
// the selector-less PeerAuthentication (docs/semantics/hierarchy.md §5.4.1). Istio would
// pick one by age, which files do not tell, so meshc names no winner.
func SlotConflicts(objs []model.Object) []diag.Diagnostic {
	type slot struct{ kind, ns string }
	holders := map[slot][]*model.ObjectMeta{}
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Sidecar:
			if x.Spec.GetWorkloadSelector() == nil {
				holders[slot{"Sidecar", x.Namespace}] = append(holders[slot{"Sidecar", x.Namespace}], &x.ObjectMeta)
			}
		case *model.PeerAuthentication:
			if x.Spec.GetSelector() == nil {
				holders[slot{"PeerAuthentication", x.Namespace}] = append(holders[slot{"PeerAuthentication", x.Namespace}], &x.ObjectMeta)
			}
		}
	}
	keys := make([]slot, 0, len(holders))
	for k := range holders {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b slot) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.kind, b.kind)) })
	var out []diag.Diagnostic
	for _, k := range keys {
		var copies, locals []*model.ObjectMeta
		for _, m := range holders[k] {
			if m.InheritedFrom != nil {
				copies = append(copies, m)
			} else {
				locals = append(locals, m)
			}
		}
		if len(copies) == 0 || len(locals) == 0 {
			continue
		}
		for _, c := range copies {
			src := c.InheritedFrom
			d := diag.SlotClaimedTwice.At(locals[0].Ref(), k.kind, src.Namespace, src.Name, locals[0].Name, k.ns)
			d.Related = []diag.Related{{ObjectRef: src.Ref(), Note: "propagated into " + k.ns + " by HNC"}}
			out = append(out, d)
		}
	}
	return out
}
