package simulate

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/meshc/meshc/internal/envoycfg"
)

// Listener names Istio gives its catch-all listeners.
const (
	virtualInbound  = "virtualInbound"
	virtualOutbound = "virtualOutbound"
)

// Listener filter names whose detection feeds filter chain matching.
const (
	tlsInspector  = "envoy.filters.listener.tls_inspector"
	httpInspector = "envoy.filters.listener.http_inspector"
)

// pickListener finds the listener a connection lands on. From outside it
// is virtualInbound. From the application, iptables sends every
// connection to virtualOutbound, whose original-destination hand-off
// passes it to the listener on the destination address and port, else on
// the wildcard address and the port, else keeps it; a proxy without such
// a listener (a gateway) receives connections on the listeners bound to
// their port alone.
func pickListener(cfg *envoycfg.Config, dst netip.Addr, req Request) (*listenerv3.Listener, string) {
	if req.Inbound {
		if l := cfg.Listener(virtualInbound); l != nil {
			return l, "inbound connection"
		}
		return nil, "no virtualInbound listener: the proxy takes no inbound traffic"
	}
	var exact, wildcard, handoff *listenerv3.Listener
	for _, l := range cfg.Listeners() {
		if l.GetTrafficDirection() == corev3.TrafficDirection_INBOUND {
			continue
		}
		sa := l.GetAddress().GetSocketAddress()
		if sa.GetPortValue() == req.Port {
			a, err := netip.ParseAddr(sa.GetAddress())
			switch {
			case err != nil:
			case a == dst && exact == nil:
				exact = l
			case a.IsUnspecified() && a.Is4() == dst.Is4() && wildcard == nil:
				wildcard = l
			}
		}
		if l.GetUseOriginalDst().GetValue() && handoff == nil {
			handoff = l
		}
	}
	addr := netip.AddrPortFrom(dst, uint16(req.Port)).String()
	if handoff == nil {
		// Without a hand-off, only a listener bound to its port takes
		// connections.
		for _, l := range []**listenerv3.Listener{&exact, &wildcard} {
			if b := (*l).GetBindToPort(); b != nil && !b.GetValue() {
				*l = nil
			}
		}
	}
	switch {
	case exact != nil:
		return exact, "bound to " + addr
	case wildcard != nil:
		return wildcard, fmt.Sprintf("wildcard address, port %d", req.Port)
	case handoff != nil:
		return handoff, "no listener for " + addr + ": stays on the original-destination listener"
	}
	return nil, "no listener on " + addr
}

// connection is what the listener filters found out about a connection.
type connection struct {
	transport    string
	serverName   string
	applications []string
}

// detect runs the listener's inspectors: TLS, with its server name and
// ALPN, only with a TLS inspector; HTTP on a plain connection only with
// an HTTP inspector. Envoy calls an undetected transport raw_buffer.
func detect(l *listenerv3.Listener, req Request) connection {
	has := func(name string) bool {
		return slices.ContainsFunc(l.GetListenerFilters(), func(f *listenerv3.ListenerFilter) bool { return f.GetName() == name })
	}
	c := connection{transport: "raw_buffer"}
	switch {
	case req.TLS && has(tlsInspector):
		c.transport, c.serverName, c.applications = "tls", req.SNI, req.ALPN
	case !req.TLS && has(httpInspector):
		switch req.Protocol {
		case HTTP:
			c.applications = []string{"http/1.1"}
		case HTTP2:
			c.applications = []string{"h2c"}
		}
	}
	return c
}

// chainSet is the filter chains still in the running, by index; -1 is
// none.
type chainSet []int

