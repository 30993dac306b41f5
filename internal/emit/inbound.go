package emit

import (
	"cmp"
	"slices"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	httpinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/http_inspector/v3"
	origdstv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
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
	// service is the first service to target the port.
	service *resolve.Service
	// endpoint is a Sidecar ingress listener's defaultEndpoint, where the
	// application listens; "" to reach it at the original destination.
	endpoint string
}

// inboundPorts are the workload ports the proxy's services target, by
// target port; the first service to claim a port sets its protocol.
// A Sidecar's ingress listeners, when it has any, replace them (istio.md
// §4.10).
func (b *builder) inboundPorts() []inboundPort {
	services := b.shared.inbound[b.view.Proxy.Object]
	sc := b.view.Choice.Sidecar
	if sc == nil || len(sc.Spec.GetIngress()) == 0 {
		return services
	}
	var out []inboundPort
	for _, in := range sc.Spec.GetIngress() {
		p := inboundPort{target: in.GetPort().GetNumber(), port: in.GetPort().GetNumber(),
			protocol: protocol.Parse(in.GetPort().GetProtocol()), endpoint: in.GetDefaultEndpoint()}
		for _, s := range services {
			if s.target == p.target {
				p.port, p.service = s.port, s.service
			}
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b inboundPort) int { return cmp.Compare(a.target, b.target) })
	return out
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
				out[e.Workload] = append(ports, inboundPort{target: e.Port, port: port.Number, protocol: port.Protocol, service: s})
			}
		}
	}
	for w, ports := range out {
		slices.SortFunc(ports, func(a, b inboundPort) int { return cmp.Compare(a.target, b.target) })
		out[w] = ports
	}
	return out
}

// ALPN values a client sidecar offers over mutual TLS, by traffic kind.
var (
	istioHTTPALPN = []string{"istio-http/1.0", "istio-http/1.1", "istio-h2"}
	istioTCPALPN  = []string{"istio-peer-exchange", "istio"}
	// istioAnyALPN matches either kind on an HTTP port.
	istioAnyALPN = []string{"istio", "istio-peer-exchange", "istio-http/1.0", "istio-http/1.1", "istio-h2"}
)

// inboundChain is one chain of virtualInbound: its match, whether it
// terminates Istio mutual TLS, and whether it speaks HTTP.
type inboundChain struct {
	name      string
	port      uint32 // destination port; 0 for the passthrough chains
	transport string
	alpn      []string
	mtls      bool
	http      bool
}

// virtualInbound is the listener iptables sends inbound traffic to
// (istio.md §7.7): passthrough chains for ports no service targets, then
// the chains of each target port, sorted by port. Which chains exist
// follows the PeerAuthentication mode: mutual TLS, plaintext, or both.
func (b *builder) virtualInbound() *listenerv3.Listener {
	mode := b.shared.peerMode(b.view.Proxy.Namespace)
	mtls := mode != security.PeerAuthentication_MutualTLS_DISABLE && b.opts.TLS != TLSOff
	plain := mode != security.PeerAuthentication_MutualTLS_STRICT || b.opts.TLS == TLSOff
	var specs []inboundChain
	add := func(c inboundChain) {
		if (c.mtls && mtls) || (!c.mtls && plain) {
			specs = append(specs, c)
		}
	}
	add(inboundChain{name: "virtualInbound-catchall-http", transport: "tls", alpn: istioHTTPALPN, mtls: true, http: true})
	add(inboundChain{name: "virtualInbound-catchall-http", transport: "raw_buffer", alpn: plaintextALPN, http: true})
	add(inboundChain{name: "virtualInbound", transport: "tls", alpn: istioTCPALPN, mtls: true})
	add(inboundChain{name: "virtualInbound", transport: "raw_buffer"})
	// TLS the sidecar does not terminate passes through as it came.
	add(inboundChain{name: "virtualInbound", transport: "tls"})
	var plainHTTPPorts []uint32
	for _, ip := range b.inboundPorts() {
		name := wildcard + "_" + strconv.FormatUint(uint64(ip.target), 10)
		switch classOf(ip.protocol) {
		case classHTTP:
			plainHTTPPorts = append(plainHTTPPorts, ip.target)
			add(inboundChain{name: name, port: ip.target, transport: "tls", alpn: istioAnyALPN, mtls: true, http: true})
			add(inboundChain{name: name, port: ip.target, transport: "raw_buffer", http: true})
		case classTCP:
			add(inboundChain{name: name, port: ip.target, transport: "tls", alpn: istioTCPALPN, mtls: true})
			add(inboundChain{name: name, port: ip.target, transport: "raw_buffer"})
		case classAuto:
			add(inboundChain{name: name, port: ip.target, transport: "tls", alpn: istioHTTPALPN, mtls: true, http: true})
			add(inboundChain{name: name, port: ip.target, transport: "tls", alpn: istioTCPALPN, mtls: true})
			add(inboundChain{name: name, port: ip.target, transport: "raw_buffer", alpn: plaintextALPN, http: true})
			add(inboundChain{name: name, port: ip.target, transport: "raw_buffer"})
		}
	}
	l := &listenerv3.Listener{
		Name:                                 "virtualInbound",
		Address:                              socketAddress(wildcard, virtualInboundPort),
		TrafficDirection:                     corev3.TrafficDirection_INBOUND,
		MaxConnectionsToAcceptPerSocketEvent: wrapperspb.UInt32(1),
		ListenerFiltersTimeout:               durationpb.New(0),
		ContinueOnListenerFiltersTimeout:     true,
		ListenerFilters:                      b.inboundListenerFilters(plainHTTPPorts),
		FilterChains: []*listenerv3.FilterChain{{
			Name:             "virtualInbound-blackhole",
			FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(virtualInboundPort)},
			Filters:          []*listenerv3.Filter{b.tcpProxy(BlackHoleCluster, BlackHoleCluster)},
		}},
	}
	for _, c := range specs {
		l.FilterChains = append(l.FilterChains, b.inboundFilterChain(c))
	}
	return l
}

