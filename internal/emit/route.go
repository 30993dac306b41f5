package emit

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	faultcommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/fault/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	previousprioritiesv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/priority/previous_priorities/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

const (
	faultFilter  = "envoy.filters.http.fault"
	corsFilter   = "envoy.filters.http.cors"
	routerFilter = "envoy.filters.http.router"
	// defaultRetryOn is what istiod retries when a route says nothing.
	defaultRetryOn = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"
)

// routeConfiguration turns a resolved route configuration into Envoy's
// (docs/semantics/envoy-output.md §7.5, §7.6).
func (b *builder) routeConfiguration(rc *resolve.RouteConfig) *routev3.RouteConfiguration {
	out := &routev3.RouteConfiguration{
		Name:                           rc.Name,
		ValidateClusters:               wrapperspb.Bool(false),
		IgnorePortInHostMatching:       true,
		MaxDirectResponseBodySizeBytes: wrapperspb.UInt32(1 << 20),
		// Sized up front: a sidecar's port holds a vhost per service.
		VirtualHosts: make([]*routev3.VirtualHost, 0, len(rc.VirtualHosts)),
	}
	// A gateway's route several virtual hosts share is rendered once.
	shared := map[*resolve.HTTPRoute]*routev3.Route{}
	for _, vh := range rc.VirtualHosts {
		out.VirtualHosts = append(out.VirtualHosts, b.cachedVirtualHost(vh, rc.Port, shared))
	}
	return out
}

func (b *builder) virtualHost(vh *resolve.VirtualHost, port uint32, shared map[*resolve.HTTPRoute]*routev3.Route) *routev3.VirtualHost {
	if vh.CatchAll == resolve.BlackholeCatchAll {
		// Nothing routes here: Envoy answers 404.
		return &routev3.VirtualHost{Name: vh.Name, Domains: vh.Domains}
	}
	out := &routev3.VirtualHost{Name: vh.Name, Domains: vh.Domains, IncludeRequestAttemptCount: true}
	if vh.RequireTLS {
		out.RequireTls = routev3.VirtualHost_ALL
	}
	switch vh.CatchAll {
	case "block_all":
		out.Routes = []*routev3.Route{{
			Name:   "block_all",
			Match:  prefixMatch("/"),
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 502}},
		}}
		return out
	case "allow_any":
		out.Routes = []*routev3.Route{{
			Name:   "allow_any",
			Match:  prefixMatch("/"),
			Action: &routev3.Route_Route{Route: noTimeout(&routev3.RouteAction{ClusterSpecifier: cluster(vh.Routes[0].Clusters[0].Name())})},
		}}
		return out
	}
	for _, r := range vh.Routes {
		switch {
		case r.Source == nil:
			out.Routes = append(out.Routes, b.defaultRoute(r, vh.Service))
		case r.Root != nil: // a gateway's
			if shared[r] == nil {
				shared[r] = b.vsRoute(r, r.Root, port, r.TLS)
			}
			out.Routes = append(out.Routes, shared[r])
		default:
			out.Routes = append(out.Routes, b.vsRoute(r, vh.VirtualService, port, false))
		}
	}
	return out
}

func prefixMatch(p string) *routev3.RouteMatch {
	return &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: p}}
}

func cluster(name string) *routev3.RouteAction_Cluster {
	return &routev3.RouteAction_Cluster{Cluster: name}
}

// noTimeout sets istiod's defaults: no route timeout and no cap from the
// gRPC timeout header.
func noTimeout(a *routev3.RouteAction) *routev3.RouteAction {
	a.Timeout = durationpb.New(0)
	a.MaxGrpcTimeout = durationpb.New(0)
	return a
}

