package emit

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

func serverOf(gs resolve.GatewayServer) *networking.Server {
	return gs.Gateway.Spec.GetServers()[gs.Index]
}

// autoPassthrough says whether a server forwards TLS by the SNI Istio
// clients send, to the cluster that SNI names.
func autoPassthrough(srv *networking.Server) bool {
	return srv.GetTls() != nil && srv.GetTls().GetMode() == networking.ServerTLSSettings_AUTO_PASSTHROUGH
}

// terminates says whether a server terminates TLS: every TLS mode but the
// two passthrough ones.
func terminates(srv *networking.Server) bool {
	mode := srv.GetTls().GetMode()
	return srv.GetTls() != nil && mode != networking.ServerTLSSettings_PASSTHROUGH && mode != networking.ServerTLSSettings_AUTO_PASSTHROUGH
}

// gatewayListeners builds a router's listeners from the Gateway servers
// that select it (docs/semantics/envoy-output.md §7.9), one per workload
// port and bind address as resolve merges them (resolve.MergedGateway),
// its server groups' chains in merge order. An HTTP group shares one
// chain to its route, "http.<port>" (".<bind>" after it when bound).
// In any other group every server adds chains: an HTTPS
// server terminating TLS gets its own SNI chain and route
// "https.<port>.<portName>.<gateway>.<namespace>"; a TLS passthrough
// server a chain per SNI match of its TLS routes; an AUTO_PASSTHROUGH
// server a chain per SNI-DNAT cluster its hosts cover; a TCP or TLS server
// one chain (behind its TLS, if it terminates any) to the first TCP route
// of its VirtualServices (or TLS route, of a TLSRoute's:
// resolve.GatewayTCPRoute). Servers terminating with ISTIO_MUTUAL or
// OPTIONAL_MUTUAL are not built yet and are reported.
func (b *builder) gatewayListeners() {
	mg := b.mergedGateway()
	// The SNI names passthrough chains took, by workload port, with the
	// bind of the server that took each.
	seen := map[uint32]map[string]string{}
	for _, gl := range mg.Listeners {
		name := gl.Name(b.listenAddr(wildcard))
		l := &listenerv3.Listener{
			Name:                                 name,
			Address:                              socketAddress(cmp.Or(gl.Bind, b.listenAddr(wildcard)), gl.Port),
			TrafficDirection:                     corev3.TrafficDirection_OUTBOUND,
			MaxConnectionsToAcceptPerSocketEvent: wrapperspb.UInt32(1),
		}
		if gl.Bind == "" {
			// A bound listener keeps its one address; only the wildcard
			// gains the other family's (docs/semantics/envoy-output.md §7.10).
			l.AdditionalAddresses = b.wildcardExtras(gl.Port)
		}
		if seen[gl.Port] == nil {
			seen[gl.Port] = map[string]string{}
		}
		for _, g := range gl.Groups {
			if g.Protocol.IsHTTP() {
				b.gatewayRoute(g.Route)
				l.FilterChains = append(l.FilterChains, chain(nil, b.outboundHCM("outbound_"+name, g.Route, protocol.HTTP)))
				continue
			}
			for _, gs := range g.Servers {
				l.FilterChains = append(l.FilterChains, b.serverChains(name, gs, seen[gl.Port])...)
			}
		}
		if len(l.FilterChains) == 0 {
			continue // Envoy refuses a listener without chains; istiod sends none
		}
		b.repeatedChainMatch(l)
		b.useRoutes(l.FilterChains...)
		b.gatewayInspectors(l)
		b.cfg.Listeners = append(b.cfg.Listeners, l)
	}
}

// repeatedChainMatch reports a gateway listener two of whose chains
// match the same connections, which Envoy refuses whole. istiod's merge
// keeps such servers when another bind came between them
// (docs/semantics/virtual-services.md §6.7): a TLS host named again on
// a bind, a TCP and an HTTP server on one bind, HTTP servers whose
// protocols are spelt differently.
func (b *builder) repeatedChainMatch(l *listenerv3.Listener) {
	for i, c := range l.FilterChains {
		for j := range i {
			if proto.Equal(l.FilterChains[j].GetFilterChainMatch(), c.GetFilterChainMatch()) {
				b.pk.problems = append(b.pk.problems, fmt.Sprintf("gateway listener %s: filter chains %d and %d match the same connections, so Envoy refuses the listener; istiod writes it so too", l.Name, j, i))
				return
			}
		}
	}
}

