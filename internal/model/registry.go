package model

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"
	telemetry "istio.io/api/telemetry/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/meshc/meshc/internal/certcheck"
	"github.com/meshc/meshc/internal/diag"
)

// Family says how a kind's objects are decoded and which diagnostic their
// problems are.
type Family int

const (
	// Kubernetes kinds are built-in API types: fields are type-checked,
	// unknown fields dropped with a warning (UnknownField), other
	// problems InvalidObject.
	Kubernetes Family = iota
	// Istio kinds decode strictly into their istio.io/api message.
	Istio
	// HNC kinds decode strictly into meshc's spec structs.
	HNC
	// GatewayAPI kinds decode strictly into their sigs.k8s.io/gateway-api
	// spec types.
	GatewayAPI
	// Install kinds (IstioOperator) decode strictly into meshc's spec
	// struct, the parts meshc does not read kept as written.
	Install
)

// Invalid is the diagnostic for an object of the family that cannot be
// decoded: what the API server reports for a built-in type, or what a
// custom resource's schema rejects.
func (f Family) Invalid() *diag.Entry {
	if f == Kubernetes {
		return diag.InvalidObject
	}
	return diag.SchemaViolation
}

// Kind is everything meshc knows about one kind: how to name it, whether
// and how it is decoded, and what it means for the mesh. Every pass reads
// kinds from here.
type Kind struct {
	Group, Kind string
	// Versions are the served versions, the preferred one first.
	Versions []string
	// Plural and Singular are the resource names (kubectl, HNC's
	// HNCConfiguration).
	Plural, Singular string
	ClusterScoped    bool
	Family           Family
	// New returns the value an object is decoded into: the Kubernetes API
	// type, the Istio spec message or the HNC spec struct, as a pointer.
	// Nil for a kind meshc knows by name only; its objects load as
	// Unknown.
	New func() any
	// Build makes the Object passes read from New's decoded value.
	Build func(ObjectMeta, any) Object
	// ValidName checks metadata.name; nil means a DNS-1123 subdomain.
	ValidName func(string) []string
	// FixedName is the only name the CRD admits ("" for any).
	FixedName string
	// NameOptional marks a kind whose objects may be nameless, as
	// istioctl install takes an IstioOperator without a name.
	NameOptional bool
	// Reads says what meshc takes from the kind, for the README's table;
	// empty for kinds known by name only.
	Reads string
	// Untranslated, for a policy istiod builds into proxies and meshc does
	// not, says what the proxies' configs lack (MC8003); SelectorPath is
	// where its workload selector's labels are in the spec.
	Untranslated string
	SelectorPath []string
	// Local marks a tool's own configuration (kustomization.yaml), which
	// is never applied to a cluster: documents of it are passed over.
	Local bool
	// Effect, for a kind that changes what istiod computes but meshc does
	// not model, says what the results miss; UnknownKind names it once.
	// A kind known by name with neither Effect nor Untranslated does not
	// touch the mesh, and its objects load quietly.
	Effect string
}

// Quiet reports whether objects of the kind load without a word: known,
// not decoded, and without effect on what meshc computes.
func (k *Kind) Quiet() bool { return !k.Decoded() && k.Effect == "" && k.Untranslated == "" }

// Meaning says what meshc makes of a kind it does not decode.
func (k *Kind) Meaning() string { return cmp.Or(k.Effect, k.Untranslated) }

// Decoded reports whether meshc decodes the kind's objects into a type of
// their own.
func (k *Kind) Decoded() bool { return k.New != nil }

// Serves reports whether version is one of the kind's served versions.
func (k *Kind) Serves(version string) bool {
	for _, v := range k.Versions {
		if v == version {
			return true
		}
	}
	return false
}

// Kinds returns the registry: every kind meshc knows, grouped by API group.
// Callers must not modify the entries.
func Kinds() []*Kind { return registry() }

// LookupKind finds a kind by group and kind name.
func LookupKind(group, kind string) (*Kind, bool) {
	k, ok := registryIndex()[[2]string{group, kind}]
	return k, ok
}

