package gatewayapi

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// ruleBuilder converts the rules of one route and collects the problems
// istiod would report in its status.
type ruleBuilder struct {
	c        *converter
	r        route
	problems []problem
	// hard is set when a rule cannot be converted: istiod then makes no
	// route of the whole route for its Gateways.
	hard bool
	// mesh converts for a Service parent: backends of other namespaces
	// need no ReferenceGrant.
	mesh bool
}

func (b *ruleBuilder) add(p problem) {
	b.problems = append(b.problems, p)
	b.hard = b.hard || p.hard
}

func (b *ruleBuilder) invalid(path model.Path, why string) {
	k, name := b.r.kind, b.r.name()
	b.add(problem{path: path, hard: true, diag: func(ref diag.ObjectRef) diag.Diagnostic { return diag.RuleNotConverted.At(ref, k, name, why) }})
}

func (b *ruleBuilder) reportProblems() {
	for _, p := range b.problems {
		b.c.report(p.diag(b.r.meta.RefAt(p.path)))
	}
}

// httpRule converts one HTTPRoute rule: one Istio route per match
// (docs/semantics/gateway-api.md §G3.2). A rule without matches has the
// one the API server defaults it to, every path.
func (b *ruleBuilder) httpRule(n int, rule gwv1.HTTPRouteRule) []httpRule {
	matches := rule.Matches
	if len(matches) == 0 {
		matches = []gwv1.HTTPRouteMatch{{}}
	}
	return b.rule(n, rule.Name, len(matches), func(m int, _ model.Path) *networking.HTTPMatchRequest { return httpMatch(matches[m]) },
		rule.Filters, true, rule.BackendRefs, func(r *networking.HTTPRoute) {
			if rule.Retry != nil {
				r.Retries = retries(rule.Retry)
			}
			if t := rule.Timeouts; t != nil {
				if d := duration(t.Request); d != 0 {
					r.Timeout = durationpb.New(d)
				}
				if d := duration(t.BackendRequest); d != 0 {
					if r.Retries != nil {
						r.Retries.PerTryTimeout = durationpb.New(d)
					} else {
						r.Timeout = durationpb.New(d)
					}
				}
			}
		})
}

// grpcRule converts one GRPCRoute rule; its filters and backends are the
// HTTPRoute's kinds of them.
func (b *ruleBuilder) grpcRule(n int, rule gwv1.GRPCRouteRule) []httpRule {
	grpcFilter := func(f gwv1.GRPCRouteFilter) gwv1.HTTPRouteFilter {
		return gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterType(f.Type), RequestHeaderModifier: f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier, RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef}
	}
	fs := make([]gwv1.HTTPRouteFilter, len(rule.Filters))
	for i, f := range rule.Filters {
		fs[i] = grpcFilter(f)
	}
	refs := make([]gwv1.HTTPBackendRef, len(rule.BackendRefs))
	for i, br := range rule.BackendRefs {
		refs[i].BackendRef = br.BackendRef
		for _, f := range br.Filters {
			refs[i].Filters = append(refs[i].Filters, grpcFilter(f))
		}
	}
	match := func(int, model.Path) *networking.HTTPMatchRequest { return nil }
	if len(rule.Matches) > 0 {
		match = func(m int, p model.Path) *networking.HTTPMatchRequest {
			return b.grpcMatch(rule.Matches[m], p.Key("matches").Index(m))
		}
	}
	return b.rule(n, rule.Name, max(1, len(rule.Matches)), match, fs, false, refs, nil)
}

// rule makes the Istio routes of rule n, one per match: the match (given
// the rule's path), the filters (http allowing the HTTPRoute-only ones),
// finish's settings and the backends.
func (b *ruleBuilder) rule(n int, name *gwv1.SectionName, matches int, match func(int, model.Path) *networking.HTTPMatchRequest,
	fs []gwv1.HTTPRouteFilter, http bool, refs []gwv1.HTTPBackendRef, finish func(*networking.HTTPRoute),
) []httpRule {
	path := specIndex("rules", n)
	out := make([]httpRule, 0, matches)
	for m := range matches {
		before := len(b.problems)
		r := &networking.HTTPRoute{Name: b.routeName(name, n)}
		if mr := match(m, path); mr != nil {
			r.Match = []*networking.HTTPMatchRequest{mr}
		}
		if len(fs) > 0 {
			b.filters(r, fs, path.Key("filters"), http)
		}
		if finish != nil {
			finish(r)
		}
		b.action(r, refs, path)
		if m > 0 {
			// The first match reported the rule's problems.
			b.problems = b.problems[:before]
		}
		out = append(out, httpRule{r: r, part: model.DerivedPart{From: b.r.meta, Path: path, Route: r.Name}})
	}
	return out
}