// defaultRoute sends everything for a service port to its cluster.
func (b *builder) defaultRoute(r *resolve.HTTPRoute, s *resolve.Service) *routev3.Route {
	to := r.Clusters[0].ID
	action := noTimeout(&routev3.RouteAction{ClusterSpecifier: cluster(to.String())})
	// istiod builds the default route's retries before it knows of a
	// hash: they keep avoiding previous hosts under one
	// (docs/semantics/envoy-output.md §7.6).
	action.RetryPolicy = retryPolicy(b.mesh.Config.GetDefaultHttpRetryPolicy(), false)
	if hash := hashOf(b.serviceHash(s, to.Port)); hash != nil {
		action.HashPolicy = []*routev3.RouteAction_HashPolicy{hash}
	}
	return &routev3.Route{
		Name:      "default",
		Match:     prefixMatch("/"),
		Decorator: &routev3.Decorator{Operation: operation(&to, "/*", "", 0)},
		Action:    &routev3.Route_Route{Route: action},
	}
}

// serviceHash is the consistent hash of a service port's default route,
// from the DestinationRule the proxy uses for the service, as istiod picks
// it (docs/semantics/envoy-output.md §7.6): the top-level hash, unless the
// port-level entry for the port sets one — an entry without a hash keeps
// the top-level one, unlike the cluster, which the entry replaces.
func (b *builder) serviceHash(s *resolve.Service, port uint32) *networking.LoadBalancerSettings_ConsistentHashLB {
	if s == nil {
		return nil
	}
	rule := b.ruleFor(s.Host)
	if rule == nil {
		return nil
	}
	ch := rule.TrafficPolicy.GetLoadBalancer().GetConsistentHash()
	for _, ps := range rule.TrafficPolicy.GetPortLevelSettings() {
		if ps.GetPort().GetNumber() == port {
			if h := ps.GetLoadBalancer().GetConsistentHash(); h != nil {
				ch = h
			}
			break
		}
	}
	return ch
}

// destinationHash is the consistent hash of a VirtualService destination
// written in namespace ns, as istiod picks it (docs/semantics/envoy-output.md §7.6):
// the subset's port-level hash, else the subset's, else the rule's
// port-level hash, else its top-level one. The rule is the one the proxy
// uses for the destination's own host, an ExternalName alias's rather
// than its target's, though the route goes to the target's cluster.
// Port-level entries are found by the destination's own port only: a
// destination without one uses none, whatever port its cluster gets.
func (b *builder) destinationHash(ns string, d *networking.Destination) *networking.LoadBalancerSettings_ConsistentHashLB {
	rule := b.ruleFor(host.FQDN(d.GetHost(), ns, b.mesh.Config.DomainSuffix))
	if rule == nil {
		return nil
	}
	var subHash, subPortHash *networking.LoadBalancerSettings_ConsistentHashLB
	for _, x := range rule.Subsets {
		if x.GetName() == d.GetSubset() {
			subHash = x.GetTrafficPolicy().GetLoadBalancer().GetConsistentHash()
			subPortHash = portLevelHash(d, x.GetTrafficPolicy().GetPortLevelSettings())
			break
		}
	}
	return cmp.Or(subPortHash, subHash, portLevelHash(d, rule.TrafficPolicy.GetPortLevelSettings()),
		rule.TrafficPolicy.GetLoadBalancer().GetConsistentHash())
}

// portLevelHash is the hash of the first port-level entry for the
// destination's port, nil when it has no port.
func portLevelHash(d *networking.Destination, settings []*networking.TrafficPolicy_PortTrafficPolicy) *networking.LoadBalancerSettings_ConsistentHashLB {
	if d.GetPort() == nil {
		return nil
	}
	for _, ps := range settings {
		if ps.GetPort().GetNumber() == d.GetPort().GetNumber() {
			return ps.GetLoadBalancer().GetConsistentHash()
		}
	}
	return nil
}

