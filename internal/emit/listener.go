package emit

import (
	"net/netip"
	"slices"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	grpcstatsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/grpc_stats/v3"
	grpcwebv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/grpc_web/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	httpinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/http_inspector/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	mongov3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/mongo_proxy/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	uuidv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/request_id/uuid/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshv1 "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// Well-known ports of a sidecar (docs/semantics/envoy-output.md §7.1, §7.4).
const (
	virtualOutboundPort = resolve.VirtualOutboundPort
	virtualInboundPort  = resolve.VirtualInboundPort
	wildcard            = resolve.WildcardAddress
	wildcard6           = "::"
)

const (
	hcmName        = "envoy.filters.network.http_connection_manager"
	tcpProxyName   = "envoy.filters.network.tcp_proxy"
	tlsInspector   = "envoy.filters.listener.tls_inspector"
	httpInspector  = "envoy.filters.listener.http_inspector"
	originalDstLF  = "envoy.filters.listener.original_dst"
	passthroughFCN = "PassthroughFilterChain"
)

// plaintextALPN is what the HTTP inspector reports for cleartext HTTP.
var plaintextALPN = []string{"http/1.1", "h2c"}

// class is how a port is proxied: HCM, tcp_proxy, or both behind
// protocol sniffing.
type class int

const (
	classTCP class = iota
	classHTTP
	classAuto
)

func classOf(p protocol.Protocol) class {
	switch {
	case p.IsHTTP():
		return classHTTP
	case p.IsHTTPOrSniffed():
		return classAuto
	}
	return classTCP
}

// outListener is an outbound listener being assembled under its key.
type outListener struct {
	// addr is the plan's address (the wildcard as resolve writes it);
	// listen is where the proxy binds it (listenAddr).
	addr, listen string
	port         uint32
	stored       class
	proto        protocol.Protocol
	locked       bool
	bindPort     bool
	chains       []*listenerv3.FilterChain
	// extra are further addresses the listener binds (extraBinds).
	extra []string
}

// outbound assembles the outbound listeners of a sidecar in istiod's order
// and with its conflict rules (docs/semantics/envoy-output.md §7.4).
type outbound struct {
	b     *builder
	byKey map[string]*outListener
	order []*outListener
	// vss are the VirtualServices of the egress listener being placed,
	// whose TLS routes its TLS ports follow.
	vss []*resolve.VirtualService
	// extra are the further addresses of a listener the step being
	// placed creates (extraBinds).
	extra []string
	// bindPort: the egress listener being placed binds for real.
	bindPort bool
}

// outboundListeners builds the listeners from the scope's placement steps,
// which resolve computes once for emit and the listener analyzers.
func (b *builder) outboundListeners() {
	o := &outbound{b: b, byKey: map[string]*outListener{}}
	var lockedBy *resolve.EgressListener
	for st := range b.view.Scope.OutboundPorts() {
		if b.stopped() {
			return // the build is discarded
		}
		o.vss, o.bindPort, o.extra = st.Egress.VirtualServices, st.BindToPort, b.extraBinds(st)
		if st.CatchAll && st.Egress != lockedBy {
			for _, ol := range o.order {
				ol.locked = true
			}
			lockedBy = st.Egress
		}
		switch {
		case st.Portless:
			o.portless(st)
		case st.PerEndpoint:
			o.headless(st.Service, st.Port, st.Protocol)
		default:
			o.put(st.Service, st.ServicePort, st.Port, st.Protocol, b.vip(st), st.CIDR, st.CatchAll)
		}
	}
	for _, ol := range o.order {
		b.cfg.Listeners = append(b.cfg.Listeners, b.finishOutbound(ol))
	}
}

// portless is the one listener of a unix-socket or HTTP_PROXY egress
// listener: an HTTP connection manager whose route configuration covers
// every port of its services. A unix socket is named by its path and
// port 0.
func (o *outbound) portless(st resolve.OutboundPort) {
	b := o.b
	rds := st.Egress.RouteName()
	b.rdsNames[rds] = true
	ol := &outListener{addr: st.Address, listen: b.listenAddr(st.Address), port: st.Port, bindPort: st.BindToPort, stored: classHTTP, locked: true}
	ol.chains = []*listenerv3.FilterChain{chain(nil, b.hcm(b.outboundHCMConfig("outbound_"+ol.name(), rds, protocol.HTTP)))}
	o.byKey[ol.name()] = ol
	o.order = append(o.order, ol)
}

// name is the listener's name: its address and port.
func (ol *outListener) name() string {
	return ol.listen + "_" + strconv.FormatUint(uint64(ol.port), 10)
}

// listenAddr is where the proxy binds a planned address: the wildcard is
// "::" on an IPv6-only proxy, as istiod binds it
// (docs/semantics/envoy-output.md §7.4).
func (b *builder) listenAddr(addr string) string {
	if addr == wildcard && b.ipv6Only() {
		return wildcard6
	}
	return addr
}

// vip is the address a step's listener binds on this proxy: a
// dual-stack Service's VIP of the proxy's family (resolve.VIPsFor) where
// the step has the Service's first.
func (b *builder) vip(st resolve.OutboundPort) string {
	if st.Egress.Bind != "" || len(st.Service.Addresses) < 2 || st.Address != st.Service.Addresses[0] {
		return st.Address
	}
	return b.mesh.VIPsFor(st.Service, b.view.Proxy)[0]
}

// extraBinds are the addresses of the other IP family a dual-stack
// proxy's listener binds beside the step's, as istiod binds them where
// it picks the address itself (docs/semantics/envoy-output.md §7.4): an
// HTTP port's wildcard, the wildcard of a ServiceEntry port without an
// address or of a CIDR, and the localhost of a listener that binds for
// real. A Sidecar's bind, a VIP and a Kubernetes service's wildcard stay
// alone; so do per-endpoint listeners, whose steps place their own. Under
// ISTIO_DUAL_STACK a VIP listener also binds the service's other VIPs.
func (b *builder) extraBinds(st resolve.OutboundPort) []string {
	if st.Egress.Bind != "" || st.PerEndpoint || st.Portless {
		return nil
	}
	if s := st.Service; b.mesh.DualStack && len(s.Addresses) > 1 && st.Address == s.Addresses[0] {
		return b.mesh.VIPsFor(s, b.view.Proxy)[1:]
	}
	if st.Address == wildcard && !st.Protocol.IsHTTP() && st.CIDR == "" && st.Service.Registry == resolve.Kubernetes {
		return nil
	}
	return b.defaultExtras(st.Address)
}

// wildcardExtras: the IPv6 wildcard beside the IPv4 one of a listener on
// port, which a dual-stack proxy binds under ISTIO_DUAL_STACK where istiod
// binds its own wildcards (virtualOutbound, virtualInbound, gateway
// servers).
func (b *builder) wildcardExtras(port uint32) []*listenerv3.AdditionalAddress {
	if !b.mesh.DualStack || !b.dualStack() {
		return nil
	}
	return []*listenerv3.AdditionalAddress{{Address: socketAddress(wildcard6, port)}}
}

// defaultExtras: beside the wildcard "::", beside localhost "::1", on a
// dual-stack proxy.
func (b *builder) defaultExtras(addr string) []string {
	if !b.dualStack() {
		return nil
	}
	switch addr {
	case wildcard:
		return []string{wildcard6}
	case resolve.Localhost:
		return []string{"::1"}
	}
	return nil
}

// headless gives each endpoint of an address-less passthrough service port
// its own listener, the proxy's own (first) address left out: istiod
// compares with that one only, so a dual-stack pod keeps a listener on
// its own second address.
func (o *outbound) headless(s *resolve.Service, port uint32, proto protocol.Protocol) {
	ips := o.b.view.Proxy.IPs
	for _, e := range portEndpoints(s, port) {
		if e.Address == "" || len(ips) > 0 && e.Address == ips[0] {
			continue
		}
		if !o.b.opts.HeadlessCIDRChains || proto != protocol.TCP {
			o.put(s, port, port, proto, e.Address, "", true)
			continue
		}
		// One wildcard listener, each pod a chain on its address. Only for
		// plain TCP: a destination match outranks ALPN, so on a sniffed
		// port it would take HTTP away from the HTTP chain.
		chains := o.b.serviceChains(o.vss, s, port, port, proto, wildcard)
		for _, c := range chains {
			if len(c.GetFilterChainMatch().GetPrefixRanges()) == 0 {
				c.FilterChainMatch = &listenerv3.FilterChainMatch{PrefixRanges: cidrRanges([]string{e.Address})}
			}
		}
		o.extra = o.b.defaultExtras(wildcard)
		o.place(wildcard, port, proto, chains, true)
	}
}

// put builds a service port's chains and places them; cidr, when set,
// is the destination range its TCP and TLS chains match unless a route
// names subnets of its own.
func (o *outbound) put(s *resolve.Service, svcPort, port uint32, proto protocol.Protocol, addr, cidr string, catchAll bool) {
	chains := o.b.tlsRouteChains(o.vss, s, port, proto)
	if len(chains) == 0 {
		chains = o.b.serviceChains(o.vss, s, svcPort, port, proto, addr)
	}
	if cidr != "" {
		for _, c := range chains {
			if c.GetFilters()[0].GetName() == hcmName || len(c.GetFilterChainMatch().GetPrefixRanges()) > 0 {
				continue
			}
			if c.FilterChainMatch == nil {
				c.FilterChainMatch = &listenerv3.FilterChainMatch{}
			}
			c.FilterChainMatch.PrefixRanges = cidrRanges([]string{cidr})
		}
	}
	o.place(addr, port, proto, chains, catchAll)
}

// place adds a service's chains to the listener on addr and port, creating
// it or merging into it as istiod resolves protocol conflicts (§7.4).
func (o *outbound) place(addr string, port uint32, proto protocol.Protocol, chains []*listenerv3.FilterChain, catchAll bool) {
	key := addr + "_" + strconv.FormatUint(uint64(port), 10)
	incoming := classOf(proto)
	ol, ok := o.byKey[key]
	if !ok {
		stored := incoming
		if incoming == classHTTP && addr == wildcard {
			stored = classAuto // it carries an ALPN match, so TCP can join
		}
		ol = &outListener{addr: addr, listen: o.b.listenAddr(addr), port: port, stored: stored, proto: proto, chains: chains, bindPort: o.bindPort, extra: o.extra}
		o.byKey[key] = ol
		o.order = append(o.order, ol)
		return
	}
	if ol.locked && catchAll {
		return
	}
	if ol.proto != proto && (isMongoOrMySQL(ol.proto) || isMongoOrMySQL(proto)) {
		return
	}
	switch ol.stored {
	case classHTTP:
		switch incoming {
		case classTCP:
			ol.merge(chains)
			ol.stored = classAuto
		case classAuto:
			ol.chains, ol.stored, ol.proto = chains, classAuto, proto
		}
	case classTCP:
		ol.merge(chains)
		if incoming != classTCP {
			ol.stored = classAuto
		}
	case classAuto:
		switch incoming {
		case classTCP:
			ol.merge(chains)
		case classAuto:
			ol.merge(tcpChains(chains))
		}
	}
}

func isMongoOrMySQL(p protocol.Protocol) bool { return p == protocol.Mongo || p == protocol.MySQL }

// merge appends the chains whose match no existing chain has: the first
// service to claim a match keeps it.
func (ol *outListener) merge(chains []*listenerv3.FilterChain) {
	for _, c := range chains {
		if !slices.ContainsFunc(ol.chains, func(e *listenerv3.FilterChain) bool {
			return proto.Equal(e.GetFilterChainMatch(), c.GetFilterChainMatch())
		}) {
			ol.chains = append(ol.chains, c)
		}
	}
}

func tcpChains(chains []*listenerv3.FilterChain) []*listenerv3.FilterChain {
	var out []*listenerv3.FilterChain
	for _, c := range chains {
		if c.GetFilters()[0].GetName() == tcpProxyName {
			out = append(out, c)
		}
	}
	return out
}

// serviceChains are the filter chains of one service port on a listener;
// vss are the egress listener's VirtualServices.
func (b *builder) serviceChains(vss []*resolve.VirtualService, s *resolve.Service, svcPort, port uint32, proto protocol.Protocol, addr string) []*listenerv3.FilterChain {
	clusterName := resolve.ClusterID{Port: svcPort, Host: s.Host}.String()
	statPrefix := "outbound_" + b.listenAddr(addr) + "_" + strconv.FormatUint(uint64(port), 10)
	tcp := func(match *listenerv3.FilterChainMatch) []*listenerv3.FilterChain {
		var out []*listenerv3.FilterChain
		if proto != protocol.TLS && proto != protocol.HTTPS {
			var terminal bool
			if out, terminal = b.tcpRouteChains(vss, s, port, proto); terminal {
				return out
			}
		}
		return append(out, chain(match, b.l4(proto, clusterName, b.tcpProxy(clusterName, clusterName, s.Host, ""))...))
	}
	httpMatch := &listenerv3.FilterChainMatch{ApplicationProtocols: plaintextALPN, TransportProtocol: "raw_buffer"}
	switch classOf(proto) {
	case classHTTP:
		var match *listenerv3.FilterChainMatch
		if addr == wildcard {
			match = httpMatch
		}
		return []*listenerv3.FilterChain{chain(match, b.outboundHCM(statPrefix, strconv.FormatUint(uint64(port), 10), proto))}
	case classAuto:
		rds := strconv.FormatUint(uint64(port), 10)
		if addr != wildcard {
			rds = string(s.Host) + ":" + rds
		}
		return append(tcp(nil), chain(httpMatch, b.outboundHCM(statPrefix, rds, proto)))
	}
	// Only a listener shared by address-less or CIDR services tells them
	// apart by SNI; a pod's listener (headless) or a VIP's needs none.
	if (proto == protocol.TLS || proto == protocol.HTTPS) && addr == wildcard && (!resolve.HasAddress(s) || resolve.CIDRAddress(s) != "") {
		return tcp(sniMatch(b.mesh.ServerNames(s, b.view.Proxy)))
	}
	return tcp(nil)
}

// tlsRouteChains route a TLS or HTTPS port by the TLS routes of the
// listener's VirtualServices for the host (docs/semantics/envoy-output.md §7.4): a chain per
// route match that applies to the proxy and port, matching its SNI names
// and destination subnets, the first route winning a repeated match. None
// when no route applies; the port then gets its default chain.
func (b *builder) tlsRouteChains(vss []*resolve.VirtualService, s *resolve.Service, port uint32, proto protocol.Protocol) []*listenerv3.FilterChain {
	if proto != protocol.TLS && proto != protocol.HTTPS {
		return nil
	}
	var out []*listenerv3.FilterChain
	for _, r := range resolve.SidecarTLSRoutes(vss, s.Host, resolve.SidecarSource(b.view.Proxy, port)) {
		fc := chain(l4Match(r.SNIHosts, r.Subnets), b.tcpRouteProxy(r.VirtualService, r.Destinations, port, proto)...)
		fc.Metadata = configMetadata("virtual-service", r.VirtualService.Object.Namespace, r.VirtualService.Object.Name)
		out = append(out, fc)
	}
	return out
}

// cidrRanges turns subnets ("10.0.0.0/8", or a bare address for one host)
// into a chain's prefix ranges.
func cidrRanges(subnets []string) []*corev3.CidrRange {
	var out []*corev3.CidrRange
	for _, sub := range subnets {
		p, err := netip.ParsePrefix(sub)
		if err != nil {
			a, err := netip.ParseAddr(sub)
			if err != nil {
				continue // validation refuses it before it gets here
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, &corev3.CidrRange{AddressPrefix: p.Addr().String(), PrefixLen: wrapperspb.UInt32(uint32(p.Bits()))})
	}
	return out
}

// tcpRouteChains route a TCP port by the TCP routes of the listener's
// VirtualServices for the host (docs/semantics/virtual-services.md §6.6), in order: a route without
// matches, or with an applicable match on no destination subnets, ends the
// list (terminal); before it, a route whose applicable matches all name
// subnets gets a chain on those subnets. Without a terminal route the
// caller adds the service's own chain.
func (b *builder) tcpRouteChains(vss []*resolve.VirtualService, s *resolve.Service, port uint32, proto protocol.Protocol) (chains []*listenerv3.FilterChain, terminal bool) {
	for _, r := range resolve.SidecarTCPRoutes(vss, s.Host, resolve.SidecarSource(b.view.Proxy, port)) {
		fc := chain(l4Match(nil, r.Subnets), b.tcpRouteProxy(r.VirtualService, r.Destinations, port, proto)...)
		if r.Terminal {
			// istiod marks only terminal chains with their VirtualService.
			fc.Metadata = configMetadata("virtual-service", r.VirtualService.Object.Namespace, r.VirtualService.Object.Name)
			return append(chains, fc), true
		}
		chains = append(chains, fc)
	}
	return chains, false
}

// tcpRouteProxy sends a TCP route's traffic to its one destination, or
// splits it by weight (stat prefix "<name>.<namespace>", as istiod does).
func (b *builder) tcpRouteProxy(vs *resolve.VirtualService, routes []*networking.RouteDestination, port uint32, proto protocol.Protocol) []*listenerv3.Filter {
	cluster := func(d *networking.Destination) string {
		return b.mesh.DestinationCluster(b.view.Scope, d, vs.Namespace(), port).String()
	}
	// The DestinationRule is the one for the first destination's own
	// host, an ExternalName alias's rather than its target's, as istiod
	// looks it up (docs/semantics/envoy-output.md §7.4).
	d := routes[0].GetDestination()
	ruleHost := host.FQDN(d.GetHost(), vs.Namespace(), b.mesh.Config.DomainSuffix)
	if len(routes) == 1 {
		name := cluster(d)
		return b.l4(proto, name, b.tcpProxy(name, name, ruleHost, d.GetSubset()))
	}
	statPrefix := vs.Object.Name + "." + vs.Object.Namespace
	wc := &tcpv3.TcpProxy_WeightedCluster{}
	for _, r := range routes {
		if r.GetWeight() > 0 {
			name := cluster(r.GetDestination())
			b.refs[name] = "tcp_proxy " + statPrefix
			wc.Clusters = append(wc.Clusters, &tcpv3.TcpProxy_WeightedCluster_ClusterWeight{Name: name, Weight: uint32(r.GetWeight())})
		}
	}
	// A split hashes by the first destination's rule, top level only,
	// and takes that rule's pool limits.
	tp := &tcpv3.TcpProxy{
		StatPrefix:       statPrefix,
		ClusterSpecifier: &tcpv3.TcpProxy_WeightedClusters{WeightedClusters: wc},
		HashPolicy:       b.sourceIPHash(ruleHost, ""),
	}
	b.tcpProxyLimits(tp, ruleHost)
	return b.l4(proto, statPrefix, &listenerv3.Filter{Name: tcpProxyName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: b.pk.any(statPrefix+" tcp_proxy", tp)}})
}

// chain is an outbound filter chain; a TLS handshake on it must finish in
// istiod's 15 seconds.
func chain(match *listenerv3.FilterChainMatch, fs ...*listenerv3.Filter) *listenerv3.FilterChain {
	return &listenerv3.FilterChain{FilterChainMatch: match, Filters: fs, TransportSocketConnectTimeout: durationpb.New(15 * time.Second)}
}

// l4 puts the protocol's own network filter before a proxying filter, as
// istiod does (docs/semantics/envoy-output.md §7.4): MongoDB's, which reads the traffic for
// stats; MySQL's and Redis's are off in istiod by default.
func (b *builder) l4(proto protocol.Protocol, statPrefix string, f *listenerv3.Filter) []*listenerv3.Filter {
	if proto != protocol.Mongo {
		return []*listenerv3.Filter{f}
	}
	m := &listenerv3.Filter{Name: "envoy.filters.network.mongo_proxy", ConfigType: &listenerv3.Filter_TypedConfig{
		TypedConfig: b.pk.any(statPrefix+" mongo_proxy", &mongov3.MongoProxy{StatPrefix: statPrefix})}}
	return []*listenerv3.Filter{m, f}
}

// tcpProxy sends to a cluster, with the hash and limits of the
// DestinationRule for ruleHost and subset (none for "").
func (b *builder) tcpProxy(statPrefix, clusterName string, ruleHost host.Name, subset string) *listenerv3.Filter {
	b.refs[clusterName] = "tcp_proxy " + statPrefix
	tp := &tcpv3.TcpProxy{
		StatPrefix:       statPrefix,
		ClusterSpecifier: &tcpv3.TcpProxy_Cluster{Cluster: clusterName},
		HashPolicy:       b.sourceIPHash(ruleHost, subset),
	}
	b.tcpProxyLimits(tp, ruleHost)
	return &listenerv3.Filter{Name: tcpProxyName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: b.pk.any(statPrefix+" tcp_proxy", tp)}}
}

