package emit

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	caresv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/network/dns_resolver/cares/v3"
	proxyprotocolv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/proxy_protocol/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// Names of the clusters every sidecar has (docs/semantics/envoy-output.md §7.1).
const (
	BlackHoleCluster          = "BlackHoleCluster"
	PassthroughCluster        = resolve.PassthroughCluster
	InboundPassthroughCluster = "InboundPassthroughCluster"
)

// inboundBind is the source address a sidecar uses towards its own
// application, so that the connection is not captured again.
const inboundBind = "127.0.0.6"

// inboundBind6 is inboundBind on an IPv6-only proxy.
const inboundBind6 = "::6"

// outboundClusters builds, for every service and port of the scope, the
// default cluster and one per subset of the DestinationRule the proxy uses
// (docs/semantics/envoy-output.md §7.2).
func (b *builder) outboundClusters() {
	for _, s := range b.view.Scope.Services {
		if b.stopped() {
			return // the build is discarded
		}
		if s.Resolution == resolve.Alias || s.Resolution == resolve.DynamicDNS {
			continue
		}
		rule := b.ruleFor(s.Host)
		for _, port := range s.Ports {
			if port.Protocol == protocol.UDP {
				continue
			}
			b.cachedServiceClusters(s, port, rule)
		}
	}
}

// sniDnatClusters are a router's clusters named as Istio clients name
// them in SNI, one set per service port and subset of the mesh's own
// services, when one of its servers is AUTO_PASSTHROUGH (docs/semantics/envoy-output.md §7.2).
func (b *builder) sniDnatClusters() {
	if !slices.ContainsFunc(b.mergedGateway().Servers, func(gs resolve.GatewayServer) bool { return autoPassthrough(serverOf(gs)) }) {
		return
	}
	for _, s := range b.view.Scope.Services {
		if s.MeshExternal || s.Resolution == resolve.Alias || s.Resolution == resolve.DynamicDNS {
			continue
		}
		rule := b.ruleFor(s.Host)
		for _, port := range s.Ports {
			if port.Protocol != protocol.UDP {
				b.serviceClusters(s, port, rule, true)
			}
		}
	}
}

// clusterKey is what a sidecar's clusters for one service port depend on:
// the same service seen through the same DestinationRule gives the same
// clusters in every scope.
type clusterKey struct {
	service *resolve.Service
	port    uint32
	rule    *resolve.Rule
	// v6 is an IPv6-only proxy's: it resolves names to IPv6.
	v6 bool
}

// clusterSet is the clusters, endpoints and findings of one clusterKey.
type clusterSet struct {
	clusters  []*clusterv3.Cluster
	endpoints []*endpointv3.ClusterLoadAssignment
	omitted   []string
	problems  []string
}

// cachedServiceClusters builds a service port's clusters once per mesh for
// sidecars without a Sidecar resource: their scopes all import everything
// exported to them, so each service's clusters would otherwise be built
// and rendered again in every namespace. Scopes a Sidecar trims overlap
// little, and caching them cost more than it saved (measured on the
// generated mesh with a Sidecar per namespace: +13% time, 2.3x memory).
func (b *builder) cachedServiceClusters(s *resolve.Service, port resolve.Port, rule *resolve.Rule) {
	if !b.sidecar() || b.view.Scope.Choice.Sidecar != nil {
		b.serviceClusters(s, port, rule, false)
		return
	}
	key := clusterKey{s, port.Number, rule, b.ipv6Only()}
	if v, ok := b.clusterCache.Load(key); ok {
		set := v.(*clusterSet)
		b.cfg.Clusters = append(b.cfg.Clusters, set.clusters...)
		b.cfg.Endpoints = append(b.cfg.Endpoints, set.endpoints...)
		for _, name := range set.omitted {
			b.omitted[name] = true
		}
		b.pk.problems = append(b.pk.problems, set.problems...)
		return
	}
	nc, ne, np := len(b.cfg.Clusters), len(b.cfg.Endpoints), len(b.pk.problems)
	omitted := maps.Clone(b.omitted)
	b.serviceClusters(s, port, rule, false)
	set := &clusterSet{
		clusters:  slices.Clone(b.cfg.Clusters[nc:]),
		endpoints: slices.Clone(b.cfg.Endpoints[ne:]),
		problems:  slices.Clone(b.pk.problems[np:]),
	}
	for name := range b.omitted {
		if !omitted[name] {
			set.omitted = append(set.omitted, name)
		}
	}
	for _, c := range set.clusters {
		b.frags.Store(c, fragSlots{})
	}
	for _, cla := range set.endpoints {
		b.frags.Store(cla, fragSlots{})
	}
	b.clusterCache.Store(key, set)
}

