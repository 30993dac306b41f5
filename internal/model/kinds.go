package model

import (
	"strings"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"
	telemetry "istio.io/api/telemetry/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// API groups meshc reads.
const (
	GroupCore       = ""
	GroupApps       = "apps"
	GroupBatch      = "batch"
	GroupNetworking = "networking.istio.io"
	GroupSecurity   = "security.istio.io"
	GroupTelemetry  = "telemetry.istio.io"
	GroupHNC        = "hnc.x-k8s.io"
	GroupInstall    = "install.istio.io"
)

// Namespace is a core/v1 Namespace. Only its metadata matters.
type Namespace struct {
	ObjectMeta
}

// Service is a core/v1 Service.
type Service struct {
	ObjectMeta
	Spec corev1.ServiceSpec
}

// Pod is a core/v1 Pod. IPs come from status.podIPs (or podIP) when the
// manifest carries them, first one primary.
type Pod struct {
	ObjectMeta
	Spec corev1.PodSpec
	IPs  []string
}

// Workload is a workload template (Deployment, StatefulSet, DaemonSet,
// ReplicaSet, Job); meshc counts it as one proxy named after the workload.
type Workload struct {
	ObjectMeta
	Template corev1.PodTemplateSpec
}

// IstioOperator is an install.istio.io IstioOperator: how istioctl
// installs a control plane. meshc reads the mesh config it renders.
type IstioOperator struct {
	ObjectMeta
	Spec IstioOperatorSpec
}

// IstioOperatorSpec is an IstioOperator's spec. The fields meshc reads are
// typed; the ones that shape only the installation are kept as written so
// that a misspelt field is still told apart.
type IstioOperatorSpec struct {
	Revision string `json:"revision,omitempty"`
	// Namespace is where the control plane is installed; empty means the
	// IstioOperator's own namespace.
	Namespace  string         `json:"namespace,omitempty"`
	MeshConfig map[string]any `json:"meshConfig,omitempty"`
	// Values are the Helm charts' values; values.meshConfig and a few
	// global values feed the mesh config as in the istiod chart.
	Values map[string]any `json:"values,omitempty"`

	Profile              string `json:"profile,omitempty"`
	InstallPackagePath   string `json:"installPackagePath,omitempty"`
	Hub                  string `json:"hub,omitempty"`
	Tag                  any    `json:"tag,omitempty"`
	CompatibilityVersion string `json:"compatibilityVersion,omitempty"`
	Components           any    `json:"components,omitempty"`
	UnvalidatedValues    any    `json:"unvalidatedValues,omitempty"`
}

// ConfigMap is a core/v1 ConfigMap; meshc reads the istio mesh config from
// one.
type ConfigMap struct {
	ObjectMeta
	Data map[string]string
}

// Secret is a core/v1 Secret, kept for its type, the names of its data
// keys (data and stringData), sorted, and istiod's verdict on the
// certificates it holds: gateway credentials are checked against them.
// meshc never keeps a Secret's values.
type Secret struct {
	ObjectMeta
	Type string
	Keys []string
	// CertProblem is why the Secret is no certificate and key a gateway
	// can serve ("" when it is one); CAProblem likewise for a CA bundle
	// (certcheck.KeyPair, certcheck.Root).
	CertProblem, CAProblem string
}

// Config is an Istio object whose spec is an istio.io/api message.
type Config[T proto.Message] struct {
	ObjectMeta
	Spec T
}

// Message is the spec as a proto message, for passes that walk any Istio
// kind's fields.
func (c *Config[T]) Message() proto.Message { return c.Spec }

// The Istio kinds meshc decodes. All served versions of a kind share one
// message type (networking v1 and v1beta1 alias v1alpha3; security v1
// aliases v1beta1; telemetry v1 aliases v1alpha1).
type (
	VirtualService      = Config[*networking.VirtualService]
	DestinationRule     = Config[*networking.DestinationRule]
	Gateway             = Config[*networking.Gateway]
	ServiceEntry        = Config[*networking.ServiceEntry]
	Sidecar             = Config[*networking.Sidecar]
	WorkloadEntry       = Config[*networking.WorkloadEntry]
	PeerAuthentication  = Config[*security.PeerAuthentication]
	AuthorizationPolicy = Config[*security.AuthorizationPolicy]
	EnvoyFilter         = Config[*networking.EnvoyFilter]
	Telemetry           = Config[*telemetry.Telemetry]
)

// AutoAllocatesAddress reports whether istiod allocates addresses to a
// ServiceEntry (PILOT_ENABLE_IP_AUTOALLOCATE, on by default): it has none
// of its own, its resolution is not NONE, and its labels do not opt out
// (docs/semantics/registry.md §1.3).
func AutoAllocatesAddress(se *networking.ServiceEntry, labels map[string]string) bool {
	return len(se.GetAddresses()) == 0 && se.GetResolution() != networking.ServiceEntry_NONE &&
		!strings.EqualFold(labels["networking.istio.io/enable-autoallocate-ip"], "false")
}

// Unknown is an object of a kind meshc does not model. It is kept for its
// identity and namespace (HNC propagates such kinds, and its namespace
// exists because it is there); Raw is the whole object as decoded JSON.
type Unknown struct {
	ObjectMeta
	Raw map[string]any
}