// sourceIPHash is a tcp_proxy's hash on the client's address, when the
// DestinationRule the proxy uses for host hashes on it, as istiod sets it
// (docs/semantics/envoy-output.md §7.4): the subset's load balancer
// decides if it has one (any other kind turning it off), else the
// top-level one; port-level entries play no part.
func (b *builder) sourceIPHash(h host.Name, subset string) []*typev3.HashPolicy {
	if h == "" {
		return nil
	}
	s, ok := b.view.Scope.Service(h)
	if !ok {
		return nil
	}
	rule := b.ruleFor(s.Host)
	if rule == nil {
		return nil
	}
	use := rule.TrafficPolicy.GetLoadBalancer().GetConsistentHash().GetUseSourceIp()
	for _, x := range rule.Subsets {
		if x.GetName() == subset {
			if lb := x.GetTrafficPolicy().GetLoadBalancer(); lb != nil {
				use = lb.GetConsistentHash().GetUseSourceIp()
			}
			break
		}
	}
	if !use {
		return nil
	}
	return []*typev3.HashPolicy{{PolicySpecifier: &typev3.HashPolicy_SourceIp_{SourceIp: &typev3.HashPolicy_SourceIp{}}}}
}

// outboundHCM is an outbound HTTP connection manager taking its routes
// from RDS, or holding them inline in the bootstrap format.
func (b *builder) outboundHCM(statPrefix, routeName string, proto protocol.Protocol) *listenerv3.Filter {
	// Every service on a port asks for the same filter, and most of those
	// chains are then merged away: build and pack it once, since inline
	// it holds the port's whole route configuration.
	key := statPrefix + "\x00" + routeName
	if f, ok := b.hcmCache[key]; ok {
		return f
	}
	// As in istiod, the first service on the port decides its protocol.
	f := b.hcm(b.outboundHCMConfig(statPrefix, routeName, proto))
	b.hcmCache[key] = f
	b.hcmRoutes[f] = routeName
	return f
}