// ruleFor is the DestinationRule rule the proxy uses for a host, nil when
// none applies.
func (b *builder) ruleFor(h host.Name) *resolve.Rule {
	dec, ok := b.view.Scope.DestinationRule(h)
	if !ok {
		return nil
	}
	return dec.Lookup.RuleFor(b.view.Proxy)
}

func (b *builder) serviceClusters(s *resolve.Service, port resolve.Port, rule *resolve.Rule, sniDnat bool) {
	eps := portEndpoints(s, port.Number)
	dns := s.Resolution == resolve.DNSLB || s.Resolution == resolve.DNSRoundRobinLB
	if dns && len(eps) == 0 {
		// istiod omits DNS clusters with nothing to resolve, though
		// listeners still name them: Envoy then refuses the connection.
		b.omitted[outboundName(port.Number, "", s.Host, sniDnat)] = true
		return
	}
	var top *networking.TrafficPolicy
	if rule != nil {
		top = rule.TrafficPolicy
	}
	def := b.serviceCluster(s, port, rule, nil, policyFor(top, nil, port.Number, b.mesh.Config.GetDefaultTrafficPolicy()), eps, sniDnat, false)
	if rule == nil {
		return
	}
	for _, sub := range rule.Subsets {
		// A subset cluster starts as the default cluster's type, or as
		// ORIGINAL_DST when the subset's own load balancer is PASSTHROUGH;
		// its merged policy applies only after (docs/semantics/envoy-output.md §7.3).
		origDst := def.GetType() == clusterv3.Cluster_ORIGINAL_DST || sub.GetTrafficPolicy().GetLoadBalancer().GetSimple() == networking.LoadBalancerSettings_PASSTHROUGH
		subEps := subsetEndpoints(eps, sub.GetLabels())
		if dns && len(subEps) == 0 && !origDst {
			continue
		}
		b.serviceCluster(s, port, rule, sub, policyFor(top, sub, port.Number, b.mesh.Config.GetDefaultTrafficPolicy()), subEps, sniDnat, origDst)
	}
}

// outboundName names an outbound cluster: "outbound|port|subset|host", or
// in SNI-DNAT form, the SNI an Istio client sends for it, for the clusters
// an AUTO_PASSTHROUGH gateway forwards to by SNI.
func outboundName(port uint32, subset string, h host.Name, sniDnat bool) string {
	if sniDnat {
		return resolve.ClusterID{Port: port, Subset: subset, Host: h}.SNI()
	}
	return resolve.ClusterName(port, subset, h)
}

