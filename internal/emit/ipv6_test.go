package emit

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
)

// TestIPv6OnlyProxy: a proxy whose addresses are all IPv6 binds its
// wildcard listeners on "::", names them and their chains after it,
// binds inbound passthrough connections to ::6, resolves DNS to IPv6, and
// writes IPv6 VIPs in brackets among a vhost's domains; as istiod's
// generator does for the same input. An IPv4 proxy of the same mesh
// keeps 0.0.0.0.
func TestIPv6OnlyProxy(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: v6, namespace: app, labels: {app: web}}\nspec: {containers: [{name: c, image: x, ports: [{containerPort: 8080}]}]}\nstatus: {podIPs: [{ip: \"fd00::7\"}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: v4, namespace: app, labels: {app: other}}\nspec: {containers: [{name: c, image: x}]}\nstatus: {podIP: 10.1.0.4}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: app}\nspec: {selector: {app: web}, clusterIP: \"fd00:10::1\", ports: [{port: 80, name: http, targetPort: 8080}]}",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: db, namespace: app}\nspec: {hosts: [db.example.com], resolution: DNS, ports: [{number: 5432, name: tcp, protocol: TCP}]}",
	}
	v6 := compile(t, Options{Format: XDS}, "app/v6", docs...)
	var names []string
	for _, l := range v6.Listeners {
		names = append(names, l.GetName())
		if a := l.GetAddress().GetSocketAddress().GetAddress(); (l.GetName() == "virtualInbound" || l.GetName() == "virtualOutbound") && a != "::" {
			t.Errorf("%s binds %s, want ::", l.GetName(), a)
		}
	}
	for _, want := range []string{"::_80", "::_5432"} {
		if !slices.Contains(names, want) {
			t.Errorf("listeners %v lack %s", names, want)
		}
	}
	inbound := listenerNamed(v6, "virtualInbound")
	if !slices.ContainsFunc(inbound.GetFilterChains(), func(c *listenerv3.FilterChain) bool { return c.GetName() == "::_8080" }) {
		t.Errorf("virtualInbound has no chain ::_8080")
	}
	if a := clusterNamed(v6, InboundPassthroughCluster).GetUpstreamBindConfig().GetSourceAddress().GetAddress(); a != "::6" {
		t.Errorf("InboundPassthroughCluster binds %s, want ::6", a)
	}
	if f := clusterNamed(v6, "outbound|5432||db.example.com").GetDnsLookupFamily(); f != clusterv3.Cluster_V6_ONLY {
		t.Errorf("DNS lookup family %v, want V6_ONLY", f)
	}
	if d := routeNamed(v6, "80").GetVirtualHosts()[0].GetDomains(); !slices.Contains(d, "[fd00:10::1]") {
		t.Errorf("domains %v lack the bracketed VIP", d)
	}
	v4 := compile(t, Options{Format: XDS}, "app/v4", docs...)
	if listenerNamed(v4, "0.0.0.0_80") == nil || clusterNamed(v4, "outbound|5432||db.example.com").GetDnsLookupFamily() != clusterv3.Cluster_V4_ONLY {
		t.Errorf("the IPv4 proxy changed too")
	}
}

