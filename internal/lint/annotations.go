package lint

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"istio.io/api/annotation"
	"istio.io/api/label"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/suggest"
)

// annotationSite is one metadata block whose annotations Istio may read:
// an object's own, or a workload template's pod template.
type annotationSite struct {
	obj *model.ObjectMeta
	// kind is the resource type Istio's catalog names for the site
	// ("Pod" for a pod template); judged says whether placement is
	// checked there (kinds outside Istio's catalog are not).
	kind   string
	judged bool
	// at is the path of the metadata block in the object.
	at                  model.Path
	annotations, labels map[string]string
	// template: a workload's pod template.
	template bool
	// injectInit: a pod with the istio-init container, which the
	// injector's CNI-less mode adds.
	injectInit bool
}

// where names the site in a message: "Deployment web/api's pod template".
func (s *annotationSite) where() string {
	name := s.obj.Kind + " " + objName(s.obj)
	if s.obj.Namespace == "" {
		name = s.obj.Kind + " " + s.obj.Name
	}
	if s.template {
		return name + "'s pod template"
	}
	return name
}

// path is where annotation key sits.
func (s *annotationSite) path(key string) model.Path {
	return s.at.Key("annotations").Key(key)
}

// istioAnnotation is one annotation in an Istio domain at a site, with its
// catalog definition (nil when Istio defines none).
type istioAnnotation struct {
	site  *annotationSite
	key   string
	value string
	def   *annotation.Instance
}

// istioAnnotations lists the annotations in Istio domains of the input's
// own objects (HNC copies are their source's business), in input order
// and by key; those Istio writes itself are left out, as istioctl does.
func istioAnnotations(objs []model.Object) []istioAnnotation {
	var out []istioAnnotation
	add := func(s *annotationSite) {
		if len(s.annotations) == 0 {
			return
		}
		keys := make([]string, 0, len(s.annotations))
		for k := range s.annotations {
			if inIstioDomain(k) && !writtenByIstio[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, istioAnnotation{site: s, key: k, value: s.annotations[k], def: annotationCatalog()[k]})
		}
	}
	for _, o := range objs {
		m := o.Meta()
		if m.InheritedFrom != nil || m.Derived != nil {
			// A copy is judged at its source; what istiod generates
			// carries istiod's own annotations.
			continue
		}
		site := &annotationSite{obj: m, kind: m.Kind, at: metadataPath, annotations: m.Annotations, labels: m.Labels}
		switch x := o.(type) {
		case *model.Namespace, *model.Service:
			site.judged = true
		case *model.Pod:
			site.judged = true
			site.injectInit = slices.ContainsFunc(x.Spec.InitContainers, isIstioInit)
		case *model.Workload:
			site.judged = true
			t := x.Template
			add(site)
			site = &annotationSite{obj: m, kind: "Pod", judged: true, template: true, at: templateMetadataPath,
				annotations: t.Annotations, labels: t.Labels, injectInit: slices.ContainsFunc(t.Spec.InitContainers, isIstioInit)}
		default:
			g := m.Group()
			site.judged = g == "istio.io" || strings.HasSuffix(g, ".istio.io") || g == "gateway.networking.k8s.io" ||
				(g == "networking.k8s.io" && m.Kind == "Ingress")
		}
		add(site)
	}
	return out
}

// Where annotations and labels sit: an object's metadata, a workload's pod
// template's.
var (
	metadataPath         = model.ParsePath("metadata")
	templateMetadataPath = model.ParsePath("spec.template.metadata")
)

func isIstioInit(c corev1.Container) bool { return c.Name == "istio-init" }

// inIstioDomain: the key's prefix is istio.io or one of its subdomains.
func inIstioDomain(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	return ok && (prefix == "istio.io" || strings.HasSuffix(prefix, ".istio.io"))
}

// annotationCatalog indexes istio.io/api's annotations by name.
var annotationCatalog = sync.OnceValue(func() map[string]*annotation.Instance {
	out := map[string]*annotation.Instance{}
	for _, a := range annotation.AllResourceAnnotations() {
		out[a.Name] = a
	}
	return out
})

// labelCatalog indexes istio.io/api's labels by name.
var labelCatalog = sync.OnceValue(func() map[string]*label.Instance {
	out := map[string]*label.Instance{}
	for _, l := range label.AllResourceLabels() {
		out[l.Name] = l
	}
	return out
})

// writtenByIstio are annotations the control plane sets itself, wherever
// it finds fit; users do not choose them.
var writtenByIstio = map[string]bool{
	annotation.SidecarStatus.Name:            true,
	annotation.GatewayControllerVersion.Name: true,
	annotation.IoIstioRev.Name:               true,
}

// documentedUse are alpha annotations whose use is the recommended way:
// Istio's gateway install selects the injector's gateway template with
// inject.istio.io/templates, and galley.istio.io/analyze-suppress is how
// findings (meshc's too) are suppressed. Reporting them is only noise.
var documentedUse = map[string]bool{
	annotation.InjectTemplates.Name:       true,
	annotation.GalleyAnalyzeSuppress.Name: true,
}

