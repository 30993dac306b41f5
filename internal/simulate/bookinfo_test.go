package simulate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshc/meshc/internal/compile"
)

// TestBookinfo walks requests through bookinfo's proxies as meshc builds
// them, in both formats: routes by RDS and endpoints apart (xds), or
// inline (bootstrap).
func TestBookinfo(t *testing.T) {
	ctx := context.Background()
	r, err := compile.Run(ctx, compile.Inputs{Paths: []string{"../../examples/bookinfo"}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vip := map[string]string{}
	for _, s := range r.Mesh.Services {
		vip[strings.Split(string(s.Host), ".")[0]] = s.Addresses[0]
	}
	const vsFile = "../../examples/bookinfo/virtual-services.yaml"
	type want struct {
		listener, chain, vhost, route, origin string
		targets                               []string
		stop                                  Stage
	}
	for _, tc := range []struct {
		name, proxy string
		req         Request
		want        want
	}{
		{
			"jason sees reviews v2", "default/productpage-v1",
			Request{Address: vip["reviews"], Port: 9080, Protocol: HTTP, Host: "reviews:9080", Path: "/reviews/0", Headers: map[string]string{"end-user": "jason"}},
			want{"0.0.0.0_9080", "", "reviews.default.svc.cluster.local:9080", "",
				"VirtualService default/reviews spec.http[0] (" + vsFile + ":11)",
				[]string{"outbound|9080|v2|reviews.default.svc.cluster.local 0 DestinationRule default/reviews"}, ""},
		},
		{
			"others split between v1 and v3", "default/productpage-v1",
			Request{Address: vip["reviews"], Port: 9080, Protocol: HTTP, Host: "reviews.default.svc.cluster.local", Path: "/reviews/0"},
			want{"0.0.0.0_9080", "", "reviews.default.svc.cluster.local:9080", "",
				"VirtualService default/reviews spec.http[1] (" + vsFile + ":19)",
				[]string{"outbound|9080|v1|reviews.default.svc.cluster.local 50 DestinationRule default/reviews",
					"outbound|9080|v3|reviews.default.svc.cluster.local 50 DestinationRule default/reviews"}, ""},
		},
		{
			"a service without a VirtualService: its default route", "default/reviews-v1",
			Request{Address: vip["ratings"], Port: 9080, Protocol: HTTP, Host: "ratings:9080", Path: "/ratings/0"},
			want{"0.0.0.0_9080", "", "ratings.default.svc.cluster.local:9080", "default", "",
				[]string{"outbound|9080||ratings.default.svc.cluster.local 0 DestinationRule default/ratings"}, ""},
		},
		{
			"an unknown host passes through", "default/productpage-v1",
			Request{Address: "10.1.2.3", Port: 9080, Protocol: HTTP, Host: "example.com", Path: "/"},
			want{"0.0.0.0_9080", "", "allow_any", "allow_any", "", []string{"PassthroughCluster 0 "}, ""},
		},
		{
			"TCP on an HTTP port: the default chain", "default/productpage-v1",
			Request{Address: vip["ratings"], Port: 9080, Protocol: TCP},
			want{"0.0.0.0_9080", "PassthroughFilterChain", "", "", "", []string{"PassthroughCluster 0 "}, ""},
		},
		{
			"a port no service has", "default/productpage-v1",
			Request{Address: "10.9.9.9", Port: 5555, Protocol: TCP},
			want{"virtualOutbound", "virtualOutbound-catchall-tcp", "", "", "", []string{"PassthroughCluster 0 "}, ""},
		},
		{
			"the outbound capture port itself", "default/productpage-v1",
			Request{Address: "10.9.9.9", Port: 15001, Protocol: TCP},
			want{"virtualOutbound", "virtualOutbound-blackhole", "", "", "", []string{"BlackHoleCluster 0 "}, ""},
		},
		{
			"inbound plain text", "default/reviews-v1",
			Request{Inbound: true, Address: "10.0.0.1", Port: 9080, Protocol: HTTP, Host: "reviews:9080", Path: "/"},
			want{"virtualInbound", "0.0.0.0_9080", "inbound|http|9080", "default", "", []string{"inbound|9080|| 0 DestinationRule default/reviews"}, ""},
		},
		{
			"inbound mutual TLS from a sidecar", "default/reviews-v1",
			Request{Inbound: true, Address: "10.0.0.1", Port: 9080, Protocol: HTTP, TLS: true, MTLS: true, SNI: "outbound_.9080_._.reviews.default.svc.cluster.local",
				ALPN: []string{"istio-http/1.1", "istio", "http/1.1"}, Host: "reviews:9080", Path: "/"},
			want{"virtualInbound", "0.0.0.0_9080", "inbound|http|9080", "default", "", []string{"inbound|9080|| 0 DestinationRule default/reviews"}, ""},
		},
		{
			"through the gateway", "istio-system/istio-ingressgateway",
			Request{Address: "10.0.0.2", Port: 8080, Protocol: HTTP, Host: "bookinfo.example.com", Path: "/productpage"},
			want{"0.0.0.0_8080", "", "*:80", "", "VirtualService default/bookinfo spec.http[0] (" + vsFile + ":40)",
				[]string{"outbound|9080||productpage.default.svc.cluster.local 0 DestinationRule default/productpage"}, ""},
		},
		{
			"a path the gateway does not route", "istio-system/istio-ingressgateway",
			Request{Address: "10.0.0.2", Port: 8080, Protocol: HTTP, Host: "bookinfo.example.com", Path: "/admin"},
			want{"0.0.0.0_8080", "", "*:80", "", "", nil, Route},
		},
		{
			"a port the gateway does not listen on", "istio-system/istio-ingressgateway",
			Request{Address: "10.0.0.2", Port: 9999, Protocol: HTTP, Host: "bookinfo.example.com", Path: "/"},
			want{stop: Listener},
		},
	} {
		for _, format := range []string{"xds", "bootstrap"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				ns, name, _ := strings.Cut(tc.proxy, "/")
				v, err := r.Proxy(ns, name)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := r.Config(ctx, v, compile.BuildOptions{Format: format})
				if err != nil {
					t.Fatal(err)
				}
				tr := Run(cfg, tc.req)
				route, _ := tr.Step(Route)
				origin := ""
				if route.Origin != nil && route.Origin.Rule != "" {
					origin = route.Origin.String()
				}
				var targets []string
				for _, tg := range tr.Targets {
					o := ""
					if tg.Origin != nil {
						o = tg.Origin.Kind + " " + tg.Origin.Namespace + "/" + tg.Origin.Name
					}
					targets = append(targets, fmt.Sprintf("%s %d %s", tg.Cluster, tg.Weight, o))
				}
				got := want{tr.Name(Listener), tr.Name(FilterChain), tr.Name(VirtualHost), tr.Name(Route), origin, targets, tr.StoppedAt}
				if got.listener != tc.want.listener || got.chain != tc.want.chain || got.vhost != tc.want.vhost || got.route != tc.want.route ||
					got.origin != tc.want.origin || !slices.Equal(got.targets, tc.want.targets) || got.stop != tc.want.stop {
					t.Errorf("got  %+v\nwant %+v\n%s", got, tc.want, tr)
				}
			})
		}
	}
}