// serviceCluster builds one outbound cluster and, for EDS, its endpoints.
// An SNI-DNAT cluster carries the client's TLS through untouched, so it
// gets no TLS of its own. origDst makes a subset cluster ORIGINAL_DST
// from the start, whatever its load balancer.
func (b *builder) serviceCluster(s *resolve.Service, port resolve.Port, rule *resolve.Rule, sub *networking.Subset, pol policy, eps []resolve.Endpoint, sniDnat, origDst bool) *clusterv3.Cluster {
	subset := sub.GetName()
	name := outboundName(port.Number, subset, s.Host, sniDnat)
	c := &clusterv3.Cluster{
		Name:           name,
		AltStatName:    name + ";",
		CommonLbConfig: &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: panicThreshold(pol.outlier)}},
		Metadata:       clusterMetadata([]*resolve.Service{s}, rule, subset),
	}
	if m := pol.tls.GetMode(); rule != nil && (m == networking.ClientTLSSettings_SIMPLE || m == networking.ClientTLSSettings_MUTUAL) {
		// The client's ALPN must not be passed on to a server that
		// terminates TLS of its own choosing.
		c.Metadata.FilterMetadata["istio"].Fields["alpn_override"] = structpb.NewStringValue("false")
	}
	passthrough := s.Resolution == resolve.Passthrough && b.sidecar()
	mtls := b.endpointMTLS(s, rule, sub, port.Number)
	switch {
	case passthrough || origDst:
		setType(c, clusterv3.Cluster_ORIGINAL_DST)
		c.LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
	case pol.lb.GetSimple() == networking.LoadBalancerSettings_PASSTHROUGH:
		// The load balancer turns a built cluster into ORIGINAL_DST: its
		// endpoints go, a DNS cluster's resolver settings stay.
		setType(c, clusterv3.Cluster_ORIGINAL_DST)
		c.LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
		if s.Resolution == resolve.DNSLB || s.Resolution == resolve.DNSRoundRobinLB {
			b.dnsSettings(c)
		}
	case s.Resolution == resolve.DNSLB:
		setType(c, clusterv3.Cluster_STRICT_DNS)
		b.dnsSettings(c)
		c.LoadAssignment = dnsLoadAssignment(name, eps, mtls, sniDnat)
	case s.Resolution == resolve.DNSRoundRobinLB:
		setType(c, clusterv3.Cluster_LOGICAL_DNS)
		b.dnsSettings(c)
		c.LoadAssignment = dnsLoadAssignment(name, eps[:1], mtls, sniDnat)
	case b.opts.Format == XDS:
		setType(c, clusterv3.Cluster_EDS)
		c.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{ServiceName: name, EdsConfig: adsSource()}
		b.cfg.Endpoints = append(b.cfg.Endpoints, tlsLoadAssignment(name, eps, mtls, sniDnat))
	case b.opts.Endpoints == EndpointsDNS && s.Registry == resolve.Kubernetes:
		// The service's DNS name stands in for pods unknown at build
		// time; a subset cluster then reaches every pod of the service.
		setType(c, clusterv3.Cluster_STRICT_DNS)
		b.dnsSettings(c)
		c.LoadAssignment = dnsLoadAssignment(name, []resolve.Endpoint{{Address: string(s.Host), Port: port.Number}}, nil, false)
	default:
		// A static config carries EDS's endpoints in the cluster.
		setType(c, clusterv3.Cluster_STATIC)
		c.LoadAssignment = tlsLoadAssignment(name, eps, mtls, sniDnat)
	}
	b.applyPool(c, pol)
	if c.LbPolicy != clusterv3.Cluster_CLUSTER_PROVIDED {
		applyLB(c, pol.lb)
	}
	if pol.outlier != nil {
		c.OutlierDetection = outlierDetection(pol.outlier)
	}
	if c.LbPolicy != clusterv3.Cluster_CLUSTER_PROVIDED {
		b.applyLocality(c, pol.lb)
	}
	protoPol := pol
	if sniDnat {
		// Its TLS dropped, an SNI-DNAT cluster has no SNI or SAN of its
		// own to take from the request either.
		protoPol.tls = nil
	}
	h2 := b.applyProtocol(c, port, protoPol, rule, true)
	if !sniDnat {
		// istiod infers the server's mode from the rule's top-level policy
		// for the default cluster, from the subset's own for a subset.
		inferFrom := sub.GetTrafficPolicy()
		if sub == nil && rule != nil {
			inferFrom = rule.TrafficPolicy
		}
		b.applyTLS(c, s, port, subset, rule, pol, h2, b.autoMTLS(s, port.Number, inferFrom))
		b.applyProxyProtocol(c, pol.proxyProtocol)
	}
	b.cfg.Clusters = append(b.cfg.Clusters, c)
	return c
}

func (b *builder) sidecar() bool { return b.view.Proxy.Type == resolve.SidecarProxy }

func setType(c *clusterv3.Cluster, t clusterv3.Cluster_DiscoveryType) {
	c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: t}
}

// adsSource is the config source istiod gives EDS clusters: the ADS
// stream, without waiting for the first response.
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		InitialFetchTimeout:   durationpb.New(0),
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}

func (b *builder) connectTimeout(pol policy) *durationpb.Duration {
	if d := pol.pool.GetTcp().GetConnectTimeout(); d != nil {
		return d
	}
	if d := b.mesh.Config.GetConnectTimeout(); d != nil {
		return d
	}
	return durationpb.New(10 * time.Second)
}

func (b *builder) dnsSettings(c *clusterv3.Cluster) {
	c.RespectDnsTtl = true
	c.DnsRefreshRate = b.mesh.Config.GetDnsRefreshRate()
	// The proxy's IP family decides what it resolves names to; a
	// dual-stack proxy is built as an IPv4 one (docs/fidelity.md).
	c.DnsLookupFamily = clusterv3.Cluster_V4_ONLY
	if b.ipv6Only() {
		c.DnsLookupFamily = clusterv3.Cluster_V6_ONLY
	}
	// istiod's defaults (PILOT_DNS_JITTER_DURATION, PILOT_DNS_CARES_UDP_MAX_QUERIES).
	c.DnsJitter = durationpb.New(100 * time.Millisecond)
	c.TypedDnsResolverConfig = &corev3.TypedExtensionConfig{Name: "envoy.network.dns_resolver.cares",
		TypedConfig: b.pk.any(c.Name+" DNS resolver", &caresv3.CaresDnsResolverConfig{UdpMaxQueries: wrapperspb.UInt32(100)})}
}