func hashOf(ch *networking.LoadBalancerSettings_ConsistentHashLB) *routev3.RouteAction_HashPolicy {
	switch {
	case ch == nil:
		return nil
	case ch.GetHttpHeaderName() != "":
		return &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{
			Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: ch.GetHttpHeaderName()}}}
	case ch.GetHttpCookie() != nil:
		c := ch.GetHttpCookie()
		cookie := &routev3.RouteAction_HashPolicy_Cookie{Name: c.GetName(), Path: c.GetPath(), Ttl: c.GetTtl()}
		for _, a := range c.GetAttributes() {
			cookie.Attributes = append(cookie.Attributes, &routev3.RouteAction_HashPolicy_CookieAttribute{Name: a.GetName(), Value: a.GetValue()})
		}
		return &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Cookie_{Cookie: cookie}}
	case ch.GetUseSourceIp():
		return &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_ConnectionProperties_{
			ConnectionProperties: &routev3.RouteAction_HashPolicy_ConnectionProperties{SourceIp: true}}}
	case ch.GetHttpQueryParameterName() != "":
		return &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_QueryParameter_{
			QueryParameter: &routev3.RouteAction_HashPolicy_QueryParameter{Name: ch.GetHttpQueryParameterName()}}}
	}
	return nil
}

// operation is the route decorator: host:port and path for a single
// outbound cluster (to), else — UnknownService being no outbound
// cluster — the VirtualService's name.
func operation(to *resolve.ClusterID, path, vsName string, port uint32) string {
	if to != nil && *to != resolve.UnknownServiceCluster {
		return string(to.Host) + ":" + strconv.FormatUint(uint64(to.Port), 10) + path
	}
	return vsName + ":" + strconv.FormatUint(uint64(port), 10) + path
}

// retryPolicy is istiod's conversion of an HTTP retry setting; nil when
// retries are turned off.
func retryPolicy(in *networking.HTTPRetry, hashed bool) *routev3.RetryPolicy {
	if in != nil && in.GetAttempts() <= 0 {
		return nil
	}
	out := &routev3.RetryPolicy{NumRetries: wrapperspb.UInt32(2), RetryOn: defaultRetryOn, HostSelectionRetryMaxAttempts: 5}
	if !hashed {
		out.RetryHostPredicate = previousHosts()
	}
	if in == nil {
		return out
	}
	out.NumRetries = wrapperspb.UInt32(uint32(in.GetAttempts()))
	if in.GetRetryOn() != "" {
		out.RetryOn, out.RetriableStatusCodes = parseRetryOn(in.GetRetryOn())
	}
	out.PerTryTimeout = in.GetPerTryTimeout()
	if v := in.GetRetryIgnorePreviousHosts(); v != nil {
		out.RetryHostPredicate = nil
		if v.GetValue() {
			out.RetryHostPredicate = previousHosts()
		}
	}
	if in.GetRetryRemoteLocalities().GetValue() {
		// Retry in other priorities (localities), moving on every 2 tries.
		a, _ := anypb.New(&previousprioritiesv3.PreviousPrioritiesConfig{UpdateFrequency: 2})
		out.RetryPriority = &routev3.RetryPolicy_RetryPriority{Name: "envoy.retry_priorities.previous_priorities",
			ConfigType: &routev3.RetryPolicy_RetryPriority_TypedConfig{TypedConfig: a}}
	}
	if b := in.GetBackoff(); b != nil {
		out.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: b}
	}
	return out
}

func previousHosts() []*routev3.RetryPolicy_RetryHostPredicate {
	a, _ := anypb.New(&previoushostsv3.PreviousHostsPredicate{})
	return []*routev3.RetryPolicy_RetryHostPredicate{{
		Name:       "envoy.retry_host_predicates.previous_hosts",
		ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: a},
	}}
}

// parseRetryOn splits retryOn into Envoy conditions and status codes; codes
// need the retriable-status-codes condition to take effect.
func parseRetryOn(s string) (string, []uint32) {
	var on []string
	var codes []uint32
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if code, err := strconv.ParseUint(part, 10, 32); err == nil {
			codes = append(codes, uint32(code))
			continue
		}
		on = append(on, part)
	}
	if len(codes) > 0 && !slices.Contains(on, "retriable-status-codes") {
		on = append(on, "retriable-status-codes")
	}
	return strings.Join(on, ","), codes
}

