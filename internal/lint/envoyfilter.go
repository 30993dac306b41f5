package lint

import (
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// MC9009: EnvoyFilter patches that istiod ignores, or that depend on the
// order of other filters (istioctl's IST0151 to IST0155).
var riskyEnvoyFilterPatch = &Analyzer{Entry: diag.RiskyEnvoyFilterPatch, Run: func(p *Pass) {
	filters := own[*model.EnvoyFilter](p.Mesh.Objects)
	// The Envoy filters some patch matches by proxy version: their
	// patches differ before and after an upgrade.
	versioned := map[string]bool{}
	for _, ef := range filters {
		for _, cp := range ef.Spec.GetConfigPatches() {
			if name := patchedFilter(cp); name != "" && cp.GetMatch().GetProxy().GetProxyVersion() != "" {
				versioned[name] = true
			}
		}
	}
	for _, ef := range filters {
		m := &ef.ObjectMeta
		for i, cp := range ef.Spec.GetConfigPatches() {
			op, applyTo := cp.GetPatch().GetOperation(), cp.GetApplyTo()
			at := model.Path{}.Key("spec").Key("configPatches").Index(i).Key("patch").Key("operation")
			ops, judged := appliedOperations[applyTo]
			switch {
			case cp.GetPatch() == nil || op == networking.EnvoyFilter_Patch_INVALID || applyTo == networking.EnvoyFilter_INVALID ||
				cp.GetMatch().GetContext() == networking.EnvoyFilter_WAYPOINT:
				continue // refused by validation, or waypoint patches istiod does not validate either
			case judged && !slices.Contains(ops, op):
				p.Report(m, at, diag.PatchOperationIgnored,
					objName(m), i, op, applyTo, operationList(ops))
				continue
			case !slices.Contains(relative, op) || ef.Spec.GetPriority() != 0:
				continue
			}
			name := patchedFilter(cp)
			if cp.GetMatch().GetProxy().GetProxyVersion() != "" || name != "" && versioned[name] {
				p.Report(m, at, diag.PatchRelativeToVersioned,
					objName(m), i, op, describeFilter(name))
				continue
			}
			p.Report(m, at, diag.PatchRelativeUnordered,
				objName(m), i, op)
		}
	}
}}

// relative operations act on an element another patch may have placed.
var relative = []networking.EnvoyFilter_Patch_Operation{
	networking.EnvoyFilter_Patch_INSERT_BEFORE, networking.EnvoyFilter_Patch_INSERT_AFTER,
	networking.EnvoyFilter_Patch_REPLACE, networking.EnvoyFilter_Patch_REMOVE,
}

// appliedOperations are the operations istiod's patching code acts on for
// each target (pilot/pkg/networking/core/envoyfilter); others are skipped
// without a word. This is istiod's behaviour, not istioctl's older rule
// (which flags ADD and REMOVE on HTTP_ROUTE, and REPLACE on
// LISTENER_FILTER, all of which istiod applies).
var appliedOperations = func() map[networking.EnvoyFilter_ApplyTo][]networking.EnvoyFilter_Patch_Operation {
	const (
		add, remove, merge, mergeLists = networking.EnvoyFilter_Patch_ADD, networking.EnvoyFilter_Patch_REMOVE,
			networking.EnvoyFilter_Patch_MERGE, networking.EnvoyFilter_Patch_MERGE_AND_REPLACE_LIST
		first, before, after, replace = networking.EnvoyFilter_Patch_INSERT_FIRST, networking.EnvoyFilter_Patch_INSERT_BEFORE,
			networking.EnvoyFilter_Patch_INSERT_AFTER, networking.EnvoyFilter_Patch_REPLACE
	)
	filters := []networking.EnvoyFilter_Patch_Operation{add, first, before, after, replace, remove, merge}
	return map[networking.EnvoyFilter_ApplyTo][]networking.EnvoyFilter_Patch_Operation{
		networking.EnvoyFilter_LISTENER:            {add, remove, merge, mergeLists},
		networking.EnvoyFilter_LISTENER_FILTER:     filters,
		networking.EnvoyFilter_FILTER_CHAIN:        {add, remove, merge, mergeLists},
		networking.EnvoyFilter_NETWORK_FILTER:      filters,
		networking.EnvoyFilter_HTTP_FILTER:         filters,
		networking.EnvoyFilter_ROUTE_CONFIGURATION: {merge, mergeLists},
		networking.EnvoyFilter_VIRTUAL_HOST:        {add, remove, merge, mergeLists, replace},
		networking.EnvoyFilter_HTTP_ROUTE:          {add, first, before, after, remove, merge, mergeLists},
		networking.EnvoyFilter_CLUSTER:             {add, remove, merge, mergeLists},
		networking.EnvoyFilter_EXTENSION_CONFIG:    {add},
	}
}()

func operationList(ops []networking.EnvoyFilter_Patch_Operation) string {
	names := make([]string, 0, len(ops))
	for _, op := range ops {
		names = append(names, op.String())
	}
	return strings.Join(names, ", ")
}

// patchedFilter names the Envoy filter a patch is about: the name in its
// value, else the filter its listener match names.
func patchedFilter(cp *networking.EnvoyFilter_EnvoyConfigObjectPatch) string {
	if name := cp.GetPatch().GetValue().GetFields()["name"].GetStringValue(); name != "" {
		return name
	}
	return cp.GetMatch().GetListener().GetFilterChain().GetFilter().GetName()
}

func describeFilter(name string) string {
	if name == "" {
		return "its match"
	}
	return "filter " + name
}