// mergedGateway is the router's Gateway servers as istiod merges them
// (resolve.ServerMerge); the servers it drops are reported. A TLS server
// repeating a host an earlier TLS server on the target port and bind
// names is left out whole, as Envoy would refuse the repeated SNI
// matches; a server meeting an earlier plain server on its bind it
// cannot merge with (TCP, or anything but HTTP after HTTP) is left out,
// even when the earlier one has no routes and builds nothing
// (docs/semantics/virtual-services.md §6.7).
func (b *builder) mergedGateway() *resolve.MergedGateway {
	if b.merged != nil {
		return b.merged
	}
	b.merged = b.mesh.MergeGateways(b.view)
	for _, d := range b.merged.Dropped {
		gs, v := d.Server, d.Verdict
		// The port, and the address a bound server listens on.
		at := "port " + strconv.FormatUint(uint64(gs.Port), 10)
		if bind := gs.Bind(); bind != "" {
			at += " on " + bind
		}
		switch v.Drop {
		case resolve.DropDuplicateTLSHosts:
			b.pk.problems = append(b.pk.problems, fmt.Sprintf("gateway %s/%s server %d (%s): hosts %v are already served with TLS on the port; the server is left out, as in istiod",
				gs.Gateway.Namespace, gs.Gateway.Name, gs.Index, at, v.Hosts))
		case resolve.DropProtocolConflict:
			b.pk.problems = append(b.pk.problems, fmt.Sprintf("gateway %s/%s server %d (%s, %s): gateway %s/%s server %d (%s) already holds the port and the two do not merge; the server is left out, as in istiod",
				gs.Gateway.Namespace, gs.Gateway.Name, gs.Index, at, serverOf(gs).GetPort().GetProtocol(),
				v.Earlier.Gateway.Namespace, v.Earlier.Gateway.Name, v.Earlier.Index, v.Earlier.Server().GetPort().GetProtocol()))
		case resolve.DropDuplicateHTTPSRoute:
			b.pk.problems = append(b.pk.problems, fmt.Sprintf("gateway %s/%s server %d (%s): another HTTPS server on the port has its route name; the server is left out, as in istiod",
				gs.Gateway.Namespace, gs.Gateway.Name, gs.Index, at))
		}
	}
	return b.merged
}

// serverChains are the filter chains of one server that is not plain
// HTTP. seen holds the SNI names earlier passthrough chains on the port
// took on the workload port, with the bind of the server that took each.
func (b *builder) serverChains(listener string, gs resolve.GatewayServer, seen map[string]string) []*listenerv3.FilterChain {
	srv := serverOf(gs)
	switch {
	case autoPassthrough(srv):
		return b.autoPassthroughChains(srv)
	case srv.GetTls() != nil && !terminates(srv):
		return b.passthroughChains(gs, seen)
	case terminates(srv) && protocol.Parse(srv.GetPort().GetProtocol()) == protocol.HTTPS:
		name := resolve.HTTPSRouteName(gs.Gateway, srv)
		b.gatewayRoute(name)
		fc := chain(sniMatch(srv.GetHosts()), b.outboundHCM("outbound_"+listener, name, protocol.HTTPS))
		fc.TransportSocket = b.gatewayTLS(name, srv.GetTls(), httpALPN)
		return []*listenerv3.FilterChain{fc}
	}
	fs := b.tcpServerProxy(gs)
	if fs == nil {
		b.pk.problems = append(b.pk.problems, fmt.Sprintf("gateway %s/%s server %d (%s): no VirtualService TCP route matches it; it gets no filter chain, as in istiod",
			gs.Gateway.Namespace, gs.Gateway.Name, gs.Index, srv.GetPort().GetProtocol()))
		return nil
	}
	if srv.GetTls() == nil {
		return []*listenerv3.FilterChain{chain(nil, fs...)}
	}
	fc := chain(sniMatch(srv.GetHosts()), fs...)
	alpn := httpALPN
	if srv.GetTls().GetMode() == networking.ServerTLSSettings_ISTIO_MUTUAL {
		// An Istio client may open with metadata exchange.
		alpn = []string{"istio-peer-exchange", "h2", "http/1.1"}
	}
	fc.TransportSocket = b.gatewayTLS(fmt.Sprintf("%s/%s server %d", gs.Gateway.Namespace, gs.Gateway.Name, gs.Index), srv.GetTls(), alpn)
	return []*listenerv3.FilterChain{fc}
}

