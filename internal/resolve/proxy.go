package resolve

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshc/meshc/internal/model"
)

// ProxyType is the Envoy role istiod gives a proxy.
type ProxyType string

const (
	SidecarProxy ProxyType = "sidecar"
	RouterProxy  ProxyType = "router"
)

// Proxy is one Envoy: an injected Pod, or a workload template counted as
// one proxy named after the workload.
type Proxy struct {
	Namespace, Name string
	// Kind is Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet or Job.
	Kind           string
	Type           ProxyType
	Labels         map[string]string
	ServiceAccount string
	IPs            []string
	// ContainerPorts are the ports the workload's containers declare.
	ContainerPorts []corev1.ContainerPort
	Object         *model.ObjectMeta
	// Injection says why the proxy has a sidecar.
	Injection string
	// StandIn marks a namespace's stand-in (see standInProxies): it is in
	// its scope's Proxies, never in Mesh.Proxies or Mesh.Views, and has no
	// Object.
	StandIn bool
	// CapturesDNS says the proxy's agent captures DNS
	// (ISTIO_META_DNS_CAPTURE), so that it uses the addresses istiod
	// allocates to ServiceEntries (capturesDNS).
	CapturesDNS bool
}

// ID is "namespace/name".
func (p *Proxy) ID() string { return p.Namespace + "/" + p.Name }

// Families says which IP families the proxy's addresses are of; both on
// a dual-stack proxy (istiod's IP mode Dual).
func (p *Proxy) Families() (has4, has6 bool) {
	for _, ip := range p.IPs {
		if a, err := netip.ParseAddr(ip); err == nil {
			has4 = has4 || a.Is4()
			has6 = has6 || !a.Is4()
		}
	}
	return has4, has6
}

// SystemNamespace reports the namespaces the sidecar injector never
// injects (kube-system, kube-public, ...); istioctl analyze leaves their
// objects out altogether.
func SystemNamespace(ns string) bool {
	switch ns {
	case "kube-system", "kube-public", "kube-node-lease", "local-path-storage":
		return true
	}
	return false
}

// Injection describes the sidecar injector as installed, which manifests
// rarely say: the namespaces injected whatever their labels, and the
// control-plane revisions whose webhooks run.
type Injection struct {
	// Namespaces are injected as if labelled istio-injection=enabled.
	Namespaces []string
	// Revisions are the installed revisions; none means "default".
	Revisions []string
}

func (in Injection) installed(rev string) bool {
	if len(in.Revisions) == 0 {
		return rev == DefaultRevision
	}
	return slices.Contains(in.Revisions, rev)
}

// DefaultRevision is the revision (or tag) whose webhook also honours
// istio-injection=enabled and sidecar.istio.io/inject=true.
const DefaultRevision = "default"

// injection decides whether a pod template gets a sidecar, per the
// injector's webhook selectors and policy (docs/semantics/registry.md
// §1.6): the default revision's webhook matches istio-injection=enabled
// namespaces and sidecar.istio.io/inject=true pods, a revision's webhook
// matches istio.io/rev=REV namespaces and pods, and only installed
// revisions run. It returns the reason, or "" when there is no sidecar.
func (in Injection) injection(nsLabels map[string]string, tmpl *corev1.PodTemplateSpec, ns string) string {
	podLabel, hasPodLabel := tmpl.Labels["sidecar.istio.io/inject"]
	podRev := tmpl.Labels["istio.io/rev"]
	nl, hasNL := nsLabels["istio-injection"]
	nr := nsLabels["istio.io/rev"]
	def := in.installed(DefaultRevision)
	var reason string
	switch {
	case slices.Contains(in.Namespaces, ns):
		if podLabel == "false" {
			return ""
		}
		reason = "--inject-namespace " + ns
	case hasNL && nl == "enabled" && def:
		if podLabel == "false" {
			return ""
		}
		reason = "namespace label istio-injection=enabled"
	case hasNL:
		return "" // any other value, or no default revision: no webhook matches
	case nr != "" && in.installed(nr):
		if podLabel == "false" {
			return ""
		}
		reason = "namespace label istio.io/rev=" + nr
	case nr != "":
		return "" // a revision that is not installed
	case podLabel == "true" && podRev == "" && def:
		reason = "pod label sidecar.istio.io/inject=true"
	case podRev != "" && in.installed(podRev) && podLabel != "false":
		reason = "pod label istio.io/rev=" + podRev
	default:
		return ""
	}
	if tmpl.Spec.HostNetwork || SystemNamespace(ns) {
		return ""
	}
	// The annotation is read only when the label is absent, and can only veto.
	if !hasPodLabel && tmpl.Annotations["sidecar.istio.io/inject"] == "false" {
		return ""
	}
	return reason
}

