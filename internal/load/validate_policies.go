package load

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"
	extensions "istio.io/api/extensions/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"
	networkingv1beta1 "istio.io/api/networking/v1beta1"
	security "istio.io/api/security/v1beta1"
	telemetry "istio.io/api/telemetry/v1alpha1"

	"github.com/meshc/meshc/internal/model"
)

// checkUndecoded applies istiod's admission rules to the Istio kinds
// meshc loads by name only (RequestAuthentication, WasmPlugin,
// ProxyConfig, WorkloadGroup). Their spec is decoded for the check alone; a
// spec that does not decode is left as it was before (these kinds are not
// schema-checked), so only the admission rules can reject the object.
func checkUndecoded(group, kind string, meta model.ObjectMeta, n *yaml.Node) []fieldError {
	var m proto.Message
	switch group + "/" + kind {
	case "security.istio.io/RequestAuthentication":
		m = &security.RequestAuthentication{}
	case "extensions.istio.io/WasmPlugin":
		m = &extensions.WasmPlugin{}
	case "networking.istio.io/ProxyConfig":
		m = &networkingv1beta1.ProxyConfig{}
	case "networking.istio.io/WorkloadGroup":
		m = &networking.WorkloadGroup{}
	default:
		return nil
	}
	spec := model.Path{}.Key("spec")
	var errs []fieldError
	decodeProto(m.ProtoReflect(), field(n, "spec"), spec, &errs)
	if len(errs) > 0 {
		return nil
	}
	c := istioChecks{ns: meta.Namespace}
	c.metadata(meta, m)
	switch x := m.(type) {
	case *security.RequestAuthentication:
		c.policyTarget(x.GetSelector(), x.GetTargetRef(), x.GetTargetRefs(), spec, "RequestAuthentication")
		for i, r := range x.GetJwtRules() {
			c.jwtRule(r, spec.Key("jwtRules").Index(i))
		}
	case *extensions.WasmPlugin:
		c.policyTarget(x.GetSelector(), x.GetTargetRef(), x.GetTargetRefs(), spec, "WasmPlugin")
		c.wasmPlugin(x, spec)
	case *networkingv1beta1.ProxyConfig:
		sel := x.GetSelector()
		c.workloadSelector(sel.GetMatchLabels(), sel != nil, spec.Key("selector"), "ProxyConfig")
		if n := x.GetConcurrency().GetValue(); n < 0 {
			c.addf(spec.Key("concurrency"), "concurrency %d is rejected by istiod's validation: it cannot be negative (0 means one worker per core)", n)
		}
	case *networking.WorkloadGroup:
		c.workloadGroup(x, spec)
	}
	return c.errs
}

// workloadGroup: istiod's ValidateWorkloadGroup, which stops at a missing
// template or invalid labels before it checks the probe.
func (c *istioChecks) workloadGroup(wg *networking.WorkloadGroup, spec model.Path) {
	if wg.GetTemplate() == nil {
		c.add(spec, "a WorkloadGroup without template is rejected by istiod's validation")
		return
	}
	n := len(c.errs)
	c.labels(wg.GetMetadata().GetLabels(), spec.Key("metadata").Key("labels"))
	pr := wg.GetProbe()
	if pr == nil || len(c.errs) > n {
		return
	}
	p := spec.Key("probe")
	for _, f := range []struct {
		name string
		v    int32
	}{{"periodSeconds", pr.GetPeriodSeconds()}, {"initialDelaySeconds", pr.GetInitialDelaySeconds()}, {"timeoutSeconds", pr.GetTimeoutSeconds()},
		{"successThreshold", pr.GetSuccessThreshold()}, {"failureThreshold", pr.GetFailureThreshold()}} {
		if f.v < 0 {
			c.addf(p.Key(f.name), "%s %d is rejected by istiod's validation: it cannot be negative", f.name, f.v)
		}
	}
	switch {
	case pr.GetHttpGet() != nil:
		h := pr.GetHttpGet()
		c.port(int64(h.GetPort()), p.Key("httpGet").Key("port"))
		if s := h.GetScheme(); s != "" && s != "HTTP" && s != "HTTPS" {
			c.addf(p.Key("httpGet").Key("scheme"), "httpGet scheme %q is rejected by istiod's validation: use HTTP or HTTPS", s)
		}
		for i, hd := range h.GetHttpHeaders() {
			if name := hd.GetName(); name == "" || !probeHeaderRE.MatchString(name) {
				c.addf(p.Key("httpGet").Key("httpHeaders").Index(i).Key("name"), "probe header name %q is rejected by istiod's validation: use letters, digits and '-'", name)
			}
		}
	case pr.GetTcpSocket() != nil:
		c.port(int64(pr.GetTcpSocket().GetPort()), p.Key("tcpSocket").Key("port"))
	case pr.GetExec() != nil:
		if len(pr.GetExec().GetCommand()) == 0 {
			c.add(p.Key("exec"), "an exec probe without command is rejected by istiod's validation")
		}
	default:
		c.add(p, "a probe without httpGet, tcpSocket or exec (grpc included) is rejected by istiod's validation")
	}
}

