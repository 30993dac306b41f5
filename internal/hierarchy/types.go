package hierarchy

import (
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Synchronization modes (hierarchy.md §1.1).
const (
	ModePropagate      = "Propagate"
	ModeAllowPropagate = "AllowPropagate"
	ModeRemove         = "Remove"
	ModeIgnore         = "Ignore"
)

// GroupKind names a type HNC can propagate.
type GroupKind struct{ Group, Kind string }

// resourceKind is one entry of meshc's built-in resource table: HNC asks
// the API server for these; offline, the table answers.
type resourceKind struct {
	group, plural, singular, kind string
}

// resourceTable lists the namespaced types meshc knows by their resource
// names (hierarchy.md §1.1a [POLICY]).
func resourceTable() []resourceKind {
	return []resourceKind{
		{"", "configmaps", "configmap", "ConfigMap"},
		{"", "secrets", "secret", "Secret"},
		{"", "serviceaccounts", "serviceaccount", "ServiceAccount"},
		{"", "services", "service", "Service"},
		{"", "limitranges", "limitrange", "LimitRange"},
		{"", "resourcequotas", "resourcequota", "ResourceQuota"},
		{"rbac.authorization.k8s.io", "roles", "role", "Role"},
		{"rbac.authorization.k8s.io", "rolebindings", "rolebinding", "RoleBinding"},
		{"networking.k8s.io", "networkpolicies", "networkpolicy", "NetworkPolicy"},
		{"policy", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget"},
		{"networking.istio.io", "virtualservices", "virtualservice", "VirtualService"},
		{"networking.istio.io", "destinationrules", "destinationrule", "DestinationRule"},
		{"networking.istio.io", "gateways", "gateway", "Gateway"},
		{"networking.istio.io", "serviceentries", "serviceentry", "ServiceEntry"},
		{"networking.istio.io", "sidecars", "sidecar", "Sidecar"},
		{"networking.istio.io", "workloadentries", "workloadentry", "WorkloadEntry"},
		{"networking.istio.io", "envoyfilters", "envoyfilter", "EnvoyFilter"},
		{"networking.istio.io", "proxyconfigs", "proxyconfig", "ProxyConfig"},
		{"security.istio.io", "authorizationpolicies", "authorizationpolicy", "AuthorizationPolicy"},
		{"security.istio.io", "peerauthentications", "peerauthentication", "PeerAuthentication"},
		{"security.istio.io", "requestauthentications", "requestauthentication", "RequestAuthentication"},
		{"telemetry.istio.io", "telemetries", "telemetry", "Telemetry"},
		{"extensions.istio.io", "wasmplugins", "wasmplugin", "WasmPlugin"},
		{"gateway.networking.k8s.io", "httproutes", "httproute", "HTTPRoute"},
		{"gateway.networking.k8s.io", "gateways", "gateway", "Gateway"},
	}
}

// enforced types always propagate (hierarchy.md §1.1).
func enforced() map[GroupKind]string {
	return map[GroupKind]string{
		{"rbac.authorization.k8s.io", "Role"}:        ModePropagate,
		{"rbac.authorization.k8s.io", "RoleBinding"}: ModePropagate,
	}
}

// typeModes resolves the HNCConfiguration into a mode per type
// (hierarchy.md §1.1a): enforced types stay Propagate, the first entry for
// a type wins, unknown or ambiguous resources are reported and ignored.
func typeModes(cfg *model.HNCConfiguration) (map[GroupKind]string, []diag.Diagnostic) {
	modes := enforced()
	if cfg == nil {
		return modes, nil
	}
	var diags []diag.Diagnostic
	seen := map[GroupKind]bool{}
	for i, r := range cfg.Spec.Resources {
		at := cfg.RefAt(model.Path{}.Key("spec").Key("resources").Index(i))
		var hits []resourceKind
		for _, k := range resourceTable() {
			name := strings.ToLower(r.Resource)
			if (r.Group == "" || r.Group == k.group) && (name == k.plural || name == k.singular) {
				hits = append(hits, k)
			}
		}
		switch {
		case len(hits) == 0:
			diags = append(diags, diag.New("MC1003", at, "HNCConfiguration resource %q (group %q) is not a namespaced type meshc knows; the entry is ignored (HNC: BadConfiguration/ResourceNotFound)", r.Resource, r.Group))
			continue
		case len(hits) > 1:
			diags = append(diags, diag.New("MC1003", at, "HNCConfiguration resource %q matches types in several groups; set its group (HNC: BadConfiguration/ResourceNotFound)", r.Resource))
			continue
		}
		gk := GroupKind{hits[0].group, hits[0].kind}
		mode := r.Mode
		if mode == "" {
			mode = ModePropagate
		}
		switch _, isEnforced := enforced()[gk]; {
		case isEnforced:
			diags = append(diags, diag.New("MC1003", at, "the sync mode of %s is enforced by HNC as Propagate and cannot be overridden", r.Resource).WithSeverity(diag.Warning))
		case seen[gk]:
			diags = append(diags, diag.New("MC1003", at, "%s is configured more than once; HNC keeps the first entry (%s)", r.Resource, modes[gk]).WithSeverity(diag.Warning))
		default:
			seen[gk] = true
			modes[gk] = mode
		}
	}
	return modes, diags
}