// vsRoute translates one VirtualService route for a listener port
// (docs/semantics/virtual-services.md §6.6); tls says the listener terminates TLS, for redirects.
func (b *builder) vsRoute(r *resolve.HTTPRoute, vs *resolve.VirtualService, port uint32, tls bool) *routev3.Route {
	in := r.Source.HTTPRoute
	// A delegate's routes are the root's: istiod names the root.
	root := r.Source.From.Object
	if vs != nil {
		root = vs.Object
	}
	gwAPI := root.Annotations[model.AnnotationRouteSemantics] == model.RouteSemanticsGateway
	out := &routev3.Route{
		Name:     r.Name,
		Match:    routeMatch(r.Match, gwAPI),
		Metadata: configMetadata("virtual-service", root.Namespace, root.Name),
	}
	b.origins[out] = r.Source
	authority := ""
	if h := in.GetHeaders(); h != nil {
		ops := headerOps(h.GetRequest())
		out.RequestHeadersToAdd, out.RequestHeadersToRemove, authority = ops.add, ops.remove, ops.authority
		resp := headerOps(h.GetResponse())
		out.ResponseHeadersToAdd, out.ResponseHeadersToRemove = resp.add, resp.remove
	}
	switch {
	case in.GetRedirect() != nil:
		out.Action = redirect(in.GetRedirect(), port, tls)
	case in.GetDirectResponse() != nil:
		out.Action = directResponse(in.GetDirectResponse())
	default:
		out.Action = &routev3.Route_Route{Route: b.routeAction(r, out, authority, gwAPI)}
	}
	var to *resolve.ClusterID
	if out.GetRoute().GetCluster() != "" {
		to = &r.Clusters[0].ID // the route's one cluster (routeAction)
	}
	out.Decorator = &routev3.Decorator{Operation: operation(to, decoratorPath(out.Match), root.Name, port)}
	if f := in.GetFault(); f != nil {
		out.TypedPerFilterConfig = map[string]*anypb.Any{faultFilter: b.pk.any(r.Name+" fault", fault(f))}
	}
	if c := in.GetCorsPolicy(); c != nil {
		if out.TypedPerFilterConfig == nil {
			out.TypedPerFilterConfig = map[string]*anypb.Any{}
		}
		out.TypedPerFilterConfig[corsFilter] = b.pk.any(r.Name+" CORS policy", corsPolicy(c))
	}
	return out
}

// corsPolicy translates a route's CORS policy for Envoy's CORS filter.
func corsPolicy(in *networking.CorsPolicy) *corsv3.CorsPolicy {
	out := &corsv3.CorsPolicy{
		// Preflights matching no origin go on to the application unless
		// told to be ignored (the default before Envoy 1.30).
		ForwardNotMatchingPreflights: wrapperspb.Bool(in.GetUnmatchedPreflights() != networking.CorsPolicy_IGNORE),
		FilterEnabled:                &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED}},
		AllowCredentials:             in.GetAllowCredentials(),
		AllowHeaders:                 strings.Join(in.GetAllowHeaders(), ","),
		AllowMethods:                 strings.Join(in.GetAllowMethods(), ","),
		ExposeHeaders:                strings.Join(in.GetExposeHeaders(), ","),
	}
	switch {
	case in.GetAllowOrigins() != nil:
		for _, o := range in.GetAllowOrigins() {
			if m := stringMatcher(o); m != nil {
				out.AllowOriginStringMatch = append(out.AllowOriginStringMatch, m)
			}
		}
	case in.GetAllowOrigin() != nil: //nolint:staticcheck // istiod still reads the deprecated field
		out.AllowOriginStringMatch = exactMatchers(in.GetAllowOrigin()) //nolint:staticcheck // istiod still reads the deprecated field
	}
	if a := in.GetMaxAge(); a != nil {
		out.MaxAge = strconv.FormatInt(a.GetSeconds(), 10)
	}
	return out
}

