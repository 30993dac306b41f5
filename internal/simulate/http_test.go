package simulate

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func get(host, path string, headers ...string) Request {
	r := Request{Address: "10.0.0.1", Port: 80, Protocol: HTTP, Host: host, Path: path, Headers: map[string]string{}}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Headers[headers[i]] = headers[i+1]
	}
	return r
}

func rdsListener(t *testing.T, route string) []*listenerv3.Listener {
	return []*listenerv3.Listener{listener("0.0.0.0_80", "0.0.0.0", 80, chain("", nil, rds(t, route)))}
}

func TestVirtualHost(t *testing.T) {
	vhs := []*routev3.VirtualHost{
		vhost("exact", []string{"api.example.com", "api"}, toCluster("exact", prefix("/"))),
		vhost("suffix", []string{"*.example.com"}, toCluster("suffix", prefix("/"))),
		vhost("longer-suffix", []string{"*.b.example.com"}, toCluster("longer-suffix", prefix("/"))),
		vhost("prefix", []string{"api.*"}, toCluster("prefix", prefix("/"))),
		vhost("with-port", []string{"web.example.org:80"}, toCluster("with-port", prefix("/"))),
		vhost("any", []string{"*"}, toCluster("any", prefix("/"))),
	}
	ignorePort := &routev3.RouteConfiguration{Name: "80", VirtualHosts: vhs, IgnorePortInHostMatching: true}
	withPort := &routev3.RouteConfiguration{Name: "80", VirtualHosts: vhs}
	noDefault := &routev3.RouteConfiguration{Name: "80", VirtualHosts: vhs[:5]}
	for _, tc := range []struct {
		name string
		rc   *routev3.RouteConfiguration
		host string
		want string
	}{
		{"exact", ignorePort, "api.example.com", "exact"},
		{"exact, any case", ignorePort, "API.Example.COM", "exact"},
		{"short name", ignorePort, "api", "exact"},
		{"suffix wildcard", ignorePort, "x.example.com", "suffix"},
		{"longest suffix wildcard", ignorePort, "x.b.example.com", "longer-suffix"},
		{"suffix beats prefix", ignorePort, "api.b.example.com", "longer-suffix"},
		{"prefix wildcard", ignorePort, "api.other.org", "prefix"},
		{"catch-all", ignorePort, "unknown", "any"},
		{"port ignored", ignorePort, "api.example.com:8080", "exact"},
		{"port kept: exact domain with port", withPort, "web.example.org:80", "with-port"},
		{"port kept: no domain without it", withPort, "api.example.com:80", "prefix"},
		{"no virtual host", noDefault, "unknown", "stop: virtualHost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := Run(config(t, rdsListener(t, "80"), nil, []*routev3.RouteConfiguration{tc.rc}), get(tc.host, "/"))
			if got := stopOrName(tr, VirtualHost); got != tc.want {
				t.Errorf("virtual host %q, want %q\n%s", got, tc.want, tr)
			}
		})
	}
}

// TestStripPort: a connection manager that strips the Host's port
// matches port-less domains even where the route configuration keeps
// ports.
func TestStripPort(t *testing.T) {
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{vhost("api", []string{"api"}, toCluster("api", prefix("/")))}}
	for _, tc := range []struct {
		name string
		h    *hcmv3.HttpConnectionManager
		host string
		want string
	}{
		{"any port", &hcmv3.HttpConnectionManager{StripPortMode: &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true}}, "api:9999", "api"},
		{"matching port", &hcmv3.HttpConnectionManager{StripMatchingHostPort: true}, "api:80", "api"},
		{"other port kept", &hcmv3.HttpConnectionManager{StripMatchingHostPort: true}, "api:81", "stop: virtualHost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.h.RouteSpecifier = &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: rc}
			ls := []*listenerv3.Listener{listener("0.0.0.0_80", "0.0.0.0", 80, chain("", nil, hcm(t, tc.h)))}
			tr := Run(config(t, ls, nil, nil), get(tc.host, "/"))
			if got := stopOrName(tr, VirtualHost); got != tc.want {
				t.Errorf("virtual host %q, want %q\n%s", got, tc.want, tr)
			}
			if tr.Name(RouteConfiguration) != "80" || !strings.Contains(tr.Steps[3].Detail, "inline") {
				t.Errorf("inline route configuration not used:\n%s", tr)
			}
		})
	}
}

