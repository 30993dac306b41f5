package load

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// virtualService: istiod's ValidateVirtualService. The unreachable-rule
// warnings it also returns are MC5003's (internal/lint), not repeated here.
func (c *istioChecks) virtualService(vs *networking.VirtualService, spec model.Path) {
	if len(vs.GetHosts()) == 0 {
		// Without hosts it is a delegate: only HTTP routes make sense.
		for _, f := range []struct {
			name string
			n    int
		}{{"gateways", len(vs.GetGateways())}, {"tls", len(vs.GetTls())}, {"tcp", len(vs.GetTcp())}} {
			if f.n > 0 {
				c.addf(spec.Key(f.name), "a delegate VirtualService (one without hosts) with %s is rejected by istiod's validation: delegates take http routes only", f.name)
			}
		}
	}
	toGateway := len(vs.GetGateways()) > 0 && !slices.Contains(vs.GetGateways(), "mesh")
	toMesh := !toGateway
	c.gatewayNames(vs.GetGateways(), spec.Key("gateways"))
	if !toGateway {
		for i, r := range vs.GetHttp() {
			for j, m := range r.GetMatch() {
				at := spec.Key("http").Index(i).Key("match").Index(j)
				for _, f := range []struct {
					name string
					h    map[string]*networking.StringMatch
				}{{"headers", m.GetHeaders()}, {"withoutHeaders", m.GetWithoutHeaders()}} {
					for _, k := range slices.Sorted(maps.Keys(f.h)) {
						if jwtClaim(k) {
							c.addf(at.Key(f.name).Key(k), "routing on JWT claim %q is rejected by istiod's validation for sidecars: it works only on gateways; bind the VirtualService to a gateway", k)
						}
					}
				}
			}
		}
	}
	sni := slices.ContainsFunc(vs.GetTls(), func(t *networking.TLSRoute) bool {
		return slices.ContainsFunc(t.GetMatch(), func(m *networking.TLSMatchAttributes) bool { return len(m.GetSniHosts()) > 0 })
	})
	valid := true
	for i, h := range vs.GetHosts() {
		at := spec.Key("hosts").Index(i)
		msg := wildcardDomainProblem(h)
		if toGateway && sni && strings.HasPrefix(h, "outbound_") {
			msg = ""
		}
		switch {
		case msg != "" && !isIP(h):
			c.addf(at, "host %q is rejected by istiod's validation: %s", h, msg)
			valid = false
		case msg == "" && toMesh && h == "*":
			c.addf(at, "host \"*\" is rejected by istiod's validation for a VirtualService of the mesh (sidecars): name the hosts, or bind it to gateways only")
			valid = false
		}
	}
	if valid {
		hosts := vs.GetHosts()
		for i := range hosts {
			for j := i + 1; j < len(hosts); j++ {
				if host.Name(hosts[i]).Matches(host.Name(hosts[j])) {
					c.addf(spec.Key("hosts").Index(j), "hosts %q and %q overlap: istiod's validation rejects overlapping hosts in one VirtualService; keep one", hosts[i], hosts[j])
				}
			}
		}
	}
	if len(vs.GetHttp()) == 0 && len(vs.GetTcp()) == 0 && len(vs.GetTls()) == 0 {
		c.add(spec, "a VirtualService without http, tcp or tls routes is rejected by istiod's validation: add routes")
	}
	for i, r := range vs.GetHttp() {
		c.httpRoute(r, spec.Key("http").Index(i), len(vs.GetHosts()) == 0)
	}
	for i, r := range vs.GetTls() {
		c.tlsRoute(r, vs, toGateway, spec.Key("tls").Index(i))
	}
	for i, r := range vs.GetTcp() {
		at := spec.Key("tcp").Index(i)
		for j, m := range r.GetMatch() {
			c.l4Match(m.GetDestinationSubnets(), m.GetPort(), m.GetSourceLabels(), m.GetGateways(), at.Key("match").Index(j))
		}
		if len(r.GetRoute()) == 0 {
			c.add(at, "a TCP route without route destinations is rejected by istiod's validation: add route")
		}
		c.routeDestinations(r.GetRoute(), at.Key("route"))
	}
	c.exportTo(vs.GetExportTo(), spec, false, false)
}

