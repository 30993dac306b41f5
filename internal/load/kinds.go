package load

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/suggest"
)

// kindInfo says how to decode one kind.
type kindInfo struct {
	versions      []string
	clusterScoped bool
	// invalid reports spec problems: InvalidObject for Kubernetes kinds,
	// SchemaViolation for Istio and HNC custom resources.
	invalid *diag.Entry
	// validName checks metadata.name; nil means DNS-1123 subdomain.
	validName func(string) []string
	// fixedName is the only name the CRD allows ("" for any).
	fixedName string
	decode    decodeFunc
}

// decodeFunc decodes one object of a kind from its JSON value.
type decodeFunc func(d *decoder, meta model.ObjectMeta, raw map[string]any) (model.Object, []fieldError)

// lookupKind returns how to decode (group, kind), if meshc models it.
func lookupKind(group, kind string) (kindInfo, bool) {
	v1 := []string{"v1"}
	istioNet := []string{"v1", "v1beta1", "v1alpha3"}
	istioSec := []string{"v1", "v1beta1"}
	switch group {
	case model.GroupCore:
		switch kind {
		case "Namespace":
			return kindInfo{versions: v1, clusterScoped: true, invalid: diag.InvalidObject, validName: validation.IsDNS1123Label,
				decode: decodeK8s(func(m model.ObjectMeta, _ *corev1.Namespace) model.Object { return &model.Namespace{ObjectMeta: m} })}, true
		case "Service":
			return kindInfo{versions: v1, invalid: diag.InvalidObject, validName: validation.IsDNS1035Label,
				decode: decodeK8s(func(m model.ObjectMeta, s *corev1.Service) model.Object {
					return &model.Service{ObjectMeta: m, Spec: s.Spec}
				})}, true
		case "Pod":
			return kindInfo{versions: v1, invalid: diag.InvalidObject, decode: decodeK8s(newPod)}, true
		case "ConfigMap":
			return kindInfo{versions: v1, invalid: diag.InvalidObject,
				decode: decodeK8s(func(m model.ObjectMeta, c *corev1.ConfigMap) model.Object {
					return &model.ConfigMap{ObjectMeta: m, Data: c.Data}
				})}, true
		}
	case model.GroupApps:
		switch kind {
		case "Deployment":
			return workloadKind(func(o *appsv1.Deployment) corev1.PodTemplateSpec { return o.Spec.Template }), true
		case "StatefulSet":
			return workloadKind(func(o *appsv1.StatefulSet) corev1.PodTemplateSpec { return o.Spec.Template }), true
		case "DaemonSet":
			return workloadKind(func(o *appsv1.DaemonSet) corev1.PodTemplateSpec { return o.Spec.Template }), true
		case "ReplicaSet":
			return workloadKind(func(o *appsv1.ReplicaSet) corev1.PodTemplateSpec { return o.Spec.Template }), true
		}
	case model.GroupBatch:
		if kind == "Job" {
			return workloadKind(func(o *batchv1.Job) corev1.PodTemplateSpec { return o.Spec.Template }), true
		}
	case model.GroupNetworking:
		switch kind {
		case "VirtualService":
			return istioKind(istioNet, decodeIstio(func() *networking.VirtualService { return &networking.VirtualService{} })), true
		case "DestinationRule":
			return istioKind(istioNet, decodeIstio(func() *networking.DestinationRule { return &networking.DestinationRule{} })), true
		case "Gateway":
			return istioKind(istioNet, decodeIstio(func() *networking.Gateway { return &networking.Gateway{} })), true
		case "ServiceEntry":
			return istioKind(istioNet, decodeIstio(func() *networking.ServiceEntry { return &networking.ServiceEntry{} })), true
		case "Sidecar":
			return istioKind(istioNet, decodeIstio(func() *networking.Sidecar { return &networking.Sidecar{} })), true
		case "WorkloadEntry":
			return istioKind(istioNet, decodeIstio(func() *networking.WorkloadEntry { return &networking.WorkloadEntry{} })), true
		}
	case model.GroupSecurity:
		switch kind {
		case "PeerAuthentication":
			return istioKind(istioSec, decodeIstio(func() *security.PeerAuthentication { return &security.PeerAuthentication{} })), true
		case "AuthorizationPolicy":
			return istioKind(istioSec, decodeIstio(func() *security.AuthorizationPolicy { return &security.AuthorizationPolicy{} })), true
		}
	case model.GroupHNC:
		hnc := []string{"v1alpha2"}
		switch kind {
		case "HierarchyConfiguration":
			return kindInfo{versions: hnc, invalid: diag.SchemaViolation, fixedName: "hierarchy",
				decode: decodeHNC(func(m model.ObjectMeta, s model.HierarchySpec) model.Object {
					return &model.HierarchyConfiguration{ObjectMeta: m, Spec: s}
				})}, true
		case "SubnamespaceAnchor":
			// The anchor's name becomes a namespace name.
			return kindInfo{versions: hnc, invalid: diag.SchemaViolation, validName: validation.IsDNS1123Label,
				decode: decodeHNC(func(m model.ObjectMeta, s model.AnchorSpec) model.Object {
					return &model.SubnamespaceAnchor{ObjectMeta: m, Spec: s}
				})}, true
		case "HNCConfiguration":
			return kindInfo{versions: hnc, clusterScoped: true, invalid: diag.SchemaViolation, fixedName: "config",
				decode: decodeHNC(func(m model.ObjectMeta, s model.HNCConfigSpec) model.Object {
					return &model.HNCConfiguration{ObjectMeta: m, Spec: s}
				})}, true
		}
	}
	return kindInfo{}, false
}

