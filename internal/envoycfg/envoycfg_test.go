package envoycfg

import (
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/model"
)

func TestConfig(t *testing.T) {
	l := &listenerv3.Listener{Name: "0.0.0.0_80"}
	c := &clusterv3.Cluster{Name: "outbound|80||web"}
	r := &routev3.Route{Name: "r"}
	unlisted := &routev3.Route{Name: "elsewhere"}
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{{Name: "web:80", Routes: []*routev3.Route{{Name: "first"}, r}}}}
	e := &endpointv3.ClusterLoadAssignment{ClusterName: "outbound|80||web"}
	vs := &model.ObjectMeta{Kind: "VirtualService", Namespace: "shop", Name: "web"}
	rule := model.Path{}.Key("spec").Key("http").Index(1)
	cfg, err := New([]*listenerv3.Listener{l}, []*clusterv3.Cluster{c}, []*routev3.RouteConfiguration{rc}, []*endpointv3.ClusterLoadAssignment{e},
		map[*routev3.Route]Origin{r: {Object: vs, Path: rule}, unlisted: {Object: vs}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listener(l.Name) != l || cfg.Cluster(c.Name) != c || cfg.Route("80") != rc || cfg.EndpointsOf(c.Name) != e || cfg.Cluster("absent") != nil {
		t.Error("lookup by name")
	}
	if m, ok := cfg.Get(Key{Endpoints, c.Name}); !ok || m != e {
		t.Error("Get endpoints")
	}
	if got := cfg.Resources(); !slices.Equal(got, []proto.Message{l, c, rc, e}) {
		t.Errorf("resources %v", got)
	}
	if o, ok := cfg.RouteOrigin(RouteRef{"80", "web:80", 1}); !ok || o.Ref().Name != "web" || o.Path.String() != "spec.http[1]" {
		t.Errorf("origin %+v %v", o, ok)
	}
	if _, ok := cfg.RouteOrigin(RouteRef{"80", "web:80", 0}); ok {
		t.Error("origin for a route without one")
	}
	if _, err := New(nil, []*clusterv3.Cluster{c, {Name: c.Name}}, nil, nil, nil); err == nil {
		t.Error("two clusters of one name accepted")
	}
	if k, ok := KeyOf(&routev3.Route{}); ok {
		t.Errorf("a route is not a resource, got %v", k)
	}
}

// TestExtend: an extended config finds its base's resources and its own,
// lists them in order, and leaves the base as it was.
func TestExtend(t *testing.T) {
	shared := &clusterv3.Cluster{Name: "outbound|80||web"}
	rc := &routev3.RouteConfiguration{Name: "80"}
	base, err := New(nil, []*clusterv3.Cluster{shared}, []*routev3.RouteConfiguration{rc}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	own := &clusterv3.Cluster{Name: "inbound|80||"}
	vi := &listenerv3.Listener{Name: "virtualInbound"}
	a, err := base.Extend([]*listenerv3.Listener{vi}, []*clusterv3.Cluster{own})
	if err != nil {
		t.Fatal(err)
	}
	b, err := base.Extend(nil, []*clusterv3.Cluster{{Name: "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Cluster(shared.Name) != shared || a.Cluster(own.Name) != own || a.Listener("virtualInbound") != vi || a.Route("80") != rc {
		t.Error("lookups through the base")
	}
	if !slices.Equal(a.Resources(), []proto.Message{vi, shared, own, rc}) || !slices.Equal(b.Clusters(), []*clusterv3.Cluster{shared, b.Clusters()[1]}) || b.Clusters()[1].Name != "other" {
		t.Errorf("resources %v, %v", a.Resources(), b.Clusters())
	}
	if base.Cluster(own.Name) != nil || len(base.Clusters()) != 1 {
		t.Error("extending changed the base")
	}
	if _, err := base.Extend(nil, []*clusterv3.Cluster{{Name: shared.Name}}); err == nil {
		t.Error("a cluster of the base's name accepted")
	}
}

// TestAdd: a config added to one that was extended finds route
// configurations and their origins at every level, and lists resources
// in order: listeners, clusters, routes, endpoints.
func TestAdd(t *testing.T) {
	c := &clusterv3.Cluster{Name: "outbound|80||web"}
	e := &endpointv3.ClusterLoadAssignment{ClusterName: c.Name}
	clusters, err := New(nil, []*clusterv3.Cluster{c}, nil, []*endpointv3.ClusterLoadAssignment{e}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &routev3.Route{Name: "r"}
	rc := &routev3.RouteConfiguration{Name: "80", VirtualHosts: []*routev3.VirtualHost{{Name: "web:80", Routes: []*routev3.Route{r}}}}
	l := &listenerv3.Listener{Name: "0.0.0.0_80"}
	vs := &model.ObjectMeta{Kind: "VirtualService", Namespace: "shop", Name: "web"}
	scope, err := clusters.Add([]*listenerv3.Listener{l}, nil, []*routev3.RouteConfiguration{rc}, map[*routev3.Route]Origin{r: {Object: vs}})
	if err != nil {
		t.Fatal(err)
	}
	own := &clusterv3.Cluster{Name: "inbound|80||"}
	proxy, err := scope.Extend(nil, []*clusterv3.Cluster{own})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(proxy.Resources(), []proto.Message{l, c, own, rc, e}) {
		t.Errorf("resources %v", proxy.Resources())
	}
	if proxy.Route("80") != rc || proxy.EndpointsOf(c.Name) != e || proxy.Listener(l.Name) != l {
		t.Error("lookups through two bases")
	}
	if o, ok := proxy.RouteOrigin(RouteRef{"80", "web:80", 0}); !ok || o.Object != vs {
		t.Errorf("origin %+v %v", o, ok)
	}
	if len(clusters.Routes()) != 0 || clusters.Listener(l.Name) != nil {
		t.Error("adding changed the base")
	}
	if _, err := clusters.Add(nil, nil, []*routev3.RouteConfiguration{rc, {Name: "80"}}, nil); err == nil {
		t.Error("two route configurations of one name accepted")
	}
}
