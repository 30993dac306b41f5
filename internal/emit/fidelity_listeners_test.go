package emit

import (
	"slices"
	"strconv"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
)

// prefixes are a chain's destination ranges as "addr/len".
func prefixes(fc *listenerv3.FilterChain) []string {
	var out []string
	for _, r := range fc.GetFilterChainMatch().GetPrefixRanges() {
		out = append(out, r.GetAddressPrefix()+"/"+strconv.FormatUint(uint64(r.GetPrefixLen().GetValue()), 10))
	}
	return out
}

// TestIssue15Item4ServiceEntryListenerAddresses: issue 15 item 4, checked
// against istiod's generator (docs/semantics/envoy-output.md §7.4). A
// wildcard-host ServiceEntry with an address listens on that address; a
// CIDR address is no socket address, so its service goes on 0.0.0.0 with
// chains matching the range; an ExternalName Service alone on a Sidecar
// egress port gets no listener.
func TestIssue15Item4ServiceEntryListenerAddresses(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: wild, namespace: default}
spec:
  hosts: ["*.wild.example.com"]
  addresses: [240.240.1.5]
  ports: [{number: 9000, name: tcp, protocol: TCP}]
  resolution: NONE`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: cidr, namespace: default}
spec:
  hosts: [cidr.example.com]
  addresses: [240.241.1.0/24]
  ports: [{number: 9100, name: tcp, protocol: TCP}]
  resolution: NONE`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: cidr2, namespace: default}
spec:
  hosts: [cidr2.example.com]
  addresses: [240.242.1.0/24]
  ports: [{number: 9200, name: tcp, protocol: TCP}, {number: 9443, name: tls, protocol: TLS}, {number: 9500, name: auto}]
  resolution: STATIC
  endpoints: [{address: 1.2.3.4}]`)
	tests := []struct {
		listener string
		// chains are each chain's ranges, "" for none, in order.
		chains []string
		// sni is the SNI names of the first chain.
		sni []string
		// passthrough: unmatched traffic goes to the passthrough chain.
		passthrough bool
	}{
		{"240.240.1.5_9000", []string{""}, nil, false},
		{"0.0.0.0_9100", []string{"240.241.1.0/24"}, nil, true},
		{"0.0.0.0_9200", []string{"240.242.1.0/24"}, nil, true},
		{"0.0.0.0_9443", []string{"240.242.1.0/24"}, []string{"cidr2.example.com"}, true},
		// The HTTP chain of a sniffed port matches no range.
		{"0.0.0.0_9500", []string{"240.242.1.0/24", ""}, nil, true},
	}
	for _, tt := range tests {
		l := listenerNamed(cfg, tt.listener)
		if l == nil {
			t.Errorf("no listener %s; have %v", tt.listener, names(cfg.Listeners))
			continue
		}
		var got []string
		for _, fc := range l.GetFilterChains() {
			got = append(got, slices.Concat(prefixes(fc), []string{""})[0])
		}
		if !slices.Equal(got, tt.chains) {
			t.Errorf("%s: chain ranges %q, want %q", tt.listener, got, tt.chains)
		}
		if sni := l.GetFilterChains()[0].GetFilterChainMatch().GetServerNames(); !slices.Equal(sni, tt.sni) {
			t.Errorf("%s: SNI %q, want %q", tt.listener, sni, tt.sni)
		}
		if tt.passthrough != (l.GetDefaultFilterChain().GetName() == passthroughFCN) {
			t.Errorf("%s: default chain %q, passthrough wanted: %v", tt.listener, l.GetDefaultFilterChain().GetName(), tt.passthrough)
		}
	}
	for _, l := range cfg.Listeners {
		switch l.GetName() {
		case "0.0.0.0_9000", "240.241.1.0/24_9100", "240.242.1.0/24_9200":
			t.Errorf("listener %s, which istiod does not build", l.GetName())
		}
	}

	cfg = compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: ext, namespace: default}
spec: {type: ExternalName, externalName: db.example.com, ports: [{name: tcp, port: 5432}]}`,
		`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec:
  egress:
  - port: {number: 5432, protocol: TCP, name: tcp}
    hosts: [./ext.default.svc.cluster.local]
  - hosts: [./*]`)
	if l := listenerNamed(cfg, "0.0.0.0_5432"); l != nil {
		t.Errorf("listener 0.0.0.0_5432 for an ExternalName alias; istiod builds none")
	}
}