func TestRouteMatch(t *testing.T) {
	m := func(p *routev3.RouteMatch, hs ...*routev3.HeaderMatcher) *routev3.RouteMatch {
		return withHeaders(p, hs...)
	}
	caseless := prefix("/CaseLess")
	caseless.CaseSensitive = wrapperspb.Bool(false)
	query := func(p string, qs ...*routev3.QueryParameterMatcher) *routev3.RouteMatch {
		r := prefix(p)
		r.QueryParameters = qs
		return r
	}
	grpc := prefix("/g")
	grpc.Grpc = &routev3.RouteMatch_GrpcRouteMatchOptions{}
	inverted := header("x-inv", exact("no"))
	inverted.InvertMatch = true
	missingAsEmpty := header("x-empty", exact(""))
	missingAsEmpty.TreatMissingHeaderAsEmpty = true
	routes := []*routev3.Route{
		toCluster("exact-path", &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: "/exact"}}),
		toCluster("caseless", caseless),
		toCluster("regex", &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: regex("/re/[0-9]+")}}),
		toCluster("separated", &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/sep"}}),
		toCluster("header-exact", m(prefix("/h"), header("x-exact", exact("a")))),
		toCluster("header-regex", m(prefix("/h"), header("x-re", &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: regex("b+")}}))),
		toCluster("header-range", m(prefix("/h"), &routev3.HeaderMatcher{Name: "x-range", HeaderMatchSpecifier: &routev3.HeaderMatcher_RangeMatch{RangeMatch: &typev3.Int64Range{Start: 10, End: 20}}})),
		toCluster("header-present", m(prefix("/h"), present("x-present", true))),
		toCluster("header-inverted", m(prefix("/h"), inverted)),
		toCluster("header-missing-as-empty", m(prefix("/h"), missingAsEmpty, present("x-go", true))),
		toCluster("header-absent", m(prefix("/h"), present("x-absent", false))),
		toCluster("method", m(prefix("/m"), header(":method", exact("POST")))),
		toCluster("query-exact", query("/q", &routev3.QueryParameterMatcher{Name: "v", QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: exact("1")}})),
		toCluster("query-present", query("/q", &routev3.QueryParameterMatcher{Name: "p", QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_PresentMatch{PresentMatch: true}})),
		toCluster("grpc", grpc),
	}
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{vhost("web", []string{"*"}, routes...)}}
	cfg := config(t, rdsListener(t, "80"), nil, []*routev3.RouteConfiguration{rc})
	post := get("web", "/m")
	post.Method = "post"
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"exact path", get("web", "/exact"), "exact-path"},
		{"exact path ignores the query", get("web", "/exact?x=1"), "exact-path"},
		{"exact path is whole", get("web", "/exact/more"), "stop: route"},
		{"prefix, any case", get("web", "/caseless/x"), "caseless"},
		{"regex matches the whole path", get("web", "/re/42"), "regex"},
		{"regex is anchored", get("web", "/re/42/x"), "stop: route"},
		{"path-separated prefix itself", get("web", "/sep"), "separated"},
		{"path-separated prefix and more", get("web", "/sep/x"), "separated"},
		{"path-separated prefix is a segment", get("web", "/separate"), "stop: route"},
		{"header exact", get("web", "/h", "x-exact", "a"), "header-exact"},
		{"header names are case-insensitive", get("web", "/h", "X-Exact", "a"), "header-exact"},
		{"header regex", get("web", "/h", "x-re", "bbb"), "header-regex"},
		{"header range", get("web", "/h", "x-range", "15"), "header-range"},
		{"header range excludes its end", get("web", "/h", "x-range", "20", "x-inv", "no", "x-absent", "1"), "stop: route"},
		{"header present", get("web", "/h", "x-present", ""), "header-present"},
		{"inverted header, other value", get("web", "/h", "x-inv", "yes", "x-absent", "1"), "header-inverted"},
		{"inverted header, missing, falls through", get("web", "/h"), "header-absent"},
		{"missing header treated as empty", get("web", "/h", "x-go", "1", "x-inv", "no"), "header-missing-as-empty"},
		{"absent header", get("web", "/h", "x-inv", "no"), "header-absent"},
		{"no header matches", get("web", "/h", "x-inv", "no", "x-absent", "1"), "stop: route"},
		{"method", post, "method"},
		{"other method", get("web", "/m"), "stop: route"},
		{"query exact", get("web", "/q?v=1"), "query-exact"},
		{"query present", get("web", "/q?v=2&p="), "query-present"},
		{"no query matches", get("web", "/q?v=2"), "stop: route"},
		{"gRPC", get("web", "/g", "content-type", "application/grpc+proto"), "grpc"},
		{"not gRPC", get("web", "/g"), "stop: route"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := Run(cfg, tc.req)
			if got := stopOrName(tr, Route); got != tc.want {
				t.Errorf("route %q, want %q\n%s", got, tc.want, tr)
			}
			if tr.StoppedAt == Route && !strings.Contains(tr.Reason, `virtual host "web"`) {
				t.Errorf("reason %q", tr.Reason)
			}
		})
	}
}

