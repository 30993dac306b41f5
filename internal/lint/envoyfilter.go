package lint

import (
	"slices"

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
			routeLevel := applyTo == networking.EnvoyFilter_ROUTE_CONFIGURATION || applyTo == networking.EnvoyFilter_HTTP_ROUTE
			switch {
			case cp.GetPatch() == nil:
				continue
			case (op == networking.EnvoyFilter_Patch_ADD || op == networking.EnvoyFilter_Patch_REMOVE) && routeLevel:
				p.Report(m, at, "%s patch %d: %s on %s is ignored by istiod; patch the virtual host or route with MERGE, or add routes with INSERT_FIRST",
					objName(m), i, op, applyTo)
				continue
			case op == networking.EnvoyFilter_Patch_REPLACE && !slices.Contains(replaceable, applyTo):
				p.Report(m, at, "%s patch %d: REPLACE on %s is ignored by istiod, which replaces only HTTP_FILTER, NETWORK_FILTER and VIRTUAL_HOST; use MERGE, or REMOVE and ADD",
					objName(m), i, applyTo)
				continue
			case !slices.Contains(relative, op) || ef.Spec.GetPriority() != 0:
				continue
			}
			name := patchedFilter(cp)
			if cp.GetMatch().GetProxy().GetProxyVersion() != "" || name != "" && versioned[name] {
				p.Report(m, at, "%s patch %d: %s is relative to %s and the EnvoyFilter has no priority; patches matching a proxy version make that element differ between proxy versions, so during an upgrade the patch may find nothing to act on: set spec.priority or use INSERT_FIRST or ADD",
					objName(m), i, op, describeFilter(name))
				continue
			}
			p.Report(m, at, "%s patch %d: %s is relative to an element other EnvoyFilters may add, move or remove, and the EnvoyFilter has no priority, so whether it applies depends on their order; set spec.priority or use INSERT_FIRST or ADD",
				objName(m), i, op)
		}
	}
}}

// relative operations act on an element another patch may have placed.
var relative = []networking.EnvoyFilter_Patch_Operation{
	networking.EnvoyFilter_Patch_INSERT_BEFORE, networking.EnvoyFilter_Patch_INSERT_AFTER,
	networking.EnvoyFilter_Patch_REPLACE, networking.EnvoyFilter_Patch_REMOVE,
}

// replaceable are the targets REPLACE works on.
var replaceable = []networking.EnvoyFilter_ApplyTo{
	networking.EnvoyFilter_HTTP_FILTER, networking.EnvoyFilter_NETWORK_FILTER, networking.EnvoyFilter_VIRTUAL_HOST,
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
