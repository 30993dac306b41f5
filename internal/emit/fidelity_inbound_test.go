package emit

import (
	"slices"
	"testing"
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