func TestStringMatcher(t *testing.T) {
	for _, tc := range []struct {
		m    *matcherv3.StringMatcher
		v    string
		want bool
	}{
		{exact("a"), "a", true},
		{exact("a"), "A", false},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "a"}, IgnoreCase: true}, "A", true},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "ab"}}, "abc", true},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "ab"}}, "cab", false},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: "bc"}}, "abc", true},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Contains{Contains: "b"}}, "abc", true},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Contains{Contains: "B"}, IgnoreCase: true}, "abc", true},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: regex("a.c")}}, "abc", true},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: regex("a.c")}}, "abcd", false},
		{&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: regex("(")}}, "(", false},
	} {
		if got := stringMatches(tc.m, tc.v); got != tc.want {
			t.Errorf("%v on %q: %v, want %v", tc.m, tc.v, got, tc.want)
		}
	}
}

func TestActions(t *testing.T) {
	fault, _ := anypb.New(&wrapperspb.StringValue{})
	routes := []*routev3.Route{
		{Name: "split", Match: prefix("/split"), Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{
			Clusters: []*routev3.WeightedCluster_ClusterWeight{{Name: "v1", Weight: wrapperspb.UInt32(80)}, {Name: "v2", Weight: wrapperspb.UInt32(20)}}}}}}},
		{Name: "redirect", Match: prefix("/old"), Action: &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{
			SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true}, HostRedirect: "new.example.com",
			PathRewriteSpecifier: &routev3.RedirectAction_PathRedirect{PathRedirect: "/new"}, ResponseCode: routev3.RedirectAction_PERMANENT_REDIRECT}}},
		{Name: "direct", Match: prefix("/teapot"), Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{
			Status: 418, Body: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "short and stout"}}}}},
		{Name: "rewrite", Match: prefix("/api"), TypedPerFilterConfig: map[string]*anypb.Any{faultFilter: fault},
			RequestHeadersToAdd:    []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "x-added", Value: "1"}}},
			RequestHeadersToRemove: []string{"x-gone"},
			Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "v1"},
				PrefixRewrite: "/v1", HostRewriteSpecifier: &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: "backend"},
				Timeout:               durationpb.New(5e9),
				RetryPolicy:           &routev3.RetryPolicy{RetryOn: "5xx", NumRetries: wrapperspb.UInt32(3)},
				RequestMirrorPolicies: []*routev3.RouteAction_RequestMirrorPolicy{{Cluster: "shadow"}}}}},
		{Name: "regex", Match: prefix("/users/"), Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "v1"},
			RegexRewrite: &matcherv3.RegexMatchAndSubstitute{Pattern: regex("^/users/([0-9]+)$"), Substitution: "/u/\\1"}}}},
		toCluster("missing", prefix("/missing")),
	}
	secure := vhost("secure", []string{"secure"}, toCluster("v1", prefix("/")))
	secure.RequireTls = routev3.VirtualHost_ALL
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{vhost("web", []string{"*"}, routes...), secure}}
	cfg := config(t, rdsListener(t, "80"), []*clusterv3.Cluster{cluster("v1", clusterv3.Cluster_EDS), cluster("v2", clusterv3.Cluster_EDS)},
		[]*routev3.RouteConfiguration{rc})
	for _, tc := range []struct {
		host, path string
		want       Action
		stop       Stage
	}{
		{"web", "/split?x=1", Action{Kind: Forward, Weighted: []Weighted{{"v1", 80}, {"v2", 20}}, Path: "/split?x=1", Authority: "web"}, ""},
		{"web", "/old", Action{Kind: Redirect, RedirectScheme: "https", RedirectHost: "new.example.com", RedirectPath: "/new", Status: 308,
			Path: "/new", Authority: "new.example.com"}, ""},
		{"web", "/teapot", Action{Kind: DirectResponse, Status: 418, Body: "short and stout", Path: "/teapot", Authority: "web"}, ""},
		{"web", "/api/x?y=1", Action{Kind: Forward, Cluster: "v1", PrefixRewrite: "/v1", HostRewrite: "backend", Timeout: "5s", Retries: "3 on 5xx",
			Mirrors: []string{"shadow"}, Fault: true, RequestHeadersToAdd: []string{"x-added: 1"}, RequestHeadersToRemove: []string{"x-gone"},
			Path: "/v1/x?y=1", Authority: "backend"}, ""},
		{"web", "/users/42", Action{Kind: Forward, Cluster: "v1", RegexRewrite: "^/users/([0-9]+)$ → /u/\\1", Path: "/u/42", Authority: "web"}, ""},
		{"web", "/missing", Action{Kind: Forward, Cluster: "missing", Path: "/missing", Authority: "web"}, Cluster},
		// A virtual host requiring TLS redirects plain text before routing.
		{"secure", "/a", Action{Kind: Redirect, RedirectScheme: "https", Status: 301, Path: "/a", Authority: "secure"}, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			tr := Run(cfg, get(tc.host, tc.path))
			if tr.Action == nil {
				t.Fatalf("no action\n%s", tr)
			}
			if d := cmp.Diff(tc.want, *tr.Action, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(Action{})); d != "" {
				t.Errorf("action (-want +got):\n%s", d)
			}
			if tr.StoppedAt != tc.stop {
				t.Errorf("stopped at %q, want %q\n%s", tr.StoppedAt, tc.stop, tr)
			}
		})
	}
}