// tcpServerProxy forwards a TCP server's connections along the first TCP
// route, of the server's VirtualServices in order, whose match (if any)
// takes the server's port and gateway; nil when none does.
func (b *builder) tcpServerProxy(gs resolve.GatewayServer) []*listenerv3.Filter {
	r, ok := resolve.GatewayTCPRoute(gs)
	if !ok {
		return nil
	}
	return b.tcpRouteProxy(r.VirtualService, r.Destinations, gs.Port, protocol.Parse(serverOf(gs).GetPort().GetProtocol()))
}

// autoPassthroughChains forward TLS unopened to the SNI-DNAT cluster the
// client's SNI names, for every port and subset of the mesh's services
// the server's hosts cover. Only Istio mTLS ALPNs match, so only Istio
// clients, whose mTLS the destination then checks, get through.
func (b *builder) autoPassthroughChains(srv *networking.Server) []*listenerv3.FilterChain {
	var hosts []host.Name
	for _, h := range srv.GetHosts() {
		if _, after, ok := strings.Cut(h, "/"); ok {
			h = after
		}
		hosts = append(hosts, host.Name(h))
	}
	var out []*listenerv3.FilterChain
	for _, s := range b.view.Scope.Services {
		if s.MeshExternal || s.Resolution == resolve.Alias || s.Resolution == resolve.DynamicDNS || !slices.ContainsFunc(hosts, s.Host.SubsetOf) {
			continue
		}
		rule := b.ruleFor(s.Host)
		subsets := []string{""}
		if rule != nil {
			for _, sub := range rule.Subsets {
				subsets = append(subsets, sub.GetName())
			}
		}
		for _, port := range s.Ports {
			if port.Protocol == protocol.UDP {
				continue
			}
			for _, subset := range subsets {
				name := resolve.ClusterID{Port: port.Number, Subset: subset, Host: s.Host}.SNI()
				// The port's protocol filter (Mongo's) reads the
				// forwarded traffic as on any TCP chain.
				out = append(out, chain(&listenerv3.FilterChainMatch{ServerNames: []string{name}, ApplicationProtocols: istioAnyALPN}, b.l4(port.Protocol, name, b.tcpProxy(name, name, s.Host, subset))...))
			}
		}
	}
	return out
}

// passthroughChains forward TLS unopened, by SNI, along the TLS routes of
// the server's VirtualServices (docs/semantics/virtual-services.md §6.7). An SNI name a previous
// chain on the port took is skipped, as Envoy would refuse the duplicate.
func (b *builder) passthroughChains(gs resolve.GatewayServer, seen map[string]string) []*listenerv3.FilterChain {
	routes, skipped := resolve.GatewayTLSRoutes(gs, seen)
	b.pk.problems = append(b.pk.problems, skipped...)
	var out []*listenerv3.FilterChain
	for _, r := range routes {
		// Unlike a sidecar's, istiod leaves the gateway chain without its
		// VirtualService's name.
		out = append(out, chain(sniMatch(r.SNIHosts), b.tcpRouteProxy(r.VirtualService, r.Destinations, gs.Port, protocol.TLS)...))
	}
	return out
}

// sniMatch matches a server's hosts by SNI; nil, matching everything, when
// one of them is "*".
func sniMatch(hosts []string) *listenerv3.FilterChainMatch { return l4Match(hosts, nil) }

