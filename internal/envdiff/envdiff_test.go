package envdiff

import (
	"slices"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshc/meshc/internal/envoycfg"
)

const reviews = "reviews.default.svc.cluster.local"

// base is a small proxy: a listener with an HTTP connection manager, two
// clusters with metadata, and a route configuration whose reviews vhost
// splits its second route between v1 and v3.
func base() (ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) {
	hcm, _ := anypb.New(&hcmv3.HttpConnectionManager{StatPrefix: "outbound_0.0.0.0_9080", RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{RouteConfigName: "9080"}}})
	ls = []*listenerv3.Listener{{Name: "0.0.0.0_9080", FilterChains: []*listenerv3.FilterChain{{
		Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}},
	}}}}
	md := func() *corev3.Metadata {
		return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
			"istio":    {Fields: map[string]*structpb.Value{"config": structpb.NewStringValue("/apis/networking.istio.io/v1/namespaces/default/destination-rule/reviews"), "subset": structpb.NewStringValue("v1")}},
			"envoy.lb": {Fields: map[string]*structpb.Value{"x": structpb.NewBoolValue(true)}},
		}}
	}
	cs = []*clusterv3.Cluster{
		{Name: "outbound|9080|v1|" + reviews, Metadata: md()},
		{Name: "outbound|9080|v3|" + reviews, Metadata: md()},
	}
	split := func(w1, w3 uint32) *routev3.Route_Route {
		return &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{
			Clusters: []*routev3.WeightedCluster_ClusterWeight{
				{Name: "outbound|9080|v1|" + reviews, Weight: wrapperspb.UInt32(w1)},
				{Name: "outbound|9080|v3|" + reviews, Weight: wrapperspb.UInt32(w3)},
			}}}}}
	}
	rs = []*routev3.RouteConfiguration{{Name: "9080", VirtualHosts: []*routev3.VirtualHost{
		{Name: "ratings.default.svc.cluster.local:9080", Domains: []string{"ratings"}},
		{Name: reviews + ":9080", Domains: []string{"reviews"}, Routes: []*routev3.Route{
			{Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/v1"}}, Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "outbound|9080|v1|" + reviews}}}},
			{Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}, Action: split(50, 50)},
		}},
	}}}
	return ls, cs, rs
}

