package emit

import (
	"cmp"
	"maps"
	"net/netip"
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
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// inboundPort is a port of the proxy's workload that a service targets.
type inboundPort struct {
	target   uint32
	port     uint32 // the service port, for the vhost name
	protocol protocol.Protocol
	// service is the first service to target the port; services are it
	// and the others that target the port from the same service port,
	// one per host, which istiod names in the inbound cluster's metadata.
	service  *resolve.Service
	services []*resolve.Service
	// endpoint is a Sidecar ingress listener's defaultEndpoint, where the
	// application listens; "" to reach it at the original destination.
	endpoint string
	// host names the port in traces: its service's host, or for a Sidecar
	// ingress port "<sidecar>.<namespace>", as istiod names it.
	host string
	// bind is the address in the port's chain names and, with bindToPort
	// (Sidecar ingress captureMode NONE), the one a listener of its own
	// binds.
	bind       string
	bindToPort bool
	// sidecar declared the port; nil for a service's port.
	sidecar *model.ObjectMeta
}

// inboundPorts are the workload ports the proxy's services target, by
// target port; the first service to claim a port sets its protocol.
// A Sidecar's ingress listeners, when it has any, replace them (docs/semantics/sidecar-scope.md
// §4.10).
func (b *builder) inboundPorts() []inboundPort {
	services := b.servicePorts()
	sc := b.view.Choice.Sidecar
	if sc == nil || len(sc.Spec.GetIngress()) == 0 {
		return services
	}
	var out []inboundPort
	for _, in := range sc.Spec.GetIngress() {
		p := inboundPort{target: in.GetPort().GetNumber(), port: in.GetPort().GetNumber(),
			protocol: protocol.Parse(in.GetPort().GetProtocol()), endpoint: in.GetDefaultEndpoint(),
			host: sc.Name + "." + sc.Namespace, bind: cmp.Or(in.GetBind(), b.inboundBindIP()),
			bindToPort: in.GetCaptureMode() == networking.CaptureMode_NONE, sidecar: &sc.ObjectMeta}
		for _, s := range services {
			if s.target == p.target {
				p.port, p.service, p.services = s.port, s.service, s.services
			}
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b inboundPort) int { return cmp.Compare(a.target, b.target) })
	return out
}

// inboundBindIP is where a Sidecar ingress port without a bind listens:
// the proxy's first global unicast IP, or any address.
func (b *builder) inboundBindIP() string {
	for _, ip := range b.view.Proxy.IPs {
		if a, err := netip.ParseAddr(ip); err == nil && a.IsGlobalUnicast() {
			return ip
		}
	}
	return b.listenAddr(wildcard)
}

// servicePorts are the workload ports services target on the proxy's
// workload, by target port, the first service to target a port (in
// ServedPorts' order, istiod's) setting it.
// UDP ports (and TCP ones named "udp-…") keep their inbound cluster and
// chains, as TCP: only outbound generators skip them
// (docs/semantics/registry.md §1.2).
func (b *builder) servicePorts() []inboundPort {
	var out []inboundPort
	for _, sp := range b.mesh.ServedPorts(b.view.Proxy.Object) {
		if sp.Target == 0 {
			continue
		}
		i := slices.IndexFunc(out, func(p inboundPort) bool { return p.target == sp.Target })
		if i < 0 {
			out = append(out, inboundPort{target: sp.Target, port: sp.Port.Number, protocol: sp.Port.Protocol, service: sp.Service,
				services: []*resolve.Service{sp.Service}, host: string(sp.Service.Host), bind: b.listenAddr(wildcard)})
			continue
		}
		p := &out[i]
		if sp.Port.Number == p.port && !slices.ContainsFunc(p.services, func(s *resolve.Service) bool { return s.Host == sp.Service.Host }) {
			p.services = append(p.services, sp.Service)
		}
	}
	slices.SortFunc(out, func(a, b inboundPort) int { return cmp.Compare(a.target, b.target) })
	return out
}

// ALPN values a client sidecar offers over mutual TLS, by traffic kind.
var (
	istioHTTPALPN = []string{"istio-http/1.0", "istio-http/1.1", "istio-h2"}
	istioTCPALPN  = []string{"istio-peer-exchange", "istio"}
	// istioAnyALPN matches either kind on an HTTP port.
	istioAnyALPN = []string{"istio", "istio-peer-exchange", "istio-http/1.0", "istio-http/1.1", "istio-h2"}
)

// inboundChain is one inbound filter chain: its match, whether it
// terminates Istio mutual TLS, and whether it speaks HTTP.
type inboundChain struct {
	name string
	// port is the destination port; 0 for every port.
	port uint32
	// passthrough chains send to the original destination.
	passthrough bool
	transport   string
	alpn        []string
	mtls        bool
	http        bool
}

// inboundOptions are the chains of one port class under a mutual TLS
// mode, in istiod's order (docs/semantics/envoy-output.md §7.7): STRICT takes Istio mutual TLS
// only, DISABLE plaintext only, PERMISSIVE both and, for ports that may
// carry TCP, TLS the sidecar does not terminate, which passes through.
func inboundOptions(c class, mode security.PeerAuthentication_MutualTLS_Mode) []inboundChain {
	mtlsHTTP := inboundChain{transport: "tls", mtls: true, http: true}
	mtlsTCP := inboundChain{transport: "tls", mtls: true}
	plainHTTP := inboundChain{transport: "raw_buffer", http: true}
	plainTCP := inboundChain{transport: "raw_buffer"}
	tlsTCP := inboundChain{transport: "tls"}
	with := func(c inboundChain, alpn []string) inboundChain { c.alpn = alpn; return c }
	switch c {
	case classHTTP:
		switch mode {
		case security.PeerAuthentication_MutualTLS_STRICT:
			return []inboundChain{mtlsHTTP}
		case security.PeerAuthentication_MutualTLS_DISABLE:
			return []inboundChain{plainHTTP}
		}
		return []inboundChain{with(mtlsHTTP, istioAnyALPN), plainHTTP}
	case classTCP:
		switch mode {
		case security.PeerAuthentication_MutualTLS_STRICT:
			return []inboundChain{mtlsTCP}
		case security.PeerAuthentication_MutualTLS_DISABLE:
			return []inboundChain{plainTCP}
		}
		return []inboundChain{with(mtlsTCP, istioAnyALPN), tlsTCP, plainTCP}
	}
	switch mode {
	case security.PeerAuthentication_MutualTLS_STRICT:
		return []inboundChain{with(mtlsHTTP, istioHTTPALPN), mtlsTCP}
	case security.PeerAuthentication_MutualTLS_DISABLE:
		return []inboundChain{with(plainHTTP, plaintextALPN), plainTCP}
	}
	return []inboundChain{with(mtlsHTTP, istioHTTPALPN), with(plainHTTP, plaintextALPN), with(mtlsTCP, istioTCPALPN), plainTCP, tlsTCP}
}

// inboundListeners are virtualInbound, the listener iptables sends inbound
// traffic to (docs/semantics/envoy-output.md §7.7): passthrough chains for ports no service
// targets, then the chains of each target port, sorted by port; and a
// listener of its own for each Sidecar ingress port with captureMode NONE,
// which nothing redirects. Which chains a port gets follows the
// PeerAuthentication mode; with --tls-mode off, plaintext only.
func (b *builder) inboundListeners() []*listenerv3.Listener {
	peer := b.mesh.ProxyMTLS(b.view.Proxy)
	if b.opts.TLS == TLSOff {
		peer = resolve.MTLS{Mode: security.PeerAuthentication_MutualTLS_DISABLE}
	}
	vi := &listenerv3.Listener{
		Name:                "virtualInbound",
		Address:             socketAddress(b.listenAddr(wildcard), virtualInboundPort),
		AdditionalAddresses: b.wildcardExtras(virtualInboundPort),
		TrafficDirection:    corev3.TrafficDirection_INBOUND,
		FilterChains: []*listenerv3.FilterChain{{
			Name:             "virtualInbound-blackhole",
			FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(virtualInboundPort)},
			Filters:          []*listenerv3.Filter{b.tcpProxy(BlackHoleCluster, BlackHoleCluster, "", "")},
		}},
	}
	ports := b.inboundPorts()
	// Passthrough chains for every other port; and, as for every port a
	// port-level mode names and nothing else serves, for those ports.
	passthrough := []uint32{0}
	for _, p := range slices.Sorted(maps.Keys(peer.Ports)) {
		if !slices.ContainsFunc(ports, func(ip inboundPort) bool { return ip.target == p }) {
			passthrough = append(passthrough, p)
		}
	}
	for _, p := range passthrough {
		for _, c := range inboundOptions(classAuto, peer.Port(p)) {
			c.name, c.port, c.passthrough = "virtualInbound", p, true
			if c.http {
				c.name = "virtualInbound-catchall-http"
			}
			vi.FilterChains = append(vi.FilterChains, b.inboundFilterChain(c, nil))
		}
	}
	out := []*listenerv3.Listener{vi}
	for _, ip := range ports {
		name := ip.bind + "_" + strconv.FormatUint(uint64(ip.target), 10)
		var chains []*listenerv3.FilterChain
		for _, c := range inboundOptions(classOf(ip.protocol), peer.Port(ip.target)) {
			c.name, c.port = name, ip.target
			chains = append(chains, b.inboundFilterChain(c, ip.sidecar))
		}
		if !ip.bindToPort {
			vi.FilterChains = append(vi.FilterChains, chains...)
			continue
		}
		l := &listenerv3.Listener{Name: name, Address: socketAddress(ip.bind, ip.target), TrafficDirection: corev3.TrafficDirection_INBOUND, FilterChains: chains}
		b.finishInbound(l, false)
		out = append(out, l)
	}
	b.finishInbound(vi, true)
	return out
}

