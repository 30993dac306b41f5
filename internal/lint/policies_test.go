package lint

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
)

// manifest writes one object in block style, so that each annotation,
// label and spec line has a line of its own; meta and spec are indented
// YAML lines without the leading two spaces.
func manifest(apiVersion, kind, ns, name, meta, spec string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", apiVersion, kind, name)
	if ns != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", ns)
	}
	for _, l := range strings.Split(meta, "\n") {
		if l != "" {
			b.WriteString("  " + l + "\n")
		}
	}
	if spec != "" {
		b.WriteString("spec:\n")
		for _, l := range strings.Split(spec, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

func namespace(name, labels string) string {
	return manifest("v1", "Namespace", "", name, "labels: "+labels, "")
}

func pod(ns, name, meta, spec string) string {
	if spec == "" {
		spec = "containers: [{name: app, image: x}]"
	}
	return manifest("v1", "Pod", ns, name, meta, spec)
}

// workloadWith is a Deployment with its own metadata and its pod
// template's metadata (indented for the template).
func workloadWith(ns, name, meta, templateMeta string) string {
	spec := "selector: {matchLabels: {app: " + name + "}}\ntemplate:\n  metadata:\n    labels: {app: " + name + "}\n"
	for _, l := range strings.Split(templateMeta, "\n") {
		if l != "" {
			spec += "    " + l + "\n"
		}
	}
	spec += "  spec: {containers: [{name: app, image: x}]}"
	return manifest("apps/v1", "Deployment", ns, name, meta, spec)
}

func telemetry(ns, name, spec string) string {
	return manifest("telemetry.istio.io/v1", "Telemetry", ns, name, "", spec)
}

func envoyFilter(ns, name, spec string) string {
	return manifest("networking.istio.io/v1alpha3", "EnvoyFilter", ns, name, "", spec)
}

func authz(ns, name, spec string) string {
	return manifest("security.istio.io/v1", "AuthorizationPolicy", ns, name, "", spec)
}

// httpFilterPatch is an EnvoyFilter spec with one patch of an HTTP filter.
func httpFilterPatch(priority, applyTo, op, proxyVersion string) string {
	spec := ""
	if priority != "" {
		spec = "priority: " + priority + "\n"
	}
	match := "{context: SIDECAR_INBOUND, listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager}}}"
	if proxyVersion != "" {
		match = "{context: SIDECAR_INBOUND, proxy: {proxyVersion: '" + proxyVersion + "'}, listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager}}}"
	}
	return spec + "configPatches:\n- applyTo: " + applyTo + "\n  match: " + match + "}\n  patch:\n    operation: " + op + "\n    value: {name: example.lua}"
}

// TestPolicyAnalyzers: for each MC9xxx code, cases where it fires and near
// misses where it must not. line is a fragment of the line the finding
// must point at (the first line of the input holding it).
func TestPolicyAnalyzers(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		docs     []string
		want     int
		object   string
		message  string
		line     string
		proxies  string
		severity diag.Severity
	}{
		// MC9001
		{"MC9001 typo in a pod annotation", "MC9001", []string{
			pod("web", "api", "annotations:\n  sidecar.istio.io/injet: 'false'", "")},
			1, "Pod web/api", `annotation sidecar.istio.io/injet on Pod web/api is not one Istio defines, so nothing reads it (did you mean "sidecar.istio.io/inject"?)`, "injet", "", 0},
		{"MC9001 a label written as an annotation", "MC9001", []string{
			manifest("v1", "Service", "web", "api", "annotations:\n  istio.io/use-waypoint: waypoint", "ports: [{port: 80}]")},
			1, "Service web/api", "istio.io/use-waypoint is a label (on Pod, WorkloadEntry, Service, ServiceEntry, Namespace): move it to metadata.labels", "use-waypoint", "", 0},
		{"MC9001 on a pod template and an Istio object", "MC9001", []string{
			workloadWith("web", "api", "", "annotations:\n  proxy.istio.io/confg: '{}'"),
			manifest("networking.istio.io/v1", "DestinationRule", "web", "api", "annotations:\n  networking.istio.io/whatever: x", "host: api")},
			2, "Deployment web/api", "on Deployment web/api's pod template", "confg", "", 0},
		{"MC9001 near miss: known annotations, other domains", "MC9001", []string{
			pod("web", "api", "annotations:\n  proxy.istio.io/config: '{}'\n  sidecar.istio.io/status: '{}'\n  istio.example.com/x: 'on'\n  example.com/istio.io: z", "")},
			0, "", "", "", "", 0},
		{"MC9001 near miss: an annotation istiod reads that istio.io/api does not define", "MC9001", []string{
			manifest("gateway.networking.k8s.io/v1", "BackendTLSPolicy", "web", "p", "annotations:\n  istio.io/ignore-policy-attachment: 'true'",
				"targetRefs: [{group: '', kind: Service, name: api}]\nvalidation: {hostname: api.example.com, wellKnownCACertificates: System}")},
			0, "", "", "", "", 0},
		// MC9002
		{"MC9002 pod annotation on a Deployment's own metadata", "MC9002", []string{
			workloadWith("web", "api", "annotations:\n  sidecar.istio.io/proxyCPU: 100m", "")},
			1, "Deployment web/api", "annotation sidecar.istio.io/proxyCPU on Deployment web/api has no effect: Istio reads it on Pods only, and a workload's own metadata never reaches its pods; move it to spec.template.metadata.annotations", "proxyCPU", "", 0},
		{"MC9002 service annotation on a VirtualService", "MC9002", []string{
			manifest("networking.istio.io/v1", "VirtualService", "web", "api", "annotations:\n  networking.istio.io/exportTo: '.'", "hosts: [api]")},
			1, "VirtualService web/api", "Istio reads it only on Service", "exportTo", "", 0},
		{"MC9002 near miss: in the pod template, on a Service, on a ConfigMap, written by Istio", "MC9002", []string{
			workloadWith("web", "api", "", "annotations:\n  sidecar.istio.io/proxyCPU: 100m"),
			manifest("v1", "Service", "web", "api", "annotations:\n  networking.istio.io/exportTo: '.'", "ports: [{port: 80}]"),
			manifest("v1", "ConfigMap", "web", "c", "annotations:\n  galley.istio.io/analyze-suppress: IST0102\n  sidecar.istio.io/proxyCPU: '1'", ""),
			manifest("v1", "Namespace", "", "web", "annotations:\n  istio.io/rev: canary", "")},
			0, "", "", "", "", 0},
		// MC9003
		{"MC9003 a port list with a name", "MC9003", []string{
			workloadWith("web", "api", "", "annotations:\n  traffic.sidecar.istio.io/excludeOutboundPorts: '80,http'")},
			1, "Deployment web/api", `annotation traffic.sidecar.istio.io/excludeOutboundPorts="80,http" on Deployment web/api's pod template is not valid: want comma-separated port numbers: "http" is not a port number`, "excludeOutboundPorts", "", 0},
		{"MC9003 inject is true or false", "MC9003", []string{
			pod("web", "api", "annotations:\n  sidecar.istio.io/inject: enabled", "")},
			1, "Pod web/api", `accepts only "true" or "false"`, "sidecar.istio.io/inject", "", 0},
		{"MC9003 the inject label too", "MC9003", []string{
			pod("web", "api", "labels: {app: api, sidecar.istio.io/inject: enabled}", "")},
			1, "Pod web/api", `label sidecar.istio.io/inject="enabled" on Pod web/api is not valid: the injector accepts only "true" or "false"`, "inject: enabled", "", 0},
		{"MC9003 interception mode and CIDRs", "MC9003", []string{
			pod("web", "api", "annotations:\n  sidecar.istio.io/interceptionMode: redirect\n  traffic.sidecar.istio.io/excludeOutboundIPRanges: '10.0.0.0/8, 192.168.0.0/16'", "")},
			2, "Pod web/api", "the interception mode is REDIRECT, TPROXY or NONE", "interceptionMode", "", 0},
		{"MC9003 near miss: valid values, and a misplaced one left to MC9002", "MC9003", []string{
			pod("web", "api", "annotations:\n  traffic.sidecar.istio.io/excludeOutboundPorts: '80, 443'\n  traffic.sidecar.istio.io/includeOutboundIPRanges: '*'\n  sidecar.istio.io/proxyMemory: 128Mi\n  sidecar.istio.io/interceptionMode: TPROXY\n  readiness.status.sidecar.istio.io/periodSeconds: '10'", ""),
			manifest("v1", "Namespace", "", "web", "annotations:\n  sidecar.istio.io/proxyCPU: lots", "")},
			0, "", "", "", "", 0},
		// MC9004
		{"MC9004 fault delay percent", "MC9004", []string{
			manifest("networking.istio.io/v1", "VirtualService", "web", "api", "", "hosts: [api]\nhttp:\n- fault:\n    delay:\n      percent: 50\n      fixedDelay: 1s\n  route: [{destination: {host: api}}]")},
			1, "VirtualService web/api", "VirtualService web/api uses field spec.http[0].fault.delay.percent, which Istio's API marks deprecated; use percentage", "percent: 50", "", diag.Warning},
		{"MC9004 a deprecated enum value and a field in a subset", "MC9004", []string{
			manifest("networking.istio.io/v1", "DestinationRule", "web", "api", "", "host: api\ntrafficPolicy:\n  loadBalancer: {simple: LEAST_CONN}\nsubsets:\n- name: v1\n  labels: {version: v1}\n  trafficPolicy:\n    outlierDetection: {consecutiveErrors: 3}")},
			2, "DestinationRule web/api", "DestinationRule web/api uses value LEAST_CONN at spec.trafficPolicy.loadBalancer.simple, which Istio's API marks deprecated; use LEAST_REQUEST", "LEAST_CONN", "", diag.Warning},
		{"MC9004 Sidecar egressProxy", "MC9004", []string{
			manifest("networking.istio.io/v1", "Sidecar", "web", "default", "", "outboundTrafficPolicy:\n  mode: REGISTRY_ONLY\n  egressProxy: {host: egress.example.com, port: {number: 443}}")},
			1, "Sidecar web/default", "sets outboundTrafficPolicy.egressProxy, a field Istio no longer documents and istioctl reports as deprecated (with mode REGISTRY_ONLY it is ignored already)", "egressProxy", "", diag.Warning},
		{"MC9004 deprecated annotation, at info level", "MC9004", []string{
			workloadWith("web", "api", "", "annotations:\n  sidecar.istio.io/inject: 'true'")},
			1, "Deployment web/api", "annotation sidecar.istio.io/inject on Deployment web/api's pod template is deprecated and may stop working in a later Istio release; use the label sidecar.istio.io/inject instead (spec.template.metadata.labels)", "sidecar.istio.io/inject", "", diag.Info},
		{"MC9004 a removed rbac.istio.io type", "MC9004", []string{
			manifest("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "serviceroles.rbac.istio.io", "", "group: rbac.istio.io\nnames: {kind: ServiceRole, plural: serviceroles}\nscope: Namespaced")},
			1, "CustomResourceDefinition serviceroles.rbac.istio.io", "ServiceRole.rbac.istio.io, a type Istio has removed", "group: rbac.istio.io", "", diag.Warning},
		{"MC9004 an object of a removed rbac.istio.io type", "MC9004", []string{
			manifest("rbac.istio.io/v1alpha1", "ServiceRole", "web", "reader", "", "rules: [{services: ['*'], methods: [GET]}]")},
			1, "ServiceRole web/reader", "ServiceRole web/reader is of a type Istio has removed, so nothing applies it", "", "", diag.Warning},
		{"MC9004 near miss: percentage, label next to the annotation", "MC9004", []string{
			manifest("networking.istio.io/v1", "VirtualService", "web", "api", "", "hosts: [api]\nhttp:\n- fault: {delay: {percentage: {value: 50}, fixedDelay: 1s}}\n  route: [{destination: {host: api}}]"),
			pod("web", "api", "labels: {sidecar.istio.io/inject: 'true'}\nannotations:\n  sidecar.istio.io/inject: 'true'", "")},
			0, "", "", "", "", 0},
		// MC9005
		{"MC9005 alpha Service annotation", "MC9005", []string{
			manifest("v1", "Service", "web", "api", "annotations:\n  networking.istio.io/exportTo: '.'", "ports: [{port: 80}]")},
			1, "Service web/api", "annotation networking.istio.io/exportTo on Service web/api belongs to an alpha-phase Istio feature", "exportTo", "", 0},
		{"MC9005 injector default on a pod with istio-init", "MC9005", []string{
			pod("web", "api", "annotations:\n  traffic.sidecar.istio.io/includeInboundPorts: '*'", "initContainers: [{name: istio-init, image: proxyv2}]\ncontainers: [{name: app, image: x}]")},
			1, "Pod web/api", "includeInboundPorts", "includeInboundPorts", "", 0},
		{"MC9005 near miss: beta, written by Istio, injector defaults without istio-init, gateway template, misplaced", "MC9005", []string{
			pod("web", "api", "annotations:\n  proxy.istio.io/config: '{}'\n  sidecar.istio.io/status: '{}'\n  traffic.sidecar.istio.io/includeInboundPorts: '*'\n  inject.istio.io/templates: gateway\n  galley.istio.io/analyze-suppress: IST0136", ""),
			workloadWith("web", "api", "annotations:\n  sidecar.istio.io/proxyImage: proxy", "")},
			0, "", "", "", "", 0},
		// MC9006
		{"MC9006 istio-injection and istio.io/rev", "MC9006", []string{
			namespace("web", "{istio-injection: enabled, istio.io/rev: canary}")},
			1, "Namespace web", "namespace web has several injection labels (istio-injection=enabled, istio.io/rev=canary)", "labels:", "", 0},
		{"MC9006 sidecar injection and ambient", "MC9006", []string{
			namespace("web", "{istio-injection: enabled, istio.io/dataplane-mode: ambient}")},
			1, "Namespace web", "(istio-injection=enabled, istio.io/dataplane-mode=ambient): it asks for sidecar injection and for a data plane mode at once", "labels:", "", 0},
		{"MC9006 near miss: opt-out, one label, istio-system", "MC9006", []string{
			namespace("web", "{istio-injection: disabled, istio.io/rev: canary}"),
			namespace("db", "{istio.io/rev: canary}"),
			namespace("istio-system", "{istio-injection: enabled, istio.io/rev: canary}")},
			0, "", "", "", "", 0},
		// MC9007
		{"MC9007 two Telemetries select one workload", "MC9007", []string{
			ns("web"), deployment("web", "api-v1", "{app: api, version: v1}"), deployment("web", "api-v2", "{app: api, version: v2}"),
			telemetry("web", "by-app", "selector: {matchLabels: {app: api}}"),
			telemetry("web", "by-version", "selector: {matchLabels: {version: v1}}")},
			1, "Telemetry web/by-version", "Telemetries by-app, by-version in namespace web all select workload web/api-v1; istiod applies one of them", "matchLabels: {version: v1}", "web/api-v1", 0},
		{"MC9007 near miss: disjoint selectors, another namespace, no selector, a targetRef", "MC9007", []string{
			ns("web"), ns("db"), deployment("web", "api-v1", "{app: api, version: v1}"), deployment("db", "api", "{app: api, version: v1}"),
			telemetry("web", "by-app", "selector: {matchLabels: {app: api}}"),
			telemetry("web", "other", "selector: {matchLabels: {app: other}}"),
			telemetry("db", "by-version", "selector: {matchLabels: {version: v1}}"),
			telemetry("web", "default", "{}"),
			telemetry("web", "by-ref", "selector: {matchLabels: {app: api}}\ntargetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: edge}]")},
			0, "", "", "", "", 0},
		// MC9008
		{"MC9008 two namespace defaults", "MC9008", []string{
			telemetry("web", "logs", "accessLogging: [{providers: [{name: envoy}]}]"),
			telemetry("web", "traces", "tracing: [{randomSamplingPercentage: 10}]")},
			1, "Telemetry web/traces", "Telemetries logs, traces have neither selector nor targetRef, so each claims to be the default of namespace web", "", "", 0},
		{"MC9008 near miss: selector, targetRef, other namespace", "MC9008", []string{
			telemetry("web", "logs", "accessLogging: [{providers: [{name: envoy}]}]"),
			telemetry("web", "api", "selector: {matchLabels: {app: api}}"),
			telemetry("web", "gw", "targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: edge}]"),
			telemetry("db", "logs", "{}")},
			0, "", "", "", "", 0},
		// MC9009
		{"MC9009 relative operation without priority", "MC9009", []string{
			envoyFilter("web", "lua", httpFilterPatch("", "HTTP_FILTER", "INSERT_BEFORE", ""))},
			1, "EnvoyFilter web/lua", "EnvoyFilter web/lua, configPatches[0]: INSERT_BEFORE is relative to an element other EnvoyFilters may add, move or remove, and the EnvoyFilter has no priority", "operation: INSERT_BEFORE", "", 0},
		{"MC9009 relative operation and proxy versions", "MC9009", []string{
			envoyFilter("web", "lua", httpFilterPatch("", "HTTP_FILTER", "REPLACE", "")),
			envoyFilter("web", "lua-old", httpFilterPatch("5", "HTTP_FILTER", "MERGE", "^1\\.2.*"))},
			1, "EnvoyFilter web/lua", "REPLACE is relative to filter example.lua and the EnvoyFilter has no priority; patches matching a proxy version", "operation: REPLACE", "", 0},
		{"MC9009 ADD on a route configuration, REPLACE on a cluster", "MC9009", []string{
			envoyFilter("web", "routes", "priority: 1\nconfigPatches:\n- applyTo: ROUTE_CONFIGURATION\n  match: {context: SIDECAR_OUTBOUND}\n  patch: {operation: ADD, value: {name: r}}\n- applyTo: CLUSTER\n  match: {context: SIDECAR_OUTBOUND}\n  patch: {operation: REPLACE, value: {name: c}}")},
			2, "EnvoyFilter web/routes", "EnvoyFilter web/routes, configPatches[0]: istiod ignores ADD on ROUTE_CONFIGURATION; it applies only MERGE, MERGE_AND_REPLACE_LIST there", "operation: ADD", "", 0},
		{"MC9009 near miss: priority, absolute operations, ADD on HTTP_ROUTE and REPLACE on LISTENER_FILTER (istiod applies them)", "MC9009", []string{
			envoyFilter("web", "lua", httpFilterPatch("10", "HTTP_FILTER", "INSERT_BEFORE", "")),
			envoyFilter("web", "first", httpFilterPatch("", "HTTP_FILTER", "INSERT_FIRST", "")),
			envoyFilter("web", "merge", httpFilterPatch("", "CLUSTER", "MERGE", "")),
			envoyFilter("web", "empty", "configPatches: [{applyTo: CLUSTER}]"),
			envoyFilter("web", "routes", "priority: 1\nconfigPatches:\n- applyTo: HTTP_ROUTE\n  match: {context: SIDECAR_OUTBOUND}\n  patch: {operation: ADD, value: {name: r}}\n- applyTo: LISTENER_FILTER\n  match: {context: SIDECAR_INBOUND}\n  patch: {operation: REPLACE, value: {name: envoy.filters.listener.tls_inspector}}")},
			0, "", "", "", "", 0},
		// MC9010
		{"MC9010 a misspelt source namespace", "MC9010", []string{
			namespace("web", "{}"), namespace("frontend", "{}"),
			authz("web", "allow-frontend", "action: ALLOW\nrules:\n- from:\n  - source:\n      namespaces: [frontend, fronend]")},
			1, "AuthorizationPolicy web/allow-frontend", `web/allow-frontend names source namespace "fronend" in namespaces, but the input has no such namespace, so the ALLOW rule matches no request from it`, "fronend", "", 0},
		{"MC9010 notNamespaces", "MC9010", []string{
			namespace("web", "{}"),
			authz("web", "deny", "action: DENY\nrules:\n- from:\n  - source:\n      notNamespaces: [web, gone]")},
			1, "AuthorizationPolicy web/deny", "the exclusion excludes nothing", "notNamespaces", "", 0},
		{"MC9010 a pattern no namespace matches", "MC9010", []string{
			namespace("web", "{}"), namespace("team-a", "{}"),
			authz("web", "allow", "rules:\n- from:\n  - source:\n      namespaces: ['team-*', '*-bogus', '*']")},
			1, "AuthorizationPolicy web/allow", `web/allow names source namespaces "*-bogus" in namespaces, but no namespace of the input matches the pattern`, "*-bogus", "", 0},
		{"MC9010 near miss: patterns, implied and built-in namespaces", "MC9010", []string{
			namespace("web", "{}"), service("db", "pg"), namespace("team-a", "{}"),
			authz("web", "allow", "rules:\n- from:\n  - source:\n      namespaces: ['team-*', '*-system', 'kube-*', '*', db, istio-system, kube-system, web]")},
			0, "", "", "", "", 0},
		// MC9011
		{"MC9011 an injected pod's container runs as the proxy's user", "MC9011", []string{
			namespace("web", "{istio-injection: enabled}"),
			pod("web", "api", "", "containers: [{name: app, image: x, securityContext: {runAsUser: 1337}}, {name: helper, image: z}]")},
			1, "Pod web/api", "Pod web/api: container app runs as user 1337, the sidecar proxy's, so its outbound connections bypass the proxy", "runAsUser: 1337", "", 0},
		{"MC9011 the pod's user, and a namespace whose injection the input does not show", "MC9011", []string{
			pod("shop", "api", "", "securityContext: {runAsUser: 1337}\ncontainers: [{name: app, image: x}, {name: other, image: z, securityContext: {runAsUser: 1000}}]")},
			1, "Pod shop/api", "container app runs as user 1337", "securityContext: {runAsUser: 1337}", "", 0},
		{"MC9011 in namespace default, which every cluster has", "MC9011", []string{
			pod("default", "api", "", "containers: [{name: app, image: x, securityContext: {runAsUser: 1337}}]")},
			1, "Pod default/api", "container app runs as user 1337", "runAsUser: 1337", "", 0},
		{"MC9011 near miss: a namespace the input declares without an injection label", "MC9011", []string{
			namespace("shop", "{}"),
			pod("shop", "api", "", "securityContext: {runAsUser: 1337}\ncontainers: [{name: app, image: x}]")},
			0, "", "", "", "", 0},
		{"MC9011 near miss: not injected, opted out, a gateway, the proxy itself", "MC9011", []string{
			namespace("plain", "{}"), namespace("web", "{istio-injection: enabled}"),
			pod("plain", "api", "", "containers: [{name: app, image: x, securityContext: {runAsUser: 1337}}]"),
			pod("web", "batch", "labels: {sidecar.istio.io/inject: 'false'}", "containers: [{name: app, image: x, securityContext: {runAsUser: 1337}}]"),
			pod("web", "gw", "labels: {istio: ingressgateway}", "containers: [{name: istio-proxy, image: auto, securityContext: {runAsUser: 1337}}]"),
			pod("web", "app", "", "containers: [{name: app, image: x}, {name: istio-proxy, image: auto, securityContext: {runAsUser: 1337}}]")},
			0, "", "", "", "", 0},
		{"MC9010 near miss: no Namespace objects in the input", "MC9010", []string{
			authz("web", "allow", "rules:\n- from:\n  - source:\n      namespaces: [nowhere]")},
			0, "", "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := firstOf(t, tt.code, tt.want, tt.docs)
			if !ok {
				return
			}
			if d.Object.String() != tt.object {
				t.Errorf("object %s, want %s", d.Object, tt.object)
			}
			if !strings.Contains(d.Message, tt.message) {
				t.Errorf("message %q\nwant it to contain %q", d.Message, tt.message)
			}
			if tt.line != "" {
				if want := lineOf(strings.Join(tt.docs, "\n---\n"), tt.line); d.Object.Line != want {
					t.Errorf("line %d, want %d (the line with %q)", d.Object.Line, want, tt.line)
				}
			}
			if tt.proxies != "" && !strings.Contains(strings.Join(d.Proxies, ","), tt.proxies) {
				t.Errorf("proxies %v, want %s", d.Proxies, tt.proxies)
			}
			if tt.severity != 0 && d.Severity != tt.severity {
				t.Errorf("severity %s, want %s", d.Severity, tt.severity)
			}
		})
	}
}

// lineOf is the 1-based number of the first line of s containing frag.
func lineOf(s, frag string) int {
	for i, l := range strings.Split(s, "\n") {
		if strings.Contains(l, frag) {
			return i + 1
		}
	}
	return 0
}

// TestPolicySeeds: each MC9xxx FuzzPipeline seed is the case that makes
// its code fire.
func TestPolicySeeds(t *testing.T) {
	for _, s := range seeds(t, "MC9*.yaml") {
		file, data := s.file, s.data
		code := strings.TrimSuffix(filepath.Base(file), ".yaml")
		if got := only(run(t, Options{}, string(data)), code); len(got) == 0 {
			t.Errorf("%s does not make %s fire", file, code)
		}
	}
}

// TestPolicyAnalyzersSparseInputs: empty and half-written specs load and
// lint without a panic, and without MC9xxx findings.
func TestPolicyAnalyzersSparseInputs(t *testing.T) {
	all := run(t, Options{},
		namespace("web", "{}"),
		envoyFilter("web", "a", "configPatches: [{}, {applyTo: HTTP_FILTER}, {patch: {operation: REMOVE}}]"),
		envoyFilter("web", "b", "{}"),
		telemetry("web", "c", "selector: {}"),
		telemetry("web", "d", "selector: {matchLabels: {}}"),
		authz("web", "e", "rules: [{}, {from: [{}, {source: {}}]}]"),
		authz("web", "f", "{}"),
		manifest("v1", "Service", "web", "g", "annotations: {}", "ports: [{port: 80}]"),
		manifest("apps/v1", "Deployment", "web", "h", "", "selector: {matchLabels: {app: h}}\ntemplate: {spec: {containers: [{name: c, image: x}]}}"),
		manifest("networking.istio.io/v1", "VirtualService", "web", "i", "", "hosts: ['*']\nhttp: [{fault: {}}, {fault: {delay: {}}}]"),
		manifest("networking.istio.io/v1", "Sidecar", "web", "j", "", "outboundTrafficPolicy: {}"))
	for _, d := range all {
		if strings.HasPrefix(d.Code, "MC9") {
			t.Errorf("unexpected %s: %s", d.Code, d.Message)
		}
	}
}

// TestPolicyKindsDecodeStrictly: EnvoyFilter and Telemetry decode into
// their istio.io/api messages (which MC9007 to MC9009 read), and a field
// their schema lacks is a SchemaViolation, as for the other Istio kinds.
func TestPolicyKindsDecodeStrictly(t *testing.T) {
	objs, ds := load.Bytes("in.yaml", []byte(strings.Join([]string{
		envoyFilter("web", "ok", "priority: 1\nconfigPatches: [{applyTo: CLUSTER, patch: {operation: MERGE, value: {connect_timeout: 1s}}}]"),
		manifest("telemetry.istio.io/v1alpha1", "Telemetry", "web", "ok", "", "selector: {matchLabels: {app: a}}"),
		envoyFilter("web", "bad", "configPatches: [{applyTo: CLUSTER, pach: {operation: MERGE}}]"),
		telemetry("web", "bad", "tracing: [{samplingPercent: 10}]"),
	}, "\n---\n")))
	var kinds []string
	for _, o := range objs {
		switch o.(type) {
		case *model.EnvoyFilter, *model.Telemetry:
			kinds = append(kinds, o.Meta().Kind+" "+o.Meta().Name)
		}
	}
	if got := strings.Join(kinds, ", "); got != "EnvoyFilter ok, Telemetry ok" {
		t.Errorf("decoded %q, want EnvoyFilter ok, Telemetry ok", got)
	}
	var bad []string
	for _, d := range ds {
		if diag.SchemaViolation.Is(d) {
			bad = append(bad, d.Object.String())
		} else {
			t.Errorf("unexpected %s: %s", d.Code, d.Message)
		}
	}
	if got := strings.Join(bad, ", "); got != "EnvoyFilter web/bad, Telemetry web/bad" {
		t.Errorf("schema violations on %q, want EnvoyFilter web/bad, Telemetry web/bad", got)
	}
}

// TestDeprecatedReplacements: every replacement hint names a field or
// value Istio's protos have and mark deprecated, so none goes stale.
func TestDeprecatedReplacements(t *testing.T) {
	for name := range deprecatedReplacements {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		deprecated := false
		switch o := d.Options().(type) {
		case *descriptorpb.FieldOptions:
			deprecated = o.GetDeprecated()
		case *descriptorpb.EnumValueOptions:
			deprecated = o.GetDeprecated()
		}
		if !deprecated {
			t.Errorf("%s is not marked deprecated", name)
		}
	}
}