// jwtClaim: a header name that routes on a JWT claim,
// "@request.auth.claims.NAME" or "@request.auth.claims[NAME]".
func jwtClaim(name string) bool {
	const prefix = "@request.auth.claims"
	if !strings.HasPrefix(strings.ToLower(name), prefix) {
		return false
	}
	rest := name[len(prefix):]
	return strings.HasPrefix(rest, ".") && len(rest) > 1 ||
		strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") && len(rest) > 2
}

// gatewayNames: gateway references are "namespace/name", or a bare name
// (then a DNS name; "name.namespace" is legacy and warned about). Like
// istiod, checking stops at the first bare name.
func (c *istioChecks) gatewayNames(names []string, p model.Path) {
	for i, g := range names {
		at := p.Index(i)
		ns, name, ok := strings.Cut(g, "/")
		if !ok {
			if first, rest, dotted := strings.Cut(g, "."); dotted {
				c.warnf(at, "gateway %q uses the legacy name.namespace form: istiod warns; write %q", g, rest+"/"+first)
			}
			if msg := fqdnProblem(g); msg != "" {
				c.addf(at, "gateway %q is rejected by istiod's validation: %s", g, msg)
			}
			return
		}
		switch {
		case ns == "" || name == "":
			c.addf(at, "gateway %q is rejected by istiod's validation: it needs a namespace and a name, namespace/name", g)
		case !isDNSLabel(ns):
			c.addf(at, "gateway %q is rejected by istiod's validation: namespace %q is not a DNS label", g, ns)
		case !isDNSLabel(name):
			c.addf(at, "gateway %q is rejected by istiod's validation: name %q is not a DNS label", g, name)
		}
	}
}

// httpRoute: istiod's rules for one HTTP route. delegate is set in a
// VirtualService without hosts.
func (c *istioChecks) httpRoute(r *networking.HTTPRoute, p model.Path, delegate bool) {
	// Paths are built only for parts that are set: this runs on every
	// route of every VirtualService.
	c.httpRouteKind(r, p, delegate)
	c.httpMatches(r, p)
	if r.GetHeaders() != nil {
		c.headerOps(r.GetHeaders(), p.Key("headers"))
	}
	if r.GetCorsPolicy() != nil {
		c.cors(r.GetCorsPolicy(), p.Key("corsPolicy"))
	}
	if r.GetFault() != nil {
		c.fault(r.GetFault(), p.Key("fault"))
	}
	//lint:ignore SA1019 istiod warns about this deprecated field, so meshc reads it
	if mp := r.GetMirrorPercent(); mp != nil {
		if mp.GetValue() > 100 {
			c.addf(p.Key("mirrorPercent"), "mirrorPercent %d is rejected by istiod's validation: at most 100", mp.GetValue())
		}
		c.warnf(p.Key("mirrorPercent"), "mirrorPercent is deprecated: istiod warns; use mirrorPercentage")
	}
	if mp := r.GetMirrorPercentage(); mp != nil && (mp.GetValue() > 100 || mp.GetValue() < 0) {
		c.addf(p.Key("mirrorPercentage"), "mirrorPercentage %g is rejected by istiod's validation: it must be 0..100", mp.GetValue())
	}
	if r.GetMirror() != nil {
		c.destination(r.GetMirror(), p, "mirror")
	}
	for i, m := range r.GetMirrors() {
		at := p.Key("mirrors").Index(i)
		if m.GetDestination() == nil {
			c.add(at, "a mirror without destination is rejected by istiod's validation")
			continue
		}
		c.destination(m.GetDestination(), at, "destination")
		if v := m.GetPercentage().GetValue(); v > 100 || v < 0 {
			c.addf(at.Key("percentage"), "mirror percentage %g is rejected by istiod's validation: it must be 0..100", v)
		}
	}
	if r.GetRedirect() != nil {
		c.redirect(r.GetRedirect(), r.GetMatch(), p.Key("redirect"))
	}
	if dr := r.GetDirectResponse(); dr != nil {
		size := len(dr.GetBody().GetString_()) + len(dr.GetBody().GetBytes())
		switch {
		case size > 1<<20:
			c.addf(p.Key("directResponse").Key("body"), "a direct response body of %d bytes is rejected by istiod's validation: at most 1MB", size)
		case size > 100<<10:
			c.warnf(p.Key("directResponse").Key("body"), "a direct response body of %d bytes: istiod warns that bodies over 100KB slow the control plane", size)
		}
		c.httpStatus(int64(dr.GetStatus()), p.Key("directResponse").Key("status"))
	}
	if r.GetRetries() != nil {
		c.retries(r.GetRetries(), p.Key("retries"))
	}
	if r.GetRewrite() != nil || r.GetHeaders() != nil {
		c.rewrite(r.GetRewrite(), r.GetHeaders(), p)
	}
	var weights []int32
	for i, d := range r.GetRoute() {
		at := p.Key("route").Index(i)
		if d.GetDestination() == nil {
			c.add(at, "a route without destination is rejected by istiod's validation")
		}
		if d.GetHeaders() != nil {
			c.headerOps(d.GetHeaders(), at.Key("headers"))
		}
		c.destination(d.GetDestination(), at, "destination")
		c.weight(d.GetWeight(), at)
		weights = append(weights, d.GetWeight())
	}
	if len(weights) > 1 {
		c.totalWeight(weights, p.Key("route"))
	}
	if r.GetTimeout() != nil {
		c.duration(r.GetTimeout(), p.Key("timeout"))
	}
}