// applyPool applies a policy's connection pool as istiod does for both
// directions: connect timeout, circuit breakers with the retry budget, and
// TCP keepalive, the mesh's first, then the pool's field by field. The
// HTTP settings are applyProtocol's.
func (b *builder) applyPool(c *clusterv3.Cluster, pol policy) {
	c.ConnectTimeout = b.connectTimeout(pol)
	t := thresholds(pol.pool)
	if rb := pol.budget; rb != nil {
		t.RetryBudget = &clusterv3.CircuitBreakers_Thresholds_RetryBudget{
			BudgetPercent:       &typev3.Percent{Value: cmp.Or(rb.GetPercent().GetValue(), 20)},
			BudgetInterval:      rb.GetBudgetInterval(),
			MinRetryConcurrency: wrapperspb.UInt32(cmp.Or(rb.GetMinRetryConcurrency(), 3)),
		}
	}
	c.CircuitBreakers = &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{t}}
	b.applyKeepalive(c, pol.pool.GetTcp().GetTcpKeepalive())
}

// applyKeepalive sets TCP keepalive: the mesh's, then the pool's (own)
// field by field.
func (b *builder) applyKeepalive(c *clusterv3.Cluster, own *networking.ConnectionPoolSettings_TCPSettings_TcpKeepalive) {
	for _, ka := range []*networking.ConnectionPoolSettings_TCPSettings_TcpKeepalive{b.mesh.Config.GetTcpKeepalive(), own} {
		if ka == nil {
			continue
		}
		if c.UpstreamConnectionOptions == nil {
			// Empty: SO_KEEPALIVE with the system's timings.
			c.UpstreamConnectionOptions = &clusterv3.UpstreamConnectionOptions{TcpKeepalive: &corev3.TcpKeepalive{}}
		}
		k := c.UpstreamConnectionOptions.TcpKeepalive
		if ka.GetProbes() > 0 {
			k.KeepaliveProbes = wrapperspb.UInt32(ka.GetProbes())
		}
		if ka.GetTime() != nil {
			k.KeepaliveTime = wrapperspb.UInt32(uint32(ka.GetTime().GetSeconds()))
		}
		if ka.GetInterval() != nil {
			k.KeepaliveInterval = wrapperspb.UInt32(uint32(ka.GetInterval().GetSeconds()))
		}
	}
}

// thresholds are istiod's circuit breakers: unlimited unless the pool
// settings give a positive limit.
func thresholds(pool *networking.ConnectionPoolSettings) *clusterv3.CircuitBreakers_Thresholds {
	limit := func(v int32) *wrapperspb.UInt32Value {
		if v > 0 {
			return wrapperspb.UInt32(uint32(v))
		}
		return wrapperspb.UInt32(math.MaxUint32)
	}
	return &clusterv3.CircuitBreakers_Thresholds{
		MaxConnections:     limit(pool.GetTcp().GetMaxConnections()),
		MaxPendingRequests: limit(pool.GetHttp().GetHttp1MaxPendingRequests()),
		MaxRequests:        limit(pool.GetHttp().GetHttp2MaxRequests()),
		MaxRetries:         limit(pool.GetHttp().GetMaxRetries()),
	}
}

// panicThreshold is outlier detection's minHealthPercent; 0 turns panic
// mode off, which istiod does even without a DestinationRule.
func panicThreshold(od *networking.OutlierDetection) float64 {
	if v := od.GetMinHealthPercent(); v > 0 {
		return float64(v)
	}
	return 0
}

