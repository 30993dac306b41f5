package resolve

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
}

// ID is "namespace/name".
func (p *Proxy) ID() string { return p.Namespace + "/" + p.Name }

// excludedNamespaces never get sidecars: the injector skips them.
func excludedNamespace(ns string) bool {
	switch ns {
	case "kube-system", "kube-public", "kube-node-lease", "local-path-storage":
		return true
	}
	return false
}

// injection decides whether a pod template gets a sidecar, per the
// injector's webhook selectors and policy (docs/semantics/registry.md §1.6, default
// revision). It returns the reason, or "" when there is no sidecar.
func injection(nsLabels map[string]string, tmpl *corev1.PodTemplateSpec, ns string) string {
	podLabel, hasPodLabel := tmpl.Labels["sidecar.istio.io/inject"]
	podRev := tmpl.Labels["istio.io/rev"]
	nl, hasNL := nsLabels["istio-injection"]
	nr := nsLabels["istio.io/rev"]
	var reason string
	switch {
	case hasNL && nl == "enabled":
		if podLabel == "false" {
			return ""
		}
		reason = "namespace label istio-injection=enabled"
	case hasNL:
		return "" // any other value: no webhook matches
	case nr == "default":
		if podLabel == "false" {
			return ""
		}
		reason = "namespace label istio.io/rev=default"
	case nr != "":
		return "" // another revision: not modelled as installed
	case podLabel == "true" && podRev == "":
		reason = "pod label sidecar.istio.io/inject=true"
	case podRev == "default" && podLabel != "false":
		reason = "pod label istio.io/rev=default"
	default:
		return ""
	}
	if tmpl.Spec.HostNetwork || excludedNamespace(ns) {
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
func buildProxies(objs []model.Object, nsLabels func(string) map[string]string, gatewaySelectors []map[string]string) []*Proxy {
	var out []*Proxy
	add := func(meta *model.ObjectMeta, tmpl *corev1.PodTemplateSpec, ips []string) {
		why := injection(nsLabels(meta.Namespace), tmpl, meta.Namespace)
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
		}
		for _, c := range tmpl.Spec.Containers {
			p.ContainerPorts = append(p.ContainerPorts, c.Ports...)
		}
		if isRouter(tmpl, gatewaySelectors) {
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
