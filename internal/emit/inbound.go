package emit

import (
	"cmp"
	"slices"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	httpinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/http_inspector/v3"
	origdstv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// inboundPort is a port of the proxy's workload that a service targets.
type inboundPort struct {
	target   uint32
	port     uint32 // the service port, for the vhost name
	protocol protocol.Protocol
}

// inboundPorts are the workload ports the proxy's services target, by
// target port; the first service to claim a port sets its protocol.
func (b *builder) inboundPorts() []inboundPort {
	return b.shared.inbound[b.view.Proxy.Object]
}

// inboundIndex maps each workload to the ports services target on it.
func inboundIndex(m *resolve.Mesh) map[any][]inboundPort {
	out := map[any][]inboundPort{}
	for _, s := range m.Services {
		for _, e := range s.Endpoints {
			if e.Workload == nil || e.Port == 0 {
				continue
			}
			port, ok := s.PortNumbered(e.ServicePort)
			if !ok || port.Protocol == protocol.UDP {
				continue
			}
			ports := out[e.Workload]
			if !slices.ContainsFunc(ports, func(p inboundPort) bool { return p.target == e.Port }) {
				out[e.Workload] = append(ports, inboundPort{target: e.Port, port: port.Number, protocol: port.Protocol})
			}
		}
	}
	for w, ports := range out {
		slices.SortFunc(ports, func(a, b inboundPort) int { return cmp.Compare(a.target, b.target) })
		out[w] = ports
	}
	return out
}

// istioInboundALPN are what a client sidecar offers, by traffic kind.
var (
	istioHTTPALPN = []string{"istio-http/1.0", "istio-http/1.1", "istio-h2"}
)

// virtualInbound is the listener iptables sends inbound traffic to: a
// chain set per target port, after the passthrough chains (istio.md §7.7).
func (b *builder) virtualInbound() *listenerv3.Listener {
	l := &listenerv3.Listener{
		Name:             "virtualInbound",
		Address:          socketAddress(wildcard, virtualInboundPort),
		TrafficDirection: corev3.TrafficDirection_INBOUND,
		ListenerFilters: []*listenerv3.ListenerFilter{
			b.listenerFilter(originalDstLF, &origdstv3.OriginalDst{}),
			b.listenerFilter(tlsInspector, &tlsinspectorv3.TlsInspector{}),
			b.listenerFilter(httpInspector, &httpinspectorv3.HttpInspector{}),
		},
		ListenerFiltersTimeout:           durationpb.New(0),
		ContinueOnListenerFiltersTimeout: true,
		FilterChains: []*listenerv3.FilterChain{
			{
				Name:             "virtualInbound-blackhole",
				FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(virtualInboundPort)},
				Filters:          []*listenerv3.Filter{b.tcpProxy(BlackHoleCluster, BlackHoleCluster)},
			},
			{
				Name:    "virtualInbound",
				Filters: []*listenerv3.Filter{b.tcpProxy(InboundPassthroughCluster, InboundPassthroughCluster)},
			},
			{
				Name:             "virtualInbound-catchall-http",
				FilterChainMatch: &listenerv3.FilterChainMatch{ApplicationProtocols: plaintextALPN, TransportProtocol: "raw_buffer"},
				Filters:          []*listenerv3.Filter{b.inboundHCM("InboundPassthroughCluster", InboundPassthroughCluster, 0, protocol.HTTP)},
			},
		},
	}
	for _, ip := range b.inboundPorts() {
		l.FilterChains = append(l.FilterChains, b.inboundChains(ip)...)
	}
	return l
}