// useRoutes marks the route configurations the chains' connection
// managers name as wanted. Only chains a listener kept count: a service's
// HTTP chain discarded in a port conflict asks for nothing, as in istiod.
func (b *builder) useRoutes(chains ...*listenerv3.FilterChain) {
	for _, c := range chains {
		for _, f := range c.GetFilters() {
			if name, ok := b.hcmRoutes[f]; ok {
				b.rdsNames[name] = true
			}
		}
	}
}

// outboundHCMConfig is an outbound connection manager before packing.
func (b *builder) outboundHCMConfig(statPrefix, routeName string, proto protocol.Protocol) *hcmv3.HttpConnectionManager {
	h := &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			RouteConfigName: routeName,
			ConfigSource:    adsSource(),
		}},
		HttpFilters: b.httpFilters(proto),
	}
	if b.opts.Format == Bootstrap {
		h.RouteSpecifier = &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: b.route(routeName)}
	}
	if !b.sidecar() {
		// A gateway is the edge: it trusts no forwarded address or
		// client certificate header from outside.
		h.UseRemoteAddress = wrapperspb.Bool(true)
		h.HttpProtocolOptions = &corev3.Http1ProtocolOptions{}
		h.ServerName = "istio-envoy"
		h.ForwardClientCertDetails = hcmv3.HttpConnectionManager_SANITIZE_SET
		h.SetCurrentClientCertDetails = &hcmv3.HttpConnectionManager_SetCurrentClientCertDetails{Subject: wrapperspb.Bool(true), Cert: true, Dns: true, Uri: true}
	}
	return h
}

