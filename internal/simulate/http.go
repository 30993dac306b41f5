package simulate

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/meshc/meshc/internal/envoycfg"
)

// faultFilter is the HTTP filter whose per-route config injects faults.
const faultFilter = "envoy.filters.http.fault"

// terminal runs the chain's terminal network filter: an HTTP connection
// manager or a TCP proxy. Filters before it (Mongo, metadata exchange)
// pass the connection on.
func terminal(cfg *envoycfg.Config, t *Trace, fc *listenerv3.FilterChain, req Request, dst netip.Addr) {
	for _, f := range fc.GetFilters() {
		m, err := f.GetTypedConfig().UnmarshalNew()
		if err != nil {
			continue // a type this build of go-control-plane does not know
		}
		switch x := m.(type) {
		case *hcmv3.HttpConnectionManager:
			t.add(Step{Stage: NetworkFilter, Name: f.GetName(), Index: -1})
			switch {
			case req.Protocol == TCP:
				t.stop(NetworkFilter, "protocol error: %s needs HTTP, the request is TCP", f.GetName())
				return
			case req.TLS && fc.GetTransportSocket() == nil:
				// The chain does not terminate TLS: the connection manager
				// reads the handshake as HTTP and fails.
				t.stop(NetworkFilter, "protocol error: %s reads plain-text HTTP, the client starts TLS", f.GetName())
				return
			}
			httpRequest(cfg, t, x, req, dst)
			return
		case *tcpv3.TcpProxy:
			t.add(Step{Stage: NetworkFilter, Name: f.GetName(), Index: -1})
			a := &Action{Kind: Forward, Cluster: x.GetCluster()}
			for _, w := range x.GetWeightedClusters().GetClusters() {
				a.Weighted = append(a.Weighted, Weighted{Cluster: w.GetName(), Weight: w.GetWeight()})
			}
			t.Action = a
			targets(cfg, t, a, req, dst)
			return
		}
	}
	t.stop(NetworkFilter, "filter chain %q has no HTTP connection manager or TCP proxy", fc.GetName())
}

// httpRequest routes a request through a connection manager's route
// configuration.
func httpRequest(cfg *envoycfg.Config, t *Trace, h *hcmv3.HttpConnectionManager, req Request, dst netip.Addr) {
	rc := h.GetRouteConfig()
	how := "inline"
	if rds := h.GetRds(); rds != nil {
		rc, how = cfg.Route(rds.GetRouteConfigName()), "RDS"
		if rc == nil {
			t.stop(RouteConfiguration, "route configuration %q is not in the configuration", rds.GetRouteConfigName())
			return
		}
	}
	if rc == nil {
		t.stop(RouteConfiguration, "the connection manager has no route configuration")
		return
	}
	t.add(Step{Stage: RouteConfiguration, Name: rc.GetName(), Index: -1, Detail: how})
	authority := strings.ToLower(req.Host)
	switch {
	case rc.GetIgnorePortInHostMatching() || h.GetStripAnyHostPort():
		authority = stripPort(authority)
	case h.GetStripMatchingHostPort():
		if host, port, err := net.SplitHostPort(authority); err == nil && port == strconv.Itoa(int(req.Port)) {
			authority = host
		}
	}
	vh, domain := pickVirtualHost(rc.GetVirtualHosts(), authority)
	if vh == nil {
		t.stop(VirtualHost, "no virtual host of route configuration %q matches host %q", rc.GetName(), authority)
		return
	}
	t.add(Step{Stage: VirtualHost, Name: vh.GetName(), Index: -1, Detail: "domain " + domain})
	if vh.GetRequireTls() != routev3.VirtualHost_NONE && !req.TLS {
		// Envoy answers a plain-text request to such a virtual host with
		// a redirect to https before any route (EXTERNAL_ONLY exempts
		// requests from inside the mesh, which a simulated client is not
		// known to be).
		t.Action = &Action{Kind: Redirect, RedirectScheme: "https", Status: 301, Path: req.Path, Authority: req.Host}
		return
	}
	path, query, _ := strings.Cut(req.Path, "?")
	if path == "" {
		path = "/"
	}
	headers := map[string]string{":authority": req.Host, ":method": strings.ToUpper(req.Method), ":path": req.Path, ":scheme": "http"}
	if req.TLS {
		headers[":scheme"] = "https"
	}
	if headers[":method"] == "" {
		headers[":method"] = "GET"
	}
	for k, v := range req.Headers {
		headers[strings.ToLower(k)] = v
	}
	params, _ := url.ParseQuery(query)
	for i, r := range vh.GetRoutes() {
		if !routeMatches(r.GetMatch(), path, req.Path, headers, params) {
			continue
		}
		origin := metadataOrigin(r.GetMetadata())
		if o, ok := cfg.RouteOrigin(envoycfg.RouteRef{Config: rc.GetName(), VirtualHost: vh.GetName(), Index: i}); ok {
			// A generated route is named by the Gateway API rule behind it.
			from, p := o.Object.Written(o.Path)
			ref := from.RefAt(p)
			origin = &Origin{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Rule: p.String(), File: ref.File, Line: ref.Line}
		}
		t.add(Step{Stage: Route, Name: r.GetName(), Index: i, Detail: describeMatch(r.GetMatch()), Origin: origin})
		a := action(r)
		a.Path, a.Authority = forwarded(r.GetMatch(), a, req.Path, req.Host)
		t.Action = a
		if a.Kind == Forward {
			targets(cfg, t, a, req, dst)
		}
		return
	}
	t.stop(Route, "no route of virtual host %q matches %s %s", vh.GetName(), headers[":method"], req.Path)
}