var probeHeaderRE = regexp.MustCompile(`^[-A-Za-z0-9]+$`)

var strictHeaderRE = regexp.MustCompile(`^[-_A-Za-z0-9]+$`)

func (c *istioChecks) jwtRule(r *security.JWTRule, p model.Path) {
	for i, a := range r.GetAudiences() {
		if a == "" {
			c.add(p.Key("audiences").Index(i), "an empty audience is rejected by istiod's validation")
		}
	}
	if r.GetIssuer() == "" && r.GetJwksUri() == "" {
		c.add(p, "a JWT rule without issuer or jwksUri is rejected by istiod's validation: set one")
	}
	if u := r.GetJwksUri(); u != "" {
		parsed, err := url.Parse(u)
		switch {
		case err != nil:
			c.addf(p.Key("jwksUri"), "jwksUri %q is rejected by istiod's validation: %v", u, err)
		case parsed.Scheme != "http" && parsed.Scheme != "https":
			c.addf(p.Key("jwksUri"), "jwksUri %q is rejected by istiod's validation: use an http:// or https:// URL", u)
		}
	}
	if j := r.GetJwks(); j != "" {
		c.jwks(j, p.Key("jwks"))
	}
	for i, h := range r.GetFromHeaders() {
		if h.GetName() == "" {
			c.add(p.Key("fromHeaders").Index(i), "a fromHeaders entry without name is rejected by istiod's validation")
		}
	}
	for _, f := range []struct {
		name string
		v    []string
	}{{"fromParams", r.GetFromParams()}, {"fromCookies", r.GetFromCookies()}} {
		for i, v := range f.v {
			if v == "" {
				c.addf(p.Key(f.name).Index(i), "an empty %s entry is rejected by istiod's validation", f.name)
			}
		}
	}
	for i, o := range r.GetOutputClaimToHeaders() {
		at := p.Key("outputClaimToHeaders").Index(i)
		switch {
		case o.GetClaim() == "" || o.GetHeader() == "":
			c.add(at, "an outputClaimToHeaders entry without claim or header is rejected by istiod's validation")
		case !strictHeaderRE.MatchString(o.GetHeader()):
			c.addf(at.Key("header"), "header %q is rejected by istiod's validation: use letters, digits, '-' and '_'", o.GetHeader())
		}
	}
	c.duration(r.GetTimeout(), p.Key("timeout"))
}

// jwks: inline keys must be a JSON Web Key Set; private key material is
// admitted with a warning, as only public keys are used. The set's
// structure is checked as far as JSON goes, not key by key.
func (c *istioChecks) jwks(j string, p model.Path) {
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(j), &set); err != nil || set.Keys == nil {
		if err := json.Unmarshal([]byte(j), &one); err != nil {
			c.add(p, "jwks is rejected by istiod's validation: it is not a JSON Web Key Set")
			return
		}
		set.Keys = []map[string]any{one}
	}
	for i, k := range set.Keys {
		if _, private := k["d"]; private || k["kty"] == "oct" {
			c.warnf(p, "jwks key %d holds private or symmetric key material: istiod warns, as only public keys verify tokens; publish the public key only", i)
		}
	}
}