// hcm completes a connection manager with what istiod sets on all of
// them. Stat prefixes end in ";", istiod's delimiter for stats parsing.
// Tracing is left out: its tags name the proxy, and no tracer is set.
func (b *builder) hcm(h *hcmv3.HttpConnectionManager) *listenerv3.Filter {
	h.StatPrefix += ";"
	if h.UseRemoteAddress == nil {
		h.UseRemoteAddress = wrapperspb.Bool(false)
	}
	h.NormalizePath = wrapperspb.Bool(true)
	h.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_KEEP_UNCHANGED
	h.Proxy_100Continue = true
	h.UpgradeConfigs = []*hcmv3.HttpConnectionManager_UpgradeConfig{{UpgradeType: "websocket"}}
	h.StreamIdleTimeout = durationpb.New(0)
	h.RequestIdExtension = &hcmv3.RequestIDExtension{TypedConfig: b.pk.any("request id", &uuidv3.UuidRequestIdConfig{
		UseRequestIdForTraceSampling: wrapperspb.Bool(true),
	})}
	return &listenerv3.Filter{Name: hcmName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: b.pk.any(h.StatPrefix+" http_connection_manager", h)}}
}

// httpFilters are the HTTP filters of every connection manager istiod
// builds, less its own extensions (metadata exchange, ALPN), which
// go-control-plane does not carry; gRPC-Web ports translate first.
func (b *builder) httpFilters(proto protocol.Protocol) []*hcmv3.HttpFilter {
	var web []*hcmv3.HttpFilter
	if proto == protocol.GRPCWeb {
		web = []*hcmv3.HttpFilter{b.httpFilter("envoy.filters.http.grpc_web", &grpcwebv3.GrpcWeb{})}
	}
	return append(web,
		b.httpFilter("envoy.filters.http.grpc_stats", &grpcstatsv3.FilterConfig{
			EmitFilterState:        true,
			PerMethodStatSpecifier: &grpcstatsv3.FilterConfig_StatsForAllMethods{StatsForAllMethods: wrapperspb.Bool(false)},
		}),
		b.httpFilter(faultFilter, &faultv3.HTTPFault{}),
		b.httpFilter(corsFilter, &corsv3.Cors{}),
		b.httpFilter(routerFilter, &routerv3.Router{}),
	)
}

