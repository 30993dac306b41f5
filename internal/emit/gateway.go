package emit

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// gatewayPort collects the servers a router proxy listens with on one
// target port.
type gatewayPort struct {
	target      uint32
	http        []resolve.GatewayServer
	https       []resolve.GatewayServer
	passthrough []resolve.GatewayServer
}

// gatewayListeners builds a router's listeners from the Gateway servers
// that select it (istio.md §7.9): HTTP servers on a port share route
// "http.<port>"; each TLS-terminating server gets its own SNI chain and
// route "https.<port>.<portName>.<gateway>.<namespace>"; TLS passthrough
// servers get a chain per SNI match of their TLS routes. AUTO_PASSTHROUGH
// and plain TCP servers are not built yet and are reported.
func (b *builder) gatewayListeners() {
	var ports []*gatewayPort
	byTarget := map[uint32]*gatewayPort{}
	for _, gs := range b.view.Gateways {
		srv := gs.Gateway.Spec.GetServers()[gs.Index]
		target := b.targetPort(gs.Port)
		gp := byTarget[target]
		if gp == nil {
			gp = &gatewayPort{target: target}
			byTarget[target] = gp
			ports = append(ports, gp)
		}
		proto := protocol.Parse(srv.GetPort().GetProtocol())
		mode := srv.GetTls().GetMode()
		switch {
		case proto.IsHTTP():
			gp.http = append(gp.http, gs)
		case (proto == protocol.HTTPS || proto == protocol.TLS) && (mode == networking.ServerTLSSettings_SIMPLE || mode == networking.ServerTLSSettings_MUTUAL):
			gp.https = append(gp.https, gs)
		case (proto == protocol.HTTPS || proto == protocol.TLS) && mode == networking.ServerTLSSettings_PASSTHROUGH:
			gp.passthrough = append(gp.passthrough, gs)
		default:
			b.pk.problems = append(b.pk.problems, fmt.Sprintf("gateway %s/%s server %d (%s %s): not emitted; meshc builds HTTP and TLS-terminating servers only",
				gs.Gateway.Namespace, gs.Gateway.Name, gs.Index, proto, mode))
		}
	}
	slices.SortStableFunc(ports, func(a, b *gatewayPort) int { return cmp.Compare(a.target, b.target) })
	for _, gp := range ports {
		if len(gp.http)+len(gp.https)+len(gp.passthrough) == 0 {
			continue
		}
		l := &listenerv3.Listener{
			Name:                                 wildcard + "_" + strconv.FormatUint(uint64(gp.target), 10),
			Address:                              socketAddress(wildcard, gp.target),
			TrafficDirection:                     corev3.TrafficDirection_OUTBOUND,
			MaxConnectionsToAcceptPerSocketEvent: wrapperspb.UInt32(1),
		}
		for _, gs := range gp.https {
			srv := gs.Gateway.Spec.GetServers()[gs.Index]
			name := fmt.Sprintf("https.%d.%s.%s.%s", gs.Port, srv.GetPort().GetName(), gs.Gateway.Name, gs.Gateway.Namespace)
			b.gatewayRoute(name, gs.Port, []resolve.GatewayServer{gs})
			fc := chain(&listenerv3.FilterChainMatch{ServerNames: sniHosts(srv.GetHosts())}, b.outboundHCM("outbound_"+l.Name, name))
			fc.TransportSocket = b.gatewayTLS(name, srv.GetTls())
			l.FilterChains = append(l.FilterChains, fc)
		}
		seen := map[string]bool{}
		for _, gs := range gp.passthrough {
			l.FilterChains = append(l.FilterChains, b.passthroughChains(gs, seen)...)
		}
		if len(gp.http) > 0 {
			name := "http." + strconv.FormatUint(uint64(gp.target), 10)
			b.gatewayRoute(name, gp.http[0].Port, gp.http)
			l.FilterChains = append(l.FilterChains, chain(nil, b.outboundHCM("outbound_"+l.Name, name)))
		}
		b.inspectors(l)
		b.cfg.Listeners = append(b.cfg.Listeners, l)
	}
}

