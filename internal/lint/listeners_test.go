package lint

import (
	"reflect"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestOutboundListenersAgreeWithEmit: what resolve says emit drops and
// what it says takes a wildcard listener whole is what emit builds: a
// dropped port's cluster is on no chain of its listener, the winner's is,
// and a catch-all's cluster is on a chain without a match.
func TestOutboundListenersAgreeWithEmit(t *testing.T) {
	se := func(name, spec string, meta ...string) string {
		return obj("ServiceEntry", "web", name, spec+", location: MESH_EXTERNAL", meta...)
	}
	base := []string{ns("web"), deployment("web", "app", "{app: app}")}
	for _, tc := range []struct {
		name         string
		docs         []string
		drops, catch int
	}{
		{"two address-less TCP entries", append(base,
			se("a", "hosts: [a.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(1)),
			se("b", "hosts: [b.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(2))), 1, 1},
		{"one VIP, two hosts", append(base,
			se("v", "hosts: [c.example.com, d.example.com], addresses: [240.0.0.9], ports: [{number: 3306, name: tcp, protocol: TCP}], resolution: DNS")), 1, 0},
		{"Mongo and TCP on one port", append(base,
			se("m", "hosts: [m.example.com], ports: [{number: 27017, name: mongo, protocol: MONGO}], resolution: DNS", at(1)),
			se("t", "hosts: [t.example.com], ports: [{number: 27017, name: tcp, protocol: TCP}], resolution: DNS", at(2))), 1, 1},
		{"HTTP and a sniffed port join the TCP one", append(base, service("web", "api"),
			se("h", "hosts: [h.example.com], ports: [{number: 80, name: tcp, protocol: TCP}], resolution: DNS")), 0, 1},
		{"a Sidecar port takes the key before the catch-all", append(base,
			obj("Sidecar", "web", "default", "egress: [{port: {number: 5432, protocol: TCP, name: tcp}, hosts: ['./*']}, {hosts: ['*/*']}]"),
			se("a", "hosts: [a.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(1)),
			se("b", "hosts: [b.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(2))), 1, 1},
		{"VIPs bound to localhost share one listener", append(base,
			obj("Sidecar", "web", "default", "egress: [{port: {number: 5432, protocol: TCP, name: tcp}, bind: 127.0.0.1, captureMode: NONE, hosts: ['./*']}]"),
			se("a", "hosts: [a.example.com], addresses: [240.0.0.1], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(1)),
			se("b", "hosts: [b.example.com], addresses: [240.0.0.2], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(2))), 1, 0},
		{"TLS told apart by SNI", append(base,
			se("a", "hosts: [a.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS", at(1)),
			se("b", "hosts: [b.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS", at(2))), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := resolvetest.Mesh(t, tc.docs...)
			v, ok := m.View("web", "app")
			if !ok {
				t.Fatal("no proxy web/app")
			}
			catchAll, drops := v.Scope.OutboundListeners()
			if len(drops) != tc.drops || len(catchAll) != tc.catch {
				t.Fatalf("%d drops, %d catch-alls; want %d, %d", len(drops), len(catchAll), tc.drops, tc.catch)
			}
			listeners := map[string]*listenerv3.Listener{}
			for _, l := range emit.New(m, emit.Options{}).Build(v).Listeners {
				listeners[l.GetName()] = l
			}
			// has says whether a chain of the listener (matching
			// everything, if matchless) sends to the claim's cluster;
			// emit makes a lone matchless chain among others the
			// listener's default chain.
			has := func(name string, c resolve.ListenerClaim, matchless bool) bool {
				cluster := resolve.ClusterName(c.Port, "", c.Service.Host)
				l := listeners[name]
				for _, fc := range append(l.GetFilterChains(), l.GetDefaultFilterChain()) {
					if fc == nil || matchless && proto.Size(fc.GetFilterChainMatch()) > 0 {
						continue
					}
					if js, _ := protojson.Marshal(fc); strings.Contains(string(js), `"`+cluster+`"`) {
						return true
					}
				}
				return false
			}
			for _, d := range drops {
				if has(d.Loser.Listener(), d.Loser, false) || !has(d.Winner.Listener(), d.Winner, false) {
					t.Errorf("emit does not drop %s from %s for %s", d.Loser.Service.Host, d.Loser.Listener(), d.Winner.Service.Host)
				}
			}
			for _, c := range catchAll {
				if !has(c.Listener(), c, true) {
					t.Errorf("emit has no matchless chain to %s on %s", c.Service.Host, c.Listener())
				}
			}
		})
	}
}

// TestScopeListenersShared: scopes that place the same outbound ports
// share one result, which is each one's own OutboundListeners; a scope
// whose ports differ (a Sidecar with a port, a bind, other services, the
// same first service and fewer others) gets its own.
func TestScopeListenersShared(t *testing.T) {
	se := func(ns, name, spec string, meta ...string) string {
		return obj("ServiceEntry", ns, name, spec+", location: MESH_EXTERNAL", meta...)
	}
	var docs []string
	for _, n := range []string{"a", "b", "port", "bind", "own", "some"} {
		docs = append(docs, ns(n), deployment(n, "app", "{app: app}"))
	}
	docs = append(docs,
		se("a", "ex", "hosts: [x.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(1)),
		se("b", "why", "hosts: [y.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(2)),
		se("own", "zed", "hosts: [z.example.com], exportTo: ['.'], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS", at(0)),
		obj("Sidecar", "port", "default", "egress: [{port: {number: 5432, protocol: TCP, name: tcp}, hosts: ['*/*']}]"),
		obj("Sidecar", "bind", "default", "egress: [{port: {number: 5432, protocol: TCP, name: tcp}, bind: 127.0.0.1, hosts: ['*/*']}]"),
		obj("Sidecar", "some", "default", "egress: [{hosts: ['a/*']}]"),
	)
	m := resolvetest.Mesh(t, docs...)
	got := scopeListeners(m.Scopes)
	byNs := map[string]*resolve.Scope{}
	for _, sc := range m.Scopes {
		byNs[sc.Namespace] = sc
		catchAll, drops := sc.OutboundListeners()
		if !reflect.DeepEqual(got[sc].catchAll, catchAll) || !reflect.DeepEqual(got[sc].drops, drops) {
			t.Errorf("scope of %s: shared %+v, own %v %v", sc.Namespace, got[sc], catchAll, drops)
		}
	}
	a := got[byNs["a"]]
	if len(a.catchAll) == 0 || len(a.drops) == 0 {
		t.Fatalf("namespace a has no catch-all or no drop to share: %+v", a)
	}
	for n, want := range map[string]bool{"b": true, "port": false, "bind": false, "own": false, "some": false} {
		o := got[byNs[n]]
		if same := sameArray(o.catchAll, a.catchAll) && sameArray(o.drops, a.drops); same != want {
			t.Errorf("namespace %s shares a's result: %v, want %v", n, same, want)
		}
	}
}

// sameArray reports whether two non-empty slices are one array.
func sameArray[T any](a, b []T) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