func (c *istioChecks) telemetry(t *telemetry.Telemetry, p model.Path) {
	providers := func(ps []*telemetry.ProviderRef, at model.Path) {
		for i, pr := range ps {
			if pr.GetName() == "" {
				c.add(at.Key("providers").Index(i), "a provider without name is rejected by istiod's validation")
				return
			}
		}
	}
	if len(t.GetTracing()) > 1 {
		c.warnf(p.Key("tracing"), "several tracing entries: istiod warns, as only one is supported")
	}
	for i, tr := range t.GetTracing() {
		at := p.Key("tracing").Index(i)
		if len(tr.GetProviders()) > 1 {
			c.warnf(at.Key("providers"), "several tracing providers: istiod warns, as only one is supported")
		}
		providers(tr.GetProviders(), at)
		if v := tr.GetRandomSamplingPercentage().GetValue(); v < 0 || v > 100 {
			c.addf(at.Key("randomSamplingPercentage"), "randomSamplingPercentage %g is rejected by istiod's validation: it must be 0..100", v)
		}
		for _, name := range slices.Sorted(maps.Keys(tr.GetCustomTags())) {
			tag, tp := tr.GetCustomTags()[name], at.Key("customTags").Key(name)
			switch {
			case name == "":
				c.add(tp, "a custom tag without name is rejected by istiod's validation")
			case tag.GetLiteral() != nil && tag.GetLiteral().GetValue() == "":
				c.add(tp, "a literal custom tag without value is rejected by istiod's validation")
			case tag.GetHeader() != nil && tag.GetHeader().GetName() == "":
				c.add(tp, "a header custom tag without name is rejected by istiod's validation")
			case tag.GetEnvironment() != nil && tag.GetEnvironment().GetName() == "":
				c.add(tp, "an environment custom tag without name is rejected by istiod's validation")
			}
		}
	}
	for i, m := range t.GetMetrics() {
		at := p.Key("metrics").Index(i)
		providers(m.GetProviders(), at)
		for j, o := range m.GetOverrides() {
			op := at.Key("overrides").Index(j)
			for _, name := range slices.Sorted(maps.Keys(o.GetTagOverrides())) {
				to, tp := o.GetTagOverrides()[name], op.Key("tagOverrides").Key(name)
				if name == "" {
					c.warnf(tp, "a tag override without name: istiod warns")
				}
				switch {
				case to.GetOperation() == telemetry.MetricsOverrides_TagOverride_UPSERT && to.GetValue() == "":
					c.add(tp, "a tag override UPSERT without value is rejected by istiod's validation")
				case to.GetOperation() == telemetry.MetricsOverrides_TagOverride_REMOVE && to.GetValue() != "":
					c.add(tp.Key("value"), "a tag override REMOVE with a value is rejected by istiod's validation: remove the value")
				}
			}
			if _, ok := o.GetMatch().GetMetricMatch().(*telemetry.MetricSelector_CustomMetric); ok && o.GetMatch().GetCustomMetric() == "" {
				c.add(op.Key("match").Key("customMetric"), "an empty customMetric is rejected by istiod's validation")
			}
		}
	}
	for i, l := range t.GetAccessLogging() {
		providers(l.GetProviders(), p.Key("accessLogging").Index(i))
	}
}

var sha256RE = regexp.MustCompile(`^[a-f0-9]{64}$`)

func (c *istioChecks) wasmPlugin(w *extensions.WasmPlugin, p model.Path) {
	if w.GetUrl() == "" {
		c.add(p, "a WasmPlugin without url is rejected by istiod's validation")
	} else if u, err := parseWasmURL(w.GetUrl()); err != nil {
		c.addf(p.Key("url"), "url %q is rejected by istiod's validation: %v", w.GetUrl(), err)
	} else if !slices.Contains([]string{"", "file", "http", "https", "oci"}, u.Scheme) {
		c.addf(p.Key("url"), "url %q is rejected by istiod's validation: use oci://, https://, http:// or file://", w.GetUrl())
	}
	if s := w.GetSha256(); s != "" && !sha256RE.MatchString(s) {
		c.addf(p.Key("sha256"), "sha256 %q is rejected by istiod's validation: it must be 64 lower-case hex digits", s)
	}
	if len(w.GetImagePullSecret()) > 253 {
		c.add(p.Key("imagePullSecret"), "an imagePullSecret longer than 253 characters is rejected by istiod's validation")
	}
	if len(w.GetPluginName()) > 256 {
		c.add(p.Key("pluginName"), "a pluginName longer than 256 characters is rejected by istiod's validation")
	}
	names := map[string]bool{}
	for i, e := range w.GetVmConfig().GetEnv() {
		at := p.Key("vmConfig").Key("env").Index(i)
		msg := ""
		switch {
		case e.GetName() == "":
			msg = "an env entry without name is rejected by istiod's validation"
		case len(e.GetName()) > 256:
			msg = "an env name longer than 256 characters is rejected by istiod's validation"
		case names[e.GetName()]:
			msg = fmt.Sprintf("env %q is set twice: istiod's validation rejects it", e.GetName())
		case e.GetValueFrom() != extensions.EnvValueSource_INLINE && e.GetValue() != "":
			msg = fmt.Sprintf("env %q with valueFrom %s and a value is rejected by istiod's validation: value goes with INLINE", e.GetName(), e.GetValueFrom())
		}
		if msg != "" {
			c.add(at, msg) // istiod stops at the first problem of vmConfig
			break
		}
		names[e.GetName()] = true
	}
	for i, m := range w.GetMatch() {
		for j, port := range m.GetPorts() {
			if n := port.GetNumber(); n == 0 || n > 65535 {
				c.port(int64(n), p.Key("match").Index(i).Key("ports").Index(j).Key("number"))
				return
			}
		}
	}
}