func decoratorPath(m *routev3.RouteMatch) string {
	switch {
	case m.GetPrefix() != "":
		return m.GetPrefix() + "*"
	case m.GetPath() != "":
		return m.GetPath()
	case m.GetSafeRegex() != nil:
		return m.GetSafeRegex().GetRegex()
	}
	return "/*"
}

func configMetadata(kind, ns, name string) *corev3.Metadata {
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{"istio": {Fields: map[string]*structpb.Value{
		"config": structpb.NewStringValue(fmt.Sprintf("/apis/networking.istio.io/v1/namespaces/%s/%s/%s", ns, kind, name)),
	}}}}
}

// routeAction translates a route's action; gwAPI marks a route generated
// from a Gateway API route, which answers 500 for a backend without
// cluster and removes a prefix rewritten to "/" whole
// (docs/semantics/gateway-api.md §G4).
func (b *builder) routeAction(r *resolve.HTTPRoute, out *routev3.Route, authority string, gwAPI bool) *routev3.RouteAction {
	in := r.Source.HTTPRoute
	action := noTimeout(&routev3.RouteAction{})
	if gwAPI {
		action.ClusterNotFoundResponseCode = routev3.RouteAction_INTERNAL_SERVER_ERROR
	}
	if t := in.GetTimeout(); t != nil {
		action.Timeout, action.MaxGrpcTimeout = t, t
	}
	if rw := in.GetRewrite(); rw != nil {
		if re := rw.GetUriRegexRewrite(); re != nil {
			action.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{Pattern: &matcherv3.RegexMatcher{Regex: re.GetMatch()}, Substitution: re.GetRewrite()}
		} else if gwAPI && rw.GetUri() == "/" {
			action.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{
				Pattern:      &matcherv3.RegexMatcher{Regex: "^" + regexp.QuoteMeta(out.GetMatch().GetPathSeparatedPrefix()) + `(/?)(.*)`},
				Substitution: `/\2`,
			}
		} else if rw.GetUri() != "" {
			action.PrefixRewrite = rw.GetUri()
		}
		authority = cmp.Or(rw.GetAuthority(), authority)
	}
	if authority != "" {
		action.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: authority}
	}
	action.RequestMirrorPolicies = append(action.RequestMirrorPolicies, mirrors(r)...)
	dests := resolve.Destinations(in)
	// Several destinations stay weighted even when weights of zero leave
	// one, as istiod writes them.
	single := len(in.GetRoute()) == 1
	if single && len(r.Clusters) == 1 {
		action.ClusterSpecifier = cluster(r.Clusters[0].Name())
		if h := dests[0].GetHeaders(); h != nil {
			req, resp := headerOps(h.GetRequest()), headerOps(h.GetResponse())
			out.RequestHeadersToAdd = append(out.RequestHeadersToAdd, req.add...)
			out.RequestHeadersToRemove = append(out.RequestHeadersToRemove, req.remove...)
			out.ResponseHeadersToAdd = append(out.ResponseHeadersToAdd, resp.add...)
			out.ResponseHeadersToRemove = append(out.ResponseHeadersToRemove, resp.remove...)
			if req.authority != "" && action.HostRewriteSpecifier == nil {
				action.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: req.authority}
			}
		}
	} else {
		wc := &routev3.WeightedCluster{}
		for i, c := range r.Clusters {
			cw := &routev3.WeightedCluster_ClusterWeight{Name: c.Name(), Weight: wrapperspb.UInt32(uint32(c.Weight))}
			if i < len(dests) {
				if h := dests[i].GetHeaders(); h != nil {
					req, resp := headerOps(h.GetRequest()), headerOps(h.GetResponse())
					cw.RequestHeadersToAdd, cw.RequestHeadersToRemove = req.add, req.remove
					cw.ResponseHeadersToAdd, cw.ResponseHeadersToRemove = resp.add, resp.remove
					if req.authority != "" {
						cw.HostRewriteSpecifier = &routev3.WeightedCluster_ClusterWeight_HostRewriteLiteral{HostRewriteLiteral: req.authority}
					}
				}
			}
			wc.Clusters = append(wc.Clusters, cw)
		}
		action.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: wc}
	}
	// Each destination adds its DestinationRule's hash policy; only a
	// single destination's keeps retries on the same host.
	hashed := false
	for i := range r.Clusters {
		if i >= len(dests) {
			break
		}
		ch := b.destinationHash(r.Source.From.Namespace(), dests[i].GetDestination())
		if h := hashOf(ch); h != nil {
			action.HashPolicy = append(action.HashPolicy, h)
		}
		hashed = hashed || (single && ch != nil)
	}
	retries := in.GetRetries()
	if retries == nil {
		retries = b.mesh.Config.GetDefaultHttpRetryPolicy()
	}
	action.RetryPolicy = retryPolicy(retries, hashed)
	return action
}

