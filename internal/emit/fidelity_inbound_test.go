package emit

import (
	"fmt"
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
)

// inboundChainPorts are the destination ports of virtualInbound's chains
// and the network filter each port's chains end in.
func inboundChainPorts(cfg *Config) map[uint32][]string {
	out := map[uint32][]string{}
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		p := fc.GetFilterChainMatch().GetDestinationPort().GetValue()
		fs := fc.GetFilters()
		if name := fs[len(fs)-1].GetName(); !slices.Contains(out[p], name) {
			out[p] = append(out[p], name)
		}
	}
	return out
}

// httpInspected says whether virtualInbound's HTTP inspector runs on a
// destination port: it is disabled by port ranges.
func httpInspected(t *testing.T, cfg *Config, port uint32) bool {
	t.Helper()
	for _, lf := range listenerNamed(cfg, "virtualInbound").GetListenerFilters() {
		if lf.GetName() != httpInspector {
			continue
		}
		d := lf.GetFilterDisabled()
		rules := d.GetOrMatch().GetRules()
		if d.GetDestinationPortRange() != nil {
			rules = append(rules, d)
		}
		for _, r := range rules {
			if rg := r.GetDestinationPortRange(); uint32(rg.GetStart()) <= port && port < uint32(rg.GetEnd()) {
				return false
			}
		}
		return true
	}
	return false
}

// TestIssue15Item11UDPInbound: issue 15 item 11, checked against istiod's
// generator. A Service port with protocol UDP still gets its inbound
// cluster and virtualInbound chains, proxied as TCP (mutual TLS, TLS and
// plaintext chains under PERMISSIVE), and HTTP inspection stays off on it.
func TestIssue15Item11UDPInbound(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/server", injectedNs,
		`apiVersion: v1
kind: Pod
metadata: {name: server, namespace: default, labels: {app: server}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 5353, protocol: UDP}, {containerPort: 8080}]}]}
status: {podIP: 10.1.0.9}`,
		`apiVersion: v1
kind: Service
metadata: {name: server, namespace: default}
spec:
  clusterIP: 10.0.0.8
  selector: {app: server}
  ports:
  - {name: dns, port: 53, targetPort: 5353, protocol: UDP}
  - {name: http, port: 8080}`)
	if clusterNamed(cfg, "inbound|5353||") == nil {
		t.Errorf("no cluster inbound|5353||; have %v", names(cfg.Clusters))
	}
	chains := inboundChainPorts(cfg)
	if got := chains[5353]; !slices.Equal(got, []string{tcpProxyName}) {
		t.Errorf("chains of port 5353 end in %v, want only %s", got, tcpProxyName)
	}
	n := 0
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		if fc.GetFilterChainMatch().GetDestinationPort().GetValue() == 5353 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d chains for port 5353, want 3 (mutual TLS, TLS, plaintext)", n)
	}
	if httpInspected(t, cfg, 5353) {
		t.Error("the HTTP inspector runs on port 5353")
	}
	if !httpInspected(t, cfg, 1234) {
		t.Error("the HTTP inspector does not run on other ports")
	}
}

// TestIssue15Item21UDPNamedPorts: issue 15 item 21, checked against
// istiod's generator. A TCP port named "udp-…" (UDP by its name,
// docs/semantics/cases.md Q19) and a kube-dns style port 53 declared for
// UDP and TCP keep their inbound clusters, inbound|9125|| and inbound|53||;
// on 53 the first port, UDP, decides: TCP chains.
func TestIssue15Item21UDPNamedPorts(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/server", injectedNs,
		`apiVersion: v1
kind: Pod
metadata: {name: server, namespace: default, labels: {app: server}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 9125}, {containerPort: 53, protocol: UDP}, {containerPort: 53}]}]}
status: {podIP: 10.1.0.9}`,
		`apiVersion: v1
kind: Service
metadata: {name: server, namespace: default}
spec:
  clusterIP: 10.0.0.8
  selector: {app: server}
  ports:
  - {name: udp-stats, port: 9125}
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}`)
	for _, c := range []string{"inbound|9125||", "inbound|53||"} {
		if clusterNamed(cfg, c) == nil {
			t.Errorf("no cluster %s; have %v", c, names(cfg.Clusters))
		}
	}
	chains := inboundChainPorts(cfg)
	for _, p := range []uint32{9125, 53} {
		if got := chains[p]; !slices.Equal(got, []string{tcpProxyName}) {
			t.Errorf("chains of port %d end in %v, want only %s", p, got, tcpProxyName)
		}
	}
}