// parseWasmURL parses a plugin URL as istiod does: as given, or with
// http:// in front when it has no scheme ("ghcr.io/org/plugin:1").
func parseWasmURL(s string) (*url.URL, error) {
	u, err := url.ParseRequestURI(s)
	if err == nil {
		return u, nil
	}
	if u, err2 := url.ParseRequestURI("http://" + s); err2 == nil {
		return u, nil
	}
	return nil, err
}

// envoyFilter: istiod's structural rules for config patches, and its
// warning on deprecated filter names in matches. The warning istiod gives
// on every EnvoyFilter (they depend on Envoy internals) is left to MC8003,
// which names every EnvoyFilter meshc does not apply; patch values are
// not built into Envoy types here.
func (c *istioChecks) envoyFilter(ef *networking.EnvoyFilter, spec model.Path) {
	ws := ef.GetWorkloadSelector()
	c.workloadSelector(ws.GetLabels(), ws != nil, spec.Key("workloadSelector"), "EnvoyFilter")
	for i, cp := range ef.GetConfigPatches() {
		at := spec.Key("configPatches").Index(i)
		match := cp.GetMatch()
		if match.GetContext() == networking.EnvoyFilter_WAYPOINT {
			continue
		}
		op := cp.GetPatch().GetOperation()
		switch {
		case cp.GetApplyTo() == networking.EnvoyFilter_INVALID:
			c.add(at, "a config patch without applyTo is rejected by istiod's validation")
			continue
		case cp.GetPatch() == nil:
			c.add(at, "a config patch without patch is rejected by istiod's validation")
			continue
		case op == networking.EnvoyFilter_Patch_INVALID:
			c.add(at.Key("patch"), "a patch without operation is rejected by istiod's validation")
			continue
		case op != networking.EnvoyFilter_Patch_REMOVE && cp.GetPatch().GetValue() == nil:
			c.addf(at.Key("patch"), "a %s patch without value is rejected by istiod's validation", op)
			continue
		}
		if v := match.GetProxy().GetProxyVersion(); v != "" {
			vp := at.Key("match").Key("proxy").Key("proxyVersion")
			if len(v) > 1024 {
				c.warnf(vp, "a proxyVersion match longer than 1024 characters: istiod warns and ignores it")
			} else if _, err := regexp.Compile(v); err != nil {
				c.addf(vp, "proxyVersion regex %q is rejected by istiod's validation: %v", v, err)
				continue
			}
		}
		mp := at.Key("match")
		switch cp.GetApplyTo() {
		case networking.EnvoyFilter_LISTENER, networking.EnvoyFilter_FILTER_CHAIN, networking.EnvoyFilter_NETWORK_FILTER, networking.EnvoyFilter_HTTP_FILTER:
			if match.GetObjectTypes() == nil {
				break
			}
			l := match.GetListener()
			if l == nil {
				c.addf(mp, "applyTo %s with a match that is not on a listener is rejected by istiod's validation", cp.GetApplyTo())
				continue
			}
			f := l.GetFilterChain().GetFilter()
			if f == nil {
				break
			}
			fp := mp.Key("listener").Key("filterChain").Key("filter")
			if cp.GetApplyTo() == networking.EnvoyFilter_LISTENER || cp.GetApplyTo() == networking.EnvoyFilter_FILTER_CHAIN {
				c.warnf(fp, "a filter match with applyTo %s: istiod warns, as it has no effect there", cp.GetApplyTo())
			}
			switch {
			case f.GetName() == "":
				c.add(fp, "a filter match without name is rejected by istiod's validation")
			case f.GetSubFilter() != nil && cp.GetApplyTo() != networking.EnvoyFilter_HTTP_FILTER:
				c.add(fp.Key("subFilter"), "a subFilter match is rejected by istiod's validation unless applyTo is HTTP_FILTER")
			case f.GetSubFilter() != nil && f.GetName() != "envoy.filters.network.http_connection_manager" && f.GetName() != "envoy.http_connection_manager":
				c.add(fp.Key("subFilter"), "a subFilter match is rejected by istiod's validation unless the filter is envoy.filters.network.http_connection_manager")
			case f.GetSubFilter() != nil && f.GetSubFilter().GetName() == "":
				c.add(fp.Key("subFilter"), "a subFilter match without name is rejected by istiod's validation")
			default:
				c.deprecatedFilterName(f.GetName(), fp.Key("name"))
				c.deprecatedFilterName(f.GetSubFilter().GetName(), fp.Key("subFilter").Key("name"))
			}
		case networking.EnvoyFilter_ROUTE_CONFIGURATION, networking.EnvoyFilter_VIRTUAL_HOST, networking.EnvoyFilter_HTTP_ROUTE:
			if match.GetObjectTypes() != nil && match.GetRouteConfiguration() == nil {
				c.addf(mp, "applyTo %s with a match that is not on a route configuration is rejected by istiod's validation", cp.GetApplyTo())
			}
		case networking.EnvoyFilter_CLUSTER:
			if match.GetObjectTypes() != nil && match.GetCluster() == nil {
				c.add(mp, "applyTo CLUSTER with a match that is not on a cluster is rejected by istiod's validation")
			}
		}
	}
}

