package resolve

import (
	"github.com/meshc/meshc/internal/model"
)

// Policy is an object istiod turns into proxy configuration that meshc
// does not build (authorization, request authentication, EnvoyFilter
// patches, Wasm plugins, telemetry): `meshc build` says which proxies
// lack it rather than let the configs pass for complete.
type Policy struct {
	Object *model.ObjectMeta
	// Omits says what the proxies' configs lack.
	Omits    string
	selector map[string]string
	// targeted policies (targetRef, targetRefs) attach to gateways or
	// services of their namespace; meshc counts every proxy there.
	targeted bool
}

// policies finds the Policies among objs.
func policies(objs []model.Object) []*Policy {
	var out []*Policy
	for _, o := range objs {
		m := o.Meta()
		k, ok := model.LookupKind(m.Group(), m.Kind)
		if !ok || k.Untranslated == "" {
			continue
		}
		p := &Policy{Object: m, Omits: k.Untranslated}
		switch x := o.(type) {
		case *model.AuthorizationPolicy:
			p.selector = x.Spec.GetSelector().GetMatchLabels()
			p.targeted = x.Spec.GetTargetRef() != nil || len(x.Spec.GetTargetRefs()) > 0
		case *model.EnvoyFilter:
			p.selector = x.Spec.GetWorkloadSelector().GetLabels()
			p.targeted = len(x.Spec.GetTargetRefs()) > 0
		case *model.Telemetry:
			p.selector = x.Spec.GetSelector().GetMatchLabels()
			p.targeted = x.Spec.GetTargetRef() != nil || len(x.Spec.GetTargetRefs()) > 0
		case *model.Unknown:
			spec, _ := x.Raw["spec"].(map[string]any)
			p.targeted = spec["targetRef"] != nil || spec["targetRefs"] != nil
			sel, _ := spec[k.SelectorPath[0]].(map[string]any)
			labels, _ := sel[k.SelectorPath[1]].(map[string]any)
			for key, v := range labels {
				if s, ok := v.(string); ok {
					if p.selector == nil {
						p.selector = map[string]string{}
					}
					p.selector[key] = s
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// PoliciesFor are the Policies that apply to p, as istiod applies them: in
// the root namespace to every namespace, elsewhere to the policy's own, in
// both cases to the workloads its selector matches (all without one).
func (m *Mesh) PoliciesFor(p *Proxy) []*Policy {
	var out []*Policy
	for _, pol := range m.Policies {
		ns := pol.Object.Namespace
		switch {
		case pol.targeted:
			if ns != p.Namespace {
				continue
			}
		case ns != p.Namespace && ns != m.Config.GetRootNamespace():
			continue
		case !LabelsMatch(pol.selector, p.Labels):
			continue
		}
		out = append(out, pol)
	}
	return out
}

// Selects reports whether the policy's selector matches labels: a policy
// without one selects every workload of the namespaces it applies to.
func (p *Policy) Selects(labels map[string]string) bool { return LabelsMatch(p.selector, labels) }
