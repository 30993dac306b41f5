package simulate

import (
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// stopOrName is a trace's name for a stage, or "stop: STAGE" when it
// stopped there.
func stopOrName(tr *Trace, s Stage) string {
	if tr.StoppedAt == s {
		return "stop: " + string(s)
	}
	return tr.Name(s)
}

func TestListenerSelection(t *testing.T) {
	sidecar := config(t, []*listenerv3.Listener{
		listener("10.0.0.1_80", "10.0.0.1", 80, chain("", nil, tcpProxy(t, "bound"))),
		listener("0.0.0.0_80", "0.0.0.0", 80, chain("", nil, tcpProxy(t, "wildcard"))),
		func() *listenerv3.Listener {
			l := listener("virtualOutbound", "0.0.0.0", 15001, chain("", nil, tcpProxy(t, "passthrough")))
			l.UseOriginalDst = wrapperspb.Bool(true)
			return l
		}(),
		func() *listenerv3.Listener {
			l := listener("virtualInbound", "0.0.0.0", 15006, chain("", nil, tcpProxy(t, "inbound")))
			l.TrafficDirection = corev3.TrafficDirection_INBOUND
			return l
		}(),
	}, nil, nil)
	unbound := listener("0.0.0.0_8081", "0.0.0.0", 8081, chain("", nil, tcpProxy(t, "gw")))
	unbound.BindToPort = wrapperspb.Bool(false)
	gateway := config(t, []*listenerv3.Listener{listener("0.0.0.0_8080", "0.0.0.0", 8080, chain("", nil, tcpProxy(t, "gw"))), unbound}, nil, nil)
	for _, tc := range []struct {
		name string
		cfg  string
		req  Request
		want string
	}{
		{"bound address wins", "sidecar", Request{Address: "10.0.0.1", Port: 80}, "10.0.0.1_80"},
		{"wildcard on the port", "sidecar", Request{Address: "10.0.0.2", Port: 80}, "0.0.0.0_80"},
		{"no listener: original destination keeps it", "sidecar", Request{Address: "10.0.0.2", Port: 81}, "virtualOutbound"},
		{"IPv6 misses the IPv4 wildcard", "sidecar", Request{Address: "fd00::1", Port: 80}, "virtualOutbound"},
		{"inbound", "sidecar", Request{Address: "10.0.0.9", Port: 80, Inbound: true}, "virtualInbound"},
		{"inbound listener is not outbound", "gateway", Request{Address: "10.0.0.9", Port: 15006}, "stop: listener"},
		{"gateway bound port", "gateway", Request{Address: "10.0.0.9", Port: 8080}, "0.0.0.0_8080"},
		{"gateway has no hand-off", "gateway", Request{Address: "10.0.0.9", Port: 8082}, "stop: listener"},
		{"gateway listener not bound to its port", "gateway", Request{Address: "10.0.0.9", Port: 8081}, "stop: listener"},
		{"gateway takes no inbound", "gateway", Request{Address: "10.0.0.9", Port: 8080, Inbound: true}, "stop: listener"},
		{"not an address", "sidecar", Request{Address: "reviews", Port: 80}, "stop: listener"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sidecar
			if tc.cfg == "gateway" {
				cfg = gateway
			}
			tc.req.Protocol = TCP
			tr := Run(cfg, tc.req)
			if got := stopOrName(tr, Listener); got != tc.want {
				t.Errorf("listener %q, want %q\n%s", got, tc.want, tr)
			}
			if tr.StoppedAt == "" && tr.Reason != "" {
				t.Errorf("reason %q without a stop", tr.Reason)
			}
			if tr.StoppedAt != "" && tr.Reason == "" {
				t.Error("stopped without a reason")
			}
		})
	}
}

