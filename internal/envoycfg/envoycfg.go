// Package envoycfg holds one proxy's Envoy configuration in memory: the
// listeners, clusters, route configurations and endpoint assignments of
// its build, in the order the build emits them, found by type and name,
// with the Istio rule each VirtualService route came from. It is what the
// request simulator (internal/simulate) walks and the config differ
// (internal/envdiff) compares, without files in between.
package envoycfg

import (
	"fmt"
	"maps"
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Type is an xDS resource type, as a person names it.
type Type string

// The resource types, in the order Keys lists them.
const (
	Listener  Type = "listener"
	Cluster   Type = "cluster"
	Route     Type = "route"
	Endpoints Type = "endpoints"
)

// Key identifies a resource within one proxy's configuration: xDS names
// are unique per type.
type Key struct {
	Type Type
	Name string
}

func (k Key) String() string { return string(k.Type) + " " + k.Name }

// KeyOf is a resource's key; ok is false for a message that is not one of
// the four resource types.
func KeyOf(m proto.Message) (Key, bool) {
	switch r := m.(type) {
	case *listenerv3.Listener:
		return Key{Listener, r.GetName()}, true
	case *clusterv3.Cluster:
		return Key{Cluster, r.GetName()}, true
	case *routev3.RouteConfiguration:
		return Key{Route, r.GetName()}, true
	case *endpointv3.ClusterLoadAssignment:
		return Key{Endpoints, r.GetClusterName()}, true
	}
	return Key{}, false
}

// RouteRef places one route: its route configuration, virtual host and
// position in the virtual host's routes.
type RouteRef struct {
	Config, VirtualHost string
	Index               int
}

// Origin is the Istio object, and the field in it, that wrote a resource
// or route: a VirtualService's spec.http[i] for a route.
type Origin struct {
	Object *model.ObjectMeta
	Path   model.Path
}

// Ref is the origin for a report: kind, namespace, name, and the file and
// line of the field (found on demand: it parses the object's source).
func (o Origin) Ref() diag.ObjectRef {
	return o.Object.RefAt(o.Path)
}

// Config is one proxy's Envoy configuration. Resources may be shared with
// other proxies' Configs, as the build shares them: read, never modify.
type Config struct {
	// Problems are the validation failures of the build (MC8002).
	Problems []string

	// The resources of each type, in order: for a config that extends
	// another (Extend), only those added to it, which follow base's.
	listeners []*listenerv3.Listener
	clusters  []*clusterv3.Cluster
	routes    []*routev3.RouteConfiguration
	endpoints []*endpointv3.ClusterLoadAssignment
	// base holds the resources this config shares with others (Extend);
	// byKey indexes only the resources added to it.
	base    *Config
	byKey   map[Key]proto.Message
	origins map[RouteRef]Origin
}

// Listeners are the listeners in emitted order. The list is the config's
// own or, for a config that extends another, made on each call: a
// sidecar extends a base of thousands of resources, and a list of them in
// each of its scope's proxies' configs was most of what a comparison of
// two builds held.
func (c *Config) Listeners() []*listenerv3.Listener {
	return chained(c, func(c *Config) []*listenerv3.Listener { return c.listeners })
}

// Clusters are the clusters in emitted order (made as Listeners are).
func (c *Config) Clusters() []*clusterv3.Cluster {
	return chained(c, func(c *Config) []*clusterv3.Cluster { return c.clusters })
}

// Routes are the route configurations in emitted order (made as
// Listeners are).
func (c *Config) Routes() []*routev3.RouteConfiguration {
	return chained(c, func(c *Config) []*routev3.RouteConfiguration { return c.routes })
}

// Endpoints are the endpoint assignments in emitted order (made as
// Listeners are).
func (c *Config) Endpoints() []*endpointv3.ClusterLoadAssignment {
	return chained(c, func(c *Config) []*endpointv3.ClusterLoadAssignment { return c.endpoints })
}

// chained is the resources of one type of c's bases and c, in order.
func chained[T any](c *Config, own func(*Config) []T) []T {
	if c.base == nil {
		return own(c)
	}
	return concat(chained(c.base, own), own(c))
}

// New indexes resources by key. origins, keyed by the routes of rs,
// give the rules routes came from; routes found nowhere in rs are
// ignored. A second resource with a key already taken is an error: xDS
// would reject it.
func New(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration, eps []*endpointv3.ClusterLoadAssignment,
	origins map[*routev3.Route]Origin) (*Config, error) {
	// Sized up front: a sidecar's part holds thousands of resources, and
	// growing the index to them was a tenth of a diff's CPU time.
	c := &Config{listeners: ls, clusters: cs, routes: rs, endpoints: eps, byKey: make(map[Key]proto.Message, len(ls)+len(cs)+len(rs)+len(eps))}
	for _, m := range c.Resources() {
		k, _ := KeyOf(m)
		if _, dup := c.byKey[k]; dup {
			return nil, fmt.Errorf("two resources are %s", k)
		}
		c.byKey[k] = m
	}
	c.origins = routeOrigins(rs, origins)
	return c, nil
}

// routeOrigins places the origins of the routes of rs; nil for none.
func routeOrigins(rs []*routev3.RouteConfiguration, origins map[*routev3.Route]Origin) map[RouteRef]Origin {
	if len(origins) == 0 {
		return nil
	}
	out := make(map[RouteRef]Origin, len(origins))
	for _, rc := range rs {
		for _, vh := range rc.GetVirtualHosts() {
			for i, r := range vh.GetRoutes() {
				if o, ok := origins[r]; ok {
					out[RouteRef{rc.GetName(), vh.GetName(), i}] = o
				}
			}
		}
	}
	return out
}

// Extend is base's resources followed by more listeners and clusters, as
// a sidecar's own inbound resources follow the outbound ones it shares
// with its scope: base's lists and index are shared, not copied, so many
// proxies extending one base cost little more than their own resources.
func (base *Config) Extend(ls []*listenerv3.Listener, cs []*clusterv3.Cluster) (*Config, error) {
	return base.Add(ls, cs, nil, nil)
}

// Add is Extend with route configurations too, origins giving the rules
// their routes came from (New): as a scope's listeners and routes follow
// the clusters and endpoints that outlive them from compile to compile.
func (base *Config) Add(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration,
	origins map[*routev3.Route]Origin) (*Config, error) {
	c := &Config{
		listeners: ls, clusters: cs, routes: rs,
		Problems: base.Problems, base: base, byKey: make(map[Key]proto.Message, len(ls)+len(cs)+len(rs)),
		origins: routeOrigins(rs, origins),
	}
	for _, m := range slices.Concat(messages(ls), messages(cs), messages(rs)) {
		k, _ := KeyOf(m)
		if _, dup := c.Get(k); dup {
			return nil, fmt.Errorf("two resources are %s", k)
		}
		c.byKey[k] = m
	}
	return c, nil
}

// concat appends without writing into a's spare capacity: a is a
// config's own list, which callers read.
func concat[T any](a, b []T) []T {
	return append(a[:len(a):len(a)], b...)
}

func messages[M proto.Message](ms []M) []proto.Message {
	out := make([]proto.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// Split is the config Extend extended and the resources added to it;
// base is nil, and own every resource, for a config built with New.
func (c *Config) Split() (base *Config, own []proto.Message) {
	if c.base == nil {
		return nil, c.Resources()
	}
	return c.base, slices.Collect(maps.Values(c.byKey))
}

// Resources are every resource, listeners first, then clusters, routes
// and endpoints, each type in emitted order.
func (c *Config) Resources() []proto.Message {
	return slices.Concat(messages(c.Listeners()), messages(c.Clusters()), messages(c.Routes()), messages(c.Endpoints()))
}

// Get finds a resource by key.
func (c *Config) Get(k Key) (proto.Message, bool) {
	for ; c != nil; c = c.base {
		if m, ok := c.byKey[k]; ok {
			return m, true
		}
	}
	return nil, false
}

func get[M proto.Message](c *Config, k Key) M {
	m, _ := c.Get(k)
	r, _ := m.(M)
	return r
}

// Listener finds a listener by name.
func (c *Config) Listener(name string) *listenerv3.Listener {
	return get[*listenerv3.Listener](c, Key{Listener, name})
}

// Cluster finds a cluster by name.
func (c *Config) Cluster(name string) *clusterv3.Cluster {
	return get[*clusterv3.Cluster](c, Key{Cluster, name})
}

// Route finds a route configuration by name.
func (c *Config) Route(name string) *routev3.RouteConfiguration {
	return get[*routev3.RouteConfiguration](c, Key{Route, name})
}

// EndpointsOf finds a cluster's endpoint assignment, delivered apart from
// it (EDS).
func (c *Config) EndpointsOf(cluster string) *endpointv3.ClusterLoadAssignment {
	return get[*endpointv3.ClusterLoadAssignment](c, Key{Endpoints, cluster})
}

// RouteOrigin is the rule a route came from, when the build recorded one.
func (c *Config) RouteOrigin(r RouteRef) (Origin, bool) {
	for ; c != nil; c = c.base {
		if o, ok := c.origins[r]; ok {
			return o, true
		}
	}
	return Origin{}, false
}