// TestIssue15Item12WildcardDefaultEndpoint: issue 15 item 12, checked
// against istiod's generator (docs/semantics/sidecar-scope.md §4.10). A
// Sidecar ingress defaultEndpoint on the wildcard address sends to the
// pod's own IP: a STATIC cluster to it, bound from 127.0.0.6 like the
// original-destination cluster; "[::]" without an IPv6 pod address falls
// back to ::1, a loopback, which needs no bind. A workload template, whose
// pods have no IP in the manifests, gets loopback as istiod's fallback.
func TestIssue15Item12WildcardDefaultEndpoint(t *testing.T) {
	sidecar := `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec:
  ingress:
  - {port: {number: 8080, protocol: HTTP, name: http}, defaultEndpoint: "0.0.0.0:8080"}
  - {port: {number: 9090, protocol: TCP, name: tcp}, defaultEndpoint: "0.0.0.0:9191"}
  - {port: {number: 7070, protocol: TCP, name: tcp2}, defaultEndpoint: "[::]:7070"}`
	deployment := `apiVersion: apps/v1
kind: Deployment
metadata: {name: tmpl, namespace: default}
spec:
  selector: {matchLabels: {app: tmpl}}
  template:
    metadata: {labels: {app: tmpl}}
    spec: {containers: [{name: app, image: x}]}`
	tests := []struct {
		proxy, cluster, addr string
		port                 uint32
		bind                 bool
	}{
		{"default/client", "inbound|8080||", "1.1.1.1", 8080, true},
		{"default/client", "inbound|9090||", "1.1.1.1", 9191, true},
		{"default/client", "inbound|7070||", "::1", 7070, false},
		{"default/tmpl", "inbound|8080||", "127.0.0.1", 8080, false},
	}
	for _, tt := range tests {
		cfg := compile(t, Options{Format: XDS}, tt.proxy, injectedNs, clientPod, deployment, sidecar)
		c := clusterNamed(cfg, tt.cluster)
		if c.GetType() != clusterv3.Cluster_STATIC {
			t.Errorf("%s %s: type %v, want STATIC", tt.proxy, tt.cluster, c.GetType())
			continue
		}
		sa := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		if sa.GetAddress() != tt.addr || sa.GetPortValue() != tt.port {
			t.Errorf("%s %s goes to %s:%d, want %s:%d", tt.proxy, tt.cluster, sa.GetAddress(), sa.GetPortValue(), tt.addr, tt.port)
		}
		if got := c.GetUpstreamBindConfig().GetSourceAddress().GetAddress(); (got == inboundBind) != tt.bind {
			t.Errorf("%s %s: upstream bind %q, want bound from %s: %v", tt.proxy, tt.cluster, got, inboundBind, tt.bind)
		}
		if c.GetLbPolicy() == clusterv3.Cluster_CLUSTER_PROVIDED || c.GetCleanupInterval() != nil {
			t.Errorf("%s %s keeps original-destination settings: %v", tt.proxy, tt.cluster, c)
		}
	}
}