// l4Match matches SNI names and destination subnets, each sorted as
// istiod writes them; nil when it matches everything.
func l4Match(names, subnets []string) *listenerv3.FilterChainMatch {
	m := &listenerv3.FilterChainMatch{ServerNames: sniHosts(names)}
	if len(subnets) > 0 {
		m.PrefixRanges = cidrRanges(slices.Sorted(slices.Values(subnets)))
	}
	if m.ServerNames == nil && m.PrefixRanges == nil {
		return nil
	}
	return m
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

// httpALPN is what a gateway terminating TLS offers.
var httpALPN = []string{"h2", "http/1.1"}

// gatewayTLS terminates a server's TLS as istiod configures it, by mode:
// ISTIO_MUTUAL with the gateway's own Istio identity; with a credentialName,
// the Kubernetes secret (and its "-cacert" for client certificates);
// otherwise the certificate files. Pushed over
// xDS, credentials come over ADS without an initial fetch timeout (a
// missing secret holds back no other listener); a static bootstrap has no
// ADS, so it asks the agent's SDS socket instead.
func (b *builder) gatewayTLS(name string, t *networking.ServerTLSSettings, alpn []string) *corev3.TransportSocket {
	mode := t.GetMode()
	common := &tlsv3.CommonTlsContext{AlpnProtocols: alpn}
	requireClient := mode == networking.ServerTLSSettings_MUTUAL || mode == networking.ServerTLSSettings_ISTIO_MUTUAL
	validate := requireClient || mode == networking.ServerTLSSettings_OPTIONAL_MUTUAL
	vc := &tlsv3.CertificateValidationContext{MatchSubjectAltNames: exactMatchers(t.GetSubjectAltNames())} //nolint:staticcheck // the field istiod sets
	switch {
	case mode == networking.ServerTLSSettings_ISTIO_MUTUAL:
		b.identity(common, vc)
	case t.GetCredentialName() != "" || len(t.GetCredentialNames()) > 0:
		// Several credentials (an RSA and an ECDSA certificate) take
		// the place of the one; the first names the client CA.
		names := t.GetCredentialNames()
		if len(names) == 0 {
			names = []string{t.GetCredentialName()}
		}
		for _, n := range names {
			common.TlsCertificateSdsSecretConfigs = append(common.TlsCertificateSdsSecretConfigs, b.credentialSecret(n))
		}
		ca := cmp.Or(t.GetCaCertCredentialName(), names[0]+"-cacert")
		switch {
		case validate:
			vc.VerifyCertificateSpki, vc.VerifyCertificateHash = t.GetVerifyCertificateSpki(), t.GetVerifyCertificateHash()
			if t.GetInsecureSkipVerify().GetValue() {
				vc.TrustChainVerification = tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED
			}
			combinedValidation(common, vc, b.credentialSecret(ca))
		case len(vc.MatchSubjectAltNames) > 0: //nolint:staticcheck // the field istiod sets
			common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: vc}
		}
	default:
		b.certificateFiles(common, t.GetServerCertificate(), t.GetPrivateKey())
		if validate {
			b.trustRoot(common, vc, t.GetCaCertificates())
		}
	}
	if mode == networking.ServerTLSSettings_SIMPLE || mode == networking.ServerTLSSettings_MUTUAL {
		serverTLSParams(common, t)
	}
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: common, RequireClientCertificate: wrapperspb.Bool(requireClient)}
	return &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: b.pk.any(name+" TLS context", ctx)}}
}

// serverTLSParams applies a server's TLS versions and ciphers.
func serverTLSParams(common *tlsv3.CommonTlsContext, t *networking.ServerTLSSettings) {
	params := func() *tlsv3.TlsParameters {
		if common.TlsParams == nil {
			common.TlsParams = &tlsv3.TlsParameters{}
		}
		return common.TlsParams
	}
	if v := t.GetMinProtocolVersion(); v != networking.ServerTLSSettings_TLS_AUTO {
		params().TlsMinimumProtocolVersion = tlsv3.TlsParameters_TlsProtocol(v)
	}
	if len(t.GetCipherSuites()) > 0 {
		params().CipherSuites = t.GetCipherSuites()
	}
	if v := t.GetMaxProtocolVersion(); v != networking.ServerTLSSettings_TLS_AUTO {
		params().TlsMaximumProtocolVersion = tlsv3.TlsParameters_TlsProtocol(v)
	}
}

// builtinCredential is the credentialName of the proxy's own workload
// certificate (the Gateway API's ISTIO_SIMPLE termination).
const builtinCredential = "builtin://"

// credentialSecret is the SDS config of a gateway credential. The builtin
// credential is the workload certificate from the agent, and its
// "-cacert" the mesh root, as for Istio mutual TLS.
func (b *builder) credentialSecret(name string) *tlsv3.SdsSecretConfig {
	switch {
	case name == builtinCredential:
		return sdsSecret("default")
	case name == builtinCredential+"-cacert":
		return sdsSecret("ROOTCA")
	case strings.HasPrefix(name, "invalid://"):
		// A credential istiod could not resolve (an unusable
		// BackendTLSPolicy CA), whatever suffix it was given: no proxy can
		// load it, so the handshakes fail.
		name = "invalid://"
	case !strings.Contains(name, "://"):
		name = "kubernetes://" + name
	}
	if b.opts.Format != XDS {
		return sdsSecret(name)
	}
	return &tlsv3.SdsSecretConfig{Name: name, SdsConfig: &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}}
}

// gatewayRoute renders route configuration name of the merged gateway,
// which resolve assembles (resolve.Mesh.GatewayRouteConfig).
func (b *builder) gatewayRoute(name string) {
	for _, r := range b.mergedGateway().Routes {
		if r.Name == name {
			b.routeCache[name] = b.routeConfiguration(b.mesh.GatewayRouteConfig(b.view, r))
			return
		}
	}
}