// httpRouteKind: what a route does is one of route, redirect, direct
// response or delegate, and some fields exclude others.
func (c *istioChecks) httpRouteKind(r *networking.HTTPRoute, p model.Path, delegate bool) {
	if !delegate && r.GetDelegate() != nil {
		if r.GetRedirect() != nil {
			c.add(p.Key("redirect"), "a route with delegate and redirect is rejected by istiod's validation: a delegating route takes neither redirect nor route")
		}
		if r.GetRoute() != nil {
			c.add(p.Key("route"), "a route with delegate and route is rejected by istiod's validation: a delegating route takes neither redirect nor route")
		}
		return
	}
	if delegate && r.GetDelegate() != nil {
		c.add(p.Key("delegate"), "a route of a delegate VirtualService with delegate is rejected by istiod's validation: delegation is one level deep")
	}
	both := func(a, b string) {
		c.addf(p.Key(b), "a route with both %s and %s is rejected by istiod's validation: use one of them", a, b)
	}
	switch {
	case r.GetRedirect() != nil:
		if len(r.GetRoute()) > 0 {
			both("redirect", "route")
		}
		if r.GetFault() != nil {
			both("redirect", "fault")
		}
		if r.GetRewrite() != nil {
			both("redirect", "rewrite")
		}
		if r.GetDirectResponse() != nil {
			both("redirect", "directResponse")
		}
	case r.GetDirectResponse() != nil:
		if len(r.GetRoute()) > 0 {
			both("directResponse", "route")
		}
		if r.GetFault() != nil {
			both("directResponse", "fault")
		}
		if r.GetRewrite() != nil {
			both("directResponse", "rewrite")
		}
	case len(r.GetRoute()) == 0:
		c.add(p, "an HTTP route without route, redirect or directResponse is rejected by istiod's validation: say where requests go")
	}
	if r.GetMirror() != nil && len(r.GetMirrors()) > 0 {
		c.add(p.Key("mirrors"), "a route with both mirror and mirrors is rejected by istiod's validation: use one of them")
	}
}

var pseudoHeaders = []string{":method", ":scheme", ":authority", ":path", ":status"}