// inboundListenerFilters find the original destination, then sniff TLS
// and HTTP, except where the port says: nothing arrives on 15006 itself,
// and ports declared HTTP need no HTTP sniffing.
func (b *builder) inboundListenerFilters(httpPorts []uint32) []*listenerv3.ListenerFilter {
	rng := func(p uint32) *listenerv3.ListenerFilterChainMatchPredicate {
		return &listenerv3.ListenerFilterChainMatchPredicate{Rule: &listenerv3.ListenerFilterChainMatchPredicate_DestinationPortRange{
			DestinationPortRange: &typev3.Int32Range{Start: int32(p), End: int32(p) + 1}}}
	}
	tls := b.tlsInspector()
	tls.FilterDisabled = rng(virtualInboundPort)
	http := b.listenerFilter(httpInspector, &httpinspectorv3.HttpInspector{})
	var rules []*listenerv3.ListenerFilterChainMatchPredicate
	for _, p := range httpPorts {
		rules = append(rules, rng(p))
	}
	rules = append(rules, rng(virtualInboundPort))
	http.FilterDisabled = rules[0]
	if len(rules) > 1 {
		http.FilterDisabled = &listenerv3.ListenerFilterChainMatchPredicate{Rule: &listenerv3.ListenerFilterChainMatchPredicate_OrMatch{
			OrMatch: &listenerv3.ListenerFilterChainMatchPredicate_MatchSet{Rules: rules}}}
	}
	return []*listenerv3.ListenerFilter{b.listenerFilter(originalDstLF, &origdstv3.OriginalDst{}), tls, http}
}

func (b *builder) inboundFilterChain(c inboundChain) *listenerv3.FilterChain {
	fc := &listenerv3.FilterChain{Name: c.name, FilterChainMatch: &listenerv3.FilterChainMatch{TransportProtocol: c.transport, ApplicationProtocols: c.alpn}}
	cluster, port, statPrefix := InboundPassthroughCluster, uint32(0), InboundPassthroughCluster
	var proto protocol.Protocol = protocol.HTTP
	if c.port != 0 {
		fc.FilterChainMatch.DestinationPort = wrapperspb.UInt32(c.port)
		cluster, statPrefix = inboundName(c.port), "inbound_"+c.name
		for _, ip := range b.inboundPorts() {
			if ip.target == c.port {
				port, proto = ip.port, ip.protocol
			}
		}
	}
	if c.http {
		fc.Filters = []*listenerv3.Filter{b.inboundHCM(statPrefix, cluster, c.port, port, proto)}
	} else {
		fc.Filters = []*listenerv3.Filter{b.tcpProxy(cluster, cluster)}
	}
	if c.mtls {
		alpn := []string{"h2", "http/1.1"}
		if !c.http {
			alpn = []string{"istio-peer-exchange", "h2", "http/1.1"}
		}
		fc.TransportSocket = b.downstreamTLS(c.name, alpn)
	}
	return fc
}

// inboundHCM serves a workload port with an inline route to its inbound
// cluster, as istiod does (inbound routes never use RDS).
func (b *builder) inboundHCM(statPrefix, cluster string, target, port uint32, proto protocol.Protocol) *listenerv3.Filter {
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
			Decorator: &routev3.Decorator{Operation: b.inboundOperation(target, port)},
			Action:    &routev3.Route_Route{Route: action},
		}}}},
	}
	return b.hcm(&hcmv3.HttpConnectionManager{
		StatPrefix:                  statPrefix,
		RouteSpecifier:              &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: rc},
		HttpFilters:                 b.httpFilters(),
		ServerName:                  "istio-envoy",
		ForwardClientCertDetails:    hcmv3.HttpConnectionManager_APPEND_FORWARD,
		SetCurrentClientCertDetails: &hcmv3.HttpConnectionManager_SetCurrentClientCertDetails{Subject: wrapperspb.Bool(true), Dns: true, Uri: true},
	})
}

// inboundOperation names inbound requests in traces: the service host and
// port, empty for passthrough traffic.
func (b *builder) inboundOperation(target, port uint32) string {
	h := ""
	for _, ip := range b.inboundPorts() {
		if ip.target == target && ip.service != nil {
			h = string(ip.service.Host)
		}
	}
	return h + ":" + strconv.FormatUint(uint64(port), 10) + "/*"
}

// inboundRetry retries a request that never reached the application,
// which is safe whatever its method.
func inboundRetry() *routev3.RetryPolicy {
	return &routev3.RetryPolicy{NumRetries: wrapperspb.UInt32(2), RetryOn: "reset-before-request"}
}

// istioCiphers are the cipher suites istiod allows a sidecar's server side.
var istioCiphers = []string{"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
	"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-GCM-SHA256"}

// downstreamTLS is the server side of Istio mutual TLS on an inbound
// chain: any workload of the trust domain may connect.
func (b *builder) downstreamTLS(chain string, alpn []string) *corev3.TransportSocket {
	common := &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
			TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
			CipherSuites:              istioCiphers,
		},
		AlpnProtocols: alpn,
	}
	trust := &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "spiffe://" + b.mesh.Config.GetTrustDomain() + "/"}}
	b.identity(common, &tlsv3.CertificateValidationContext{
		MatchSubjectAltNames: []*matcherv3.StringMatcher{trust}, //nolint:staticcheck // the field istiod sets
	})
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common, RequireClientCertificate: wrapperspb.Bool(true)}
	return &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{
		TypedConfig: b.pk.any(chain+" TLS context", ctx)}}
}