// mirrors are a route's mirror policies, to the clusters resolve found
// for them as for its destinations.
func mirrors(r *resolve.HTTPRoute) []*routev3.RouteAction_RequestMirrorPolicy {
	in := r.Source.HTTPRoute
	var out []*routev3.RouteAction_RequestMirrorPolicy
	add := func(d *networking.Destination, pct *networking.Percent, legacy *wrapperspb.UInt32Value) {
		if d == nil {
			return
		}
		// istiod writes a percentage in millionths, the deprecated
		// integer and the default of all requests in hundredths; an
		// explicit zero drops the mirror
		// (docs/semantics/virtual-services.md §6.6).
		frac := &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED}
		switch {
		case pct != nil && pct.GetValue() <= 0, pct == nil && legacy != nil && legacy.GetValue() == 0:
			return
		case pct != nil:
			frac = percent(pct, 0)
		case legacy != nil:
			frac.Numerator = legacy.GetValue()
		}
		out = append(out, &routev3.RouteAction_RequestMirrorPolicy{
			Cluster:         r.Mirrors[d].String(),
			RuntimeFraction: &corev3.RuntimeFractionalPercent{DefaultValue: frac},
			TraceSampled:    wrapperspb.Bool(false),
			// The copy keeps the original Host, not one with "-shadow".
			DisableShadowHostSuffixAppend: true,
		})
	}
	add(in.GetMirror(), in.GetMirrorPercentage(), in.GetMirrorPercent()) //nolint:staticcheck // istiod still honours mirrorPercent
	for _, m := range in.GetMirrors() {
		add(m.GetDestination(), m.GetPercentage(), nil)
	}
	return out
}