// finishInbound sets what every inbound listener has: its inspectors,
// the time they may take, one connection per socket event.
func (b *builder) finishInbound(l *listenerv3.Listener, redirected bool) {
	l.MaxConnectionsToAcceptPerSocketEvent = wrapperspb.UInt32(1)
	l.ListenerFiltersTimeout = b.mesh.Config.GetProtocolDetectionTimeout()
	if l.ListenerFiltersTimeout == nil {
		l.ListenerFiltersTimeout = durationpb.New(0)
	}
	l.ContinueOnListenerFiltersTimeout = true
	if redirected {
		l.ListenerFilters = append(l.ListenerFilters, b.listenerFilter(originalDstLF, &origdstv3.OriginalDst{}))
	}
	l.ListenerFilters = append(l.ListenerFilters, b.inboundInspectors(l.FilterChains)...)
}

// inboundInspectors sniff TLS and HTTP on the destination ports whose
// chains match on them, as istiod decides it: TLS where a chain matches
// the TLS transport, HTTP where one matches plaintext HTTP ALPN. Chains
// without a port stand for every other port.
func (b *builder) inboundInspectors(chains []*listenerv3.FilterChain) []*listenerv3.ListenerFilter {
	type need struct{ tls, http bool }
	byPort := map[uint32]need{}
	for _, c := range chains {
		m := c.GetFilterChainMatch()
		n := byPort[m.GetDestinationPort().GetValue()]
		n.tls = n.tls || m.GetTransportProtocol() == "tls"
		n.http = n.http || slices.ContainsFunc(m.GetApplicationProtocols(), func(a string) bool { return a == "http/1.1" || a == "h2c" })
		byPort[m.GetDestinationPort().GetValue()] = n
	}
	ports := slices.Sorted(maps.Keys(byPort))
	var out []*listenerv3.ListenerFilter
	if slices.ContainsFunc(ports, func(p uint32) bool { return byPort[p].tls }) {
		tls := b.tlsInspector()
		if byPort[0].tls {
			// On by default: off where no chain needs it.
			tls.FilterDisabled = portsPredicate(slices.DeleteFunc(slices.Clone(ports), func(p uint32) bool { return p == 0 || byPort[p].tls }))
		} else {
			// Off by default: on only where a chain needs it.
			if on := portsPredicate(slices.DeleteFunc(slices.Clone(ports), func(p uint32) bool { return p == 0 || !byPort[p].tls })); on != nil {
				tls.FilterDisabled = &listenerv3.ListenerFilterChainMatchPredicate{Rule: &listenerv3.ListenerFilterChainMatchPredicate_NotMatch{NotMatch: on}}
			}
		}
		out = append(out, tls)
	}
	if slices.ContainsFunc(ports, func(p uint32) bool { return byPort[p].http }) {
		http := b.listenerFilter(httpInspector, &httpinspectorv3.HttpInspector{})
		http.FilterDisabled = portsPredicate(slices.DeleteFunc(slices.Clone(ports), func(p uint32) bool { return byPort[p].http }))
		out = append(out, http)
	}
	return out
}