// buildProxies finds the proxies among pods and workload templates.
// nsLabels gives each namespace's final labels.
func buildProxies(objs []model.Object, nsLabels func(string) map[string]string, gatewaySelectors []map[string]string, in Injection, meshCapture bool) []*Proxy {
	var out []*Proxy
	add := func(meta *model.ObjectMeta, tmpl *corev1.PodTemplateSpec, ips []string) {
		why := in.injection(nsLabels(meta.Namespace), tmpl, meta.Namespace)
		deployed := meta.Derived != nil && meta.Kind == "Deployment"
		if deployed {
			// The gateway istiod deploys for a Gateway API Gateway runs
			// Envoy itself, without injection.
			gw := meta.Derived.Primary()
			why = "deployed by istiod for Gateway " + gw.Namespace + "/" + gw.Name
		}
		if why == "" {
			return
		}
		p := &Proxy{
			Namespace:      meta.Namespace,
			Name:           meta.Name,
			Kind:           meta.Kind,
			Type:           SidecarProxy,
			Labels:         tmpl.Labels,
			ServiceAccount: cmp.Or(tmpl.Spec.ServiceAccountName, "default"),
			IPs:            ips,
			Object:         meta,
			Injection:      why,
			CapturesDNS:    capturesDNS(tmpl.Annotations, meshCapture),
		}
		for _, c := range tmpl.Spec.Containers {
			p.ContainerPorts = append(p.ContainerPorts, c.Ports...)
		}
		if deployed || isRouter(tmpl, gatewaySelectors) {
			p.Type = RouterProxy
		}
		out = append(out, p)
	}
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Pod:
			add(&x.ObjectMeta, &corev1.PodTemplateSpec{ObjectMeta: podMeta(&x.ObjectMeta), Spec: x.Spec}, x.IPs)
		case *model.Workload:
			add(&x.ObjectMeta, &x.Template, nil)
		}
	}
	slices.SortFunc(out, func(a, b *Proxy) int { return strings.Compare(a.ID(), b.ID()) })
	return out
}

// capturesDNS reads ISTIO_META_DNS_CAPTURE from a pod's
// proxy.istio.io/config annotation, whose proxyMetadata istio-agent lays
// over the mesh's defaultConfig; meshCapture, the mesh's, when the
// annotation does not set it. istiod parses the value as a boolean.
func capturesDNS(annotations map[string]string, meshCapture bool) bool {
	var pc struct {
		ProxyMetadata map[string]string `json:"proxyMetadata"`
	}
	a, ok := annotations["proxy.istio.io/config"]
	if !ok || yaml.Unmarshal([]byte(a), &pc) != nil {
		return meshCapture
	}
	v, ok := pc.ProxyMetadata["ISTIO_META_DNS_CAPTURE"]
	if !ok {
		return meshCapture
	}
	b, _ := strconv.ParseBool(v)
	return b
}

func podMeta(m *model.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Labels: m.Labels, Annotations: m.Annotations}
}

// isRouter reports whether a pod runs as a gateway: injected with the
// gateway template, or selected by a Gateway resource.
func isRouter(tmpl *corev1.PodTemplateSpec, gatewaySelectors []map[string]string) bool {
	if slices.Contains(strings.Split(tmpl.Annotations["inject.istio.io/templates"], ","), "gateway") {
		return true
	}
	for _, sel := range gatewaySelectors {
		if len(sel) > 0 && LabelsMatch(sel, tmpl.Labels) {
			return true
		}
	}
	return false
}

// LabelsMatch reports whether every selector label is in labels; an empty
// selector matches everything.
func LabelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}