// TestDualStackProxy: a proxy with an IPv4 and an IPv6 address also binds
// "::" (or "::1") where istiod picks a listener's address itself (an
// HTTP port, a ServiceEntry port without an address, localhost under
// captureMode NONE) but not on a VIP or a Sidecar's bind, and passes
// inbound connections from ::6 as well as 127.0.0.6; an IPv4 proxy binds
// one address. As istiod's generator does without ISTIO_DUAL_STACK.
func TestDualStackProxy(t *testing.T) {
	pod := func(name, ns, ips string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + ", labels: {app: " + name + "}}\nspec: {containers: [{name: c, image: x}]}\nstatus: {podIPs: [" + ips + "]}"
	}
	docs := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: local, labels: {istio-injection: enabled}}",
		pod("dual", "app", `{ip: 10.1.0.5}, {ip: "fd00::5"}`),
		pod("v4", "app", `{ip: 10.1.0.4}`),
		pod("lo", "local", `{ip: 10.1.0.6}, {ip: "fd00::6"}`),
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: app}\nspec: {selector: {app: web}, clusterIP: 10.96.0.1, ports: [{port: 80, name: http}, {port: 5432, name: tcp}]}",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: db, namespace: app}\nspec: {hosts: [db.example.com], resolution: DNS, ports: [{number: 7000, name: tcp, protocol: TCP}]}",
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: local}\nspec: {egress: [{port: {number: 7000, name: tcp, protocol: TCP}, bind: 0.0.0.0, hosts: [app/*]}, {captureMode: NONE, hosts: [app/*]}]}",
	}
	extra := func(l *listenerv3.Listener) []string {
		var out []string
		for _, a := range l.GetAdditionalAddresses() {
			out = append(out, a.GetAddress().GetSocketAddress().GetAddress())
		}
		return out
	}
	for _, tc := range []struct {
		proxy, listener string
		want            []string
	}{
		{"app/dual", "0.0.0.0_80", []string{"::"}},
		{"app/dual", "0.0.0.0_7000", []string{"::"}},
		{"app/dual", "10.96.0.1_5432", nil},
		{"app/v4", "0.0.0.0_80", nil},
		{"local/lo", "127.0.0.1_80", []string{"::1"}},
		{"local/lo", "0.0.0.0_7000", nil},
	} {
		l := listenerNamed(compile(t, Options{Format: XDS}, tc.proxy, docs...), tc.listener)
		if l == nil {
			t.Errorf("%s: no listener %s", tc.proxy, tc.listener)
			continue
		}
		if got := extra(l); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: additional addresses %v, want %v", tc.proxy, tc.listener, got, tc.want)
		}
	}
	for _, tc := range []struct {
		proxy string
		want  []string
	}{{"app/dual", []string{"::6"}}, {"app/v4", nil}} {
		var got []string
		for _, a := range clusterNamed(compile(t, Options{Format: XDS}, tc.proxy, docs...), InboundPassthroughCluster).GetUpstreamBindConfig().GetExtraSourceAddresses() {
			got = append(got, a.GetAddress().GetAddress())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: InboundPassthroughCluster extra sources %v, want %v", tc.proxy, got, tc.want)
		}
	}
}

// TestIPFamilyPerProxy: proxies of one scope built by one Emitter each
// get their own family's configuration: a dual-stack Service's VIP of the
// proxy's family among a vhost's domains and as a TCP port's listener
// address (a dual-stack proxy's: of the first cluster IP's family), names resolved to IPv6 on an IPv6-only
// proxy, the other family's wildcard on a dual-stack one only. As
// istiod's generator does without ISTIO_DUAL_STACK.
func TestIPFamilyPerProxy(t *testing.T) {
	pod := func(name, ips string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: app, labels: {app: " + name + "}}\nspec: {containers: [{name: c, image: x}]}\nstatus: {podIPs: [" + ips + "]}"
	}
	m := resolveDocs(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {istio-injection: enabled}}",
		pod("dual", `{ip: 10.1.0.5}, {ip: "fd00::5"}`), pod("v4", `{ip: 10.1.0.4}`), pod("v6", `{ip: "fd00::6"}`),
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: app}\nspec: {selector: {app: a}, clusterIP: 10.96.0.1, clusterIPs: [10.96.0.1, \"fd00:96::1\"], ports: [{port: 80, name: http}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: b, namespace: app}\nspec: {selector: {app: b}, clusterIP: \"fd00:96::2\", clusterIPs: [\"fd00:96::2\", 10.96.0.2], ports: [{port: 8000, name: http}, {port: 6379, name: tcp}]}",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: db, namespace: app}\nspec: {hosts: [db.example.com], resolution: DNS, ports: [{number: 5432, name: tcp, protocol: TCP}]}",
	)
	e := New(m, Options{Format: XDS})
	for _, tc := range []struct {
		proxy, vipA, vipB, tcp string
		family                 clusterv3.Cluster_DnsLookupFamily
		extra                  int
	}{
		{"dual", "10.96.0.1", "[fd00:96::2]", "fd00:96::2_6379", clusterv3.Cluster_V4_ONLY, 1},
		{"v4", "10.96.0.1", "10.96.0.2", "10.96.0.2_6379", clusterv3.Cluster_V4_ONLY, 0},
		{"v6", "[fd00:96::1]", "[fd00:96::2]", "fd00:96::2_6379", clusterv3.Cluster_V6_ONLY, 0},
	} {
		v, ok := m.View("app", tc.proxy)
		if !ok {
			t.Fatalf("no proxy %s", tc.proxy)
		}
		cfg := e.Build(v)
		for route, vip := range map[string]string{"80": tc.vipA, "8000": tc.vipB} {
			var vips []string
			for _, d := range routeNamed(cfg, route).GetVirtualHosts()[0].GetDomains() {
				if _, err := netip.ParseAddr(strings.Trim(d, "[]")); err == nil {
					vips = append(vips, d)
				}
			}
			if !slices.Equal(vips, []string{vip}) {
				t.Errorf("%s route %s: VIP domains %v, want [%s]", tc.proxy, route, vips, vip)
			}
		}
		if listenerNamed(cfg, tc.tcp) == nil {
			t.Errorf("%s: no listener %s on the VIP of its family", tc.proxy, tc.tcp)
		}
		if f := clusterNamed(cfg, "outbound|5432||db.example.com").GetDnsLookupFamily(); f != tc.family {
			t.Errorf("%s: DNS lookup family %v, want %v", tc.proxy, f, tc.family)
		}
		for _, l := range cfg.Listeners {
			if strings.HasSuffix(l.GetName(), "_80") {
				if n := len(l.GetAdditionalAddresses()); n != tc.extra {
					t.Errorf("%s %s: %d additional addresses, want %d", tc.proxy, l.GetName(), n, tc.extra)
				}
			}
		}
	}
}

// TestDualStackHeadlessSelf: a dual-stack pod behind a headless Service
// gets no listener on its first address but one on its second, as
// istiod compares endpoints with the proxy's first address only.
func TestDualStackHeadlessSelf(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "app/db",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: app, labels: {app: db}}\nspec: {containers: [{name: c, image: x, ports: [{containerPort: 5432}]}]}\nstatus: {podIPs: [{ip: 10.1.0.5}, {ip: \"fd00::5\"}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: app}\nspec: {clusterIP: None, selector: {app: db}, ports: [{port: 5432, name: tcp}]}",
	)
	if listenerNamed(cfg, "10.1.0.5_5432") != nil || listenerNamed(cfg, "fd00::5_5432") == nil {
		var names []string
		for _, l := range cfg.Listeners {
			names = append(names, l.GetName())
		}
		t.Errorf("listeners %v: want fd00::5_5432 and not 10.1.0.5_5432", names)
	}
}