func TestFilterChainMatch(t *testing.T) {
	port := func(p uint32) *wrapperspb.UInt32Value { return wrapperspb.UInt32(p) }
	chains := []*listenerv3.FilterChain{
		chain("sni-exact", &listenerv3.FilterChainMatch{DestinationPort: port(8443), TransportProtocol: "tls", ServerNames: []string{"api.example.com"}}, tcpProxy(t, "c")),
		chain("sni-wildcard", &listenerv3.FilterChainMatch{DestinationPort: port(8443), TransportProtocol: "tls", ServerNames: []string{"*.example.com"}}, tcpProxy(t, "c")),
		chain("sni-longer-wildcard", &listenerv3.FilterChainMatch{DestinationPort: port(8443), TransportProtocol: "tls", ServerNames: []string{"*.b.example.com"}}, tcpProxy(t, "c")),
		chain("port-only", &listenerv3.FilterChainMatch{DestinationPort: port(8443)}, tcpProxy(t, "c")),
		chain("prefix16-http", &listenerv3.FilterChainMatch{PrefixRanges: []*corev3.CidrRange{cidr("10.1.0.0", 16)}, TransportProtocol: "raw_buffer", ApplicationProtocols: []string{"http/1.1", "h2c"}}, tcpProxy(t, "c")),
		chain("prefix24", &listenerv3.FilterChainMatch{PrefixRanges: []*corev3.CidrRange{cidr("10.1.2.0", 24)}, TransportProtocol: "raw_buffer"}, tcpProxy(t, "c")),
		chain("prefix8", &listenerv3.FilterChainMatch{PrefixRanges: []*corev3.CidrRange{cidr("10.0.0.0", 8)}}, tcpProxy(t, "c")),
		chain("istio-alpn", &listenerv3.FilterChainMatch{TransportProtocol: "tls", ApplicationProtocols: []string{"istio-peer-exchange", "istio"}}, tcpProxy(t, "c")),
		chain("from-192", &listenerv3.FilterChainMatch{DestinationPort: port(9000), SourcePrefixRanges: []*corev3.CidrRange{cidr("192.168.0.0", 16)}}, tcpProxy(t, "c")),
		chain("port-9000", &listenerv3.FilterChainMatch{DestinationPort: port(9000)}, tcpProxy(t, "c")),
		chain("tls-9100", &listenerv3.FilterChainMatch{DestinationPort: port(9100), TransportProtocol: "tls"}, tcpProxy(t, "c")),
		chain("local-9200", &listenerv3.FilterChainMatch{DestinationPort: port(9200), SourceType: listenerv3.FilterChainMatch_SAME_IP_OR_LOOPBACK}, tcpProxy(t, "c")),
		chain("external-9200", &listenerv3.FilterChainMatch{DestinationPort: port(9200), SourceType: listenerv3.FilterChainMatch_EXTERNAL}, tcpProxy(t, "c")),
		chain("source-port", &listenerv3.FilterChainMatch{DestinationPort: port(9300), SourcePorts: []uint32{5555}}, tcpProxy(t, "c")),
	}
	l := inspectors(listener("0.0.0.0_15001", "0.0.0.0", 15001, chains...), tlsInspector, httpInspector)
	l.DefaultFilterChain = chain("default", nil, tcpProxy(t, "c"))
	noInspector := listener("0.0.0.0_15001", "0.0.0.0", 15001, chains...)
	l.UseOriginalDst, noInspector.UseOriginalDst = wrapperspb.Bool(true), wrapperspb.Bool(true)
	withDefault := config(t, []*listenerv3.Listener{l}, nil, nil)
	bare := config(t, []*listenerv3.Listener{noInspector}, nil, nil)
	tls := func(ip string, port uint32, sni string, alpn ...string) Request {
		return Request{Address: ip, Port: port, Protocol: TCP, TLS: true, SNI: sni, ALPN: alpn}
	}
	plain := func(ip string, port uint32, p Protocol) Request { return Request{Address: ip, Port: port, Protocol: p} }
	from := func(r Request, src string, port uint32) Request {
		r.Source, r.SourcePort = src, port
		return r
	}
	for _, tc := range []struct {
		name  string
		cfg   string
		req   Request
		chain string
	}{
		{"exact server name", "", tls("172.16.0.1", 8443, "api.example.com"), "sni-exact"},
		{"server name case", "", tls("172.16.0.1", 8443, "API.example.com"), "sni-exact"},
		{"wildcard server name", "", tls("172.16.0.1", 8443, "x.example.com"), "sni-wildcard"},
		{"longest wildcard", "", tls("172.16.0.1", 8443, "y.b.example.com"), "sni-longer-wildcard"},
		{"other server name: chain without names", "", tls("172.16.0.1", 8443, "other.org"), "port-only"},
		{"wildcard needs a label", "", tls("172.16.0.1", 8443, "example.com"), "port-only"},
		{"plain text on the TLS port", "", plain("172.16.0.1", 8443, TCP), "port-only"},
		{"longest prefix", "", plain("10.1.2.3", 80, HTTP), "prefix24"},
		{"prefix, then application protocol", "", plain("10.1.9.9", 80, HTTP), "prefix16-http"},
		{"HTTP/2 prior knowledge", "", plain("10.1.9.9", 80, HTTP2), "prefix16-http"},
		{"no going back to a shorter prefix", "", plain("10.1.9.9", 80, TCP), "default"},
		{"shorter prefix", "", plain("10.9.9.9", 80, TCP), "prefix8"},
		{"no prefix matches: chains without one", "", tls("172.16.0.1", 80, "", "h2", "istio"), "istio-alpn"},
		{"no application protocol matches", "", tls("172.16.0.1", 80, "", "h2"), "default"},
		{"source prefix", "", from(plain("172.16.0.1", 9000, TCP), "192.168.1.1", 0), "from-192"},
		{"other source", "", from(plain("172.16.0.1", 9000, TCP), "10.0.0.5", 0), "port-9000"},
		{"no source", "", plain("172.16.0.1", 9000, TCP), "port-9000"},
		{"no going back to a port-less chain", "", plain("10.9.9.9", 9100, TCP), "default"},
		{"same address source", "", from(plain("172.16.0.1", 9200, TCP), "172.16.0.1", 0), "local-9200"},
		{"external source", "", from(plain("172.16.0.1", 9200, TCP), "172.16.0.2", 0), "external-9200"},
		{"source port", "", from(plain("172.16.0.1", 9300, TCP), "172.16.0.2", 5555), "source-port"},
		{"other source port, no default", "bare", from(plain("172.16.0.1", 9300, TCP), "172.16.0.2", 5556), "stop: filterChain"},
		{"no TLS inspector: TLS is raw_buffer", "bare", tls("10.1.2.3", 80, "api.example.com"), "prefix24"},
		{"no HTTP inspector: no application protocol", "bare", plain("10.1.9.9", 80, HTTP), "stop: filterChain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := withDefault
			if tc.cfg == "bare" {
				cfg = bare
			}
			tr := Run(cfg, tc.req)
			if got := stopOrName(tr, FilterChain); got != tc.chain {
				t.Errorf("chain %q, want %q\n%s", got, tc.chain, tr)
			}
			if tr.StoppedAt == FilterChain && !strings.Contains(tr.Reason, "no filter chain") {
				t.Errorf("reason %q", tr.Reason)
			}
		})
	}
}

