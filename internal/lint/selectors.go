package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// selector is the workload selector of one object, as written.
type selector struct {
	src  model.Object
	obj  *model.ObjectMeta
	path model.Path
	// labels are the selector's labels; empty with set: it matches every
	// workload it can reach.
	labels map[string]string
	set    bool
	// meshWide: the selector can match workloads of every namespace (a
	// Gateway's, or a policy's in the root namespace); otherwise only its
	// own namespace's.
	meshWide bool
}

// selectors lists the workload selectors of the objects whose kinds
// choose workloads by labels, in input order. Objects without one (a
// Gateway's is always there: none means every gateway workload) are left
// out, and so are targetRef policies, which do not select by labels.
func selectors(objs []model.Object, rootNs string) []selector {
	var out []selector
	for _, o := range objs {
		m := o.Meta()
		s := selector{src: o, obj: m, meshWide: m.Namespace == rootNs}
		switch x := o.(type) {
		case *model.Sidecar:
			// A root-namespace Sidecar with a selector still applies only
			// to its own namespace's workloads (docs/semantics/sidecar-scope.md §4.1).
			s.meshWide = false
			ws := x.Spec.GetWorkloadSelector()
			s.path, s.labels, s.set = model.ParsePath("spec.workloadSelector"), ws.GetLabels(), ws != nil
		case *model.DestinationRule:
			// DestinationRule selectors never cross namespaces, not even
			// from the root namespace (the field's API documentation).
			s.meshWide = false
			ws := x.Spec.GetWorkloadSelector()
			s.path, s.labels, s.set = model.ParsePath("spec.workloadSelector"), ws.GetMatchLabels(), ws != nil
		case *model.Gateway:
			if m.Derived != nil {
				continue // generated from a Gateway API Gateway: bound by its Services
			}
			// istiod matches a Gateway's selector against gateway
			// workloads of every namespace.
			s.path, s.labels, s.set, s.meshWide = model.ParsePath("spec.selector"), x.Spec.GetSelector(), true, true
		case *model.PeerAuthentication:
			ws := x.Spec.GetSelector()
			s.path, s.labels, s.set = model.ParsePath("spec.selector"), ws.GetMatchLabels(), ws != nil
		case *model.AuthorizationPolicy:
			ws := x.Spec.GetSelector()
			s.path, s.labels, s.set = model.ParsePath("spec.selector"), ws.GetMatchLabels(), ws != nil
		case *model.Telemetry:
			if x.Spec.GetTargetRef() != nil || len(x.Spec.GetTargetRefs()) > 0 {
				continue // a targetRef policy does not select by labels
			}
			ws := x.Spec.GetSelector()
			s.path, s.labels, s.set = model.ParsePath("spec.selector"), ws.GetMatchLabels(), ws != nil
		case *model.EnvoyFilter:
			if len(x.Spec.GetTargetRefs()) > 0 {
				continue
			}
			ws := x.Spec.GetWorkloadSelector()
			s.path, s.labels, s.set = model.ParsePath("spec.workloadSelector"), ws.GetLabels(), ws != nil
		case *model.Unknown:
			// RequestAuthentication, WasmPlugin: the registry says where
			// their selector is.
			k, ok := model.LookupKind(m.Group(), m.Kind)
			if !ok || len(k.SelectorPath) != 2 {
				continue
			}
			spec, _ := x.Raw["spec"].(map[string]any)
			if spec["targetRef"] != nil || spec["targetRefs"] != nil {
				continue
			}
			sel, ok := spec[k.SelectorPath[0]].(map[string]any)
			s.path, s.set = model.ParsePath("spec."+k.SelectorPath[0]), ok
			raw, _ := sel[k.SelectorPath[1]].(map[string]any)
			s.labels = map[string]string{}
			for key, v := range raw {
				if v, ok := v.(string); ok {
					s.labels[key] = v
				}
			}
		default:
			continue
		}
		if s.set {
			out = append(out, s)
		}
	}
	return out
}

// inputWorkload is a Pod, workload template or WorkloadEntry of the
// input, injected or not: gateways are often not injected, and a selector
// may name any of them.
type inputWorkload struct {
	obj    *model.ObjectMeta
	labels map[string]string
	// gateway: the workload looks like an Istio gateway whatever selects
	// it: injected with the gateway template, or labelled istio=…gateway
	// as Istio's installers label them.
	gateway bool
}

// workloadsByNamespace indexes the input's workloads by namespace. HNC copies
// are left out: a propagated Pod is no workload of its own.
func workloadsByNamespace(objs []model.Object) map[string][]inputWorkload {
	out := map[string][]inputWorkload{}
	for _, o := range objs {
		var w inputWorkload
		switch x := o.(type) {
		case *model.Pod:
			w = inputWorkload{obj: &x.ObjectMeta, labels: x.Labels, gateway: looksLikeGateway(x.Annotations, x.Labels)}
		case *model.Workload:
			w = inputWorkload{obj: &x.ObjectMeta, labels: x.Template.Labels, gateway: looksLikeGateway(x.Template.Annotations, x.Template.Labels)}
		case *model.WorkloadEntry:
			// A VM's labels: the spec's, metadata's winning, as for its
			// endpoints.
			labels := maps.Clone(x.Spec.GetLabels())
			if labels == nil {
				labels = map[string]string{}
			}
			maps.Copy(labels, x.Labels)
			w = inputWorkload{obj: &x.ObjectMeta, labels: labels}
		default:
			continue
		}
		if w.obj.InheritedFrom == nil {
			out[w.obj.Namespace] = append(out[w.obj.Namespace], w)
		}
	}
	return out
}