// inboundChains are a port's chains: mutual TLS, plaintext, or both, as
// the PeerAuthentication mode of the namespace says.
func (b *builder) inboundChains(ip inboundPort) []*listenerv3.FilterChain {
	name := wildcard + "_" + strconv.FormatUint(uint64(ip.target), 10)
	cluster := inboundName(ip.target)
	mode := b.shared.peerMode(b.view.Proxy.Namespace)
	mtls := mode != security.PeerAuthentication_MutualTLS_DISABLE && b.opts.TLS != TLSOff
	plain := mode != security.PeerAuthentication_MutualTLS_STRICT || b.opts.TLS == TLSOff
	c := classOf(ip.protocol)
	var out []*listenerv3.FilterChain
	chain := func(transport string, alpn []string, http bool) {
		fc := &listenerv3.FilterChain{Name: name, FilterChainMatch: &listenerv3.FilterChainMatch{
			DestinationPort: wrapperspb.UInt32(ip.target), TransportProtocol: transport, ApplicationProtocols: alpn}}
		if http {
			fc.Filters = []*listenerv3.Filter{b.inboundHCM("inbound_"+name, cluster, ip.port, ip.protocol)}
		} else {
			fc.Filters = []*listenerv3.Filter{b.tcpProxy(cluster, cluster)}
		}
		if transport == "tls" {
			fc.TransportSocket = b.downstreamTLS(name, http)
		}
		out = append(out, fc)
	}
	if mtls {
		switch c {
		case classHTTP:
			chain("tls", nil, true)
		case classTCP:
			chain("tls", nil, false)
		case classAuto:
			chain("tls", istioHTTPALPN, true)
			chain("tls", nil, false)
		}
	}
	if plain {
		switch c {
		case classHTTP:
			chain("raw_buffer", nil, true)
		case classTCP:
			chain("raw_buffer", nil, false)
		case classAuto:
			chain("raw_buffer", plaintextALPN, true)
			chain("raw_buffer", nil, false)
		}
	}
	return out
}

// inboundHCM serves a workload port with an inline route to its inbound
// cluster, as istiod does (inbound routes never use RDS).
func (b *builder) inboundHCM(statPrefix, cluster string, port uint32, proto protocol.Protocol) *listenerv3.Filter {
	action := noTimeout(&routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: cluster}})
	action.MaxGrpcTimeout = nil
	action.MaxStreamDuration = &routev3.RouteAction_MaxStreamDuration{MaxStreamDuration: durationpb.New(0), GrpcTimeoutHeaderMax: durationpb.New(0)}
	if proto != protocol.GRPC && proto != protocol.GRPCWeb {
		action.RetryPolicy = inboundRetry()
	}
	vhost := "inbound|http|" + strconv.FormatUint(uint64(port), 10)
	rc := &routev3.RouteConfiguration{
		Name:             cluster,
		ValidateClusters: wrapperspb.Bool(false),
		VirtualHosts: []*routev3.VirtualHost{{Name: vhost, Domains: []string{"*"}, Routes: []*routev3.Route{{
			Name:      "default",
			Match:     prefixMatch("/"),
			Decorator: &routev3.Decorator{Operation: cluster + "/*"},
			Action:    &routev3.Route_Route{Route: action},
		}}}},
	}
	return b.hcm(&hcmv3.HttpConnectionManager{
		StatPrefix:     statPrefix,
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: rc},
		HttpFilters:    []*hcmv3.HttpFilter{b.httpFilter(routerFilter, &routerv3.Router{})},
	})
}

// inboundRetry retries a request that never reached the application,
// which is safe whatever its method.
func inboundRetry() *routev3.RetryPolicy {
	return &routev3.RetryPolicy{NumRetries: wrapperspb.UInt32(2), RetryOn: "reset-before-request"}
}

// downstreamTLS is the server side of Istio mutual TLS on an inbound chain.
func (b *builder) downstreamTLS(chain string, http bool) *corev3.TransportSocket {
	common := &tlsv3.CommonTlsContext{TlsParams: &tlsv3.TlsParameters{
		TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
		TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
	}}
	if http {
		common.AlpnProtocols = []string{"h2", "http/1.1"}
	}
	b.identity(common, &tlsv3.CertificateValidationContext{})
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common, RequireClientCertificate: wrapperspb.Bool(true)}
	return &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{
		TypedConfig: b.pk.any(chain+" TLS context", ctx)}}
}