// pickChain finds a listener's filter chain as Envoy's matching tree
// does, one criterion after the other without going back: destination
// port, destination address (longest prefix), server name (exact, then
// longest wildcard), transport protocol, application protocols (the
// client's first that some chain lists), source type, source address,
// source port. Nothing left is the default chain, if any.
func pickChain(l *listenerv3.Listener, dst netip.Addr, c connection, req Request) (*listenerv3.FilterChain, int, string) {
	chains := l.GetFilterChains()
	set := make(chainSet, len(chains))
	for i := range chains {
		set[i] = i
	}
	var src netip.Addr
	if req.Source != "" {
		src, _ = netip.ParseAddr(req.Source)
	}
	var matched []string
	levels := []struct {
		what string
		rank func(m *listenerv3.FilterChainMatch) (int, bool)
	}{
		{fmt.Sprintf("destination port %d", req.Port), func(m *listenerv3.FilterChainMatch) (int, bool) {
			p := m.GetDestinationPort()
			return boolRank(p != nil && p.GetValue() == req.Port), p == nil
		}},
		{"destination " + dst.String(), prefixRank(dst, (*listenerv3.FilterChainMatch).GetPrefixRanges)},
		{fmt.Sprintf("server name %q", c.serverName), func(m *listenerv3.FilterChainMatch) (int, bool) {
			return serverNameRank(m.GetServerNames(), c.serverName), len(m.GetServerNames()) == 0
		}},
		{"transport " + c.transport, func(m *listenerv3.FilterChainMatch) (int, bool) {
			return boolRank(m.GetTransportProtocol() == c.transport), m.GetTransportProtocol() == ""
		}},
		{"application protocols " + strings.Join(c.applications, ","), func(m *listenerv3.FilterChainMatch) (int, bool) {
			// The client's earlier protocols rank higher.
			for i, p := range c.applications {
				if slices.Contains(m.GetApplicationProtocols(), p) {
					return len(c.applications) - i, false
				}
			}
			return 0, len(m.GetApplicationProtocols()) == 0
		}},
		{"source type", func(m *listenerv3.FilterChainMatch) (int, bool) {
			local := src.IsValid() && (src == dst || src.IsLoopback())
			switch m.GetSourceType() {
			case listenerv3.FilterChainMatch_SAME_IP_OR_LOOPBACK:
				return boolRank(local), false
			case listenerv3.FilterChainMatch_EXTERNAL:
				return boolRank(!local), false
			}
			return 0, true
		}},
		{"source " + req.Source, prefixRank(src, (*listenerv3.FilterChainMatch).GetSourcePrefixRanges)},
		{fmt.Sprintf("source port %d", req.SourcePort), func(m *listenerv3.FilterChainMatch) (int, bool) {
			return boolRank(slices.Contains(m.GetSourcePorts(), req.SourcePort)), len(m.GetSourcePorts()) == 0
		}},
	}
	for _, lv := range levels {
		var specific bool
		set, specific = set.narrow(chains, lv.rank)
		if len(set) == 0 {
			break
		}
		if specific {
			matched = append(matched, lv.what)
		}
	}
	switch {
	case len(set) > 0:
		// Envoy rejects listeners with two chains of one match; take the
		// first if such a configuration comes here.
		return chains[set[0]], set[0], strings.Join(matched, ", ")
	case l.GetDefaultFilterChain() != nil:
		return l.GetDefaultFilterChain(), -1, "default chain"
	}
	return nil, 0, describe(req, c)
}

// narrow narrows chains on one field of their match: rank says how
// specifically a chain matches the connection (0: not) and whether it
// leaves the field open. The chains of the highest rank win, else the
// open ones; the flag says a chain matched specifically.
func (s chainSet) narrow(chains []*listenerv3.FilterChain, rank func(*listenerv3.FilterChainMatch) (int, bool)) (chainSet, bool) {
	var best chainSet
	var open chainSet
	top := 0
	for _, i := range s {
		r, o := rank(chains[i].GetFilterChainMatch())
		switch {
		case r > top:
			best, top = chainSet{i}, r
		case r > 0 && r == top:
			best = append(best, i)
		case r == 0 && o:
			open = append(open, i)
		}
	}
	if best != nil {
		return best, true
	}
	return open, false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prefixRank ranks chains by the longest of their prefixes holding a,
// as Envoy's address trie does; a chain without prefixes is open.
func prefixRank(a netip.Addr, ranges func(*listenerv3.FilterChainMatch) []*corev3.CidrRange) func(*listenerv3.FilterChainMatch) (int, bool) {
	return func(m *listenerv3.FilterChainMatch) (int, bool) {
		rs := ranges(m)
		best := 0
		for _, r := range rs {
			p, err := netip.ParseAddr(r.GetAddressPrefix())
			if err != nil || !a.IsValid() {
				continue
			}
			bits := int(r.GetPrefixLen().GetValue())
			pre, err := p.Prefix(bits)
			if err == nil && pre.Contains(a) {
				best = max(best, bits+1) // a /0 still ranks above open
			}
		}
		return best, len(rs) == 0
	}
}

// serverNameRank ranks an exact name above wildcards, and longer
// wildcards above shorter ones; Envoy's wildcard covers at least one
// label.
func serverNameRank(names []string, sni string) int {
	if sni == "" {
		return 0
	}
	sni = strings.ToLower(sni)
	best := 0
	for _, n := range names {
		n = strings.ToLower(n)
		switch {
		case n == sni:
			return 1 << 20
		case strings.HasPrefix(n, "*.") && strings.HasSuffix(sni, n[1:]) && len(sni) > len(n)-1:
			best = max(best, len(n))
		}
	}
	return best
}

func describe(req Request, c connection) string {
	parts := []string{fmt.Sprintf("port %d", req.Port), "transport " + c.transport}
	if c.serverName != "" {
		parts = append(parts, fmt.Sprintf("server name %q", c.serverName))
	}
	if len(c.applications) > 0 {
		parts = append(parts, "application protocols "+strings.Join(c.applications, ","))
	}
	return strings.Join(parts, ", ")
}

// handshake says why a chain that terminates TLS fails the connection: a
// client that does not start TLS, or one without a certificate where the
// chain requires one. "" when the handshake succeeds or the chain
// terminates no TLS.
func handshake(fc *listenerv3.FilterChain, req Request) string {
	ts := fc.GetTransportSocket()
	if ts == nil {
		return ""
	}
	var tc tlsv3.DownstreamTlsContext
	if ts.GetTypedConfig().UnmarshalTo(&tc) != nil {
		return "" // not TLS, or a type this build does not know
	}
	switch {
	case !req.TLS:
		return fmt.Sprintf("TLS handshake fails: filter chain %q terminates TLS, the client sends plain text", fc.GetName())
	case tc.GetRequireClientCertificate().GetValue() && !req.MTLS:
		return fmt.Sprintf("mutual TLS handshake fails: filter chain %q wants a client certificate, the client presents none", fc.GetName())
	}
	return ""
}