func (b *builder) httpFilter(name string, m proto.Message) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: b.pk.any(name, m)}}
}

// finishOutbound wraps an assembled listener: inspectors its chains need,
// and a passthrough default chain when no chain matches everything.
func (b *builder) finishOutbound(ol *outListener) *listenerv3.Listener {
	l := &listenerv3.Listener{
		Name:             ol.name(),
		Address:          endpointAddress(ol.listen, ol.port),
		FilterChains:     ol.chains,
		TrafficDirection: corev3.TrafficDirection_OUTBOUND,
	}
	for _, a := range ol.extra {
		l.AdditionalAddresses = append(l.AdditionalAddresses, &listenerv3.AdditionalAddress{Address: socketAddress(a, ol.port)})
	}
	if ol.bindPort {
		// Only a listener on a real socket accepts; one at a time, as
		// istiod has it.
		l.MaxConnectionsToAcceptPerSocketEvent = wrapperspb.UInt32(1)
	} else {
		l.BindToPort = wrapperspb.Bool(false)
	}
	b.inspectors(l)
	// As istiod does: a chain matching everything becomes the default
	// chain, so traffic that starts to match another chain and then does
	// not still has somewhere to go (the last such chain wins); alone, it
	// stays the one chain. Without one, unmatched traffic passes through.
	var matched []*listenerv3.FilterChain
	for _, c := range ol.chains {
		if proto.Size(c.GetFilterChainMatch()) == 0 {
			l.DefaultFilterChain = c
		} else {
			matched = append(matched, c)
		}
	}
	b.useRoutes(ol.chains...)
	switch {
	case l.DefaultFilterChain != nil && len(matched) == 0:
		l.DefaultFilterChain = nil
	case l.DefaultFilterChain != nil:
		l.FilterChains = matched
	default:
		l.DefaultFilterChain = &listenerv3.FilterChain{Name: passthroughFCN, FilterChainMatch: &listenerv3.FilterChainMatch{},
			Filters: []*listenerv3.Filter{b.unmatchedProxy()}}
	}
	return l
}