var registry = sync.OnceValue(func() []*Kind {
	v1 := []string{"v1"}
	net := []string{"v1", "v1beta1", "v1alpha3"}
	sec := []string{"v1", "v1beta1"}
	hnc := []string{"v1alpha2"}
	gwBeta := []string{"v1", "v1beta1"}
	named := func(group, kind, plural string, versions []string, clusterScoped bool) *Kind {
		return &Kind{Group: group, Kind: kind, Plural: plural, Singular: strings.ToLower(kind), Versions: versions, ClusterScoped: clusterScoped}
	}
	policy := func(group, kind, plural string, versions []string, omits string, selector ...string) *Kind {
		k := named(group, kind, plural, versions, false)
		k.Family, k.Untranslated, k.SelectorPath = Istio, omits, selector
		k.Reads = "the workloads it applies to; not built (MC8003)"
		return k
	}
	return []*Kind{
		kube("", "Namespace", "namespaces", true, validation.IsDNS1123Label,
			"labels (injection, discovery selectors, HNC tree labels), hierarchy",
			func(m ObjectMeta, _ *corev1.Namespace) Object { return &Namespace{ObjectMeta: m} }),
		kube("", "Service", "services", false, validation.IsDNS1035Label,
			"ports, selector, cluster IP, ExternalName, exportTo annotation",
			func(m ObjectMeta, s *corev1.Service) Object { return &Service{ObjectMeta: m, Spec: s.Spec} }),
		kube("", "Pod", "pods", false, nil,
			"proxies and endpoints: labels, annotations, container ports, IPs", newPod),
		kube("", "ConfigMap", "configmaps", false, nil,
			"`istio-system/istio`, key `mesh`: the mesh config",
			func(m ObjectMeta, c *corev1.ConfigMap) Object { return &ConfigMap{ObjectMeta: m, Data: c.Data} }),
		kube("", "Secret", "secrets", false, nil, "type, data key names and a verdict on the certificates they hold, never values: gateway credentials", newSecret),
		named("", "ServiceAccount", "serviceaccounts", v1, false),
		named("", "LimitRange", "limitranges", v1, false),
		named("", "ResourceQuota", "resourcequotas", v1, false),
		named("", "Node", "nodes", v1, true),
		named("", "PersistentVolume", "persistentvolumes", v1, true),
		named("", "PersistentVolumeClaim", "persistentvolumeclaims", v1, false),
		named("", "ReplicationController", "replicationcontrollers", v1, false),
		effect(named("", "Endpoints", "endpoints", v1, false), "endpoints are taken from the Pods and workloads Services select, not from Endpoints objects"),
		effect(named("discovery.k8s.io", "EndpointSlice", "endpointslices", v1, false), "endpoints are taken from the Pods and workloads Services select, not from EndpointSlices"),
		workload(GroupApps, "Deployment", "deployments", func(o *appsv1.Deployment) corev1.PodTemplateSpec { return o.Spec.Template }),
		workload(GroupApps, "StatefulSet", "statefulsets", func(o *appsv1.StatefulSet) corev1.PodTemplateSpec { return o.Spec.Template }),
		workload(GroupApps, "DaemonSet", "daemonsets", func(o *appsv1.DaemonSet) corev1.PodTemplateSpec { return o.Spec.Template }),
		workload(GroupApps, "ReplicaSet", "replicasets", func(o *appsv1.ReplicaSet) corev1.PodTemplateSpec { return o.Spec.Template }),
		workload(GroupBatch, "Job", "jobs", func(o *batchv1.Job) corev1.PodTemplateSpec { return o.Spec.Template }),
		named("rbac.authorization.k8s.io", "Role", "roles", v1, false),
		named("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", v1, false),
		named("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", v1, true),
		named("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", v1, true),
		named("networking.k8s.io", "NetworkPolicy", "networkpolicies", v1, false),
		named("networking.k8s.io", "IngressClass", "ingressclasses", v1, true),
		effect(named("networking.k8s.io", "Ingress", "ingresses", v1, false), "istiod's Kubernetes Ingress support is not modelled: no gateway routes come from it"),
		named("policy", "PodDisruptionBudget", "poddisruptionbudgets", v1, false),
		named("autoscaling", "HorizontalPodAutoscaler", "horizontalpodautoscalers", []string{"v2", "v1"}, false),
		named(GroupBatch, "CronJob", "cronjobs", v1, false),
		named("scheduling.k8s.io", "PriorityClass", "priorityclasses", v1, true),
		named("storage.k8s.io", "StorageClass", "storageclasses", v1, true),
		named("admissionregistration.k8s.io", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", v1, true),
		named("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", v1, true),
		named("apiextensions.k8s.io", "CustomResourceDefinition", "customresourcedefinitions", v1, true),
		local(named("kustomize.config.k8s.io", "Kustomization", "kustomizations", []string{"v1beta1"}, false)),
		local(named("kustomize.config.k8s.io", "Component", "components", []string{"v1alpha1"}, false)),
		named("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", v1, false),
		named("monitoring.coreos.com", "PodMonitor", "podmonitors", v1, false),
		named("monitoring.coreos.com", "PrometheusRule", "prometheusrules", v1, false),
		named("cert-manager.io", "Certificate", "certificates", v1, false),
		named("cert-manager.io", "Issuer", "issuers", v1, false),
		named("cert-manager.io", "ClusterIssuer", "clusterissuers", v1, true),
		istio(GroupNetworking, "VirtualService", "virtualservices", net, "routes, delegation, gateway binding", func() *networking.VirtualService { return &networking.VirtualService{} }),
		istio(GroupNetworking, "DestinationRule", "destinationrules", net, "traffic policies and subsets", func() *networking.DestinationRule { return &networking.DestinationRule{} }),
		istio(GroupNetworking, "Gateway", "gateways", net, "servers of gateway proxies", func() *networking.Gateway { return &networking.Gateway{} }),
		istio(GroupNetworking, "ServiceEntry", "serviceentries", net, "mesh services and their endpoints", func() *networking.ServiceEntry { return &networking.ServiceEntry{} }),
		istio(GroupNetworking, "Sidecar", "sidecars", net, "scopes: egress hosts, ingress ports, outbound policy", func() *networking.Sidecar { return &networking.Sidecar{} }),
		istio(GroupNetworking, "WorkloadEntry", "workloadentries", net, "endpoints of services that select them", func() *networking.WorkloadEntry { return &networking.WorkloadEntry{} }),
		untranslated(istio(GroupNetworking, "EnvoyFilter", "envoyfilters", []string{"v1alpha3"}, "", func() *networking.EnvoyFilter { return &networking.EnvoyFilter{} }),
			"its patches", "workloadSelector", "labels"),
		effect(named(GroupNetworking, "ProxyConfig", "proxyconfigs", []string{"v1beta1"}, false), "its proxy settings (concurrency, image, environment) are not applied"),
		effect(named(GroupNetworking, "WorkloadGroup", "workloadgroups", net, false), "its template for auto-registered WorkloadEntries is not applied"),
		istio(GroupSecurity, "PeerAuthentication", "peerauthentications", sec, "inbound mutual TLS modes", func() *security.PeerAuthentication { return &security.PeerAuthentication{} }),
		untranslated(istio(GroupSecurity, "AuthorizationPolicy", "authorizationpolicies", sec, "", func() *security.AuthorizationPolicy { return &security.AuthorizationPolicy{} }),
			"its RBAC filters, so nothing it allows, denies or audits is enforced"),
		policy(GroupSecurity, "RequestAuthentication", "requestauthentications", sec, "its JWT authentication filter", "selector", "matchLabels"),
		untranslated(istio(GroupTelemetry, "Telemetry", "telemetries", []string{"v1", "v1alpha1"}, "", func() *telemetry.Telemetry { return &telemetry.Telemetry{} }),
			"its access log, metrics and tracing settings", "selector", "matchLabels"),
		policy("extensions.istio.io", "WasmPlugin", "wasmplugins", []string{"v1alpha1"}, "its Wasm filter", "selector", "matchLabels"),
		gatewayAPI[gwv1.GatewayClassSpec]("GatewayClass", "gatewayclasses", gwBeta, true, "the controller that compiles a class's Gateways"),
		gatewayAPI[gwv1.GatewaySpec]("Gateway", "gateways", gwBeta, false, "gateway proxies: listeners, addresses, infrastructure"),
		gatewayAPI[gwv1.ListenerSetSpec]("ListenerSet", "listenersets", v1, false, "listeners added to a Gateway"),
		gatewayAPI[gwv1.HTTPRouteSpec]("HTTPRoute", "httproutes", gwBeta, false, "HTTP routes of gateways and (GAMMA) of Services"),
		gatewayAPI[gwv1.GRPCRouteSpec]("GRPCRoute", "grpcroutes", v1, false, "gRPC routes of gateways and (GAMMA) of Services"),
		gatewayAPI[gwv1.TCPRouteSpec]("TCPRoute", "tcproutes", []string{"v1", "v1alpha2"}, false, "TCP routes of gateway listeners and (GAMMA) of Services"),
		gatewayAPI[gwv1.TLSRouteSpec]("TLSRoute", "tlsroutes", []string{"v1", "v1alpha3", "v1alpha2"}, false, "SNI routes of gateway listeners and (GAMMA) of Services"),
		gatewayAPI[gwv1.ReferenceGrantSpec]("ReferenceGrant", "referencegrants", gwBeta, false, "which cross-namespace references routes and gateways may make"),
		gatewayAPI[gwv1.BackendTLSPolicySpec]("BackendTLSPolicy", "backendtlspolicies", []string{"v1", "v1alpha3"}, false, "TLS from gateways to backends"),
		inGroup(gatewayAPI[gwxv1a1.BackendTrafficPolicySpec]("XBackendTrafficPolicy", "xbackendtrafficpolicies", []string{"v1alpha1"}, false,
			"retry budgets of Services, with --alpha-gateway-api (istiod's PILOT_ENABLE_ALPHA_GATEWAY_API)"), GroupGatewayAPIX),
		{Group: GroupInstall, Kind: "IstioOperator", Plural: "istiooperators", Singular: "istiooperator", Versions: []string{"v1alpha1"},
			Family: Install, NameOptional: true, Reads: "`spec.meshConfig`, `spec.values`: the mesh config, when no ConfigMap gives it",
			New:   func() any { return new(IstioOperatorSpec) },
			Build: func(m ObjectMeta, v any) Object { return &IstioOperator{ObjectMeta: m, Spec: *v.(*IstioOperatorSpec)} }},
		hncKind("HierarchyConfiguration", "hierarchyconfigurations", hnc, false, "hierarchy", nil, "a namespace's parent",
			func(m ObjectMeta, s *HierarchySpec) Object { return &HierarchyConfiguration{ObjectMeta: m, Spec: *s} }),
		// The anchor's name becomes a namespace name.
		hncKind("SubnamespaceAnchor", "subnamespaceanchors", hnc, false, "", validation.IsDNS1123Label, "a subnamespace of its namespace",
			func(m ObjectMeta, s *AnchorSpec) Object { return &SubnamespaceAnchor{ObjectMeta: m, Spec: *s} }),
		hncKind("HNCConfiguration", "hncconfigurations", hnc, true, "config", nil, "which types propagate",
			func(m ObjectMeta, s *HNCConfigSpec) Object { return &HNCConfiguration{ObjectMeta: m, Spec: *s} }),
	}
})

// effect marks a kind meshc does not model although it changes what
// istiod computes.
func effect(k *Kind, what string) *Kind {
	k.Effect = what
	return k
}

// inGroup moves a kind to another API group.
func inGroup(k *Kind, group string) *Kind {
	k.Group = group
	return k
}

// local marks a tool's own configuration kind.
func local(k *Kind) *Kind {
	k.Local = true
	return k
}

// gatewayAPI is a Kubernetes Gateway API kind, decoded strictly into its
// sigs.k8s.io/gateway-api spec type.
func gatewayAPI[S any](kind, plural string, versions []string, clusterScoped bool, reads string) *Kind {
	return &Kind{Group: GroupGatewayAPI, Kind: kind, Plural: plural, Singular: strings.ToLower(kind), Versions: versions,
		ClusterScoped: clusterScoped, Family: GatewayAPI, Reads: reads,
		New:   func() any { return new(S) },
		Build: func(m ObjectMeta, v any) Object { return &GatewayAPIObject[S]{ObjectMeta: m, Spec: *v.(*S)} },
	}
}

var registryIndex = sync.OnceValue(func() map[[2]string]*Kind {
	out := map[[2]string]*Kind{}
	for _, k := range registry() {
		out[[2]string{k.Group, k.Kind}] = k
	}
	return out
})

// kube is a decoded Kubernetes kind served at v1.
func kube[T any](group, kind, plural string, clusterScoped bool, validName func(string) []string, reads string, build func(ObjectMeta, *T) Object) *Kind {
	return &Kind{Group: group, Kind: kind, Plural: plural, Singular: strings.ToLower(kind), Versions: []string{"v1"},
		ClusterScoped: clusterScoped, Family: Kubernetes, ValidName: validName, Reads: reads,
		New:   func() any { return new(T) },
		Build: func(m ObjectMeta, v any) Object { return build(m, v.(*T)) },
	}
}

// workload is a workload template kind: one proxy named after it.
func workload[T any](group, kind, plural string, template func(*T) corev1.PodTemplateSpec) *Kind {
	return kube(group, kind, plural, false, nil, "proxies and endpoints from the pod template",
		func(m ObjectMeta, o *T) Object { return &Workload{ObjectMeta: m, Template: template(o)} })
}

func istio[T proto.Message](group, kind, plural string, versions []string, reads string, newSpec func() T) *Kind {
	return &Kind{Group: group, Kind: kind, Plural: plural, Singular: strings.ToLower(kind), Versions: versions,
		Family: Istio, Reads: reads,
		New:   func() any { return newSpec() },
		Build: func(m ObjectMeta, v any) Object { return &Config[T]{ObjectMeta: m, Spec: v.(T)} },
	}
}

// untranslated marks a policy istiod builds into proxies and meshc does
// not; selector is where its workload selector's labels are in the spec.
func untranslated(k *Kind, omits string, selector ...string) *Kind {
	k.Untranslated, k.SelectorPath, k.Reads = omits, selector, "the workloads it applies to; not built (MC8003)"
	return k
}

func hncKind[S any](kind, plural string, versions []string, clusterScoped bool, fixedName string, validName func(string) []string, reads string, build func(ObjectMeta, *S) Object) *Kind {
	return &Kind{Group: GroupHNC, Kind: kind, Plural: plural, Singular: strings.ToLower(kind), Versions: versions,
		ClusterScoped: clusterScoped, Family: HNC, FixedName: fixedName, ValidName: validName, Reads: reads,
		New:   func() any { return new(S) },
		Build: func(m ObjectMeta, v any) Object { return build(m, v.(*S)) },
	}
}

// secretManifest is a Secret as meshc decodes it: its values stay base64
// text and are dropped once the keys are read. It has every field of the
// API type, so that an unknown one is told apart.
type secretManifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Immutable         *bool             `json:"immutable"`
	Type              string            `json:"type"`
	Data              map[string]string `json:"data"`
	StringData        map[string]string `json:"stringData"`
}