// injectorDefaults are set on every injected pod when the CNI plugin does
// the redirection (no istio-init container).
var injectorDefaults = map[string]bool{
	annotation.SidecarInterceptionMode.Name:               true,
	annotation.SidecarTrafficIncludeInboundPorts.Name:     true,
	annotation.SidecarTrafficExcludeInboundPorts.Name:     true,
	annotation.SidecarTrafficIncludeOutboundIPRanges.Name: true,
}

// readUndefined are annotations istiod reads that istio.io/api does not
// define: on a Gateway API backend policy, istio.io/ignore-policy-attachment
// makes istiod pass the policy over (docs/semantics/gateway-api.md §G8).
var readUndefined = map[string]bool{
	"istio.io/ignore-policy-attachment": true,
}

// MC9001: an annotation in an Istio domain that Istio does not define.
var unknownAnnotation = &Analyzer{Entry: diag.UnknownAnnotation, Requires: []*fact{factAnnotations}, Run: func(p *Pass) {
	var names []string
	for _, a := range p.annotations() {
		if a.def != nil || readUndefined[a.key] {
			continue
		}
		hint := ""
		if l, ok := labelCatalog()[a.key]; ok {
			hint = fmt.Sprintf("; %s is a label (on %s): move it to %s", a.key, resourceList(l.Resources), a.site.at.Key("labels"))
		} else {
			if names == nil {
				names = make([]string, 0, len(annotationCatalog()))
				for n := range annotationCatalog() {
					names = append(names, n)
				}
				slices.Sort(names)
			}
			hint = suggest.DidYouMean(a.key, names)
		}
		p.Report(a.site.obj, a.site.path(a.key), diag.AnnotationUnknown,
			a.key, a.site.where(), hint)
	}
}}

// MC9002: a known Istio annotation on a kind Istio does not read it on.
var misplacedAnnotation = &Analyzer{Entry: diag.MisplacedAnnotation, Requires: []*fact{factAnnotations}, Run: func(p *Pass) {
	for _, a := range p.annotations() {
		if a.def == nil || !a.site.judged || appliesTo(a.def.Resources, a.site.kind) {
			continue
		}
		if !a.site.template && isWorkloadKind(a.site.obj) && appliesTo(a.def.Resources, "Pod") {
			p.Report(a.site.obj, a.site.path(a.key), diag.AnnotationOnWorkload,
				a.key, a.site.where())
			continue
		}
		p.Report(a.site.obj, a.site.path(a.key), diag.AnnotationOnOtherKind, a.key, a.site.where(), resourceList(a.def.Resources))
	}
}}

// MC9003: an Istio annotation with a value the injector refuses.
var invalidAnnotationValue = &Analyzer{Entry: diag.InvalidAnnotationValue, Requires: []*fact{factAnnotations}, Run: func(p *Pass) {
	for _, a := range p.annotations() {
		check := annotationChecks[a.key]
		if check == nil || !a.site.judged || a.def == nil || !appliesTo(a.def.Resources, a.site.kind) {
			continue // a misplaced one is MC9002's
		}
		if problem := check(a.value); problem != "" {
			if a.key != annotation.SidecarInject.Name {
				problem += "; the injector refuses it, so with its webhook's default failurePolicy the pod is not created"
			}
			p.Report(a.site.obj, a.site.path(a.key), diag.AnnotationValueInvalid, a.key, a.value, a.site.where(), problem)
		}
	}
	// The label of the same name, which replaces the annotation, is read
	// the same way (and first).
	inject := label.SidecarInject.Name
	for _, o := range p.Mesh.Objects {
		var labels map[string]string
		at := metadataPath
		switch x := o.(type) {
		case *model.Pod:
			labels = x.Labels
		case *model.Workload:
			labels, at = x.Template.Labels, templateMetadataPath
		}
		if v, ok := labels[inject]; ok && o.Meta().InheritedFrom == nil && injectValue(v) != "" {
			m := o.Meta()
			p.Report(m, at.Key("labels").Key(inject), diag.InjectLabelInvalid, inject, v, m.Kind, objName(m), injectValue(v))
		}
	}
}}

// injectValue checks a sidecar.istio.io/inject value.
func injectValue(v string) string {
	if v == "true" || v == "false" {
		return ""
	}
	return `the injector accepts only "true" or "false" and ignores any other value, so the namespace's default applies`
}

// MC9005: an annotation of an alpha-phase feature.
var alphaAnnotation = &Analyzer{Entry: diag.AlphaAnnotation, Requires: []*fact{factAnnotations}, Run: func(p *Pass) {
	for _, a := range p.annotations() {
		if a.def == nil || a.def.FeatureStatus != annotation.Alpha || documentedUse[a.key] {
			continue
		}
		if !appliesTo(a.def.Resources, a.site.kind) {
			continue // read nowhere here: MC9002's, or a kind Istio ignores
		}
		if a.site.kind == "Pod" && !a.site.injectInit && injectorDefaults[a.key] {
			continue
		}
		p.Report(a.site.obj, a.site.path(a.key), diag.AlphaFeatureAnnotation,
			a.key, a.site.where())
	}
}}