// httpMatches: header names, string matches and regexes, ports, source
// labels, gateways and source namespaces of a route's matches.
func (c *istioChecks) httpMatches(r *networking.HTTPRoute, p model.Path) {
	for j, m := range r.GetMatch() {
		at := p.Key("match").Index(j)
		for _, f := range []struct {
			name string
			h    map[string]*networking.StringMatch
		}{{"headers", m.GetHeaders()}, {"withoutHeaders", m.GetWithoutHeaders()}} {
			for _, k := range slices.Sorted(maps.Keys(f.h)) {
				hp := at.Key(f.name).Key(k)
				if k == "" || !jwtClaim(k) && !slices.Contains(pseudoHeaders, k) && !headerNameRE.MatchString(k) {
					c.addf(hp, "header name %q is rejected by istiod's validation: it must be an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", k)
				}
				if f.name == "withoutHeaders" && f.h[k].GetRegex() == "*" {
					continue
				}
				c.stringMatch(f.h[k], hp, true)
			}
		}
		c.stringMatch(m.GetUri(), at.Key("uri"), false)
		c.stringMatch(m.GetScheme(), at.Key("scheme"), true)
		c.stringMatch(m.GetMethod(), at.Key("method"), true)
		c.stringMatch(m.GetAuthority(), at.Key("authority"), true)
		for _, k := range slices.Sorted(maps.Keys(m.GetQueryParams())) {
			c.stringMatch(m.GetQueryParams()[k], at.Key("queryParams").Key(k), true)
		}
		if m.GetPort() != 0 {
			c.port(int64(m.GetPort()), at.Key("port"))
		}
		c.labels(m.GetSourceLabels(), at.Key("sourceLabels"))
		c.gatewayNames(m.GetGateways(), at.Key("gateways"))
		if ns := m.GetSourceNamespace(); ns != "" && !isDNSLabel(ns) {
			c.addf(at.Key("sourceNamespace"), "sourceNamespace %q is rejected by istiod's validation: it must be a namespace name", ns)
		}
	}
}

var headerNameRE = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~A-Za-z0-9]+$")

// stringMatch: a regex must be RE2 and at most 1024 bytes, and (except
// for uri) a prefix may not be empty.
func (c *istioChecks) stringMatch(sm *networking.StringMatch, p model.Path, prefixes bool) {
	switch sm.GetMatchType().(type) {
	case *networking.StringMatch_Prefix:
		if prefixes && sm.GetPrefix() == "" {
			c.add(p.Key("prefix"), "an empty prefix match is rejected by istiod's validation: remove the match or give a prefix")
		}
	case *networking.StringMatch_Regex:
		c.regex(sm.GetRegex(), p.Key("regex"))
	}
}

// regex: istiod compiles match regexes with Go's RE2 engine.
func (c *istioChecks) regex(re string, p model.Path) {
	switch {
	case re == "":
		c.add(p, "an empty regex is rejected by istiod's validation")
	case len(re) > 1024:
		c.addf(p, "a regex of %d bytes is rejected by istiod's validation: at most 1024", len(re))
	default:
		if _, err := regexp.Compile(re); err != nil {
			c.addf(p, "regex %q is rejected by istiod's validation: %v; Istio takes RE2 syntax (no lookaround or backreferences)", re, err)
		}
	}
}

// headerOps: header names and values a route or destination adds, sets
// or removes. Request headers may set the authority; response headers
// may not touch Host; no pseudo-header (":...") may be written.
func (c *istioChecks) headerOps(h *networking.Headers, p model.Path) {
	for _, side := range []struct {
		name string
		ops  *networking.Headers_HeaderOperations
	}{{"request", h.GetRequest()}, {"response", h.GetResponse()}} {
		sp := p.Key(side.name)
		for _, op := range []struct {
			name string
			kv   map[string]string
		}{{"add", side.ops.GetAdd()}, {"set", side.ops.GetSet()}} {
			for _, k := range slices.Sorted(maps.Keys(op.kv)) {
				at := sp.Key(op.name).Key(k)
				c.headerName(k, at, side.name == "request")
				c.headerValue(op.kv[k], at)
			}
		}
		for i, k := range side.ops.GetRemove() {
			c.headerName(k, sp.Key("remove").Index(i), false)
		}
	}
}

func (c *istioChecks) headerName(k string, p model.Path, authority bool) {
	isAuthority := strings.EqualFold(k, ":authority") || strings.EqualFold(k, "host")
	switch {
	case k == "":
		c.add(p, "an empty header name is rejected by istiod's validation")
	case authority && isAuthority:
	case strings.EqualFold(k, "host"):
		c.addf(p, "header %q is rejected by istiod's validation here: Host cannot be set or removed; use rewrite.authority for requests", k)
	case strings.HasPrefix(k, ":"):
		c.addf(p, "header %q is rejected by istiod's validation: pseudo-headers (\":...\") cannot be written", k)
	}
}