// routeName is a rule's name, or namespace.name.index.
func (b *ruleBuilder) routeName(name *gwv1.SectionName, n int) string {
	if name != nil {
		return string(*name)
	}
	return b.r.meta.Namespace + "." + b.r.meta.Name + "." + strconv.Itoa(n)
}

func httpMatch(m gwv1.HTTPRouteMatch) *networking.HTTPMatchRequest {
	out := &networking.HTTPMatchRequest{}
	typ, value := gwv1.PathMatchPathPrefix, "/"
	if m.Path != nil {
		if m.Path.Type != nil {
			typ = *m.Path.Type
		}
		if m.Path.Value != nil {
			value = *m.Path.Value
		}
	}
	switch typ {
	case gwv1.PathMatchExact:
		out.Uri = exact(value)
	case gwv1.PathMatchRegularExpression:
		out.Uri = regex(value)
	default:
		if value != "/" {
			value = strings.TrimSuffix(value, "/")
		}
		out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: value}}
	}
	for _, h := range m.Headers {
		if out.Headers == nil {
			out.Headers = map[string]*networking.StringMatch{}
		}
		out.Headers[string(h.Name)] = stringMatch(h.Type != nil && *h.Type == gwv1.HeaderMatchRegularExpression, h.Value)
	}
	for _, q := range m.QueryParams {
		if out.QueryParams == nil {
			out.QueryParams = map[string]*networking.StringMatch{}
		}
		out.QueryParams[string(q.Name)] = stringMatch(q.Type != nil && *q.Type == gwv1.QueryParamMatchRegularExpression, q.Value)
	}
	if m.Method != nil {
		out.Method = exact(string(*m.Method))
	}
	return out
}

func (b *ruleBuilder) grpcMatch(m gwv1.GRPCRouteMatch, path model.Path) *networking.HTTPMatchRequest {
	out := &networking.HTTPMatchRequest{}
	if mm := m.Method; mm != nil {
		re := mm.Type != nil && *mm.Type == gwv1.GRPCMethodMatchRegularExpression
		switch {
		case mm.Method == nil && mm.Service == nil:
			b.invalid(path.Key("method"), "a gRPC method match needs a service or a method")
		case mm.Service == nil:
			out.Uri = regex("/[^/]+/" + *mm.Method)
		case mm.Method == nil && re:
			out.Uri = regex("/" + *mm.Service + "/.+")
		case mm.Method == nil:
			out.Uri = &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: "/" + *mm.Service + "/"}}
		case re:
			out.Uri = regex("/" + *mm.Service + "/" + *mm.Method)
		default:
			out.Uri = exact("/" + *mm.Service + "/" + *mm.Method)
		}
	}
	for _, h := range m.Headers {
		if out.Headers == nil {
			out.Headers = map[string]*networking.StringMatch{}
		}
		out.Headers[string(h.Name)] = stringMatch(h.Type != nil && *h.Type == gwv1.GRPCHeaderMatchRegularExpression, h.Value)
	}
	return out
}

func exact(s string) *networking.StringMatch {
	return &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: s}}
}

func regex(s string) *networking.StringMatch {
	return &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: s}}
}

func stringMatch(re bool, v string) *networking.StringMatch {
	if re {
		return regex(v)
	}
	return exact(v)
}

// filters applies a rule's filters; http says whether the HTTPRoute-only
// filters (redirect, rewrite, CORS) are allowed.
func (b *ruleBuilder) filters(r *networking.HTTPRoute, fs []gwv1.HTTPRouteFilter, path model.Path, http bool) {
	for i, f := range fs {
		fp := path.Index(i)
		switch {
		case f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier:
			if h := b.headers(f.RequestHeaderModifier, fp); h != nil {
				if r.Headers == nil {
					r.Headers = &networking.Headers{}
				}
				r.Headers.Request = h
			}
		case f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier:
			if h := b.headers(f.ResponseHeaderModifier, fp); h != nil {
				if r.Headers == nil {
					r.Headers = &networking.Headers{}
				}
				r.Headers.Response = h
			}
		case f.Type == gwv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil:
			if m := b.mirror(f.RequestMirror, fp.Key("requestMirror"), http); m != nil {
				r.Mirrors = append(r.Mirrors, m)
			}
		case f.Type == gwv1.HTTPRouteFilterRequestRedirect && http && f.RequestRedirect != nil:
			r.Redirect = redirect(f.RequestRedirect)
		case f.Type == gwv1.HTTPRouteFilterURLRewrite && http:
			r.Rewrite = rewrite(f.URLRewrite)
		case f.Type == gwv1.HTTPRouteFilterCORS && http:
			r.CorsPolicy = cors(f.CORS)
		default:
			b.invalid(fp.Key("type"), fmt.Sprintf("unsupported filter type %q", f.Type))
		}
	}
}