func newSecret(m ObjectMeta, s *secretManifest) Object {
	keys := slices.Concat(slices.Collect(maps.Keys(s.Data)), slices.Collect(maps.Keys(s.StringData)))
	slices.Sort(keys)
	// The values are judged here and dropped: only the verdicts stay.
	data := make(map[string][]byte, len(keys))
	for k, v := range s.Data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			b = []byte(v) // the API server refuses it; judged as the text it is
		}
		data[k] = b
	}
	for k, v := range s.StringData {
		data[k] = []byte(v) // stringData overwrites data, as the API server merges them
	}
	return &Secret{ObjectMeta: m, Type: s.Type, Keys: slices.Compact(keys), CertProblem: certcheck.KeyPair(data), CAProblem: certcheck.Root(data)}
}

func newPod(m ObjectMeta, p *corev1.Pod) Object {
	var ips []string
	for _, ip := range p.Status.PodIPs {
		if ip.IP != "" {
			ips = append(ips, ip.IP)
		}
	}
	if len(ips) == 0 && p.Status.PodIP != "" {
		ips = []string{p.Status.PodIP}
	}
	return &Pod{ObjectMeta: m, Spec: p.Spec, IPs: ips}
}

// ReadsTable is the README's "What meshc reads" table, made from the
// registry: every kind meshc decodes or reports on.
func ReadsTable() string {
	var b strings.Builder
	b.WriteString("| group | kind | versions | what meshc reads |\n| --- | --- | --- | --- |\n")
	for _, k := range registry() {
		if k.Reads == "" {
			continue
		}
		group := k.Group
		if group == "" {
			group = "core"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", group, k.Kind, strings.Join(k.Versions, ", "), k.Reads)
	}
	return b.String()
}