// headerValue: no control characters, and Envoy's %VARIABLE% syntax:
// "%%" is a literal '%', anything else opens %NAME% or %NAME(args)%,
// where args is a bare string up to ')' or a JSON array of strings.
func (c *istioChecks) headerValue(v string, p model.Path) {
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		c.addf(p, "header value %q is rejected by istiod's validation: it contains control characters", v)
		return
	}
	if msg := formatterProblem(v); msg != "" {
		c.addf(p, "header value %q is rejected by istiod's validation: %s; write %%%% for a literal %%", v, msg)
	}
}

// formatterProblem walks a header value as Envoy's formatter parses it.
func formatterProblem(v string) string {
	const (
		literal     = iota
		name        // after an opening '%'
		argsStart   // after '(': '[' or a bare string
		expectQuote // in an argument array, before a string
		str         // a string: ends at ')' (bare) or '"' (array item)
		afterItem   // ',' or ']'
		argsEnd     // ')'
		varEnd      // the closing '%'
	)
	state := literal
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch state {
		case literal:
			if ch != '%' {
				continue
			}
			if i+1 == len(v) {
				return "an unescaped % ends it"
			}
			if v[i+1] == '%' {
				i++
				continue
			}
			state = name
		case name:
			switch ch {
			case '%':
				state = literal
			case '(':
				state = argsStart
			}
		case argsStart:
			switch {
			case ch == '[':
				state = expectQuote
			case ch != ' ':
				state = str
			}
		case expectQuote:
			switch {
			case ch == '"':
				state = str
			case ch != ' ':
				return "a %VARIABLE([...])% argument must be a quoted string"
			}
		case str:
			switch ch {
			case '\\':
				if i+1 == len(v) {
					return "a backslash ends it"
				}
				i++
			case ')':
				state = varEnd
			case '"':
				state = afterItem
			}
		case afterItem:
			switch {
			case ch == ',':
				state = expectQuote
			case ch == ']':
				state = argsEnd
			case ch != ' ':
				return "expected ',' or ']' in a %VARIABLE([...])% argument list"
			}
		case argsEnd:
			switch {
			case ch == ')':
				state = varEnd
			case ch != ' ':
				return "expected ')' after a %VARIABLE([...])% argument list"
			}
		case varEnd:
			switch {
			case ch == '%':
				state = literal
			case ch != ' ':
				return "expected '%' after a %VARIABLE(...)% argument"
			}
		}
	}
	if state != literal {
		return "a %VARIABLE% is not closed"
	}
	return ""
}

var corsMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace}

func (c *istioChecks) cors(cp *networking.CorsPolicy, p model.Path) {
	if cp == nil {
		return
	}
	for i, o := range cp.GetAllowOrigins() {
		at := p.Key("allowOrigins").Index(i)
		if o.GetExact() == "" && o.GetPrefix() == "" && o.GetRegex() == "" {
			c.add(at, "an empty allowOrigins match is rejected by istiod's validation: give exact, prefix or regex")
			continue
		}
		c.stringMatch(o, at, false)
	}
	for i, m := range cp.GetAllowMethods() {
		if !slices.Contains(corsMethods, m) {
			c.addf(p.Key("allowMethods").Index(i), "CORS method %q is rejected by istiod's validation: use an upper-case HTTP method (%s)", m, strings.Join(corsMethods, ", "))
		}
	}
	for _, f := range []struct {
		name  string
		names []string
	}{{"allowHeaders", cp.GetAllowHeaders()}, {"exposeHeaders", cp.GetExposeHeaders()}} {
		for i, h := range f.names {
			if h != "*" && !headerNameRE.MatchString(h) {
				c.addf(p.Key(f.name).Index(i), "header name %q is rejected by istiod's validation: it must be an HTTP token or \"*\"", h)
			}
		}
	}
	if ma := cp.GetMaxAge(); ma != nil {
		c.duration(ma, p.Key("maxAge"))
		if ma.GetNanos() > 0 {
			c.add(p.Key("maxAge"), "a CORS maxAge with a fraction of a second is rejected by istiod's validation: use whole seconds")
		}
	}
}