// passthroughChains forward TLS unopened, by SNI, along the TLS routes of
// the server's VirtualServices (istio.md §6.7). An SNI name a previous
// chain on the port took is skipped, as Envoy would refuse the duplicate.
func (b *builder) passthroughChains(gs resolve.GatewayServer, seen map[string]bool) []*listenerv3.FilterChain {
	gw := gs.Gateway.Namespace + "/" + gs.Gateway.Name
	var out []*listenerv3.FilterChain
	for _, gr := range gs.Routes {
		vs := gr.VirtualService
		for _, r := range vs.Object.Spec.GetTls() {
			if len(r.GetRoute()) == 0 {
				continue
			}
			for _, m := range r.GetMatch() {
				if m.GetPort() != 0 && m.GetPort() != gs.Port {
					continue
				}
				if gws := m.GetGateways(); len(gws) > 0 && !slices.ContainsFunc(gws, func(g string) bool { return host.GatewayRef(g, vs.Namespace()) == gw }) {
					continue
				}
				if slices.ContainsFunc(m.GetSniHosts(), func(h string) bool { return seen[h] }) {
					b.pk.problems = append(b.pk.problems, fmt.Sprintf("VirtualService %s/%s: TLS route on gateway %s port %d repeats an SNI name of an earlier route; skipped, as istiod does",
						vs.Object.Namespace, vs.Object.Name, gw, gs.Port))
					continue
				}
				for _, h := range m.GetSniHosts() {
					seen[h] = true
				}
				fc := chain(&listenerv3.FilterChainMatch{ServerNames: m.GetSniHosts()}, b.tcpRouteProxy(vs, r.GetRoute(), gs.Port))
				fc.Metadata = configMetadata("virtual-service", vs.Object.Namespace, vs.Object.Name)
				out = append(out, fc)
			}
		}
	}
	return out
}

// targetPort is the workload port a gateway Service sends a server port
// to; the port itself when no Service says.
func (b *builder) targetPort(port uint32) uint32 {
	for _, ip := range b.inboundPorts() {
		if ip.port == port {
			return ip.target
		}
	}
	return port
}

// sniHosts are a server's hosts as SNI names: namespace prefixes dropped,
// "*" meaning any name.
func sniHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if _, after, ok := strings.Cut(h, "/"); ok {
			h = after
		}
		if h == "*" {
			return nil
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// gatewayTLS terminates TLS with the server's credential, fetched by SDS
// as istiod configures it.
func (b *builder) gatewayTLS(name string, t *networking.ServerTLSSettings) *corev3.TransportSocket {
	common := &tlsv3.CommonTlsContext{AlpnProtocols: []string{"h2", "http/1.1"}}
	switch {
	case t.GetCredentialName() != "":
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{sdsSecret("kubernetes://" + t.GetCredentialName())}
	case t.GetServerCertificate() != "":
		common.TlsCertificates = []*tlsv3.TlsCertificate{{CertificateChain: fileSource(t.GetServerCertificate()), PrivateKey: fileSource(t.GetPrivateKey())}}
	}
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common}
	if t.GetMode() == networking.ServerTLSSettings_MUTUAL {
		ctx.RequireClientCertificate = wrapperspb.Bool(true)
		if t.GetCredentialName() != "" {
			common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContextSdsSecretConfig{
				ValidationContextSdsSecretConfig: sdsSecret("kubernetes://" + t.GetCredentialName() + "-cacert")}
		} else if t.GetCaCertificates() != "" {
			common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{
				ValidationContext: &tlsv3.CertificateValidationContext{TrustedCa: fileSource(t.GetCaCertificates())}}
		}
	}
	return &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: b.pk.any(name+" TLS context", ctx)}}
}