// inspectors adds the TLS and HTTP inspectors the chains' matches need,
// and the time they may take, as istiod sets them on sidecar listeners.
func (b *builder) inspectors(l *listenerv3.Listener) {
	var needTLS, needHTTP bool
	for _, c := range l.FilterChains {
		m := c.GetFilterChainMatch()
		needTLS = needTLS || len(m.GetServerNames()) > 0 || m.GetTransportProtocol() == "tls"
		needHTTP = needHTTP || (len(m.GetApplicationProtocols()) > 0 && m.GetTransportProtocol() != "tls")
	}
	if needTLS {
		l.ListenerFilters = append(l.ListenerFilters, b.tlsInspector())
	}
	// The timeout only bounds the HTTP inspector; without one, none.
	l.ListenerFiltersTimeout = durationpb.New(0)
	if needHTTP {
		l.ListenerFilters = append(l.ListenerFilters, b.listenerFilter(httpInspector, &httpinspectorv3.HttpInspector{}))
		if t := b.mesh.Config.GetProtocolDetectionTimeout(); t != nil {
			l.ListenerFiltersTimeout = t
		}
	}
	l.ContinueOnListenerFiltersTimeout = true
}

// gatewayInspectors are a gateway listener's: the TLS inspector when a
// chain matches SNI or terminates TLS (whose ALPN it reads), nothing else
// and no timeout, as istiod sets them.
func (b *builder) gatewayInspectors(l *listenerv3.Listener) {
	for _, c := range l.FilterChains {
		if len(c.GetFilterChainMatch().GetServerNames()) > 0 || c.GetTransportSocket() != nil {
			l.ListenerFilters = append(l.ListenerFilters, b.tlsInspector())
			return
		}
	}
}