// portsPredicate matches connections to any of the ports; nil for none.
func portsPredicate(ports []uint32) *listenerv3.ListenerFilterChainMatchPredicate {
	var rules []*listenerv3.ListenerFilterChainMatchPredicate
	for _, p := range ports {
		rules = append(rules, &listenerv3.ListenerFilterChainMatchPredicate{Rule: &listenerv3.ListenerFilterChainMatchPredicate_DestinationPortRange{
			DestinationPortRange: &typev3.Int32Range{Start: int32(p), End: int32(p) + 1}}})
	}
	switch len(rules) {
	case 0:
		return nil
	case 1:
		return rules[0]
	}
	return &listenerv3.ListenerFilterChainMatchPredicate{Rule: &listenerv3.ListenerFilterChainMatchPredicate_OrMatch{
		OrMatch: &listenerv3.ListenerFilterChainMatchPredicate_MatchSet{Rules: rules}}}
}

// inboundFilterChain builds one chain; sidecar, when a Sidecar declared
// the port, marks it with its config.
func (b *builder) inboundFilterChain(c inboundChain, sidecar *model.ObjectMeta) *listenerv3.FilterChain {
	fc := &listenerv3.FilterChain{Name: c.name, FilterChainMatch: &listenerv3.FilterChainMatch{TransportProtocol: c.transport, ApplicationProtocols: c.alpn}}
	if sidecar != nil {
		fc.Metadata = configMetadata("sidecar", sidecar.Namespace, sidecar.Name)
	}
	cluster, port, statPrefix := InboundPassthroughCluster, uint32(0), InboundPassthroughCluster
	var proto protocol.Protocol = protocol.HTTP
	if c.port != 0 {
		fc.FilterChainMatch.DestinationPort = wrapperspb.UInt32(c.port)
	}
	if !c.passthrough {
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
		fc.Filters = b.l4(proto, cluster, b.tcpProxy(cluster, cluster, "", ""))
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
	h := &hcmv3.HttpConnectionManager{
		StatPrefix:                  statPrefix,
		RouteSpecifier:              &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: rc},
		HttpFilters:                 b.httpFilters(proto),
		ServerName:                  "istio-envoy",
		ForwardClientCertDetails:    hcmv3.HttpConnectionManager_APPEND_FORWARD,
		SetCurrentClientCertDetails: &hcmv3.HttpConnectionManager_SetCurrentClientCertDetails{Subject: wrapperspb.Bool(true), Dns: true, Uri: true},
	}
	// HTTP/2, gRPC and gRPC-Web ports state HTTP/2 options (defaults) on
	// the server side too, as istiod does.
	if proto.IsHTTP2() {
		h.Http2ProtocolOptions = &corev3.Http2ProtocolOptions{}
	}
	return b.hcm(h)
}

// inboundOperation names inbound requests in traces: the port's host and
// port, empty for passthrough traffic.
func (b *builder) inboundOperation(target, port uint32) string {
	h := ""
	for _, ip := range b.inboundPorts() {
		if ip.target == target {
			h = ip.host
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
// chain: any workload of the mesh's trust domains may connect.
func (b *builder) downstreamTLS(chain string, alpn []string) *corev3.TransportSocket {
	common := &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
			TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
			CipherSuites:              istioCiphers,
		},
		AlpnProtocols: alpn,
	}
	var trust []*matcherv3.StringMatcher
	for _, td := range b.validationTrustDomains() {
		trust = append(trust, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "spiffe://" + td + "/"}})
	}
	b.identity(common, &tlsv3.CertificateValidationContext{
		MatchSubjectAltNames: trust, //nolint:staticcheck // the field istiod sets
	})
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common, RequireClientCertificate: wrapperspb.Bool(true)}
	return &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{
		TypedConfig: b.pk.any(chain+" TLS context", ctx)}}
}
