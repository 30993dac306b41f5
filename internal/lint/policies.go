package lint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"istio.io/api/label"
	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// policyAnalyzers check policies and Istio metadata (MC9xxx).
var policyAnalyzers = []*Analyzer{
	unknownAnnotation,
	misplacedAnnotation,
	invalidAnnotationValue,
	deprecatedSetting,
	alphaAnnotation,
	conflictingInjectionLabels,
	conflictingTelemetrySelectors,
	multipleDefaultTelemetries,
	riskyEnvoyFilterPatch,
	unknownSourceNamespace,
	applicationRunsAsProxyUID,
}

// removedIstioKinds are the rbac.istio.io types Istio has removed.
var removedIstioKinds = []string{"ClusterRbacConfig", "RbacConfig", "ServiceRole", "ServiceRoleBinding"}

// MC9004: deprecated fields (those Istio's protos mark, and a Sidecar's
// egressProxy, which istioctl reports), removed types and deprecated
// annotations.
var deprecatedSetting = &Analyzer{Entry: diag.DeprecatedSetting, Requires: []*fact{factAnnotations}, Run: func(p *Pass) {
	for _, o := range p.Mesh.Objects {
		m := o.Meta()
		if m.InheritedFrom != nil {
			continue
		}
		for _, f := range deprecatedFields(o) {
			what := "field " + f.at.String()
			if f.enum {
				what = "value " + string(f.name.Name()) + " at " + f.at.String()
			}
			p.Report(m, f.at, diag.DeprecatedField, m.Kind, objName(m), what,
				cmp.Or(deprecatedReplacements[f.name], "see the field's reference documentation for its replacement"))
		}
		switch x := o.(type) {
		case *model.Sidecar:
			// istiod still routes unknown traffic to the egress proxy in
			// ALLOW_ANY mode (docs/semantics/sidecar-scope.md §4.9); the
			// field is hidden from Istio's docs and istioctl calls it
			// deprecated.
			if otp := x.Spec.GetOutboundTrafficPolicy(); otp.GetEgressProxy() != nil {
				effect := "istiod still sends unknown outbound traffic to it in ALLOW_ANY mode"
				if otp.GetMode() != networking.OutboundTrafficPolicy_ALLOW_ANY {
					effect = "with mode " + otp.GetMode().String() + " it is ignored already"
				}
				p.Report(m, model.ParsePath("spec.outboundTrafficPolicy.egressProxy"), diag.DeprecatedEgressProxy, objName(m), effect)
			}
		case *model.Unknown:
			if m.Kind == "CustomResourceDefinition" {
				spec, _ := x.Raw["spec"].(map[string]any)
				names, _ := spec["names"].(map[string]any)
				group, _ := spec["group"].(string)
				kind, _ := names["kind"].(string)
				if group == "rbac.istio.io" && slices.Contains(removedIstioKinds, kind) {
					p.Report(m, model.ParsePath("spec.group"), diag.RemovedKindDefined, m.Name, kind)
				}
			} else if m.Group() == "rbac.istio.io" && slices.Contains(removedIstioKinds, m.Kind) {
				p.Report(m, nil, diag.RemovedKindUsed, m.Kind, objName(m))
			}
		}
	}
	deprecatedAnnotations(p)
}}

// MC9006: a namespace with more than one kind of injection label. As
// istioctl: istio-system is left alone, and istio-injection other than
// enabled is an opt-out that overrides the rest, not a conflict.
var conflictingInjectionLabels = &Analyzer{Entry: diag.ConflictingInjectionLabels, Run: func(p *Pass) {
	for _, n := range own[*model.Namespace](p.Mesh.Objects) {
		if n.Name == "istio-system" {
			continue
		}
		var set []string
		inj, hasInj := n.Labels["istio-injection"]
		if hasInj {
			set = append(set, "istio-injection="+inj)
		}
		for _, l := range []string{label.IoIstioRev.Name, label.IoIstioDataplaneMode.Name} {
			if v, ok := n.Labels[l]; ok && (!hasInj || inj == "enabled") {
				set = append(set, l+"="+v)
			}
		}
		if len(set) < 2 {
			continue
		}
		why := "more than one injection webhook may match its pods, and which sidecar they get, if any, is undefined; keep one (istio.io/rev alone selects a revision)"
		if _, ambient := n.Labels[label.IoIstioDataplaneMode.Name]; ambient {
			why = "it asks for sidecar injection and for a data plane mode at once, so what its pods get is undefined; keep the labels of one data plane"
		}
		p.Report(&n.ObjectMeta, model.ParsePath("metadata.labels"), diag.SeveralInjectionLabels,
			n.Name, strings.Join(set, ", "), why)
	}
}}