func (c *istioChecks) fault(f *networking.HTTPFaultInjection, p model.Path) {
	if f == nil {
		return
	}
	if f.GetAbort() == nil && f.GetDelay() == nil {
		c.add(p, "a fault without abort or delay is rejected by istiod's validation")
	}
	if a := f.GetAbort(); a != nil {
		ap := p.Key("abort")
		c.percentage(a.GetPercentage().GetValue(), a.GetPercentage() != nil, ap.Key("percentage"))
		switch a.GetErrorType().(type) {
		case *networking.HTTPFaultInjection_Abort_GrpcStatus:
			if !slices.Contains(grpcStatuses, a.GetGrpcStatus()) {
				c.addf(ap.Key("grpcStatus"), "grpcStatus %q is rejected by istiod's validation: use a gRPC code name such as UNAVAILABLE or NOT_FOUND", a.GetGrpcStatus())
			}
		case *networking.HTTPFaultInjection_Abort_Http2Error:
			c.add(ap.Key("http2Error"), "an http2Error abort is rejected by istiod's validation: it is not supported; use httpStatus")
		case *networking.HTTPFaultInjection_Abort_HttpStatus:
			c.httpStatus(int64(a.GetHttpStatus()), ap.Key("httpStatus"))
		default:
			c.warnf(ap, "an abort without httpStatus or grpcStatus: istiod warns and the fault aborts nothing; set one")
		}
	}
	if d := f.GetDelay(); d != nil {
		dp := p.Key("delay")
		c.percentage(d.GetPercentage().GetValue(), d.GetPercentage() != nil, dp.Key("percentage"))
		c.duration(d.GetFixedDelay(), dp.Key("fixedDelay"))
		if d.GetExponentialDelay() != nil {
			c.duration(d.GetExponentialDelay(), dp.Key("exponentialDelay"))
			c.add(dp.Key("exponentialDelay"), "exponentialDelay is rejected by istiod's validation: it is not supported; use fixedDelay")
		}
	}
}

// grpcStatuses are the gRPC code names istiod accepts.
var grpcStatuses = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
	"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// percentage: 0, or 0.0001..100.
func (c *istioChecks) percentage(v float64, set bool, p model.Path) {
	if set && (v < 0 || v > 100 || v > 0 && v < 0.0001) {
		c.addf(p, "percentage %g is rejected by istiod's validation: it must be 0 or 0.0001..100", v)
	}
}

// httpStatus: istiod admits 200..600.
func (c *istioChecks) httpStatus(s int64, p model.Path) {
	if s < 200 || s > 600 {
		c.addf(p, "HTTP status %d is rejected by istiod's validation: it must be 200..600", s)
	}
}

// destination: a host that is not "*", a DNS-1123 subset name, a port.
// The destination is field key of parent; its path is built only for a
// finding, as this runs on every destination.
func (c *istioChecks) destination(d *networking.Destination, parent model.Path, key string) {
	if d == nil {
		return
	}
	if h := d.GetHost(); h == "*" {
		c.add(parent.Key(key).Key("host"), "destination host \"*\" is rejected by istiod's validation: name a service")
	} else if msg := wildcardDomainProblem(h); msg != "" {
		c.addf(parent.Key(key).Key("host"), "destination host %q is rejected by istiod's validation: %s", h, msg)
	}
	if s := d.GetSubset(); s != "" && !isDNSLabel(s) {
		c.subsetName(s, parent.Key(key).Key("subset"))
	}
	if n := d.GetPort().GetNumber(); d.GetPort() != nil && (n < 1 || n > 65535) {
		c.port(int64(n), parent.Key(key).Key("port").Key("number"))
	}
}

func (c *istioChecks) subsetName(s string, p model.Path) {
	switch {
	case s == "":
		c.add(p, "an empty subset name is rejected by istiod's validation")
	case !isDNSLabel(s):
		c.addf(p, "subset name %q is rejected by istiod's validation: it must be a DNS label (letters, digits and '-', at most 63)", s)
	}
}

// weight: p is the route destination's path.
func (c *istioChecks) weight(w int32, p model.Path) {
	if w < 0 {
		c.addf(p.Key("weight"), "weight %d is rejected by istiod's validation: weights are not negative", w)
	}
}