// gatewayRoute builds a gateway route configuration: one vhost per host a
// VirtualService serves on the servers, routes of several VirtualServices
// for one host concatenated (istio.md §6.7).
func (b *builder) gatewayRoute(name string, port uint32, servers []resolve.GatewayServer) {
	byHost := map[host.Name]*routev3.VirtualHost{}
	for _, gs := range servers {
		gw := gs.Gateway.Namespace + "/" + gs.Gateway.Name
		for _, gr := range gs.Routes {
			routes := b.gatewayRoutes(gr.VirtualService, gw, port)
			for _, h := range gr.Hosts {
				h = host.Name(strings.ToLower(string(h)))
				vh := byHost[h]
				if vh == nil {
					vh = &routev3.VirtualHost{Name: string(h) + ":" + strconv.FormatUint(uint64(port), 10), Domains: []string{string(h)}, IncludeRequestAttemptCount: true}
					byHost[h] = vh
				}
				vh.Routes = append(vh.Routes, routes...)
			}
		}
	}
	rc := &routev3.RouteConfiguration{Name: name, ValidateClusters: wrapperspb.Bool(false), IgnorePortInHostMatching: true,
		MaxDirectResponseBodySizeBytes: wrapperspb.UInt32(1 << 20)}
	for _, h := range sortedKeys(byHost) {
		rc.VirtualHosts = append(rc.VirtualHosts, byHost[h])
	}
	if len(rc.VirtualHosts) == 0 {
		// Nothing routes here: Envoy answers 404.
		rc.VirtualHosts = []*routev3.VirtualHost{{Name: "blackhole:" + strconv.FormatUint(uint64(port), 10), Domains: []string{"*"}}}
	}
	b.routeCache[name] = rc
}

// gatewayRoutes translates a VirtualService's HTTP routes for a gateway:
// matches naming other gateways, ports or source labels drop out, and a
// destination without a port takes the only port of its service or else
// the server's (istio.md §7.9).
func (b *builder) gatewayRoutes(vs *resolve.VirtualService, gw string, port uint32) []*routev3.Route {
	var out []*routev3.Route
	for i := range vs.Routes {
		r := &vs.Routes[i]
		clusters := b.gatewayClusters(r, port)
		matches := r.GetMatch()
		if len(matches) == 0 {
			return append(out, b.vsRoute(&resolve.HTTPRoute{Name: r.GetName(), Clusters: clusters, Source: r}, vs, port))
		}
		for _, m := range matches {
			if !gatewayMatch(m, gw, vs.Namespace(), b.view.Proxy, port) {
				continue
			}
			name := r.GetName()
			if m.GetName() != "" {
				name += "." + m.GetName()
			}
			out = append(out, b.vsRoute(&resolve.HTTPRoute{Name: name, Match: m, Clusters: clusters, Source: r}, vs, port))
		}
	}
	return out
}

func gatewayMatch(m *networking.HTTPMatchRequest, gw, vsNs string, p *resolve.Proxy, port uint32) bool {
	if m.GetPort() != 0 && m.GetPort() != port {
		return false
	}
	if gws := m.GetGateways(); len(gws) > 0 && !slices.ContainsFunc(gws, func(g string) bool { return host.GatewayRef(g, vsNs) == gw }) {
		return false
	}
	return resolve.LabelsMatch(m.GetSourceLabels(), p.Labels)
}

func (b *builder) gatewayClusters(r *resolve.Route, port uint32) []resolve.WeightedCluster {
	var out []resolve.WeightedCluster
	for _, d := range destinations(r.HTTPRoute) {
		dest := d.GetDestination()
		h := host.FQDN(dest.GetHost(), r.From.Namespace(), b.mesh.Config.DomainSuffix)
		p := dest.GetPort().GetNumber()
		if p == 0 {
			p = port
			if ss := b.mesh.ServicesNamed(h); len(ss) > 0 && len(ss[0].Ports) == 1 {
				p = ss[0].Ports[0].Number
			}
		}
		out = append(out, resolve.WeightedCluster{Cluster: resolve.ClusterName(p, dest.GetSubset(), h), Weight: d.GetWeight()})
	}
	return out
}