// tlsInspector reads at most 512 bytes of a ClientHello before giving up,
// as istiod configures it (Envoy's default is 64 KiB).
func (b *builder) tlsInspector() *listenerv3.ListenerFilter {
	return b.listenerFilter(tlsInspector, &tlsinspectorv3.TlsInspector{InitialReadBufferSize: wrapperspb.UInt32(512)})
}

func (b *builder) listenerFilter(name string, m proto.Message) *listenerv3.ListenerFilter {
	return &listenerv3.ListenerFilter{Name: name, ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: b.pk.any(name, m)}}
}

// unmatchedProxy sends traffic to an unknown destination through, or
// nowhere under REGISTRY_ONLY (docs/semantics/sidecar-scope.md §4.9):
// through a Sidecar's egress proxy, with its DestinationRule, when it
// names one.
func (b *builder) unmatchedProxy() *listenerv3.Filter {
	to := resolve.WeightedCluster{Passthrough: true}
	if sc := b.view.Scope.Choice.Sidecar; sc != nil && sc.Spec.GetOutboundTrafficPolicy() != nil {
		if sc.Spec.GetOutboundTrafficPolicy().GetMode() == networking.OutboundTrafficPolicy_REGISTRY_ONLY {
			return b.tcpProxy(BlackHoleCluster, BlackHoleCluster, "", "")
		}
		to = b.view.Scope.Unmatched()
	} else if b.mesh.Config.GetOutboundTrafficPolicy().GetMode() == meshv1.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY {
		return b.tcpProxy(BlackHoleCluster, BlackHoleCluster, "", "")
	}
	return b.tcpProxy(to.Name(), to.Name(), to.ID.Host, to.ID.Subset)
}