// validHeaderValue reports whether a header value has no control
// characters but tab.
func validHeaderValue(v string) bool {
	for _, c := range []byte(v) {
		if c != '\t' && (c < 0x20 || c == 0x7f) {
			return false
		}
	}
	return true
}

func (b *ruleBuilder) headers(f *gwv1.HTTPHeaderFilter, path model.Path) *networking.Headers_HeaderOperations {
	if f == nil {
		return nil
	}
	for _, h := range append(append([]gwv1.HTTPHeader{}, f.Set...), f.Add...) {
		if !validHeaderValue(h.Value) {
			b.invalid(path, fmt.Sprintf("header %q value contains invalid characters", h.Name))
			return nil
		}
	}
	return &networking.Headers_HeaderOperations{Add: headerMap(f.Add), Set: headerMap(f.Set), Remove: f.Remove}
}

// headerMap keys headers by lower-case name; a later duplicate is ignored.
func headerMap(hs []gwv1.HTTPHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		k := strings.ToLower(string(h.Name))
		if _, ok := out[k]; !ok {
			out[k] = h.Value
		}
	}
	return out
}

func redirect(f *gwv1.HTTPRequestRedirectFilter) *networking.HTTPRedirect {
	out := &networking.HTTPRedirect{RedirectCode: 302} // the API server's default
	if f.StatusCode != nil {
		out.RedirectCode = uint32(*f.StatusCode)
	}
	if f.Hostname != nil {
		out.Authority = string(*f.Hostname)
	}
	if f.Scheme != nil {
		out.Scheme = *f.Scheme
	}
	switch {
	case f.Port != nil:
		out.RedirectPort = &networking.HTTPRedirect_Port{Port: uint32(*f.Port)}
	case f.Scheme != nil:
		out.RedirectPort = &networking.HTTPRedirect_DerivePort{DerivePort: networking.HTTPRedirect_FROM_PROTOCOL_DEFAULT}
	default:
		out.RedirectPort = &networking.HTTPRedirect_DerivePort{DerivePort: networking.HTTPRedirect_FROM_REQUEST_PORT}
	}
	if p := f.Path; p != nil {
		switch {
		case p.Type == gwv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
			out.Uri = *p.ReplaceFullPath
		case p.Type == gwv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
			out.PrefixRewrite = *p.ReplacePrefixMatch
		}
	}
	return out
}

func rewrite(f *gwv1.HTTPURLRewriteFilter) *networking.HTTPRewrite {
	if f == nil {
		return nil
	}
	out := &networking.HTTPRewrite{}
	if p := f.Path; p != nil {
		switch {
		case p.Type == gwv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
			out.Uri = strings.TrimSuffix(*p.ReplacePrefixMatch, "/")
			if out.Uri == "" {
				out.Uri = "/" // the prefix is removed
			}
		case p.Type == gwv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
			out.UriRegexRewrite = &networking.RegexRewrite{Match: "/.*", Rewrite: *p.ReplaceFullPath}
		}
	}
	if f.Hostname != nil {
		out.Authority = string(*f.Hostname)
	}
	if out.Uri == "" && out.UriRegexRewrite == nil && out.Authority == "" {
		return nil
	}
	return out
}

// cors converts a CORS filter; origins with wildcards become prefix or
// regex matches.
func cors(f *gwv1.HTTPCORSFilter) *networking.CorsPolicy {
	if f == nil {
		return nil
	}
	out := &networking.CorsPolicy{UnmatchedPreflights: networking.CorsPolicy_IGNORE}
	for _, o := range f.AllowOrigins {
		s := string(o)
		switch {
		case s == "":
		case s == "*":
			out.AllowOrigins = append(out.AllowOrigins, regex(`^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s?#]+$`))
		case !strings.Contains(s, "*"):
			out.AllowOrigins = append(out.AllowOrigins, exact(s))
		case strings.Count(s, "*") == 1 && strings.HasSuffix(s, "*"):
			out.AllowOrigins = append(out.AllowOrigins, &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: strings.TrimSuffix(s, "*")}})
		default:
			out.AllowOrigins = append(out.AllowOrigins, regex("^"+strings.ReplaceAll(regexp.QuoteMeta(s), `\*`, ".*")+"$"))
		}
	}
	if f.AllowCredentials != nil && *f.AllowCredentials {
		out.AllowCredentials = wrapperspb.Bool(true)
	}
	for _, m := range f.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	for _, h := range f.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, string(h))
	}
	for _, h := range f.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, string(h))
	}
	// The CRD defaults maxAge to 5 seconds and allows no less than 1, so
	// zero means the field was left out and istiod sees the default.
	maxAge := cmp.Or(f.MaxAge, 5)
	out.MaxAge = durationpb.New(time.Duration(maxAge) * time.Second)
	return out
}