func (k kindInfo) serves(version string) bool { return slices.Contains(k.versions, version) }

func workloadKind[T any](template func(*T) corev1.PodTemplateSpec) kindInfo {
	return kindInfo{versions: []string{"v1"}, invalid: diag.InvalidObject,
		decode: decodeK8s(func(m model.ObjectMeta, o *T) model.Object {
			return &model.Workload{ObjectMeta: m, Template: template(o)}
		})}
}

func istioKind(versions []string, decode decodeFunc) kindInfo {
	return kindInfo{versions: versions, invalid: diag.SchemaViolation, decode: decode}
}

func newPod(m model.ObjectMeta, p *corev1.Pod) model.Object {
	var ips []string
	for _, ip := range p.Status.PodIPs {
		if ip.IP != "" {
			ips = append(ips, ip.IP)
		}
	}
	if len(ips) == 0 && p.Status.PodIP != "" {
		ips = []string{p.Status.PodIP}
	}
	return &model.Pod{ObjectMeta: m, Spec: p.Spec, IPs: ips}
}

// decodeK8s decodes a Kubernetes kind: a type check for exact paths, then
// the API server's case-sensitive decoder. Unknown fields are ignored.
func decodeK8s[T any](build func(model.ObjectMeta, *T) model.Object) decodeFunc {
	return func(d *decoder, meta model.ObjectMeta, raw map[string]any) (model.Object, []fieldError) {
		var errs []fieldError
		obj := new(T)
		d.schema.decode(reflect.ValueOf(obj).Elem(), raw, nil, false, &errs)
		if len(errs) > 0 {
			return nil, errs
		}
		return build(meta, obj), nil
	}
}

// customResourceFields are the top-level fields a custom resource may have;
// the API server prunes or, with strict validation, rejects others.
func checkTopLevel(raw map[string]any) []fieldError {
	fields := []string{"apiVersion", "kind", "metadata", "spec", "status"}
	var errs []fieldError
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(fields, k) {
			errs = append(errs, fieldError{Path: model.Path{}.Key(k), Msg: fmt.Sprintf("unknown field %q", k) + suggest.DidYouMean(k, fields)})
		}
	}
	return errs
}

// decodeIstio decodes an Istio kind strictly into its istio.io/api message.
func decodeIstio[T proto.Message](newSpec func() T) decodeFunc {
	return func(_ *decoder, meta model.ObjectMeta, raw map[string]any) (model.Object, []fieldError) {
		spec := newSpec()
		errs := checkTopLevel(raw)
		decodeProto(spec.ProtoReflect(), raw["spec"], model.Path{}.Key("spec"), &errs)
		if len(errs) > 0 {
			return nil, errs
		}
		return &model.Config[T]{ObjectMeta: meta, Spec: spec}, nil
	}
}

// decodeHNC decodes an HNC kind's spec strictly into meshc's struct.
func decodeHNC[S any](build func(model.ObjectMeta, S) model.Object) decodeFunc {
	return func(d *decoder, meta model.ObjectMeta, raw map[string]any) (model.Object, []fieldError) {
		errs := checkTopLevel(raw)
		var spec S
		d.schema.decode(reflect.ValueOf(&spec).Elem(), raw["spec"], model.Path{}.Key("spec"), true, &errs)
		if len(errs) > 0 {
			return nil, errs
		}
		if c, ok := any(spec).(model.HNCConfigSpec); ok {
			errs = checkSyncModes(c)
		}
		if len(errs) > 0 {
			return nil, errs
		}
		return build(meta, spec), nil
	}
}

// checkSyncModes applies the HNCConfiguration CRD's enum on modes.
func checkSyncModes(c model.HNCConfigSpec) []fieldError {
	var errs []fieldError
	modes := []string{"Propagate", "AllowPropagate", "Remove", "Ignore"}
	for i, r := range c.Resources {
		if r.Mode != "" && !slices.Contains(modes, r.Mode) {
			errs = append(errs, fieldError{Path: model.Path{}.Key("spec").Key("resources").Index(i).Key("mode"), Msg: fmt.Sprintf("invalid value %q, want one of %s", r.Mode, strings.Join(modes, ", "))})
		}
	}
	return errs
}