func applyLB(c *clusterv3.Cluster, lb *networking.LoadBalancerSettings) {
	switch lb.GetSimple() {
	case networking.LoadBalancerSettings_RANDOM:
		c.LbPolicy = clusterv3.Cluster_RANDOM
	case networking.LoadBalancerSettings_ROUND_ROBIN:
		c.LbPolicy = clusterv3.Cluster_ROUND_ROBIN
		if slow := slowStart(lb); slow != nil {
			c.LbConfig = &clusterv3.Cluster_RoundRobinLbConfig_{RoundRobinLbConfig: &clusterv3.Cluster_RoundRobinLbConfig{SlowStartConfig: slow}}
		}
	default: // LEAST_REQUEST, LEAST_CONN and unset
		c.LbPolicy = clusterv3.Cluster_LEAST_REQUEST
		if slow := slowStart(lb); slow != nil {
			c.LbConfig = &clusterv3.Cluster_LeastRequestLbConfig_{LeastRequestLbConfig: &clusterv3.Cluster_LeastRequestLbConfig{SlowStartConfig: slow}}
		}
	}
	ch := lb.GetConsistentHash()
	switch {
	case ch == nil:
	case ch.GetMaglev() != nil:
		c.LbPolicy, c.LbConfig = clusterv3.Cluster_MAGLEV, nil
		if size := ch.GetMaglev().GetTableSize(); size > 0 {
			c.LbConfig = &clusterv3.Cluster_MaglevLbConfig_{MaglevLbConfig: &clusterv3.Cluster_MaglevLbConfig{TableSize: wrapperspb.UInt64(size)}}
		}
	case ch.GetRingHash() != nil:
		c.LbPolicy, c.LbConfig = clusterv3.Cluster_RING_HASH, nil
		if size := ch.GetRingHash().GetMinimumRingSize(); size > 0 {
			c.LbConfig = &clusterv3.Cluster_RingHashLbConfig_{RingHashLbConfig: &clusterv3.Cluster_RingHashLbConfig{MinimumRingSize: wrapperspb.UInt64(size)}}
		}
	default:
		// The deprecated ring size, Envoy's 1024 by default.
		size := cmp.Or(ch.GetMinimumRingSize(), 1024) //nolint:staticcheck // the deprecated field still applies
		c.LbPolicy = clusterv3.Cluster_RING_HASH
		c.LbConfig = &clusterv3.Cluster_RingHashLbConfig_{RingHashLbConfig: &clusterv3.Cluster_RingHashLbConfig{MinimumRingSize: wrapperspb.UInt64(size)}}
	}
}

// slowStart is a load balancer's warmup: linear from 10% unless told, as
// istiod writes it (its runtime key "(" included); or the deprecated
// window alone.
func slowStart(lb *networking.LoadBalancerSettings) *clusterv3.Cluster_SlowStartConfig {
	if w := lb.GetWarmup(); w != nil {
		aggression, minimum := 1.0, 10.0
		if a := w.GetAggression(); a != nil {
			aggression = a.GetValue()
		}
		if m := w.GetMinimumPercent(); m != nil {
			minimum = m.GetValue()
		}
		return &clusterv3.Cluster_SlowStartConfig{SlowStartWindow: w.GetDuration(),
			Aggression: &corev3.RuntimeDouble{DefaultValue: aggression, RuntimeKey: "("}, MinWeightPercent: &typev3.Percent{Value: minimum}}
	}
	if d := lb.GetWarmupDurationSecs(); d != nil {
		return &clusterv3.Cluster_SlowStartConfig{SlowStartWindow: d}
	}
	return nil
}

// applyLocality weights localities when failover can happen (the rule, or
// the mesh, names failover and outlier detection is on) or traffic is
// distributed by locality (docs/semantics/envoy-output.md §7.3). Endpoint priorities follow the
// proxy's locality, which manifests do not give; meshc leaves them out.
func (b *builder) applyLocality(c *clusterv3.Cluster, lb *networking.LoadBalancerSettings) {
	l := lb.GetLocalityLbSetting()
	if l == nil {
		l = b.mesh.Config.GetLocalityLbSetting()
	}
	if e := l.GetEnabled(); e != nil && !e.GetValue() {
		return
	}
	failover := c.OutlierDetection != nil && (len(l.GetFailover()) > 0 || len(l.GetFailoverPriority()) > 0)
	if failover || len(l.GetDistribute()) > 0 {
		c.CommonLbConfig.LocalityConfigSpecifier = &clusterv3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{
			LocalityWeightedLbConfig: &clusterv3.Cluster_CommonLbConfig_LocalityWeightedLbConfig{}}
	}
}

// applyProxyProtocol sends a PROXY protocol header first, wrapping the
// transport sockets (or plaintext) as istiod does.
func (b *builder) applyProxyProtocol(c *clusterv3.Cluster, pp *networking.TrafficPolicy_ProxyProtocol) {
	if pp == nil {
		return
	}
	wrap := func(inner *corev3.TransportSocket) *corev3.TransportSocket {
		return &corev3.TransportSocket{Name: "envoy.transport_sockets.upstream_proxy_protocol", ConfigType: &corev3.TransportSocket_TypedConfig{
			TypedConfig: b.pk.any(c.Name+" proxy protocol", &proxyprotocolv3.ProxyProtocolUpstreamTransport{
				Config:          &corev3.ProxyProtocolConfig{Version: corev3.ProxyProtocolConfig_Version(pp.GetVersion())},
				TransportSocket: inner,
			})}}
	}
	if c.TransportSocket == nil && len(c.TransportSocketMatches) == 0 {
		c.TransportSocket = wrap(b.rawSocket(c.Name))
		return
	}
	if c.TransportSocket != nil {
		c.TransportSocket = wrap(c.TransportSocket)
	}
	for _, m := range c.TransportSocketMatches {
		m.TransportSocket = wrap(m.TransportSocket)
	}
}