// TestTargets: a cluster's endpoints come from EDS, its own assignment,
// or the original destination; a weighted split lists every target.
func TestTargets(t *testing.T) {
	eds := cluster("eds", clusterv3.Cluster_EDS)
	eds.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{ServiceName: "eds-service"}
	eds.Metadata = configMetadata("/apis/networking.istio.io/v1/namespaces/shop/destination-rule/pay")
	static := cluster("static", clusterv3.Cluster_STATIC)
	static.LoadAssignment = &endpointv3.ClusterLoadAssignment{ClusterName: "static", Endpoints: []*endpointv3.LocalityLbEndpoints{{
		LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: address("10.0.0.7", 8080)}}}}}}}
	la := &endpointv3.ClusterLoadAssignment{ClusterName: "eds-service", Endpoints: []*endpointv3.LocalityLbEndpoints{{
		Locality: &corev3.Locality{Region: "eu", Zone: "eu-1"},
		LbEndpoints: []*endpointv3.LbEndpoint{{
			HostIdentifier:      &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: address("10.0.0.8", 9080)}},
			LoadBalancingWeight: wrapperspb.UInt32(1),
			Metadata:            tlsModeMetadata("istio"),
		}}}}}
	routes := []*routev3.Route{toCluster("eds", prefix("/eds")), toCluster("static", prefix("/static")),
		{Name: "split", Match: prefix("/split"), Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{
			Clusters: []*routev3.WeightedCluster_ClusterWeight{{Name: "eds", Weight: wrapperspb.UInt32(10)}, {Name: "gone", Weight: wrapperspb.UInt32(90)}}}}}}}}
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{vhost("web", []string{"*"}, routes...)}}
	ls := append(rdsListener(t, "80"), listener("0.0.0.0_5432", "0.0.0.0", 5432, chain("", nil, tcpProxy(t, "passthrough"))))
	cfg := config(t, ls, []*clusterv3.Cluster{eds, static, cluster("passthrough", clusterv3.Cluster_ORIGINAL_DST)}, []*routev3.RouteConfiguration{rc}, la)
	for _, tc := range []struct {
		name string
		req  Request
		want []string
		stop Stage
	}{
		{"EDS", get("web", "/eds"), []string{"eds (EDS) from DestinationRule shop/pay: 10.0.0.8:9080 eu/eu-1/ istio 1"}, ""},
		{"static", get("web", "/static"), []string{"static (STATIC): 10.0.0.7:8080"}, ""},
		{"weighted, one missing", get("web", "/split"), []string{"eds 10 (EDS) from DestinationRule shop/pay: 10.0.0.8:9080 eu/eu-1/ istio 1", "gone 90 ()"}, Cluster},
		{"original destination", Request{Address: "10.1.1.1", Port: 5432, Protocol: TCP}, []string{"passthrough (ORIGINAL_DST): 10.1.1.1:5432"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := Run(cfg, tc.req)
			var got []string
			for _, tg := range tr.Targets {
				s := tg.Cluster
				if tg.Weight > 0 {
					s += " " + strconvU(tg.Weight)
				}
				s += " (" + tg.Type + ")"
				if tg.Origin != nil {
					s += " from " + tg.Origin.String()
				}
				for i, e := range tg.Endpoints {
					sep := ", "
					if i == 0 {
						sep = ": "
					}
					s += sep + strings.TrimSpace(e.Address+":"+strconvU(e.Port)+" "+e.Locality+" "+e.TLSMode+" "+weight(e.Weight))
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) || tr.StoppedAt != tc.stop {
				t.Errorf("targets %q stopped at %q, want %q at %q\n%s", got, tr.StoppedAt, tc.want, tc.stop, tr)
			}
			if _, ok := tr.Step(Cluster); ok != (len(tc.want) == 1 && tc.stop == "") {
				t.Errorf("cluster step %v for %d targets", ok, len(tc.want))
			}
		})
	}
}