// retries converts a retry stanza: connection errors always retried, two
// attempts unless given.
func retries(r *gwv1.HTTPRouteRetry) *networking.HTTPRetry {
	on := []string{"connect-failure", "refused-stream", "unavailable", "cancelled"}
	for _, c := range r.Codes {
		on = append(on, strconv.Itoa(int(c)))
	}
	out := &networking.HTTPRetry{Attempts: 2, RetryOn: strings.Join(on, ",")}
	if r.Attempts != nil {
		out.Attempts = int32(*r.Attempts)
	}
	if out.Attempts == 0 {
		out.RetryOn = ""
	}
	if r.Backoff != nil {
		out.Backoff = durationpb.New(duration(r.Backoff))
	}
	return out
}

func (b *ruleBuilder) mirror(f *gwv1.HTTPRequestMirrorFilter, path model.Path, http bool) *networking.HTTPMirrorPolicy {
	first := len(b.problems)
	dst, ok := b.destination(gwv1.BackendRef{BackendObjectReference: f.BackendRef}, func() model.Path { return path.Key("backendRef") })
	if !ok {
		// An HTTPRoute drops a mirror it cannot build and keeps its
		// rule; a GRPCRoute loses every rule.
		for i := first; i < len(b.problems); i++ {
			b.problems[i].hard = !http
		}
		b.hard = false
		for _, p := range b.problems {
			b.hard = b.hard || p.hard
		}
		return nil
	}
	out := &networking.HTTPMirrorPolicy{Destination: dst}
	switch {
	case f.Fraction != nil:
		den := int32(100)
		if f.Fraction.Denominator != nil {
			den = *f.Fraction.Denominator
		}
		if den != 0 {
			out.Percentage = &networking.Percent{Value: 100 * float64(f.Fraction.Numerator) / float64(den)}
		}
	case f.Percent != nil:
		out.Percentage = &networking.Percent{Value: float64(*f.Percent)}
	}
	return out
}

// action sets the destinations of the rule at path, or a 500 when no
// backend has weight and there is no redirect.
func (b *ruleBuilder) action(r *networking.HTTPRoute, refs []gwv1.HTTPBackendRef, path model.Path) {
	var buf [4]backend
	backends, ok := b.backends(buf[:0], len(refs), func(i int) *gwv1.BackendRef { return &refs[i].BackendRef },
		func(i int) model.Path { return path.Key("backendRefs").Index(i) })
	if !ok && r.Redirect == nil {
		r.DirectResponse = &networking.HTTPDirectResponse{Status: 500}
		return
	}
	if len(backends) > 0 {
		r.Route = make([]*networking.HTTPRouteDestination, 0, len(backends))
	}
	for _, be := range backends {
		rd := &networking.HTTPRouteDestination{Destination: be.dst, Weight: be.weight}
		for j, f := range refs[be.i].Filters {
			fp := path.Key("backendRefs").Index(be.i).Key("filters").Index(j)
			switch f.Type {
			case gwv1.HTTPRouteFilterRequestHeaderModifier, gwv1.HTTPRouteFilterResponseHeaderModifier:
				h := b.headers(f.RequestHeaderModifier, fp)
				if f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier {
					h = b.headers(f.ResponseHeaderModifier, fp)
				}
				if h == nil {
					continue
				}
				if rd.Headers == nil {
					rd.Headers = &networking.Headers{}
				}
				if f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier {
					rd.Headers.Request = h
				} else {
					rd.Headers.Response = h
				}
			default:
				b.invalid(fp.Key("type"), fmt.Sprintf("unsupported filter type %q", f.Type))
			}
		}
		r.Route = append(r.Route, rd)
	}
}

