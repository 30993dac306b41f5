package emit

import (
	"maps"
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
)

// TestCrossCheckByPart: checking a sidecar's part once and each proxy's
// own resources against it finds what checking the whole configuration
// finds, in the same order, whatever the own resources collide with.
func TestCrossCheckByPart(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	v, ok := m.View("default", "productpage-v1")
	if !ok {
		t.Fatal("no productpage-v1")
	}
	e := New(m, Options{Format: XDS})
	p := e.buildPart(v)
	if len(p.clusters) == 0 || len(p.listeners) == 0 || len(p.routes) == 0 {
		t.Fatalf("part too small to test: %d clusters, %d listeners, %d routes", len(p.clusters), len(p.listeners), len(p.routes))
	}
	routeTarget := routeTargets(p.routes[0])[0]
	bound := func(name string, l *listenerv3.Listener) *listenerv3.Listener {
		return &listenerv3.Listener{Name: name, Address: l.GetAddress()}
	}
	addr := func(name, ip string, port uint32) *listenerv3.Listener {
		return &listenerv3.Listener{Name: name, Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
			SocketAddress: &corev3.SocketAddress{Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}}
	}
	origDst := &clusterv3.Cluster{Name: "own-orig", ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST}}
	type own struct {
		clusters  []*clusterv3.Cluster
		listeners []*listenerv3.Listener
		refs      map[string]string
		rds       map[string]bool
		omitted   map[string]bool
	}
	for _, tc := range []struct {
		name string
		// part, when set, changes the part's resources first.
		part func(*part)
		own  own
		// fails says the whole check finds something, so the case tests
		// a finding rather than agreement on none.
		fails bool
	}{
		{name: "none"},
		{name: "own cluster named as a part's", own: own{clusters: []*clusterv3.Cluster{{Name: p.clusters[0].GetName()}}}, fails: true},
		{name: "own clusters named alike", own: own{clusters: []*clusterv3.Cluster{{Name: "a"}, {Name: "a"}}}, fails: true},
		{name: "own original-destination cluster", own: own{clusters: []*clusterv3.Cluster{origDst}}, fails: true},
		{name: "own listener named as a part's", own: own{listeners: []*listenerv3.Listener{addr(p.listeners[0].GetName(), "9.9.9.9", 1)}}, fails: true},
		{name: "own listener binding a part's address", own: own{listeners: []*listenerv3.Listener{bound("own", p.listeners[len(p.listeners)-1])}}, fails: true},
		{name: "own listeners binding alike", own: own{listeners: []*listenerv3.Listener{addr("x", "9.9.9.9", 1), addr("y", "9.9.9.9", 1)}}, fails: true},
		{name: "own ref missing", own: own{refs: map[string]string{"inbound|1||": "tcp_proxy own"}}, fails: true},
		{name: "own ref omitted", own: own{refs: map[string]string{"inbound|1||": "tcp_proxy own"}, omitted: map[string]bool{"inbound|1||": true}}},
		{name: "own ref a route also names", own: own{refs: map[string]string{routeTarget: "tcp_proxy own"}}},
		{name: "own route name missing", own: own{rds: map[string]bool{"own-rds": true, p.routes[0].GetName(): true}}, fails: true},
		{
			name: "part ref missing, own cluster has it",
			part: func(p *part) { p.refs = map[string]string{"inbound|2||": "tcp_proxy part"} },
			own:  own{clusters: []*clusterv3.Cluster{{Name: "inbound|2||"}}},
		},
		{
			name: "part ref missing, own omits it",
			part: func(p *part) {
				p.refs = map[string]string{"inbound|2||": "tcp_proxy part", "inbound|3||": "tcp_proxy part"}
			},
			own:   own{refs: map[string]string{"inbound|2||": "tcp_proxy own"}, omitted: map[string]bool{"inbound|2||": true}},
			fails: true,
		},
		{
			name: "part route target missing",
			part: func(p *part) {
				p.clusters = slices.DeleteFunc(slices.Clone(p.clusters), func(c *clusterv3.Cluster) bool { return c.GetName() == routeTarget })
			},
			own:   own{refs: map[string]string{routeTarget: "tcp_proxy own"}},
			fails: true,
		},
		{
			name:  "part clusters named alike",
			part:  func(p *part) { p.clusters = append(slices.Clone(p.clusters), p.clusters[0]) },
			fails: true,
		},
		{
			name:  "part route name missing",
			part:  func(p *part) { p.rdsNames = map[string]bool{"part-rds": true} },
			own:   own{rds: map[string]bool{"part-rds": true, "own-rds": true}},
			fails: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &part{clusters: p.clusters, listeners: p.listeners, routes: p.routes, refs: p.refs, rdsNames: p.rdsNames, omitted: p.omitted}
			if tc.part != nil {
				tc.part(q)
			}
			b := e.newBuilder(v)
			got := b.checkOwn(q.checked(b), tc.own.clusters, tc.own.listeners, tc.own.refs, tc.own.rds, tc.own.omitted)
			// The whole configuration, as a proxy's was checked before
			// parts were checked apart: the part's refs override the
			// proxy's own.
			whole := e.newBuilder(v)
			maps.Copy(whole.refs, tc.own.refs)
			maps.Copy(whole.refs, q.refs)
			for _, m := range []map[string]bool{q.rdsNames, tc.own.rds} {
				maps.Copy(whole.rdsNames, m)
			}
			for _, m := range []map[string]bool{q.omitted, tc.own.omitted} {
				maps.Copy(whole.omitted, m)
			}
			want := whole.crossCheck(&Config{View: v, Clusters: concat(q.clusters, tc.own.clusters), Listeners: concat(q.listeners, tc.own.listeners), Routes: q.routes})
			if !slices.Equal(got, want) {
				t.Errorf("by part:\n%q\nwhole:\n%q", got, want)
			}
			if tc.fails != (len(want) > 0) {
				t.Errorf("whole check found %q, want findings: %t", want, tc.fails)
			}
		})
	}
}