func stripPort(authority string) string {
	if h, _, err := net.SplitHostPort(authority); err == nil {
		return h
	}
	return authority
}

// pickVirtualHost matches a host as Envoy does: an exact domain, else the
// longest suffix wildcard ("*.example.com", "*-x.example.com"), else the
// longest prefix wildcard ("example.*"), else "*". A wildcard stands for
// at least one character.
func pickVirtualHost(vhs []*routev3.VirtualHost, host string) (*routev3.VirtualHost, string) {
	var best *routev3.VirtualHost
	bestDomain, bestRank := "", 0
	for _, vh := range vhs {
		for _, d := range vh.GetDomains() {
			d = strings.ToLower(d)
			r := 0
			switch {
			case d == host:
				r = 3 << 20
			case d == "*":
				r = 1
			case strings.HasPrefix(d, "*") && len(host) > len(d)-1 && strings.HasSuffix(host, d[1:]):
				r = 2<<20 + len(d)
			case strings.HasSuffix(d, "*") && len(host) > len(d)-1 && strings.HasPrefix(host, d[:len(d)-1]):
				r = 1<<20 + len(d)
			}
			if r > bestRank {
				best, bestDomain, bestRank = vh, d, r
			}
		}
	}
	return best, bestDomain
}

// routeMatches checks a route's match: the path (prefix, exact, regex,
// path-separated prefix), gRPC, headers and query parameters.
func routeMatches(m *routev3.RouteMatch, path, fullPath string, headers map[string]string, params url.Values) bool {
	caseSensitive := m.GetCaseSensitive() == nil || m.GetCaseSensitive().GetValue()
	fold := func(s string) string {
		if caseSensitive {
			return s
		}
		return strings.ToLower(s)
	}
	switch p := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		if !strings.HasPrefix(fold(fullPath), fold(p.Prefix)) {
			return false
		}
	case *routev3.RouteMatch_Path:
		if fold(path) != fold(p.Path) {
			return false
		}
	case *routev3.RouteMatch_SafeRegex:
		if !fullMatch(p.SafeRegex.GetRegex(), path) {
			return false
		}
	case *routev3.RouteMatch_PathSeparatedPrefix:
		pre := fold(p.PathSeparatedPrefix)
		if fp := fold(path); fp != pre && !strings.HasPrefix(fp, strings.TrimSuffix(pre, "/")+"/") {
			return false
		}
	default:
		return false // a matcher the simulator does not know (URI templates, extensions)
	}
	if m.GetGrpc() != nil && !strings.HasPrefix(headers["content-type"], "application/grpc") {
		return false
	}
	for _, h := range m.GetHeaders() {
		if !headerMatches(h, headers) {
			return false
		}
	}
	for _, q := range m.GetQueryParameters() {
		vs, ok := params[q.GetName()]
		switch {
		case !ok:
			return false
		case q.GetPresentMatch():
		case q.GetStringMatch() != nil && !stringMatches(q.GetStringMatch(), vs[0]):
			return false
		}
	}
	return true
}