// TestHandshake: a chain that terminates TLS fails plain text, and a
// client without a certificate where the chain requires one; a chain
// that does not terminate TLS hands TLS to the connection manager, which
// cannot read it.
func TestHandshake(t *testing.T) {
	terminating := func(name string, mutual bool) *listenerv3.FilterChain {
		c := chain(name, &listenerv3.FilterChainMatch{ServerNames: []string{name}}, rds(t, "443"))
		c.TransportSocket = &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{
			TypedConfig: packed(t, &tlsv3.DownstreamTlsContext{RequireClientCertificate: wrapperspb.Bool(mutual)})}}
		return c
	}
	l := inspectors(listener("0.0.0.0_443", "0.0.0.0", 443, terminating("simple.example.com", false), terminating("mutual.example.com", true),
		chain("plain", nil, rds(t, "443"))), tlsInspector)
	rc := &routev3.RouteConfiguration{Name: "443", VirtualHosts: []*routev3.VirtualHost{vhost("all", []string{"*"}, toCluster("backend", prefix("/")))}}
	only := terminating("only", false)
	only.FilterChainMatch = nil
	cfg := config(t, []*listenerv3.Listener{l, listener("0.0.0.0_8443", "0.0.0.0", 8443, only)}, []*clusterv3.Cluster{cluster("backend", clusterv3.Cluster_EDS)}, []*routev3.RouteConfiguration{rc})
	for _, tc := range []struct {
		name      string
		req       Request
		stop, why string
	}{
		{"TLS to a TLS chain", Request{TLS: true, SNI: "simple.example.com"}, "", ""},
		{"plain text passes the TLS chains by", Request{SNI: "simple.example.com"}, "", ""},
		{"plain text to a TLS chain", Request{Port: 8443}, "networkFilter", "the client sends plain text"},
		{"no certificate for a mutual chain", Request{TLS: true, SNI: "mutual.example.com"}, "networkFilter", "wants a client certificate"},
		{"a certificate for a mutual chain", Request{TLS: true, MTLS: true, SNI: "mutual.example.com"}, "", ""},
		{"TLS to the connection manager", Request{TLS: true, SNI: "other.example.com"}, "networkFilter", "reads plain-text HTTP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Address, req.Protocol, req.Host, req.Path = "10.0.0.1", HTTP, "x", "/"
			if req.Port == 0 {
				req.Port = 443
			}
			tr := Run(cfg, req)
			if string(tr.StoppedAt) != tc.stop || !strings.Contains(tr.Reason, tc.why) {
				t.Errorf("stopped at %q (%s), want %q (%s)\n%s", tr.StoppedAt, tr.Reason, tc.stop, tc.why, tr)
			}
		})
	}
}