// l4Destinations are a TCP or TLS rule's destinations; a rule whose
// backends all lack weight sends to a cluster that does not exist.
func (b *ruleBuilder) l4Destinations(refs []gwv1.BackendRef, path model.Path) []*networking.RouteDestination {
	var buf [4]backend
	backends, ok := b.backends(buf[:0], len(refs), func(i int) *gwv1.BackendRef { return &refs[i] }, path.Index)
	if !ok {
		return []*networking.RouteDestination{{Destination: &networking.Destination{Host: "internal.cluster.local", Subset: "zero-weight",
			Port: &networking.PortSelector{Number: 65535}}}}
	}
	out := make([]*networking.RouteDestination, 0, len(backends))
	for _, be := range backends {
		out = append(out, &networking.RouteDestination{Destination: be.dst, Weight: be.weight})
	}
	return out
}

// backend is a backendRef with weight, resolved.
type backend struct {
	i      int // index in backendRefs
	dst    *networking.Destination
	weight int32 // 0 when it is the only one
}

// backends resolves the n backendRefs (ref gives each, at the path at
// makes) with weight, appended to out; ok is false when no backend has
// any.
func (b *ruleBuilder) backends(out []backend, n int, ref func(int) *gwv1.BackendRef, at func(int) model.Path) (_ []backend, ok bool) {
	for i := range n {
		if w := weight(*ref(i)); w > 0 {
			dst, _ := b.destination(*ref(i), func() model.Path { return at(i) })
			out = append(out, backend{i: i, dst: dst, weight: int32(w)})
		}
	}
	if len(out) == 1 {
		out[0].weight = 0
	}
	return out, len(out) > 0
}

func weight(ref gwv1.BackendRef) int {
	if ref.Weight == nil {
		return 1
	}
	return int(*ref.Weight)
}

// destination resolves a backendRef (docs/semantics/gateway-api.md §G3.5);
// ok is false when istiod would report it, at the path at makes (only
// then). A destination istiod cannot reach still routes (to a cluster
// that does not exist: a 500).
func (b *ruleBuilder) destination(ref gwv1.BackendRef, at func() model.Path) (*networking.Destination, bool) {
	c, r := b.c, b.r
	group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, "", "Service", r.meta.Namespace)
	k := r.kind
	refName := string(ref.Name)
	if ns != r.meta.Namespace && !b.mesh && !c.granted(r.kind, r.meta.Namespace, group, kind, ns, string(ref.Name)) {
		b.add(problem{path: at(), diag: func(o diag.ObjectRef) diag.Diagnostic {
			return diag.BackendDenied.At(o, k, r.name(), kind+" "+ns+"/"+refName, ns, k, r.meta.Namespace)
		}})
		return &networking.Destination{}, false
	}
	var h string
	switch {
	case group == "" && kind == "Service", group == "multicluster.x-k8s.io" && kind == "ServiceImport":
		if strings.Contains(string(ref.Name), ".") {
			b.invalid(at().Key("name"), "service name invalid; the name of the Service must be used, not the hostname")
			return nil, false
		}
		h = c.serviceHost(string(ref.Name), ns)
	case group == model.GroupNetworking && kind == "Hostname":
		if ref.Namespace != nil {
			b.invalid(at().Key("namespace"), "namespace may not be set with Hostname type")
			return nil, false
		}
		h = string(ref.Name)
	default:
		gk := kind // a kind of the core group is named alone
		if group != "" {
			gk = group + "/" + kind
		}
		b.add(problem{path: at(), diag: func(o diag.ObjectRef) diag.Diagnostic {
			return diag.BackendMissing.At(o, k, r.name(), gk+" "+ns+"/"+refName, "istiod does not route to this kind in its default configuration (InvalidKind)")
		}})
		return &networking.Destination{}, false
	}
	if ref.Port == nil {
		b.invalid(at(), "port is required in backendRef")
		return nil, false
	}
	ok := true
	if svc := c.services.get(nsName{ns, string(ref.Name)}); kind != "Hostname" && svc == nil && c.services.has(ns) {
		ok = false
		b.add(problem{path: at(), diag: func(o diag.ObjectRef) diag.Diagnostic {
			return diag.BackendMissing.At(o, k, r.name(), "Service "+ns+"/"+refName, "no such Service in the input (BackendNotFound)")
		}})
	}
	if kind == "Hostname" && !c.serviceExists(h, ns) {
		ok = false
		b.add(problem{path: at(), diag: func(o diag.ObjectRef) diag.Diagnostic {
			return diag.BackendMissing.At(o, k, r.name(), "Hostname "+h, "no ServiceEntry of the input has this host (BackendNotFound)")
		}})
	}
	return &networking.Destination{Host: h, Port: &networking.PortSelector{Number: uint32(*ref.Port)}}, ok
}