// TestDefaultEndpointLoopback: a Sidecar ingress defaultEndpoint on
// localhost reaches the loopback of the proxy's family, as istiod picks it
// (checked against istiod's generator): an IPv4 proxy (or one without
// addresses) gets 127.0.0.1 for [::1] too, an IPv6-only one ::1 for
// 127.0.0.1 too, a dual-stack one the address named. A host istiod does
// not know (":P") leaves the original destination.
func TestDefaultEndpointLoopback(t *testing.T) {
	sidecar := `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec:
  ingress:
  - {port: {number: 8080, protocol: HTTP, name: http}, defaultEndpoint: "[::1]:8080"}
  - {port: {number: 8081, protocol: HTTP, name: http2}, defaultEndpoint: "127.0.0.1:8081"}
  - {port: {number: 9091, protocol: TCP, name: tcp}, defaultEndpoint: ":9191"}`
	pod := func(name, ips string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: default, labels: {app: ` + name + `}}
spec: {containers: [{name: app, image: x}]}
status: {podIPs: [` + ips + `]}`
	}
	deployment := `apiVersion: apps/v1
kind: Deployment
metadata: {name: tmpl, namespace: default}
spec:
  selector: {matchLabels: {app: tmpl}}
  template:
    metadata: {labels: {app: tmpl}}
    spec: {containers: [{name: app, image: x}]}`
	docs := []string{injectedNs, sidecar, deployment, pod("v4", "{ip: 10.1.0.4}"), pod("v6", `{ip: "fd00::6"}`),
		pod("dual", `{ip: 10.1.0.5}, {ip: "fd00::5"}`)}
	tests := []struct {
		proxy, v6, v4 string // where [::1]:8080 and 127.0.0.1:8081 go
	}{
		{"default/v4", "127.0.0.1", "127.0.0.1"},
		{"default/tmpl", "127.0.0.1", "127.0.0.1"},
		{"default/v6", "::1", "::1"},
		{"default/dual", "::1", "127.0.0.1"},
	}
	for _, tt := range tests {
		cfg := compile(t, Options{Format: XDS}, tt.proxy, docs...)
		for _, want := range []struct {
			cluster, addr string
			port          uint32
		}{{"inbound|8080||", tt.v6, 8080}, {"inbound|8081||", tt.v4, 8081}} {
			c := clusterNamed(cfg, want.cluster)
			sa := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
			if c.GetType() != clusterv3.Cluster_STATIC || sa.GetAddress() != want.addr || sa.GetPortValue() != want.port {
				t.Errorf("%s %s: %v to %s:%d, want STATIC to %s:%d", tt.proxy, want.cluster, c.GetType(), sa.GetAddress(), sa.GetPortValue(), want.addr, want.port)
			}
			if c.GetUpstreamBindConfig() != nil {
				t.Errorf("%s %s: upstream bind %v, want none to loopback", tt.proxy, want.cluster, c.GetUpstreamBindConfig())
			}
		}
		if c := clusterNamed(cfg, "inbound|9091||"); c.GetType() != clusterv3.Cluster_ORIGINAL_DST || c.GetLoadAssignment() != nil {
			t.Errorf("%s inbound|9091||: %v with %v, want ORIGINAL_DST", tt.proxy, c.GetType(), c.GetLoadAssignment())
		}
	}
}

// TestDefaultEndpointUnixBind: a Sidecar ingress defaultEndpoint on a unix
// socket gives a STATIC cluster bound from istiod's inbound source address,
// as every inbound cluster not to loopback is (checked against istiod's
// generator): 127.0.0.6, ::6 on an IPv6-only proxy, and so too for the
// original-destination and wildcard clusters beside it.
func TestDefaultEndpointUnixBind(t *testing.T) {
	sidecar := `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec:
  ingress:
  - {port: {number: 9090, protocol: TCP, name: sock}, defaultEndpoint: "unix:///var/run/app.sock"}
  - {port: {number: 9091, protocol: TCP, name: orig}}
  - {port: {number: 9092, protocol: TCP, name: pod6}, defaultEndpoint: "[::]:9092"}`
	pod := func(name, ips string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: default, labels: {app: ` + name + `}}
spec: {containers: [{name: app, image: x}]}
status: {podIPs: [` + ips + `]}`
	}
	docs := []string{injectedNs, sidecar, pod("v4", "{ip: 10.1.0.4}"), pod("v6", `{ip: "fd00::6"}`),
		pod("dual", `{ip: 10.1.0.5}, {ip: "fd00::5"}`)}
	tests := []struct {
		proxy, sock, orig, pod6 string // the bind of each cluster, "" for none
	}{
		{"default/v4", "127.0.0.6", "127.0.0.6", ""},
		{"default/dual", "127.0.0.6", "127.0.0.6", "127.0.0.6"},
		{"default/v6", "::6", "::6", "::6"},
	}
	for _, tt := range tests {
		cfg := compile(t, Options{Format: XDS}, tt.proxy, docs...)
		if pipe := clusterNamed(cfg, "inbound|9090||").GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetPipe(); pipe.GetPath() != "/var/run/app.sock" {
			t.Errorf("%s inbound|9090|| reaches %v, want the socket", tt.proxy, pipe)
		}
		for cluster, want := range map[string]string{"inbound|9090||": tt.sock, "inbound|9091||": tt.orig, "inbound|9092||": tt.pod6} {
			bc := clusterNamed(cfg, cluster).GetUpstreamBindConfig()
			if got := bc.GetSourceAddress().GetAddress(); got != want || (want != "" && bc.GetSourceAddress().GetPortValue() != 0) || len(bc.GetExtraSourceAddresses()) > 0 {
				t.Errorf("%s %s: upstream bind %v, want %q port 0", tt.proxy, cluster, bc, want)
			}
		}
	}
}