// headerMatches is one header matcher, as Envoy applies it: a missing
// header matches only "not present" (or, inverted, "present").
func headerMatches(h *routev3.HeaderMatcher, headers map[string]string) bool {
	v, ok := headers[strings.ToLower(h.GetName())]
	if !ok && h.GetTreatMissingHeaderAsEmpty() {
		v, ok = "", true
	}
	pm, isPresent := h.GetHeaderMatchSpecifier().(*routev3.HeaderMatcher_PresentMatch)
	if !ok {
		if !isPresent {
			return false
		}
		return pm.PresentMatch == h.GetInvertMatch()
	}
	match := true
	switch s := h.GetHeaderMatchSpecifier().(type) {
	case *routev3.HeaderMatcher_ExactMatch:
		match = v == s.ExactMatch
	case *routev3.HeaderMatcher_SafeRegexMatch:
		match = fullMatch(s.SafeRegexMatch.GetRegex(), v)
	case *routev3.HeaderMatcher_RangeMatch:
		n, err := strconv.ParseInt(v, 10, 64)
		match = err == nil && n >= s.RangeMatch.GetStart() && n < s.RangeMatch.GetEnd()
	case *routev3.HeaderMatcher_PresentMatch:
		match = s.PresentMatch
	case *routev3.HeaderMatcher_PrefixMatch:
		match = strings.HasPrefix(v, s.PrefixMatch)
	case *routev3.HeaderMatcher_SuffixMatch:
		match = strings.HasSuffix(v, s.SuffixMatch)
	case *routev3.HeaderMatcher_ContainsMatch:
		match = strings.Contains(v, s.ContainsMatch)
	case *routev3.HeaderMatcher_StringMatch:
		match = stringMatches(s.StringMatch, v)
	}
	return match != h.GetInvertMatch()
}

// stringMatches is Envoy's StringMatcher.
func stringMatches(m *matcherv3.StringMatcher, v string) bool {
	if m.GetIgnoreCase() {
		v = strings.ToLower(v)
	}
	fold := func(s string) string {
		if m.GetIgnoreCase() {
			return strings.ToLower(s)
		}
		return s
	}
	switch p := m.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		return v == fold(p.Exact)
	case *matcherv3.StringMatcher_Prefix:
		return strings.HasPrefix(v, fold(p.Prefix))
	case *matcherv3.StringMatcher_Suffix:
		return strings.HasSuffix(v, fold(p.Suffix))
	case *matcherv3.StringMatcher_Contains:
		return strings.Contains(v, fold(p.Contains))
	case *matcherv3.StringMatcher_SafeRegex:
		return fullMatch(p.SafeRegex.GetRegex(), v)
	}
	return false
}

// fullMatch matches a whole string against an RE2 pattern, as Envoy's
// safe_regex does; a pattern that does not compile matches nothing.
func fullMatch(pattern, s string) bool {
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	return err == nil && re.MatchString(s)
}

// describeMatch says what a route matches on, briefly.
func describeMatch(m *routev3.RouteMatch) string {
	var parts []string
	switch p := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		parts = append(parts, "prefix "+p.Prefix)
	case *routev3.RouteMatch_Path:
		parts = append(parts, "path "+p.Path)
	case *routev3.RouteMatch_SafeRegex:
		parts = append(parts, "regex "+p.SafeRegex.GetRegex())
	case *routev3.RouteMatch_PathSeparatedPrefix:
		parts = append(parts, "path-separated prefix "+p.PathSeparatedPrefix)
	}
	for _, h := range m.GetHeaders() {
		parts = append(parts, "header "+h.GetName())
	}
	for _, q := range m.GetQueryParameters() {
		parts = append(parts, "query "+q.GetName())
	}
	return strings.Join(parts, ", ")
}

// action reads a route's action.
func action(r *routev3.Route) *Action {
	a := &Action{}
	for _, h := range r.GetRequestHeadersToAdd() {
		a.RequestHeadersToAdd = append(a.RequestHeadersToAdd, h.GetHeader().GetKey()+": "+h.GetHeader().GetValue())
	}
	a.RequestHeadersToRemove = r.GetRequestHeadersToRemove()
	_, a.Fault = r.GetTypedPerFilterConfig()[faultFilter]
	switch x := r.GetAction().(type) {
	case *routev3.Route_Redirect:
		rd := x.Redirect
		a.Kind = Redirect
		a.RedirectScheme, a.RedirectHost, a.RedirectPort = rd.GetSchemeRedirect(), rd.GetHostRedirect(), rd.GetPortRedirect()
		a.RedirectPath, a.PrefixRewrite = rd.GetPathRedirect(), rd.GetPrefixRewrite()
		if rd.GetHttpsRedirect() {
			a.RedirectScheme = "https"
		}
		a.Status = redirectStatus(rd.GetResponseCode())
	case *routev3.Route_DirectResponse:
		a.Kind = DirectResponse
		a.Status = x.DirectResponse.GetStatus()
		a.Body = x.DirectResponse.GetBody().GetInlineString()
	case *routev3.Route_Route:
		ra := x.Route
		a.Kind = Forward
		a.Cluster = ra.GetCluster()
		for _, w := range ra.GetWeightedClusters().GetClusters() {
			a.Weighted = append(a.Weighted, Weighted{Cluster: w.GetName(), Weight: w.GetWeight().GetValue()})
		}
		a.PrefixRewrite = ra.GetPrefixRewrite()
		if re := ra.GetRegexRewrite(); re != nil {
			a.regexRewrite = re
			a.RegexRewrite = re.GetPattern().GetRegex() + " → " + re.GetSubstitution()
		}
		a.HostRewrite = ra.GetHostRewriteLiteral()
		if d := ra.GetTimeout(); d != nil {
			a.Timeout = d.AsDuration().String()
		}
		if rp := ra.GetRetryPolicy(); rp != nil {
			a.Retries = fmt.Sprintf("%d on %s", rp.GetNumRetries().GetValue(), rp.GetRetryOn())
		}
		for _, m := range ra.GetRequestMirrorPolicies() {
			a.Mirrors = append(a.Mirrors, m.GetCluster())
		}
	}
	return a
}

