package emit

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/resolve"
)

// call is a connection an application makes through its sidecar: to
// ip:port, speaking plain HTTP (with a Host and path), TLS (with an SNI
// in host) or opaque TCP.
type call struct {
	ip        string
	port      uint32
	kind      string // "http", "tls" or "tcp"
	host, uri string
}

// outcome is where Envoy sends a call: the cluster, and for HTTP the
// route's name.
type outcome struct {
	listener, route, cluster string
}

// simulate follows a call through a sidecar's outbound listeners the way
// Envoy does (original destination to the listener bound on the address,
// else the wildcard one, else virtualOutbound; filter chains narrowed
// criterion by criterion, most specific first; virtual host by most
// specific domain; first matching route), enough to check where traffic
// lands without an Envoy binary.
func simulate(t *testing.T, cfg *Config, c call) outcome {
	t.Helper()
	l := listenerOn(cfg, c.ip, c.port)
	if l == nil {
		l = listenerOn(cfg, wildcard, c.port)
	}
	if l == nil {
		l = listenerNamed(cfg, "virtualOutbound")
	}
	fc := pickChain(t, l, c)
	if fc == nil {
		return outcome{listener: l.GetName()}
	}
	out := outcome{listener: l.GetName()}
	m, err := fc.GetFilters()[len(fc.GetFilters())-1].GetTypedConfig().UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	switch f := m.(type) {
	case *tcpv3.TcpProxy:
		out.cluster = cmpOr(f.GetCluster(), firstWeighted(f.GetWeightedClusters().GetClusters()))
	case *hcmv3.HttpConnectionManager:
		rc := routeNamed(cfg, f.GetRds().GetRouteConfigName())
		if rc == nil {
			t.Fatalf("%s: no route configuration %q", l.GetName(), f.GetRds().GetRouteConfigName())
		}
		if r := pickRoute(rc, c); r != nil {
			out.route = r.GetName()
			out.cluster = r.GetRoute().GetCluster()
			if wc := r.GetRoute().GetWeightedClusters().GetClusters(); len(wc) > 0 {
				out.cluster = wc[0].GetName()
			}
		}
	default:
		t.Fatalf("%s: unexpected terminal filter %T", l.GetName(), m)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstWeighted(wc []*tcpv3.TcpProxy_WeightedCluster_ClusterWeight) string {
	if len(wc) == 0 {
		return ""
	}
	return wc[0].GetName()
}

// listenerOn is the outbound listener on ip:port, bound or reached
// through virtualOutbound.
func listenerOn(cfg *Config, ip string, port uint32) *listenerv3.Listener {
	for _, l := range cfg.Listeners {
		sa := l.GetAddress().GetSocketAddress()
		if sa.GetAddress() == ip && sa.GetPortValue() == port && l.GetTrafficDirection() != corev3.TrafficDirection_INBOUND {
			return l
		}
	}
	return nil
}

// pickChain narrows a listener's chains as Envoy does: destination IP
// (longest prefix, else chains without one), server name (exact, then
// longest wildcard, else none), transport protocol, application protocol;
// an empty result falls to the default chain.
func pickChain(t *testing.T, l *listenerv3.Listener, c call) *listenerv3.FilterChain {
	t.Helper()
	chains := l.GetFilterChains()
	ip := netip.MustParseAddr(c.ip)
	best, bestLen := []*listenerv3.FilterChain(nil), -1
	for _, fc := range chains {
		ranges := fc.GetFilterChainMatch().GetPrefixRanges()
		if len(ranges) == 0 {
			continue
		}
		for _, r := range ranges {
			p := netip.PrefixFrom(netip.MustParseAddr(r.GetAddressPrefix()), int(r.GetPrefixLen().GetValue()))
			if p.Contains(ip) && p.Bits() >= bestLen {
				if p.Bits() > bestLen {
					best, bestLen = nil, p.Bits()
				}
				best = append(best, fc)
			}
		}
	}
	if best == nil {
		best = slices.DeleteFunc(slices.Clone(chains), func(fc *listenerv3.FilterChain) bool {
			return len(fc.GetFilterChainMatch().GetPrefixRanges()) > 0
		})
	}
	sni := ""
	if c.kind == "tls" {
		sni = c.host
	}
	best = narrow(best, func(m *listenerv3.FilterChainMatch) (bool, bool) {
		names := m.GetServerNames()
		if len(names) == 0 {
			return false, true
		}
		return sni != "" && slices.Contains(names, sni), false
	})
	best = narrow(best, func(m *listenerv3.FilterChainMatch) (bool, bool) {
		names := m.GetServerNames()
		for _, n := range names {
			if strings.HasPrefix(n, "*.") && strings.HasSuffix(sni, n[1:]) {
				return true, false
			}
		}
		return false, len(names) == 0
	})
	transport := "raw_buffer"
	if c.kind == "tls" {
		transport = "tls"
	}
	best = narrow(best, func(m *listenerv3.FilterChainMatch) (bool, bool) {
		return m.GetTransportProtocol() == transport, m.GetTransportProtocol() == ""
	})
	alpn := ""
	if c.kind == "http" {
		alpn = "http/1.1"
	}
	best = narrow(best, func(m *listenerv3.FilterChainMatch) (bool, bool) {
		return alpn != "" && slices.Contains(m.GetApplicationProtocols(), alpn), len(m.GetApplicationProtocols()) == 0
	})
	switch len(best) {
	case 0:
		return l.GetDefaultFilterChain()
	case 1:
		return best[0]
	}
	t.Fatalf("%s: %d chains match %+v", l.GetName(), len(best), c)
	return nil
}

// narrow keeps the chains a criterion matches specifically, else those
// that leave it open, as Envoy's matching tree does for each criterion.
func narrow(chains []*listenerv3.FilterChain, crit func(*listenerv3.FilterChainMatch) (specific, open bool)) []*listenerv3.FilterChain {
	var specific, open []*listenerv3.FilterChain
	for _, fc := range chains {
		s, o := crit(fc.GetFilterChainMatch())
		switch {
		case s:
			specific = append(specific, fc)
		case o:
			open = append(open, fc)
		}
	}
	if len(specific) > 0 {
		return specific
	}
	return open
}

// pickRoute picks the virtual host by the most specific domain matching
// the Host (exact, longest suffix wildcard, longest prefix wildcard, "*")
// and its first route whose path matches.
func pickRoute(rc *routev3.RouteConfiguration, c call) *routev3.Route {
	var vh *routev3.VirtualHost
	rank := func(d string) int {
		switch {
		case d == c.host:
			return 4 << 16
		case strings.HasPrefix(d, "*") && d != "*" && strings.HasSuffix(c.host, d[1:]):
			return 3<<16 + len(d)
		case strings.HasSuffix(d, "*") && d != "*" && strings.HasPrefix(c.host, d[:len(d)-1]):
			return 2<<16 + len(d)
		case d == "*":
			return 1
		}
		return 0
	}
	best := 0
	for _, v := range rc.GetVirtualHosts() {
		for _, d := range v.GetDomains() {
			if r := rank(d); r > best {
				best, vh = r, v
			}
		}
	}
	uri := cmpOr(c.uri, "/")
	for _, r := range vh.GetRoutes() {
		m := r.GetMatch()
		switch {
		case len(m.GetHeaders()) > 0 || len(m.GetQueryParameters()) > 0:
			continue // the simulated calls carry none
		case m.GetPath() != "" && m.GetPath() != uri:
			continue
		case m.GetPath() == "" && m.GetSafeRegex() == nil && !strings.HasPrefix(uri, m.GetPrefix()):
			continue
		}
		return r
	}
	return nil
}

// sidecarCalls checks where each call lands.
func sidecarCalls(t *testing.T, cfg *Config, calls []call, want func(call) outcome) {
	t.Helper()
	for _, c := range calls {
		got, w := simulate(t, cfg, c), want(c)
		got.listener = "" // where the call is handled is not the spec's point
		if got != w {
			t.Errorf("%s call to %s:%d (host %q, uri %q) lands at %+v, want %+v", c.kind, c.ip, c.port, c.host, c.uri, got, w)
		}
	}
}

// TestC47HeadlessCalls: docs/semantics/cases.md C47, the calls: every port of a
// headless service, whatever the protocol, reaches the service's cluster
// when the application dials a pod.
func TestC47HeadlessCalls(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: headless, namespace: default}
spec:
  clusterIP: None
  selector: {app: headless}
  ports: [{name: http, port: 80}, {name: auto, port: 81}, {name: tcp, port: 82}, {name: tls, port: 83}, {name: https, port: 84}]`,
		`apiVersion: v1
kind: Pod
metadata: {name: headless-0, namespace: default, labels: {app: headless}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 1.2.3.4}`)
	const fqdn host.Name = "headless.default.svc.cluster.local"
	sidecarCalls(t, cfg, everyPortCalls(fqdn), defaultRouteTo(fqdn))
}

// everyPortCalls are docs/semantics/cases.md C47's calls to 1.2.3.4 on ports 80 to 84 (http,
// auto, tcp, tls, https): HTTP, TLS and TCP where each port takes them,
// TLS naming the host in its short form.
func everyPortCalls(h host.Name) []call {
	short := strings.TrimSuffix(string(h), ".svc.cluster.local")
	return []call{
		{ip: "1.2.3.4", port: 80, kind: "http", host: string(h)},
		{ip: "1.2.3.4", port: 81, kind: "http", host: string(h)},
		{ip: "1.2.3.4", port: 81, kind: "tls", host: string(h)},
		{ip: "1.2.3.4", port: 81, kind: "tcp"},
		{ip: "1.2.3.4", port: 82, kind: "tcp"},
		{ip: "1.2.3.4", port: 83, kind: "tls", host: short},
		{ip: "1.2.3.4", port: 84, kind: "tls", host: short},
	}
}

// defaultRouteTo expects a call at h's cluster for its port, by the
// default route for HTTP.
func defaultRouteTo(h host.Name) func(call) outcome {
	return func(c call) outcome {
		o := outcome{cluster: resolve.ClusterName(c.port, "", h)}
		if c.kind == "http" {
			o.route = "default"
		}
		return o
	}
}

// TestC48AliasCalls: docs/semantics/cases.md C48, the calls: every call to the
// concrete VIP reaches the concrete service; the alias's VirtualService
// applies only to HTTP with exactly the alias's name as Host, and a TCP
// VirtualService on the alias changes nothing.
func TestC48AliasCalls(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: alias, namespace: default}
spec: {type: ExternalName, externalName: concrete.default.svc.cluster.local}`,
		`apiVersion: v1
kind: Service
metadata: {name: concrete, namespace: default}
spec: {clusterIP: 1.2.3.4, ports: [{name: http, port: 80}, {name: auto, port: 81}, {name: tcp, port: 82}, {name: tls, port: 83}, {name: https, port: 84}]}`}
	const alias, concrete host.Name = "alias.default.svc.cluster.local", "concrete.default.svc.cluster.local"
	to := defaultRouteTo(concrete)
	t.Run("no VirtualService", func(t *testing.T) {
		sidecarCalls(t, compile(t, Options{Format: XDS}, "default/client", docs...), everyPortCalls(alias), to)
	})
	t.Run("HTTP VirtualService on the alias", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", append(docs, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: alias, namespace: default}
spec:
  hosts: [alias.default.svc.cluster.local]
  http:
  - name: route1
    match: [{uri: {prefix: /one}}]
    route: [{destination: {host: concrete.default.svc.cluster.local}}]`)...)
		sidecarCalls(t, cfg, []call{
			{ip: "1.2.3.4", port: 80, kind: "http", host: string(alias), uri: "/one"},
		}, func(c call) outcome { return outcome{route: "route1", cluster: resolve.ClusterName(80, "", concrete)} })
		sidecarCalls(t, cfg, []call{
			{ip: "1.2.3.4", port: 80, kind: "http", host: "alias.default", uri: "/one"},
			{ip: "1.2.3.4", port: 80, kind: "http", host: string(concrete), uri: "/one"},
			{ip: "1.2.3.4", port: 81, kind: "http", host: string(alias), uri: "/one"},
			{ip: "1.2.3.4", port: 81, kind: "http", host: "alias.default", uri: "/one"},
			{ip: "1.2.3.4", port: 81, kind: "http", host: string(concrete), uri: "/one"},
		}, to)
	})
	t.Run("TCP VirtualService on the alias", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", append(docs, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: alias, namespace: default}
spec:
  hosts: [alias.default.svc.cluster.local]
  tcp:
  - route: [{destination: {host: concrete.default.svc.cluster.local, port: {number: 80}}}]`)...)
		sidecarCalls(t, cfg, []call{{ip: "1.2.3.4", port: 82, kind: "tcp"}}, to)
	})
}