// totalWeight: several destinations whose weights are all 0 send nothing.
func (c *istioChecks) totalWeight(weights []int32, p model.Path) {
	var sum int32
	for _, w := range weights {
		sum += w
	}
	if len(weights) > 1 && sum == 0 {
		c.add(p, "destinations whose weights add up to 0 are rejected by istiod's validation: give them weights")
	}
}

func (c *istioChecks) redirect(r *networking.HTTPRedirect, matches []*networking.HTTPMatchRequest, p model.Path) {
	if r == nil {
		return
	}
	// istiod stops at the first problem of a redirect.
	switch {
	case r.GetUri() != "" && r.GetPrefixRewrite() != "":
		c.add(p, "a redirect with both uri and prefixRewrite is rejected by istiod's validation: use one")
	case r.GetPrefixRewrite() != "" && slices.ContainsFunc(matches, func(m *networking.HTTPMatchRequest) bool {
		return m.GetUri() != nil && m.GetUri().GetPrefix() == "" && m.GetUri().GetExact()+m.GetUri().GetRegex() != ""
	}):
		c.add(p.Key("prefixRewrite"), "a redirect prefixRewrite with a non-prefix uri match is rejected by istiod's validation: match uri by prefix")
	case r.GetUri() == "" && r.GetPrefixRewrite() == "" && r.GetAuthority() == "" && r.GetRedirectPort() == nil && r.GetScheme() == "":
		c.add(p, "a redirect that changes nothing is rejected by istiod's validation: set uri, prefixRewrite, authority, scheme or port")
	case r.GetRedirectCode() != 0 && (r.GetRedirectCode() < 300 || r.GetRedirectCode() > 399):
		c.addf(p.Key("redirectCode"), "redirectCode %d is rejected by istiod's validation: it must be 3xx", r.GetRedirectCode())
	case r.GetScheme() != "" && r.GetScheme() != "http" && r.GetScheme() != "https":
		c.addf(p.Key("scheme"), "redirect scheme %q is rejected by istiod's validation: use http or https", r.GetScheme())
	case r.GetPort() > 0:
		c.port(int64(r.GetPort()), p.Key("port"))
	}
}

var retryOnPolicies = []string{"5xx", "gateway-error", "reset", "reset-before-request", "connect-failure", "retriable-4xx",
	"refused-stream", "retriable-status-codes", "retriable-headers", "envoy-ratelimited", "http3-post-connect-failure",
	"cancelled", "deadline-exceeded", "internal", "resource-exhausted", "unavailable"}

func (c *istioChecks) retries(r *networking.HTTPRetry, p model.Path) {
	if r == nil {
		return
	}
	if r.GetAttempts() < 0 {
		c.addf(p.Key("attempts"), "retries.attempts %d is rejected by istiod's validation: it cannot be negative", r.GetAttempts())
	}
	if r.GetAttempts() == 0 && (r.GetPerTryTimeout() != nil || r.GetRetryOn() != "" || r.GetRetryRemoteLocalities() != nil) {
		c.add(p, "a retry policy with attempts 0 (retries off) and perTryTimeout, retryOn or retryRemoteLocalities is rejected by istiod's validation: set attempts or drop the others")
	}
	c.duration(r.GetPerTryTimeout(), p.Key("perTryTimeout"))
	if on := r.GetRetryOn(); on != "" {
		for _, policy := range strings.Split(on, ",") {
			code, _ := strconv.Atoi(policy)
			if http.StatusText(code) == "" && !slices.Contains(retryOnPolicies, policy) {
				c.addf(p.Key("retryOn"), "retryOn %q is rejected by istiod's validation: use Envoy's retry conditions (5xx, connect-failure, ...) or HTTP status codes, comma-separated without spaces", policy)
			}
		}
	}
	c.duration(r.GetBackoff(), p.Key("backoff"))
}