func strconvU(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func tlsModeMetadata(mode string) *corev3.Metadata {
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{"envoy.transport_socket_match": {Fields: map[string]*structpb.Value{"tlsMode": structpb.NewStringValue(mode)}}}}
}

func weight(w uint32) string {
	if w == 0 {
		return ""
	}
	return strconvU(w)
}

// TestNetworkFilterStops: HTTP needs a connection manager with a route
// configuration, and a chain needs a terminal filter.
func TestNetworkFilterStops(t *testing.T) {
	ls := []*listenerv3.Listener{
		listener("0.0.0.0_80", "0.0.0.0", 80, chain("", nil, rds(t, "absent"))),
		listener("0.0.0.0_81", "0.0.0.0", 81, chain("", nil, &listenerv3.Filter{Name: "envoy.filters.network.unknown"})),
	}
	cfg := config(t, ls, nil, nil)
	for _, tc := range []struct {
		req  Request
		stop Stage
		want string
	}{
		{get("web", "/"), RouteConfiguration, `route configuration "absent" is not in the configuration`},
		{Request{Address: "10.0.0.1", Port: 80, Protocol: TCP}, NetworkFilter, "needs HTTP"},
		{Request{Address: "10.0.0.1", Port: 81, Protocol: TCP}, NetworkFilter, "no HTTP connection manager or TCP proxy"},
	} {
		tr := Run(cfg, tc.req)
		if tr.StoppedAt != tc.stop || !strings.Contains(tr.Reason, tc.want) {
			t.Errorf("%+v: stopped at %q (%s), want %q (%s)", tc.req, tr.StoppedAt, tr.Reason, tc.stop, tc.want)
		}
	}
}

// TestPolicy: a cluster's load balancer, TLS, limits below Envoy's
// maximum and outlier detection, as a DestinationRule sets them.
func TestPolicy(t *testing.T) {
	tlsCtx := func(sni string, cert bool) *corev3.TransportSocket {
		ctx := &tlsv3.UpstreamTlsContext{Sni: sni, CommonTlsContext: &tlsv3.CommonTlsContext{}}
		if cert {
			ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{{Name: "default"}}
		}
		return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: packed(t, ctx)}}
	}
	simple := cluster("simple", clusterv3.Cluster_EDS)
	simple.LbPolicy = clusterv3.Cluster_RANDOM
	simple.TransportSocket = tlsCtx("api.example.com", false)
	simple.CircuitBreakers = &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
		MaxConnections: wrapperspb.UInt32(100), MaxRequests: wrapperspb.UInt32(4294967295)}}}
	simple.OutlierDetection = &clusterv3.OutlierDetection{Consecutive_5Xx: wrapperspb.UInt32(5), Interval: durationpb.New(10e9)}
	mutual := cluster("mutual", clusterv3.Cluster_EDS)
	mutual.TransportSocket = tlsCtx("db.internal", true)
	auto := cluster("auto", clusterv3.Cluster_EDS)
	auto.TransportSocketMatches = []*clusterv3.Cluster_TransportSocketMatch{{Name: "tlsMode-istio",
		Match: &structpb.Struct{Fields: map[string]*structpb.Value{"tlsMode": structpb.NewStringValue("istio")}}, TransportSocket: tlsCtx("outbound_.80_._.web", true)}}
	for _, tc := range []struct {
		c    *clusterv3.Cluster
		want Policy
	}{
		{simple, Policy{LoadBalancer: "RANDOM", TLS: "TLS", SNI: "api.example.com", Pool: []string{"max connections 100"},
			OutlierDetection: []string{"consecutive 5xx 5", "interval 10s"}}},
		{mutual, Policy{LoadBalancer: "ROUND_ROBIN", TLS: "mutual TLS", SNI: "db.internal"}},
		{auto, Policy{LoadBalancer: "ROUND_ROBIN", TLS: "Istio mutual TLS to endpoints with tlsMode istio", SNI: "outbound_.80_._.web"}},
	} {
		if d := cmp.Diff(tc.want, policy(tc.c), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.c.GetName(), d)
		}
	}
}