// deprecatedAnnotations reports MC9004 for annotations istio.io/api marks
// deprecated, at info level as istioctl does.
func deprecatedAnnotations(p *Pass) {
	for _, a := range p.annotations() {
		if a.def == nil || !a.def.Deprecated {
			continue
		}
		extra := ""
		if l, ok := labelCatalog()[a.key]; ok && !l.Deprecated {
			// Both set: the user keeps the annotation for older injectors.
			if _, both := a.site.labels[a.key]; both {
				continue
			}
			extra = fmt.Sprintf("; use the label %s instead (%s)", a.key, a.site.at.Key("labels"))
		}
		d := p.Report(a.site.obj, a.site.path(a.key), diag.DeprecatedAnnotation, a.key, a.site.where(), extra)
		d.Severity = diag.Info
	}
}

// appliesTo reports whether an annotation of these resource types is read
// on kind.
func appliesTo(types []annotation.ResourceTypes, kind string) bool {
	return slices.ContainsFunc(types, func(t annotation.ResourceTypes) bool { return t == annotation.Any || t.String() == kind })
}

// resourceList names resource types: "Pod", "Namespace, Service".
func resourceList[T fmt.Stringer](types []T) string {
	var out []string
	for _, t := range types {
		out = append(out, t.String())
	}
	return strings.Join(out, ", ")
}

func isWorkloadKind(m *model.ObjectMeta) bool {
	return m.Group() == model.GroupApps || m.Group() == model.GroupBatch
}

// annotationChecks are the injector's validations of annotation values
// (what istioctl's IST0125 runs), plus sidecar.istio.io/inject, which the
// injector reads as exactly "true" or "false". Each returns the problem, or
// "".
var annotationChecks = map[string]func(string) string{
	annotation.SidecarInject.Name: injectValue,
	annotation.SidecarInterceptionMode.Name: func(v string) string {
		if v == "REDIRECT" || v == "TPROXY" || v == "NONE" {
			return ""
		}
		return "the interception mode is REDIRECT, TPROXY or NONE"
	},
	annotation.SidecarStatusPort.Name:                         portNumber,
	annotation.SidecarStatusReadinessInitialDelaySeconds.Name: unsigned,
	annotation.SidecarStatusReadinessPeriodSeconds.Name:       unsigned,
	annotation.SidecarStatusReadinessFailureThreshold.Name:    unsigned,
	annotation.SidecarTrafficIncludeOutboundIPRanges.Name:     orStar(cidrList),
	annotation.SidecarTrafficExcludeOutboundIPRanges.Name:     cidrList,
	annotation.SidecarTrafficIncludeInboundPorts.Name:         orStar(portList),
	annotation.SidecarTrafficExcludeInboundPorts.Name:         portList,
	annotation.SidecarTrafficExcludeOutboundPorts.Name:        portList,
	annotation.PrometheusMergeMetrics.Name: func(v string) string {
		if _, err := strconv.ParseBool(v); err != nil {
			return "want a boolean (true or false)"
		}
		return ""
	},
	annotation.SidecarProxyCPU.Name:         quantity,
	annotation.SidecarProxyMemory.Name:      quantity,
	annotation.SidecarProxyCPULimit.Name:    quantity,
	annotation.SidecarProxyMemoryLimit.Name: quantity,
}

func portNumber(v string) string {
	if _, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16); err != nil {
		return fmt.Sprintf("%q is not a port number", v)
	}
	return ""
}

func portList(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	for _, port := range strings.Split(strings.TrimSpace(v), ",") {
		if problem := portNumber(port); problem != "" {
			return "want comma-separated port numbers: " + problem
		}
	}
	return ""
}

func cidrList(v string) string {
	if v == "" {
		return ""
	}
	for _, c := range strings.Split(v, ",") {
		if _, err := netip.ParsePrefix(c); err != nil {
			return fmt.Sprintf("want comma-separated CIDRs (10.0.0.0/8), with no spaces: %q is not one", c)
		}
	}
	return ""
}

// orStar also accepts "*" (all).
func orStar(check func(string) string) func(string) string {
	return func(v string) string {
		if v == "*" {
			return ""
		}
		return check(v)
	}
}

func unsigned(v string) string {
	if _, err := strconv.ParseUint(v, 10, 32); err != nil {
		return "want an unsigned number"
	}
	return ""
}

func quantity(v string) string {
	if strings.ContainsFunc(v, unicode.IsControl) {
		return "the value holds control characters"
	}
	if _, err := resource.ParseQuantity(v); err != nil {
		return "want a Kubernetes quantity (100m, 128Mi)"
	}
	return ""
}