func looksLikeGateway(annotations, labels map[string]string) bool {
	if strings.HasSuffix(labels["istio"], "gateway") {
		return true
	}
	for t := range strings.SplitSeq(annotations["inject.istio.io/templates"], ",") {
		if t == "gateway" {
			return true
		}
	}
	return false
}

// selected lists the workloads a selector matches, in namespace order.
func (s selector) selected(ws map[string][]inputWorkload) []inputWorkload {
	var out []inputWorkload
	for _, ns := range s.namespaces(ws) {
		for _, w := range ws[ns] {
			if resolve.LabelsMatch(s.labels, w.labels) {
				out = append(out, w)
			}
		}
	}
	return out
}

// gateway returns the selector's Gateway, if it is one's.
func (s selector) gateway() (*model.Gateway, bool) {
	gw, ok := s.src.(*model.Gateway)
	return gw, ok
}

// namespaces are the namespaces whose workloads the selector can match
// and the input holds, sorted.
func (s selector) namespaces(ws map[string][]inputWorkload) []string {
	if !s.meshWide {
		if len(ws[s.obj.Namespace]) == 0 {
			return nil
		}
		return []string{s.obj.Namespace}
	}
	return slices.Sorted(maps.Keys(ws))
}

// MC6004: a selector no workload of the input matches. Judged only where
// the input holds workloads the selector could match: a repository of
// Istio objects alone says nothing about what runs. A Gateway is judged
// only when the input holds some gateway workload (one that looks like a
// gateway, or that another Gateway selects): application repositories
// often hold their Deployments and Gateways but not the gateway, which
// is installed apart.
var selectorMatchesNoWorkload = &Analyzer{Entry: diag.SelectorMatchesNoWorkload, Requires: []*fact{factWorkloads, factSelectors, factGateways}, Run: func(p *Pass) {
	ws := p.workloads()
	if len(ws) == 0 {
		return
	}
	var gateways *gatewayInput
	for _, s := range p.selectors() {
		if len(s.labels) == 0 || len(s.selected(ws)) > 0 {
			continue // an empty selector is MC6005's
		}
		// Workloads elsewhere that the labels match say what was meant,
		// even with no workload of the selector's own namespace in the
		// input.
		if others := s.elsewhere(ws); len(others) > 0 {
			p.Report(s.obj, s.path, diag.SelectorMatchesOnlyElsewhere,
				labelString(s.labels), s.obj.Kind, objName(s.obj), s.obj.Namespace, workloadList(others), elsewhereHint(s, p.Mesh.Config.RootNamespace))
			continue
		}
		if len(s.namespaces(ws)) == 0 {
			continue
		}
		where := "namespace " + s.obj.Namespace
		if gw, ok := s.gateway(); ok {
			if gateways == nil {
				gateways = p.gateways()
			}
			if !gateways.holdsGatewayWorkload(gw) {
				continue
			}
			where = "any namespace of the input, where it has gateway workloads"
		} else if s.meshWide {
			where = "any namespace of the input"
		}
		p.Report(s.obj, s.path, diag.SelectorMatchesNothing,
			labelString(s.labels), s.obj.Kind, objName(s.obj), where)
	}
}}

// elsewhere lists the workloads of other namespaces a selector that
// applies to its own namespace only would match; none for one that
// reaches every namespace.
func (s selector) elsewhere(ws map[string][]inputWorkload) []inputWorkload {
	if s.meshWide {
		return nil
	}
	var out []inputWorkload
	for _, ns := range slices.Sorted(maps.Keys(ws)) {
		if ns == s.obj.Namespace {
			continue
		}
		for _, w := range ws[ns] {
			if resolve.LabelsMatch(s.labels, w.labels) {
				out = append(out, w)
			}
		}
	}
	return out
}

// workloadList names up to three workloads, and how many more.
func workloadList(ws []inputWorkload) string {
	names := make([]string, 0, 3)
	for _, w := range ws[:min(3, len(ws))] {
		names = append(names, w.obj.Kind+" "+objName(w.obj))
	}
	if len(ws) > 3 {
		names = append(names, fmt.Sprintf("%d more", len(ws)-3))
	}
	return strings.Join(names, ", ")
}

// elsewhereHint says how to reach the workloads a selector misses.
func elsewhereHint(s selector, rootNs string) string {
	if s.obj.Kind == "Sidecar" && s.obj.Namespace == rootNs {
		return "; a Sidecar in the root namespace applies to other namespaces only without a selector (as their default); move it into their namespace"
	}
	return "; move it into their namespace"
}

// emptySelectorEffect says what a selector without labels does, per kind.
func emptySelectorEffect(s selector) string {
	switch s.obj.Kind {
	case "Sidecar":
		return "istiod treats it as a Sidecar with a selector that matches every workload of the namespace: it applies to all of them instead of the namespace default, and competes with the namespace's other selector Sidecars, the oldest winning"
	case "Gateway":
		return "its servers are added to every gateway workload of the mesh, in every namespace"
	case "DestinationRule":
		return "it applies to every workload of the namespace, as a rule without a selector would, but ranks as a selector rule"
	}
	if s.meshWide {
		return "in the root namespace it applies to every workload of the mesh, as one without a selector would"
	}
	return fmt.Sprintf("it applies to every workload of namespace %s, as one without a selector would", s.obj.Namespace)
}

// MC6005: a selector written with no labels.
var emptyWorkloadSelector = &Analyzer{Entry: diag.EmptyWorkloadSelector, Requires: []*fact{factSelectors}, Run: func(p *Pass) {
	for _, s := range p.selectors() {
		if len(s.labels) > 0 {
			continue
		}
		p.Report(s.obj, s.path, diag.SelectorWithoutLabels,
			s.obj.Kind, objName(s.obj), emptySelectorEffect(s))
	}
}}