// MC9007: several selecting Telemetries select one workload. One finding
// per set of Telemetries, naming every workload they share.
var conflictingTelemetrySelectors = &Analyzer{Entry: diag.ConflictingTelemetrySelectors, Requires: []*fact{factWorkloads}, Run: func(p *Pass) {
	selecting := map[string][]*model.Telemetry{}
	var nss []string
	for _, t := range own[*model.Telemetry](p.Mesh.Objects) {
		// With a targetRef, istiod attaches by reference and ignores the
		// selector.
		if len(t.Spec.GetSelector().GetMatchLabels()) == 0 || t.Spec.GetTargetRef() != nil || len(t.Spec.GetTargetRefs()) > 0 {
			continue
		}
		if selecting[t.Namespace] == nil {
			nss = append(nss, t.Namespace)
		}
		selecting[t.Namespace] = append(selecting[t.Namespace], t)
	}
	if len(nss) == 0 {
		return
	}
	slices.Sort(nss)
	workloads := p.workloads()
	type group struct {
		telemetries []*model.Telemetry
		workloads   []string
	}
	for _, ns := range nss {
		groups := map[string]*group{}
		var order []string
		for _, w := range workloads[ns] {
			var hit []*model.Telemetry
			for _, t := range selecting[ns] {
				if resolve.LabelsMatch(t.Spec.GetSelector().GetMatchLabels(), w.labels) {
					hit = append(hit, t)
				}
			}
			if len(hit) < 2 {
				continue
			}
			var key strings.Builder
			for _, t := range hit {
				key.WriteString(t.Name + "\x00")
			}
			g := groups[key.String()]
			if g == nil {
				g = &group{telemetries: hit}
				groups[key.String()] = g
				order = append(order, key.String())
			}
			g.workloads = append(g.workloads, objName(w.obj))
		}
		for _, k := range order {
			g := groups[k]
			last := g.telemetries[len(g.telemetries)-1]
			var names []string
			for _, t := range g.telemetries {
				names = append(names, t.Name)
			}
			d := p.Report(&last.ObjectMeta, model.ParsePath("spec.selector"), diag.TelemetriesSelectSame,
				strings.Join(names, ", "), ns, plural(len(g.workloads), "workload ", "workloads ")+list(g.workloads, 5))
			for _, t := range g.telemetries[:len(g.telemetries)-1] {
				d.Related = append(d.Related, related(&t.ObjectMeta, "selects the same %s", plural(len(g.workloads), "workload", "workloads")))
			}
			d.Proxies = slices.Compact(slices.Sorted(slices.Values(g.workloads)))
		}
	}
}}

// MC9008: several namespace-wide Telemetries in one namespace; one
// finding per namespace, at the second in input order.
var multipleDefaultTelemetries = &Analyzer{Entry: diag.MultipleDefaultTelemetries, Run: func(p *Pass) {
	defaults := map[string][]*model.Telemetry{}
	var nss []string
	for _, t := range own[*model.Telemetry](p.Mesh.Objects) {
		if t.Spec.GetSelector() != nil || t.Spec.GetTargetRef() != nil || len(t.Spec.GetTargetRefs()) > 0 {
			continue
		}
		if defaults[t.Namespace] == nil {
			nss = append(nss, t.Namespace)
		}
		defaults[t.Namespace] = append(defaults[t.Namespace], t)
	}
	slices.Sort(nss)
	for _, ns := range nss {
		ts := defaults[ns]
		if len(ts) < 2 {
			continue
		}
		var names []string
		for _, t := range ts {
			names = append(names, t.Name)
		}
		scope := "namespace " + ns
		if ns == p.Mesh.Config.GetRootNamespace() {
			scope = "the root namespace " + ns + " (the mesh-wide default)"
		}
		d := p.Report(&ts[1].ObjectMeta, nil, diag.SeveralDefaultTelemetries,
			strings.Join(names, ", "), scope)
		for _, t := range slices.Delete(slices.Clone(ts), 1, 2) {
			d.Related = append(d.Related, related(&t.ObjectMeta, "another default Telemetry of %s", ns))
		}
	}
}}

// MC9010: an AuthorizationPolicy source namespace that the input does not
// have. Judged only when the input declares namespaces.
var unknownSourceNamespace = &Analyzer{Entry: diag.UnknownSourceNamespace, Run: func(p *Pass) {
	if !p.Mesh.DeclaresNamespaces() {
		return
	}
	for _, ap := range own[*model.AuthorizationPolicy](p.Mesh.Objects) {
		seen := map[string]bool{}
		for i, r := range ap.Spec.GetRules() {
			for j, f := range r.GetFrom() {
				src := f.GetSource()
				for _, field := range []struct {
					name string
					nss  []string
				}{{"namespaces", src.GetNamespaces()}, {"notNamespaces", src.GetNotNamespaces()}} {
					for k, ns := range field.nss {
						if ns == "" || ns == "*" || seen[ns] || namespaceMatches(p.Mesh, ns) {
							continue
						}
						seen[ns] = true
						at := model.Path{}.Key("spec").Key("rules").Index(i).Key("from").Index(j).Key("source").Key(field.name).Index(k)
						msg := diag.SourceNamespaceUnknown
						if strings.Contains(ns, "*") {
							msg = diag.SourceNamespacePatternUnmatched
						}
						p.Report(&ap.ObjectMeta, at, msg,
							objName(&ap.ObjectMeta), ns, field.name, sourceNamespaceEffect(field.name, ap.Spec.GetAction().String()))
					}
				}
			}
		}
	}
}}