// deprecatedFilterNames maps Envoy's old filter names to their canonical
// names, which istiod generates; a match on an old name is warned about.
// "envoy.ext_authz" was the name of both the HTTP and the network filter.
var deprecatedFilterNames = map[string]string{
	"envoy.buffer": "envoy.filters.http.buffer", "envoy.cors": "envoy.filters.http.cors", "envoy.csrf": "envoy.filters.http.csrf",
	"envoy.http_dynamo_filter": "envoy.filters.http.dynamo", "envoy.fault": "envoy.filters.http.fault",
	"envoy.grpc_http1_bridge": "envoy.filters.http.grpc_http1_bridge", "envoy.grpc_json_transcoder": "envoy.filters.http.grpc_json_transcoder",
	"envoy.grpc_web": "envoy.filters.http.grpc_web", "envoy.gzip": "envoy.filters.http.gzip", "envoy.health_check": "envoy.filters.http.health_check",
	"envoy.ip_tagging": "envoy.filters.http.ip_tagging", "envoy.lua": "envoy.filters.http.lua", "envoy.rate_limit": "envoy.filters.http.ratelimit",
	"envoy.router": "envoy.filters.http.router", "envoy.squash": "envoy.filters.http.squash",
	"envoy.listener.http_inspector": "envoy.filters.listener.http_inspector", "envoy.listener.original_dst": "envoy.filters.listener.original_dst",
	"envoy.listener.original_src": "envoy.filters.listener.original_src", "envoy.listener.proxy_protocol": "envoy.filters.listener.proxy_protocol",
	"envoy.listener.tls_inspector": "envoy.filters.listener.tls_inspector", "envoy.client_ssl_auth": "envoy.filters.network.client_ssl_auth",
	"envoy.ext_authz":               "envoy.filters.http.ext_authz or envoy.filters.network.ext_authz",
	"envoy.http_connection_manager": "envoy.filters.network.http_connection_manager", "envoy.mongo_proxy": "envoy.filters.network.mongo_proxy",
	"envoy.ratelimit": "envoy.filters.network.ratelimit", "envoy.redis_proxy": "envoy.filters.network.redis_proxy", "envoy.tcp_proxy": "envoy.filters.network.tcp_proxy",
}

func (c *istioChecks) deprecatedFilterName(name string, p model.Path) {
	if canonical, ok := deprecatedFilterNames[name]; ok {
		c.warnf(p, "filter name %q is deprecated: istiod warns; match %s, the name istiod generates", name, canonical)
	}
}