func (c *istioChecks) rewrite(rw *networking.HTTPRewrite, h *networking.Headers, p model.Path) {
	if rw != nil {
		rp := p.Key("rewrite")
		re := rw.GetUriRegexRewrite()
		switch {
		case rw.GetUri() != "" && re != nil:
			c.add(rp, "a rewrite with both uri and uriRegexRewrite is rejected by istiod's validation: use one")
		case rw.GetUri() == "" && re == nil && rw.GetAuthority() == "":
			c.add(rp, "a rewrite that changes nothing is rejected by istiod's validation: set uri, uriRegexRewrite or authority")
		case re != nil && (re.GetMatch() == "" || re.GetRewrite() == ""):
			c.add(rp.Key("uriRegexRewrite"), "a uriRegexRewrite without match or rewrite is rejected by istiod's validation: set both")
		case re != nil:
			c.regex(re.GetMatch(), rp.Key("uriRegexRewrite").Key("match"))
		}
	}
	// The authority may be rewritten once: by rewrite.authority or one
	// request header operation on :authority or Host.
	current := rw.GetAuthority()
	for _, op := range []struct {
		name string
		kv   map[string]string
	}{{"set", h.GetRequest().GetSet()}, {"add", h.GetRequest().GetAdd()}} {
		for _, k := range slices.Sorted(maps.Keys(op.kv)) {
			if !strings.EqualFold(k, ":authority") && !strings.EqualFold(k, "host") {
				continue
			}
			if current != "" {
				c.addf(p.Key("headers").Key("request").Key(op.name).Key(k), "the authority is set twice (%q, then %q): istiod's validation rejects it; set it once", current, op.kv[k])
				return
			}
			current = op.kv[k]
		}
	}
}

// tlsRoute: a TLS route needs matches with SNI hosts that lie within the
// VirtualService's hosts, and destinations.
func (c *istioChecks) tlsRoute(r *networking.TLSRoute, vs *networking.VirtualService, toGateway bool, p model.Path) {
	if len(r.GetMatch()) == 0 {
		c.add(p, "a TLS route without match is rejected by istiod's validation: match on sniHosts")
	}
	for j, m := range r.GetMatch() {
		at := p.Key("match").Index(j)
		if len(m.GetSniHosts()) == 0 {
			c.add(at, "a TLS match without sniHosts is rejected by istiod's validation")
		}
		for k, sni := range m.GetSniHosts() {
			c.sniHost(sni, vs.GetHosts(), toGateway, at.Key("sniHosts").Index(k))
		}
		c.l4Match(m.GetDestinationSubnets(), m.GetPort(), m.GetSourceLabels(), m.GetGateways(), at)
	}
	if len(r.GetRoute()) == 0 {
		c.add(p, "a TLS route without route destinations is rejected by istiod's validation: add route")
	}
	c.routeDestinations(r.GetRoute(), p.Key("route"))
}

func (c *istioChecks) sniHost(sni string, hosts []string, toGateway bool, p model.Path) {
	msg := wildcardDomainProblem(sni)
	if toGateway && strings.HasPrefix(sni, "outbound_") {
		msg = ""
	}
	if msg != "" {
		if isIP(sni) {
			c.warnf(p, "SNI host %q is an IP address: istiod warns, as SNI carries names and most clients send none for an IP", sni)
			return
		}
		c.addf(p, "SNI host %q is rejected by istiod's validation: %s", sni, msg)
		return
	}
	for _, h := range hosts {
		if host.Name(sni).SubsetOf(host.Name(h)) {
			return
		}
	}
	c.addf(p, "SNI host %q is rejected by istiod's validation: it is not within the VirtualService's hosts [%s]", sni, strings.Join(hosts, ", "))
}

// l4Match: the parts TLS and TCP matches share.
func (c *istioChecks) l4Match(subnets []string, port uint32, source map[string]string, gateways []string, p model.Path) {
	for i, s := range subnets {
		if !ipOrCIDR(s) {
			c.addf(p.Key("destinationSubnets").Index(i), "destination subnet %q is rejected by istiod's validation: use an IP or a CIDR block", s)
		}
	}
	if port != 0 {
		c.port(int64(port), p.Key("port"))
	}
	c.labels(source, p.Key("sourceLabels"))
	c.gatewayNames(gateways, p.Key("gateways"))
}

func (c *istioChecks) routeDestinations(ds []*networking.RouteDestination, p model.Path) {
	var weights []int32
	for i, d := range ds {
		at := p.Index(i)
		if d.GetDestination() == nil {
			c.add(at, "a route without destination is rejected by istiod's validation")
		}
		c.destination(d.GetDestination(), at, "destination")
		c.weight(d.GetWeight(), at)
		weights = append(weights, d.GetWeight())
	}
	c.totalWeight(weights, p)
}