// virtualOutbound is the listener iptables sends outbound traffic to; it
// hands each connection to the listener of its original destination.
func (b *builder) virtualOutbound() *listenerv3.Listener {
	return &listenerv3.Listener{
		Name:                "virtualOutbound",
		Address:             socketAddress(b.listenAddr(wildcard), virtualOutboundPort),
		AdditionalAddresses: b.wildcardExtras(virtualOutboundPort),
		UseOriginalDst:      wrapperspb.Bool(true),
		FilterChains: []*listenerv3.FilterChain{
			{
				Name:             "virtualOutbound-blackhole",
				FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(virtualOutboundPort)},
				Filters:          []*listenerv3.Filter{b.tcpProxy(BlackHoleCluster, BlackHoleCluster, "", "")},
			},
			{
				Name:    "virtualOutbound-catchall-tcp",
				Filters: []*listenerv3.Filter{b.unmatchedProxy()},
			},
		},
		TrafficDirection:                     corev3.TrafficDirection_OUTBOUND,
		MaxConnectionsToAcceptPerSocketEvent: wrapperspb.UInt32(1),
	}
}

// route is a route configuration by name: a gateway's, built with its
// listener, or a sidecar's outbound one.
func (b *builder) route(name string) *routev3.RouteConfiguration {
	if rc, ok := b.routeCache[name]; ok {
		return rc
	}
	if b.outRoutes == nil {
		b.outRoutes = map[string]*routev3.RouteConfiguration{}
		for _, rc := range b.mesh.OutboundRoutes(b.view) {
			b.outRoutes[rc.Name] = b.routeConfiguration(rc)
		}
		// Portless egress listeners' routes win over a port's of the
		// same name, as their listener asked for them.
		for _, rc := range b.mesh.EgressRoutes(b.view) {
			b.outRoutes[rc.Name] = b.routeConfiguration(rc)
		}
	}
	rc, ok := b.outRoutes[name]
	if !ok {
		rc = b.sniffedRoute(name, b.outRoutes)
	}
	b.routeCache[name] = rc
	return rc
}

// sniffedRoute derives "<host>:<port>" for a sniffed port bound to a
// service VIP: the port's vhosts for that host, matching any authority
// (docs/semantics/envoy-output.md §7.5 step 3).
func (b *builder) sniffedRoute(name string, byName map[string]*routev3.RouteConfiguration) *routev3.RouteConfiguration {
	h, port := splitHostPort(name)
	out := &routev3.RouteConfiguration{Name: name, ValidateClusters: wrapperspb.Bool(false), IgnorePortInHostMatching: true,
		MaxDirectResponseBodySizeBytes: wrapperspb.UInt32(1 << 20)}
	if base := byName[port]; base != nil {
		for _, vh := range base.VirtualHosts {
			if vh.Name == h+":"+port || slices.Contains(vh.Domains, h) {
				c := proto.Clone(vh).(*routev3.VirtualHost)
				c.Domains = []string{"*"}
				for i, r := range vh.Routes {
					if o, ok := b.origins[r]; ok {
						b.origins[c.Routes[i]] = o
					}
				}
				out.VirtualHosts = append(out.VirtualHosts, c)
			}
		}
	}
	return out
}

func splitHostPort(name string) (string, string) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == ':' {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}