// TestOriginFromMetadata: without a recorded rule, a route and a filter
// chain still name the object istiod records in their metadata.
func TestOriginFromMetadata(t *testing.T) {
	r := toCluster("c", prefix("/"))
	r.Metadata = configMetadata("/apis/networking.istio.io/v1/namespaces/shop/virtual-service/front")
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{vhost("web", []string{"*"}, r)}}
	tcp := chain("", nil, tcpProxy(t, "c"))
	tcp.Metadata = configMetadata("/apis/networking.istio.io/v1/namespaces/shop/virtual-service/db")
	ls := append(rdsListener(t, "80"), listener("0.0.0.0_5432", "0.0.0.0", 5432, tcp))
	cfg := config(t, ls, []*clusterv3.Cluster{cluster("c", clusterv3.Cluster_EDS)}, []*routev3.RouteConfiguration{rc})
	if st, _ := Run(cfg, get("web", "/")).Step(Route); st.Origin == nil || st.Origin.String() != "VirtualService shop/front" {
		t.Errorf("route origin %+v", st.Origin)
	}
	if st, _ := Run(cfg, Request{Address: "10.0.0.1", Port: 5432, Protocol: TCP}).Step(FilterChain); st.Origin == nil || st.Origin.String() != "VirtualService shop/db" {
		t.Errorf("chain origin %+v", st.Origin)
	}
	if metadataOrigin(configMetadata("not an API path")) != nil {
		t.Error("origin from a malformed path")
	}
}

// BenchmarkRun walks one HTTP request through a bookinfo sidecar.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	r, err := compile.Run(ctx, compile.Inputs{Paths: []string{"../../examples/bookinfo"}}, compile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	v, err := r.Proxy("default", "productpage-v1")
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := r.Config(ctx, v, compile.BuildOptions{Format: "xds"})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Address: "10.0.0.1", Port: 9080, Protocol: HTTP, Host: "reviews:9080", Path: "/reviews/0", Headers: map[string]string{"end-user": "jason"}}
	for b.Loop() {
		if tr := Run(cfg, req); tr.StoppedAt != "" {
			b.Fatal(tr)
		}
	}
}