func outlierDetection(od *networking.OutlierDetection) *clusterv3.OutlierDetection {
	out := &clusterv3.OutlierDetection{
		Interval:             od.GetInterval(),
		BaseEjectionTime:     od.GetBaseEjectionTime(),
		EnforcingSuccessRate: wrapperspb.UInt32(0),
	}
	if p := od.GetMaxEjectionPercent(); p > 0 {
		out.MaxEjectionPercent = wrapperspb.UInt32(uint32(p))
	}
	// consecutive5xxErrors counts all 5xx; consecutiveGatewayErrors only
	// 502-504. A positive value enforces fully; 0 disables the check.
	if v := od.GetConsecutive_5XxErrors(); v != nil {
		out.Consecutive_5Xx = wrapperspb.UInt32(v.GetValue())
		out.EnforcingConsecutive_5Xx = wrapperspb.UInt32(enforcing(v.GetValue()))
	}
	if v := od.GetConsecutiveGatewayErrors(); v != nil {
		out.ConsecutiveGatewayFailure = wrapperspb.UInt32(v.GetValue())
		out.EnforcingConsecutiveGatewayFailure = wrapperspb.UInt32(enforcing(v.GetValue()))
	}
	// Local-origin failures count apart only when split from the others.
	if od.GetSplitExternalLocalOriginErrors() {
		out.SplitExternalLocalOriginErrors = true
		if v := od.GetConsecutiveLocalOriginFailures().GetValue(); v > 0 {
			out.ConsecutiveLocalOriginFailure = wrapperspb.UInt32(v)
			out.EnforcingConsecutiveLocalOriginFailure = wrapperspb.UInt32(100)
		}
		out.EnforcingLocalOriginSuccessRate = wrapperspb.UInt32(0)
	}
	return out
}

func enforcing(v uint32) uint32 {
	if v > 0 {
		return 100
	}
	return 0
}

// clusterMetadata is the "istio" filter metadata istiod attaches: the
// services behind the cluster (an outbound cluster's one; an inbound
// cluster's every service on its port, the first one's policy applying),
// the DestinationRule that shaped it, the subset, and whether the service
// is external.
func clusterMetadata(services []*resolve.Service, rule *resolve.Rule, subset string) *corev3.Metadata {
	list := make([]*structpb.Value, len(services))
	for i, s := range services {
		name := string(s.Host)
		if s.Registry == resolve.Kubernetes {
			name = s.Name
		}
		list[i] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"host":      structpb.NewStringValue(string(s.Host)),
			"name":      structpb.NewStringValue(name),
			"namespace": structpb.NewStringValue(s.Namespace),
		}})
	}
	s := services[0]
	fields := map[string]*structpb.Value{
		"services": structpb.NewListValue(&structpb.ListValue{Values: list}),
	}
	if rule != nil {
		dr := rule.First()
		fields["config"] = structpb.NewStringValue(fmt.Sprintf("/apis/networking.istio.io/v1/namespaces/%s/destination-rule/%s", dr.Namespace, dr.Name))
	}
	if subset != "" {
		fields["subset"] = structpb.NewStringValue(subset)
	}
	if s.MeshExternal && subset == "" {
		// istiod marks only the default cluster of an external service.
		fields["external"] = structpb.NewBoolValue(true)
	}
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{"istio": {Fields: fields}}}
}

// specialClusters are the clusters every sidecar has besides its services'
// (docs/semantics/envoy-output.md §7.3); a router gets only BlackHoleCluster.
func (b *builder) specialClusters() {
	b.cfg.Clusters = append(b.cfg.Clusters, &clusterv3.Cluster{
		Name:                 BlackHoleCluster,
		AltStatName:          BlackHoleCluster + ";",
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       b.connectTimeout(policy{}),
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
	})
	if !b.sidecar() {
		return
	}
	b.cfg.Clusters = append(b.cfg.Clusters, b.passthrough(PassthroughCluster, ""))
}