// forwarded is the path (with query) and authority a forward or
// redirect carries on: a prefix rewrite replaces the part the route's
// prefix or path matched, a regex rewrite substitutes every match in the
// path, a host rewrite replaces the authority.
func forwarded(m *routev3.RouteMatch, a *Action, fullPath, authority string) (string, string) {
	path, query, hasQuery := strings.Cut(fullPath, "?")
	authority = cmp.Or(a.HostRewrite, a.RedirectHost, authority)
	switch {
	case a.Kind == Redirect && a.RedirectPath != "":
		path, hasQuery = a.RedirectPath, false
	case a.PrefixRewrite != "":
		matched := ""
		switch p := m.GetPathSpecifier().(type) {
		case *routev3.RouteMatch_Prefix:
			matched = p.Prefix
		case *routev3.RouteMatch_Path:
			matched = p.Path
		case *routev3.RouteMatch_PathSeparatedPrefix:
			matched = p.PathSeparatedPrefix
		}
		if len(matched) <= len(path) {
			path = a.PrefixRewrite + path[len(matched):]
		}
	case a.regexRewrite != nil:
		if re, err := regexp.Compile(a.regexRewrite.GetPattern().GetRegex()); err == nil {
			path = re.ReplaceAllString(path, envoySubstitution(a.regexRewrite.GetSubstitution()))
		}
	}
	if hasQuery {
		path += "?" + query
	}
	return path, authority
}

// envoyGroupRef is a group reference (\1) in an Envoy regex
// substitution.
var envoyGroupRef = regexp.MustCompile(`\\(\d)`)

// envoySubstitution turns Envoy's group references into Go's ${1}.
func envoySubstitution(s string) string {
	return envoyGroupRef.ReplaceAllString(strings.ReplaceAll(s, "$", "$$"), "$${$1}")
}

// redirectStatus is the HTTP status of a redirect response code.
func redirectStatus(c routev3.RedirectAction_RedirectResponseCode) uint32 {
	return map[routev3.RedirectAction_RedirectResponseCode]uint32{
		routev3.RedirectAction_MOVED_PERMANENTLY: 301, routev3.RedirectAction_FOUND: 302, routev3.RedirectAction_SEE_OTHER: 303,
		routev3.RedirectAction_TEMPORARY_REDIRECT: 307, routev3.RedirectAction_PERMANENT_REDIRECT: 308,
	}[c]
}

// metadataOrigin reads the Istio object istiod records in a resource's
// metadata (filter_metadata["istio"]["config"], an API path).
func metadataOrigin(md *corev3.Metadata) *Origin {
	s := md.GetFilterMetadata()["istio"].GetFields()["config"].GetStringValue()
	// /apis/networking.istio.io/v1/namespaces/NS/KIND/NAME
	parts := strings.Split(strings.TrimPrefix(s, "/"), "/")
	if len(parts) != 7 || parts[0] != "apis" || parts[3] != "namespaces" {
		return nil
	}
	kinds := map[string]string{"virtual-service": "VirtualService", "destination-rule": "DestinationRule", "sidecar": "Sidecar",
		"gateway": "Gateway", "service-entry": "ServiceEntry", "envoy-filter": "EnvoyFilter"}
	kind := kinds[parts[5]]
	if kind == "" {
		kind = parts[5]
	}
	return &Origin{Kind: kind, Namespace: parts[4], Name: parts[6]}
}