// namespaceMatches reports whether the input has a namespace that ns,
// a name or a pattern with a leading or trailing * as istiod matches
// them, stands for.
func namespaceMatches(m *resolve.Mesh, ns string) bool {
	if !strings.Contains(ns, "*") {
		return m.NamespaceExists(ns)
	}
	prefix, suffix := "", ""
	switch {
	case strings.HasSuffix(ns, "*"):
		prefix = strings.TrimSuffix(ns, "*")
	case strings.HasPrefix(ns, "*"):
		suffix = strings.TrimPrefix(ns, "*")
	default:
		return true // a * inside a name matches only itself; not judged
	}
	for name := range m.Hierarchy.Namespaces {
		if strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix) && m.NamespaceExists(name) {
			return true
		}
	}
	root := m.Config.GetRootNamespace()
	return strings.HasPrefix(root, prefix) && strings.HasSuffix(root, suffix)
}

// sourceNamespaceEffect says what a missing namespace does to a rule.
func sourceNamespaceEffect(field, action string) string {
	if field == "notNamespaces" {
		return "the exclusion excludes nothing: check the name"
	}
	return fmt.Sprintf("the %s rule matches no request from it: check the name", action)
}

// proxyUID is the user the sidecar runs as; the sidecar's iptables rules
// let that user's traffic out uncaptured, so that the proxy's own
// connections do not loop back into it.
const proxyUID = 1337

// MC9011: an application container of a workload that gets a sidecar
// runs as the proxy's user, so its outbound traffic bypasses the proxy.
var applicationRunsAsProxyUID = &Analyzer{Entry: diag.ApplicationRunsAsProxyUID, Run: func(p *Pass) {
	meshed, standIn := map[*model.ObjectMeta]bool{}, map[string]bool{}
	for _, px := range p.Mesh.Proxies {
		if px.Type == resolve.SidecarProxy && px.Object != nil {
			meshed[px.Object] = true
		}
	}
	for _, sc := range p.Mesh.Scopes {
		for _, px := range sc.Proxies {
			// A declared Namespace says whether it is injected; one the
			// input does not declare may be labelled in the cluster.
			if n := p.Mesh.Hierarchy.Namespaces[px.Namespace]; px.StandIn && n != nil && n.Object == nil && !n.Synthesized {
				standIn[px.Namespace] = true
			}
		}
	}
	for _, o := range p.Mesh.Objects {
		var meta *model.ObjectMeta
		var labels, annotations map[string]string
		var spec *corev1.PodSpec
		switch x := o.(type) {
		case *model.Pod:
			meta, labels, annotations, spec = &x.ObjectMeta, x.Labels, x.Annotations, &x.Spec
		case *model.Workload:
			meta, labels, annotations, spec = &x.ObjectMeta, x.Template.Labels, x.Template.Annotations, &x.Template.Spec
		default:
			continue
		}
		// In a namespace whose proxies the input does not show and whose
		// labels it does not give, a workload that does not opt out is
		// taken to be injected; a
		// gateway's proxy is its main container, run as that user.
		optOut := func() bool {
			return labels["sidecar.istio.io/inject"] == "false" || annotations["sidecar.istio.io/inject"] == "false"
		}
		if meta.InheritedFrom != nil || looksLikeGateway(annotations, labels) || !(meshed[meta] || (standIn[meta.Namespace] && !optOut())) {
			continue
		}
		podUID := int64(-1)
		if sc := spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
			podUID = *sc.RunAsUser
		}
		for i, c := range spec.Containers {
			if c.Name == "istio-proxy" {
				continue
			}
			// The path is built for a finding only.
			uid, at := podUID, func() model.Path { return podPath(meta).Key("securityContext").Key("runAsUser") }
			if sc := c.SecurityContext; sc != nil && sc.RunAsUser != nil {
				uid, at = *sc.RunAsUser, func() model.Path {
					return podPath(meta).Key("containers").Index(i).Key("securityContext").Key("runAsUser")
				}
			}
			if uid == proxyUID {
				p.Report(meta, at(), diag.RunsAsProxyUID, meta.Kind, objName(meta), c.Name, proxyUID)
			}
		}
	}
}}

// podPath is where a Pod's or workload template's pod spec is.
func podPath(m *model.ObjectMeta) model.Path {
	if m.Kind == "Pod" {
		return model.Path{}.Key("spec")
	}
	return model.ParsePath("spec.template.spec")
}