// passthrough is a cluster to wherever the connection was going; HTTP
// keeps the client's protocol. Both passthrough clusters count their stats
// as PassthroughCluster, as istiod names them.
func (b *builder) passthrough(name, bind string) *clusterv3.Cluster {
	c := originalDst(name, b.connectTimeout(policy{}), bind)
	c.AltStatName = PassthroughCluster + ";"
	// The mesh's keepalive holds here too, as istiod applies it.
	b.applyKeepalive(c, nil)
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpOptsKey: b.pk.any(name+" protocol options", &httpv3.HttpProtocolOptions{
		CommonHttpProtocolOptions: &corev3.HttpProtocolOptions{IdleTimeout: durationpb.New(300 * time.Second)},
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_UseDownstreamProtocolConfig{
			UseDownstreamProtocolConfig: &httpv3.HttpProtocolOptions_UseDownstreamHttpConfig{
				HttpProtocolOptions: &corev3.Http1ProtocolOptions{}, Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
			}},
	})}
	return c
}

func originalDst(name string, timeout *durationpb.Duration, bind string) *clusterv3.Cluster {
	c := &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST},
		ConnectTimeout:       timeout,
		LbPolicy:             clusterv3.Cluster_CLUSTER_PROVIDED,
		CircuitBreakers: &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{
			thresholds(nil),
		}},
	}
	if bind != "" {
		c.UpstreamBindConfig = &corev3.BindConfig{SourceAddress: socketAddress(bind, 0).GetSocketAddress()}
	}
	return c
}

// inboundClusters are one cluster per port the proxy's services target,
// reaching the application through the original destination, then
// InboundPassthroughCluster for everything else (docs/semantics/envoy-output.md §7.3).
func (b *builder) inboundClusters() {
	for _, ip := range b.inboundPorts() {
		pol, rule := b.inboundPolicy(ip)
		c := b.inboundCluster(ip)
		c.AltStatName = c.Name + ";"
		c.CommonLbConfig = &clusterv3.Cluster_CommonLbConfig{}
		b.applyPool(c, pol)
		if ip.service != nil {
			c.Metadata = clusterMetadata(ip.services, rule, "")
		}
		b.applyProtocol(c, resolve.Port{Number: ip.port, Protocol: ip.protocol}, pol, nil, false)
		b.cfg.Clusters = append(b.cfg.Clusters, c)
	}
	c := b.passthrough(InboundPassthroughCluster, b.inboundSource())
	if b.dualStack() {
		// Envoy picks the source of the destination's family: ::6 for
		// IPv6 applications, which iptables lets through as it does
		// 127.0.0.6.
		c.UpstreamBindConfig.ExtraSourceAddresses = []*corev3.ExtraSourceAddress{{Address: socketAddress(inboundBind6, 0).GetSocketAddress()}}
	}
	b.cfg.Clusters = append(b.cfg.Clusters, c)
}

// inboundPolicy is the connection pool of an inbound cluster (docs/semantics/destination-rules.md
// §5.6, docs/semantics/sidecar-scope.md §4.10): the Sidecar's for the port, else its inbound pool, else
// the service's selector-less DestinationRule's for the service port over
// the mesh default. The rule is returned when its policy applied, for the
// cluster's metadata.
func (b *builder) inboundPolicy(ip inboundPort) (policy, *resolve.Rule) {
	var rule *resolve.Rule
	if ip.service != nil {
		if dec, ok := b.view.Scope.DestinationRule(ip.service.Host); ok && dec.Rule != nil && dec.Rule.TrafficPolicy != nil {
			rule = dec.Rule
		}
	}
	var pol policy
	if rule != nil {
		pol, _ = forPort(rule.TrafficPolicy, ip.port)
	}
	if pol.pool == nil {
		pol.pool = b.mesh.Config.GetDefaultTrafficPolicy().GetConnectionPool()
	}
	if sc := b.view.Choice.Sidecar; sc != nil {
		pool := sc.Spec.GetInboundConnectionPool()
		for _, in := range sc.Spec.GetIngress() {
			if in.GetPort().GetNumber() == ip.target && in.GetConnectionPool() != nil {
				pool = in.GetConnectionPool()
			}
		}
		if pool != nil {
			pol.pool = pool
		}
	}
	return policy{pool: pol.pool, budget: pol.budget}, rule
}