func config(t *testing.T, ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) *envoycfg.Config {
	t.Helper()
	c, err := envoycfg.New(ls, cs, rs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration)
		want []string
	}{
		{"unchanged", nil, nil},
		{
			"changed weight",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				wc := rs[0].VirtualHosts[1].Routes[1].GetRoute().GetWeightedClusters().Clusters
				wc[0].Weight, wc[1].Weight = wrapperspb.UInt32(20), wrapperspb.UInt32(80)
				return ls, cs, rs
			},
			[]string{
				"~ route 9080 › " + reviews + ":9080 › route[1] › route.weighted_clusters.clusters[0].weight: 50 → 20",
				"~ route 9080 › " + reviews + ":9080 › route[1] › route.weighted_clusters.clusters[1].weight: 50 → 80",
			},
		},
		{
			"added and removed cluster",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				return ls, append(cs[1:], &clusterv3.Cluster{Name: "outbound|80||pay.shop.svc.cluster.local"}), rs
			},
			[]string{
				"+ cluster outbound|80||pay.shop.svc.cluster.local",
				"- cluster outbound|9080|v1|" + reviews,
			},
		},
		{
			// Unnamed routes pair by position: a swap changes both.
			"reordered routes",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				r := rs[0].VirtualHosts[1].Routes
				r[0], r[1] = r[1], r[0]
				return ls, cs, rs
			},
			[]string{
				`~ route 9080 › ` + reviews + `:9080 › route[0] › match.prefix: /v1 → /`,
				`- route 9080 › ` + reviews + `:9080 › route[0] › route.cluster: outbound|9080|v1|` + reviews,
				`+ route 9080 › ` + reviews + `:9080 › route[0] › route.weighted_clusters: {"clusters":[{"name":"outbound|9080|v1|` + reviews + `","weight":50},{"name":"outbound|9080|v3|` + reviews + `","weight":50}]}`,
				`~ route 9080 › ` + reviews + `:9080 › route[1] › match.prefix: / → /v1`,
				`+ route 9080 › ` + reviews + `:9080 › route[1] › route.cluster: outbound|9080|v1|` + reviews,
				`- route 9080 › ` + reviews + `:9080 › route[1] › route.weighted_clusters: {"clusters":[{"name":"outbound|9080|v1|` + reviews + `","weight":50},{"name":"outbound|9080|v3|` + reviews + `","weight":50}]}`,
			},
		},
		{
			// Named routes pair by name: a swap is one reorder.
			"reordered named routes",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				r := rs[0].VirtualHosts[1].Routes
				r[0].Name, r[1].Name = "v1-only", "split"
				return ls, cs, rs
			},
			nil, // compared against the same names below
		},
		{
			"reordered virtual hosts",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				v := rs[0].VirtualHosts
				v[0], v[1] = v[1], v[0]
				return ls, cs, rs
			},
			[]string{"~ route 9080 › virtual_hosts order: ratings.default.svc.cluster.local:9080, " + reviews + ":9080 → " + reviews + ":9080, ratings.default.svc.cluster.local:9080"},
		},
		{
			// Maps are compared by key: rebuilding one in another
			// insertion order is no change.
			"map order only",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				for _, c := range cs {
					fm := c.Metadata.FilterMetadata
					c.Metadata.FilterMetadata = map[string]*structpb.Struct{"envoy.lb": fm["envoy.lb"]}
					c.Metadata.FilterMetadata["istio"] = fm["istio"]
				}
				return ls, cs, rs
			},
			nil,
		},
		{
			"map value",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				cs[0].Metadata.FilterMetadata["istio"].Fields["subset"] = structpb.NewStringValue("v2")
				delete(cs[0].Metadata.FilterMetadata, "envoy.lb")
				return ls, cs, rs
			},
			[]string{
				`- cluster outbound|9080|v1|` + reviews + ` › metadata.filter_metadata[envoy.lb]: {"x":true}`,
				`~ cluster outbound|9080|v1|` + reviews + ` › metadata.filter_metadata[istio][subset]: v1 → v2`,
			},
		},
		{
			"field inside an Any",
			func(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration) ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
				hcm, _ := anypb.New(&hcmv3.HttpConnectionManager{StatPrefix: "outbound_0.0.0.0_9080", RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{RouteConfigName: "9081"}}})
				ls[0].FilterChains[0].Filters[0].ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: hcm}
				return ls, cs, rs
			},
			[]string{"~ listener 0.0.0.0_9080 › filter_chains[0] › envoy.filters.network.http_connection_manager › typed_config.rds.route_config_name: 9080 → 9081"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls, cs, rs := base()
			old := config(t, ls, cs, rs)
			ls, cs, rs = base()
			if tc.edit != nil {
				ls, cs, rs = tc.edit(ls, cs, rs)
			}
			newCfg := config(t, ls, cs, rs)
			if tc.name == "reordered named routes" {
				// Name the old routes too, then swap the new ones.
				ls, cs, rs := base()
				r := rs[0].VirtualHosts[1].Routes
				r[0].Name, r[1].Name = "v1-only", "split"
				old = config(t, ls, cs, rs)
				nr := newCfg.Routes()[0].VirtualHosts[1].Routes
				nr[0], nr[1] = nr[1], nr[0]
				tc.want = []string{"~ route 9080 › " + reviews + ":9080 › routes order: v1-only, split → split, v1-only"}
			}
			var got []string
			for _, c := range Configs(old, newCfg) {
				got = append(got, c.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestAnyOfAnotherType: an Any packing another type is one change, the
// type's.
func TestAnyOfAnotherType(t *testing.T) {
	a, _ := anypb.New(&hcmv3.HttpConnectionManager{})
	b, _ := anypb.New(&wrapperspb.StringValue{Value: "x"})
	k := envoycfg.Key{Type: envoycfg.Listener, Name: "l"}
	got := Resources(k, &listenerv3.Filter{Name: "f", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: a}},
		&listenerv3.Filter{Name: "f", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: b}})
	if len(got) != 1 || got[0].Old != a.TypeUrl || got[0].New != b.TypeUrl || got[0].Path.String() != "typed_config" {
		t.Errorf("changes %v", got)
	}
}

func TestGroupChanges(t *testing.T) {
	ls, cs, rs := base()
	old := config(t, ls, cs, rs)
	grown := config(t, ls, append(slices.Clone(cs), &clusterv3.Cluster{Name: "new"}), rs)
	shrunk := config(t, ls, cs[:1], rs)
	groups := GroupChanges(map[string][]Change{
		"a/one":   Configs(old, grown),
		"b/two":   Configs(old, shrunk),
		"a/three": Configs(old, grown),
		"c/same":  Configs(old, old),
	})
	if len(groups) != 2 || !slices.Equal(groups[0].Proxies, []string{"a/one", "a/three"}) || groups[0].Changes[0].String() != "+ cluster new" ||
		!slices.Equal(groups[1].Proxies, []string{"b/two"}) {
		t.Errorf("groups %+v", groups)
	}
}

// TestSharedResourceSkipped: a resource shared by both sides (one
// pointer) is equal without a walk; a clone compares equal too.
func TestSharedResourceSkipped(t *testing.T) {
	_, _, rs := base()
	k := envoycfg.Key{Type: envoycfg.Route, Name: "9080"}
	if got := Resources(k, rs[0], rs[0]); got != nil {
		t.Errorf("same pointer: %v", got)
	}
	if got := Resources(k, rs[0], proto.Clone(rs[0])); got != nil {
		t.Errorf("clone: %v", got)
	}
}

// TestSharedValuesMoved: values the two sides share are no change where
// they stand, in the same place or not, while the resources around them
// are compared by key and reported in key order.
func TestSharedValuesMoved(t *testing.T) {
	ls, cs, rs := base()
	c := func(name string, ms uint32) *clusterv3.Cluster {
		return &clusterv3.Cluster{Name: name, PerConnectionBufferLimitBytes: wrapperspb.UInt32(ms)}
	}
	a, b, d := c("a", 1), c("b", 1), c("d", 1)
	old := config(t, ls, append(slices.Clone(cs), a, b, c("c", 1), d), rs)
	// a and d stay where they were, b moves; c changes and e is new.
	new := config(t, ls, append(slices.Clone(cs), a, c("c", 2), b, d, c("e", 1)), rs)
	want := []string{"~ cluster c › per_connection_buffer_limit_bytes: 1 → 2", "+ cluster e"}
	var got []string
	for _, ch := range Configs(old, new) {
		got = append(got, ch.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
}

// TestOneSide: against no config, every resource is added (or removed).
func TestOneSide(t *testing.T) {
	ls, cs, rs := base()
	cfg := config(t, ls, cs, rs)
	var got []string
	for _, c := range Configs(nil, cfg) {
		got = append(got, c.String())
	}
	want := []string{"+ listener 0.0.0.0_9080", "+ cluster outbound|9080|v1|" + reviews, "+ cluster outbound|9080|v3|" + reviews, "+ route 9080"}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	if cs := Configs(cfg, nil); len(cs) != 4 || cs[0].Kind != Removed {
		t.Errorf("removed: %v", cs)
	}
}

// reweighted is base with the second route's first weight 20.
func reweighted() ([]*listenerv3.Listener, []*clusterv3.Cluster, []*routev3.RouteConfiguration) {
	ls, cs, rs := base()
	rs[0].VirtualHosts[1].Routes[1].GetRoute().GetWeightedClusters().Clusters[0].Weight = wrapperspb.UInt32(20)
	return ls, cs, rs
}

// TestComparer: a comparer shared by many proxies gives each the changes
// Configs gives, walking a shared pair of resources once.
func TestComparer(t *testing.T) {
	ls, cs, rs := base()
	old := config(t, ls, cs, rs)
	ls, cs, rs = reweighted()
	// Two proxies sharing the new resources, one with a cluster of its own.
	a, b := config(t, ls, cs, rs), config(t, ls, append(slices.Clone(cs), &clusterv3.Cluster{Name: "own"}), rs)
	cp := NewComparer()
	for _, cfg := range []*envoycfg.Config{a, b, a} {
		want := Configs(old, cfg)
		if got := cp.Configs(old, cfg); !slices.EqualFunc(got, want, func(x, y Change) bool { return x.String() == y.String() }) {
			t.Errorf("comparer %v, want %v", got, want)
		}
	}
	// The listener, two clusters and the route configuration: each pair
	// once, equal or not; "own" has no pair.
	if len(cp.seen) != 4 {
		t.Errorf("%d pairs remembered, want 4", len(cp.seen))
	}
}

// TestComparerExtended: configs extending shared bases compare as their
// whole resources do, whether their own resources stay apart from the
// other side's base or not.
func TestComparerExtended(t *testing.T) {
	inbound := func(name string, port uint32) *listenerv3.Listener {
		return &listenerv3.Listener{Name: name, Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}}
	}
	oldLs, oldCs, oldRs := base()
	newLs, newCs, newRs := reweighted()
	oldBase, newBase := config(t, oldLs, oldCs, oldRs), config(t, newLs, newCs, newRs)
	extend := func(b *envoycfg.Config, ls ...*listenerv3.Listener) *envoycfg.Config {
		t.Helper()
		c, err := b.Extend(ls, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name     string
		old, new *envoycfg.Config
	}{
		{"own resources apart", extend(oldBase, inbound("in", 1)), extend(newBase, inbound("in", 2))},
		{"an own resource added", extend(oldBase), extend(newBase, inbound("in", 2))},
		// The old proxy's own listener is in the new base: no split.
		{"own resource moved into the base", extend(oldBase, inbound("extra", 1)), extend(config(t, append(slices.Clone(newLs), inbound("extra", 2)), newCs, newRs))},
	}
	cp := NewComparer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ob, _ := tt.old.Split()
			split := ob != nil && len(cp.seen) == 0
			flat := func(c *envoycfg.Config) *envoycfg.Config { return config(t, c.Listeners(), c.Clusters(), c.Routes()) }
			want := lines(Configs(flat(tt.old), flat(tt.new)))
			if got := lines(cp.Configs(tt.old, tt.new)); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if !strings.Contains(want, "weight: 50 → 20") {
				t.Errorf("the shared change is missing:\n%s", want)
			}
			// Compared apart, the own listeners are not remembered: only
			// the bases' listener, clusters and route configuration.
			if split && len(cp.seen) != 4 {
				t.Errorf("%d pairs remembered, want the bases' 4", len(cp.seen))
			}
		})
	}
}