// routeMatch translates a VirtualService match (docs/semantics/virtual-services.md §6.6). Header
// and query matchers are sorted by name: their source is a map. A prefix
// of a route generated from a Gateway API route matches whole path
// segments (docs/semantics/gateway-api.md §G4).
func routeMatch(in *networking.HTTPMatchRequest, gwAPI bool) *routev3.RouteMatch {
	out := prefixMatch("/")
	if in == nil {
		return out
	}
	for _, name := range slices.Sorted(maps.Keys(in.GetHeaders())) {
		out.Headers = append(out.Headers, headerMatcher(name, in.GetHeaders()[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(in.GetWithoutHeaders())) {
		m := headerMatcher(name, in.GetWithoutHeaders()[name])
		m.InvertMatch = true
		m.TreatMissingHeaderAsEmpty = m.GetPresentMatch() == false
		out.Headers = append(out.Headers, m)
	}
	slices.SortStableFunc(out.Headers, func(a, b *routev3.HeaderMatcher) int { return cmp.Compare(a.Name, b.Name) })
	switch u := in.GetUri().GetMatchType().(type) {
	case *networking.StringMatch_Exact:
		out.PathSpecifier = &routev3.RouteMatch_Path{Path: u.Exact}
	case *networking.StringMatch_Prefix:
		if gwAPI && u.Prefix != "/" {
			out.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: strings.TrimSuffix(u.Prefix, "/")}
		} else {
			out.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: u.Prefix}
		}
	case *networking.StringMatch_Regex:
		out.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: u.Regex}}
	}
	out.CaseSensitive = wrapperspb.Bool(!in.GetIgnoreUriCase())
	for _, h := range []struct {
		name string
		m    *networking.StringMatch
	}{{":method", in.GetMethod()}, {":authority", in.GetAuthority()}, {":scheme", in.GetScheme()}} {
		if h.m != nil {
			out.Headers = append(out.Headers, headerMatcher(h.name, h.m))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(in.GetQueryParams())) {
		out.QueryParameters = append(out.QueryParameters, queryMatcher(name, in.GetQueryParams()[name]))
	}
	return out
}

func stringMatcher(m *networking.StringMatch) *matcherv3.StringMatcher {
	switch x := m.GetMatchType().(type) {
	case *networking.StringMatch_Exact:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: x.Exact}}
	case *networking.StringMatch_Prefix:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: x.Prefix}}
	case *networking.StringMatch_Regex:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: x.Regex}}}
	}
	return nil
}

// headerMatcher matches a header; a match of anything (empty or absent
// pattern) only asks for the header's presence.
func headerMatcher(name string, m *networking.StringMatch) *routev3.HeaderMatcher {
	sm := stringMatcher(m)
	if sm == nil || (sm.GetPrefix() == "" && sm.GetExact() == "" && sm.GetSafeRegex() == nil) || sm.GetSafeRegex().GetRegex() == "*" {
		return &routev3.HeaderMatcher{Name: name, HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}}
	}
	return &routev3.HeaderMatcher{Name: name, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: sm}}
}

func queryMatcher(name string, m *networking.StringMatch) *routev3.QueryParameterMatcher {
	sm := stringMatcher(m)
	if sm == nil || (sm.GetPrefix() == "" && sm.GetExact() == "" && sm.GetSafeRegex() == nil) {
		return &routev3.QueryParameterMatcher{Name: name, QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_PresentMatch{PresentMatch: true}}
	}
	return &routev3.QueryParameterMatcher{Name: name, QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: sm}}
}

// ops are header operations, sorted by name since their source is a map;
// a set or add of the authority becomes a host rewrite instead.
type ops struct {
	add       []*corev3.HeaderValueOption
	remove    []string
	authority string
}

func headerOps(h *networking.Headers_HeaderOperations) ops {
	var out ops
	add := func(m map[string]string, action corev3.HeaderValueOption_HeaderAppendAction) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if lk := strings.ToLower(k); lk == ":authority" || lk == "host" {
				out.authority = m[k]
				continue
			}
			out.add = append(out.add, &corev3.HeaderValueOption{
				Header:       &corev3.HeaderValue{Key: k, Value: m[k]},
				AppendAction: action,
			})
		}
	}
	add(h.GetSet(), corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD)
	add(h.GetAdd(), corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD)
	out.remove = slices.Sorted(slices.Values(h.GetRemove()))
	return out
}