// inboundCluster reaches the application: at the connection's original
// destination, or at a Sidecar ingress listener's defaultEndpoint
// ("127.0.0.1:8080", "unix:///path"; localhost of the proxy's family; a
// wildcard address means the pod's own address,
// docs/semantics/sidecar-scope.md §4.10).
func (b *builder) inboundCluster(ip inboundPort) *clusterv3.Cluster {
	name := inboundName(ip.target)
	ep := ip.endpoint
	bound := func(c *clusterv3.Cluster) *clusterv3.Cluster {
		// As for the original destination: the sidecar's own traffic to
		// the application must not be captured again. istiod binds every
		// inbound cluster but those to loopback, a unix socket's too.
		c.UpstreamBindConfig = &corev3.BindConfig{SourceAddress: socketAddress(b.inboundSource(), 0).GetSocketAddress()}
		return c
	}
	if path, ok := strings.CutPrefix(ep, "unix://"); ok {
		return bound(staticCluster(name, &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: path}}}))
	}
	// Only the four addresses istiod knows pick an address; any other
	// host (":8080") leaves the original destination, as in istiod.
	if addr, port, err := net.SplitHostPort(ep); err == nil {
		n, _ := strconv.ParseUint(port, 10, 32)
		switch addr {
		case "127.0.0.1", "::1":
			return staticCluster(name, socketAddress(b.loopback(addr == "::1"), uint32(n)))
		case "0.0.0.0", "::":
			addr = b.podAddress(addr == "::")
			c := staticCluster(name, socketAddress(addr, uint32(n)))
			if addr == "127.0.0.1" || addr == "::1" {
				return c
			}
			return bound(c)
		}
	}
	c := originalDst(name, nil, b.inboundSource())
	// Connections to the application are never cleaned up early:
	// istiod's longest interval, in whole seconds.
	c.CleanupInterval = &durationpb.Duration{Seconds: 9223372035}
	return c
}

// inboundSource is the address inbound clusters bind to, which iptables
// lets through: 127.0.0.6, or ::6 on an IPv6-only proxy, as istiod binds
// them (the first of its passthrough bind IPs).
func (b *builder) inboundSource() string {
	if b.ipv6Only() {
		return inboundBind6
	}
	return inboundBind
}

// ipv6Only says whether every address of the proxy is IPv6 (istiod's IP
// mode IPv6); a proxy without addresses counts as IPv4.
func (b *builder) ipv6Only() bool {
	has4, has6 := b.view.Proxy.Families()
	return has6 && !has4
}

// dualStack says whether the proxy has addresses of both families
// (istiod's IP mode Dual).
func (b *builder) dualStack() bool {
	has4, has6 := b.view.Proxy.Families()
	return has4 && has6
}

// loopback is the localhost a defaultEndpoint of 127.0.0.1 or [::1]
// reaches, as istiod picks it among the proxy's localhosts: 127.0.0.1 on
// an IPv4 proxy (one without addresses included), ::1 on an IPv6-only
// one, and on a dual-stack proxy the one named (v6: ::1).
func (b *builder) loopback(v6 bool) string {
	has4, has6 := b.view.Proxy.Families()
	if has6 && (v6 || !has4) {
		return "::1"
	}
	return "127.0.0.1"
}

// podAddress is the proxy's first IP of the family, as istiod resolves a
// wildcard defaultEndpoint; loopback when the proxy has none (a workload
// template's pods have no IP in the manifests).
func (b *builder) podAddress(v6 bool) string {
	for _, ip := range b.view.Proxy.IPs {
		if a, err := netip.ParseAddr(ip); err == nil && a.Is6() == v6 {
			return ip
		}
	}
	if v6 {
		return "::1"
	}
	return "127.0.0.1"
}

// staticCluster reaches one address, stated as istiod states the
// application's: no locality, weight or health.
func staticCluster(name string, addr *corev3.Address) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpointv3.LocalityLbEndpoints{{
			LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: addr}}}},
		}}},
	}
}

func inboundName(target uint32) string {
	return "inbound|" + strconv.FormatUint(uint64(target), 10) + "||"
}

// tcpProxyLimits applies to an outbound tcp_proxy the idle timeout and
// maximum connection duration of the DestinationRule for host h (its
// cluster's, or its first route destination's own host), as istiod does:
// the rule's top-level pool only, port-level settings not consulted. Other
// clusters (inbound, passthrough, black hole) have no host and get none.
func (b *builder) tcpProxyLimits(tp *tcpv3.TcpProxy, h host.Name) {
	if h == "" {
		return
	}
	rule := b.ruleFor(h)
	if rule == nil {
		return
	}
	tcp := rule.TrafficPolicy.GetConnectionPool().GetTcp()
	tp.IdleTimeout = tcp.GetIdleTimeout()
	tp.MaxDownstreamConnectionDuration = tcp.GetMaxConnectionDuration()
}