// Two Services select one pod on one port (checked against istiod's
// generator): istiod orders a proxy's services oldest first, then by host
// name, so web-v2.app.svc.cluster.local comes before web.app.svc.cluster.local.
// The first sets the inbound cluster's policy (here: not web's
// DestinationRule) and the route's decorator; the metadata names both.
func TestTwoServicesOnOnePort(t *testing.T) {
	svc := func(name string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: default}\n" +
			"spec: {clusterIP: 10.0.0." + fmt.Sprint(len(name)) + ", selector: {app: web}, ports: [{name: http, port: 80, targetPort: 8080}]}"
	}
	cfg := compile(t, Options{Format: XDS}, "default/web", injectedNs,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, labels: {app: web}}\nspec: {containers: [{name: app, image: x, ports: [{containerPort: 8080}]}]}\nstatus: {podIP: 10.1.0.9}",
		svc("web"), svc("web-v2"),
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: web, namespace: default}\nspec: {host: web, trafficPolicy: {connectionPool: {tcp: {maxConnections: 100}}}}")
	c := clusterNamed(cfg, "inbound|8080||")
	if c == nil {
		t.Fatalf("no cluster inbound|8080||; have %v", names(cfg.Clusters))
	}
	var hosts []string
	for _, v := range c.GetMetadata().GetFilterMetadata()["istio"].GetFields()["services"].GetListValue().GetValues() {
		hosts = append(hosts, v.GetStructValue().GetFields()["host"].GetStringValue())
	}
	if want := []string{"web-v2.default.svc.cluster.local", "web.default.svc.cluster.local"}; !slices.Equal(hosts, want) {
		t.Errorf("services %v, want %v", hosts, want)
	}
	if _, ok := c.GetMetadata().GetFilterMetadata()["istio"].GetFields()["config"]; ok {
		t.Errorf("inbound cluster names a DestinationRule; web-v2, which has none, comes first")
	}
	if got := c.GetCircuitBreakers().GetThresholds()[0].GetMaxConnections().GetValue(); got == 100 {
		t.Errorf("max connections %d: web's DestinationRule applied; web-v2 comes first", got)
	}
}