// redirect is istiod's redirect: the path replaced (by prefix or whole),
// the port the one asked for or the request's, left out when it is the
// scheme's default.
func redirect(r *networking.HTTPRedirect, port uint32, tls bool) *routev3.Route_Redirect {
	a := &routev3.RedirectAction{HostRedirect: r.GetAuthority()}
	if p := r.GetPrefixRewrite(); p != "" {
		a.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: p}
	} else {
		a.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: r.GetUri()}
	}
	if r.GetScheme() != "" {
		a.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: r.GetScheme()}
	}
	if r.GetRedirectPort() != nil {
		switch {
		case r.GetPort() > 0:
			a.PortRedirect = r.GetPort()
		case r.GetDerivePort() == networking.HTTPRedirect_FROM_REQUEST_PORT:
			a.PortRedirect = port
		}
		scheme := r.GetScheme()
		if scheme == "" {
			scheme = "http"
			if tls {
				scheme = "https"
			}
		}
		if (a.PortRedirect == 80 && scheme == "http") || (a.PortRedirect == 443 && scheme == "https") {
			a.PortRedirect = 0
		}
	}
	switch r.GetRedirectCode() {
	case 0, 301:
		a.ResponseCode = routev3.RedirectAction_MOVED_PERMANENTLY
	case 302:
		a.ResponseCode = routev3.RedirectAction_FOUND
	case 303:
		a.ResponseCode = routev3.RedirectAction_SEE_OTHER
	case 307:
		a.ResponseCode = routev3.RedirectAction_TEMPORARY_REDIRECT
	case 308:
		a.ResponseCode = routev3.RedirectAction_PERMANENT_REDIRECT
	}
	return &routev3.Route_Redirect{Redirect: a}
}

func directResponse(d *networking.HTTPDirectResponse) *routev3.Route_DirectResponse {
	a := &routev3.DirectResponseAction{Status: d.GetStatus()}
	if body := d.GetBody(); body != nil {
		switch {
		case body.GetString_() != "":
			a.Body = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: body.GetString_()}}
		case body.GetBytes() != nil:
			a.Body = &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: body.GetBytes()}}
		}
	}
	return &routev3.Route_DirectResponse{DirectResponse: a}
}

// fault translates fault injection as istiod does: a delay or abort
// without a percentage affects no request (docs/semantics/virtual-services.md
// §6.6) — a delay gets 0/HUNDRED, an abort no percentage, which Envoy reads
// as zero too.
func fault(f *networking.HTTPFaultInjection) *faultv3.HTTPFault {
	out := &faultv3.HTTPFault{}
	if d := f.GetDelay(); d != nil {
		out.Delay = &faultcommonv3.FaultDelay{
			FaultDelaySecifier: &faultcommonv3.FaultDelay_FixedDelay{FixedDelay: d.GetFixedDelay()},
			Percentage:         percent(d.GetPercentage(), d.GetPercent()), //nolint:staticcheck // the deprecated integer percent still applies
		}
	}
	if a := f.GetAbort(); a != nil {
		out.Abort = &faultv3.FaultAbort{}
		if p := a.GetPercentage(); p != nil {
			out.Abort.Percentage = percent(p, 0)
		}
		switch {
		case a.GetGrpcStatus() != "":
			out.Abort.ErrorType = &faultv3.FaultAbort_GrpcStatus{GrpcStatus: grpcCode(a.GetGrpcStatus())}
		default:
			out.Abort.ErrorType = &faultv3.FaultAbort_HttpStatus{HttpStatus: uint32(a.GetHttpStatus())}
		}
	}
	return out
}

// percent is a Percent in millionths, else the deprecated integer percent
// in hundredths: 0 when neither is set.
func percent(p *networking.Percent, legacy int32) *typev3.FractionalPercent {
	if p != nil {
		return &typev3.FractionalPercent{Numerator: uint32(p.GetValue() * 10000), Denominator: typev3.FractionalPercent_MILLION}
	}
	return &typev3.FractionalPercent{Numerator: uint32(max(legacy, 0)), Denominator: typev3.FractionalPercent_HUNDRED}
}

// grpcCodes are the gRPC status names a fault may abort with.
var grpcCodes = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func grpcCode(s string) uint32 {
	if i := slices.Index(grpcCodes, strings.ToUpper(s)); i >= 0 {
		return uint32(i)
	}
	n, _ := strconv.ParseUint(s, 10, 32)
	return uint32(n)
}
