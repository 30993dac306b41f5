package simulate

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshc/meshc/internal/envoycfg"
)

// Builders of hand-made Envoy resources, each as small as a case needs.

func config(t *testing.T, ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration, eps ...*endpointv3.ClusterLoadAssignment) *envoycfg.Config {
	t.Helper()
	c, err := envoycfg.New(ls, cs, rs, eps, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func packed(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func address(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}
}

func listener(name, ip string, port uint32, chains ...*listenerv3.FilterChain) *listenerv3.Listener {
	return &listenerv3.Listener{Name: name, Address: address(ip, port), FilterChains: chains, TrafficDirection: corev3.TrafficDirection_OUTBOUND}
}

func inspectors(l *listenerv3.Listener, names ...string) *listenerv3.Listener {
	for _, n := range names {
		l.ListenerFilters = append(l.ListenerFilters, &listenerv3.ListenerFilter{Name: n})
	}
	return l
}

func chain(name string, m *listenerv3.FilterChainMatch, filters ...*listenerv3.Filter) *listenerv3.FilterChain {
	return &listenerv3.FilterChain{Name: name, FilterChainMatch: m, Filters: filters}
}

func tcpProxy(t *testing.T, cluster string) *listenerv3.Filter {
	return &listenerv3.Filter{Name: "envoy.filters.network.tcp_proxy", ConfigType: &listenerv3.Filter_TypedConfig{
		TypedConfig: packed(t, &tcpv3.TcpProxy{StatPrefix: cluster, ClusterSpecifier: &tcpv3.TcpProxy_Cluster{Cluster: cluster}})}}
}

func rds(t *testing.T, name string) *listenerv3.Filter {
	return hcm(t, &hcmv3.HttpConnectionManager{RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{RouteConfigName: name}}})
}

func hcm(t *testing.T, h *hcmv3.HttpConnectionManager) *listenerv3.Filter {
	return &listenerv3.Filter{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: packed(t, h)}}
}

func cidr(prefix string, bits uint32) *corev3.CidrRange {
	return &corev3.CidrRange{AddressPrefix: prefix, PrefixLen: wrapperspb.UInt32(bits)}
}

func vhost(name string, domains []string, routes ...*routev3.Route) *routev3.VirtualHost {
	return &routev3.VirtualHost{Name: name, Domains: domains, Routes: routes}
}

func toCluster(name string, m *routev3.RouteMatch) *routev3.Route {
	return &routev3.Route{Name: name, Match: m, Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: name}}}}
}

func prefix(p string) *routev3.RouteMatch {
	return &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: p}}
}

func withHeaders(m *routev3.RouteMatch, hs ...*routev3.HeaderMatcher) *routev3.RouteMatch {
	m.Headers = hs
	return m
}

func exact(s string) *matcherv3.StringMatcher {
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s}}
}

func regex(s string) *matcherv3.RegexMatcher { return &matcherv3.RegexMatcher{Regex: s} }

func header(name string, m *matcherv3.StringMatcher) *routev3.HeaderMatcher {
	return &routev3.HeaderMatcher{Name: name, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: m}}
}

func present(name string, p bool) *routev3.HeaderMatcher {
	return &routev3.HeaderMatcher{Name: name, HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: p}}
}

func cluster(name string, typ clusterv3.Cluster_DiscoveryType) *clusterv3.Cluster {
	return &clusterv3.Cluster{Name: name, ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: typ}}
}

func configMetadata(path string) *corev3.Metadata {
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{"istio": {Fields: map[string]*structpb.Value{"config": structpb.NewStringValue(path)}}}}
}