// TestComparerOneBase: configs extending one base, as HEAD's proxies
// extend what they took from BASE's build, differ in their own resources
// alone, and the base is not walked.
func TestComparerOneBase(t *testing.T) {
	ls, cs, rs := base()
	shared := config(t, ls, cs, rs)
	in := func(port uint32) *envoycfg.Config {
		c, err := shared.Extend([]*listenerv3.Listener{{Name: "in", Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cp := NewComparer()
	if got := lines(cp.Configs(in(1), in(2))); got != "~ listener in › address.socket_address.port_value: 1 → 2" {
		t.Errorf("changes %q", got)
	}
	if n := testing.AllocsPerRun(10, func() { cp.Configs(shared, shared) }); n != 0 {
		t.Errorf("comparing a config with itself allocates %v times: it walks the resources", n)
	}
}

// TestComparerSharesChanges: proxies whose own resources are alike on
// both sides get one list of their bases' changes, not a copy each.
func TestComparerSharesChanges(t *testing.T) {
	ls, cs, rs := base()
	oldBase := config(t, ls, cs, rs)
	ls, cs, rs = reweighted()
	newBase := config(t, ls, cs, rs)
	cp := NewComparer()
	var got [][]Change
	for _, name := range []string{"a", "b"} {
		own := []*listenerv3.Listener{{Name: name}}
		old, err := oldBase.Extend(own, nil)
		if err != nil {
			t.Fatal(err)
		}
		new, err := newBase.Extend(own, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cp.Configs(old, new))
	}
	if len(got[0]) == 0 || lines(got[0]) != lines(got[1]) || &got[0][0] != &got[1][0] {
		t.Errorf("changes %q and %q, want one list", lines(got[0]), lines(got[1]))
	}
	if g := GroupChanges(map[string][]Change{"a": got[0], "b": got[1]}); len(g) != 1 || len(g[0].Proxies) != 2 {
		t.Errorf("groups %v", g)
	}
}

func lines(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return strings.Join(out, "\n")
}
