// Package envoycfg holds one proxy's Envoy configuration in memory: the
// listeners, clusters, route configurations and endpoint assignments of
// its build, in the order the build emits them, found by type and name,
// with the Istio rule each VirtualService route came from. It is what the
// request simulator (internal/simulate) walks and the config differ
// (internal/envdiff) compares, without files in between.
package envoycfg

import (
	"fmt"

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
	Listeners []*listenerv3.Listener
	Clusters  []*clusterv3.Cluster
	Routes    []*routev3.RouteConfiguration
	Endpoints []*endpointv3.ClusterLoadAssignment
	// Problems are the validation failures of the build (MC8002).
	Problems []string

	byKey   map[Key]proto.Message
	origins map[RouteRef]Origin
}

// New indexes resources by key. origins, keyed by the routes of rs,
// give the rules routes came from; routes found nowhere in rs are
// ignored. A second resource with a key already taken is an error: xDS
// would reject it.
func New(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration, eps []*endpointv3.ClusterLoadAssignment,
	origins map[*routev3.Route]Origin) (*Config, error) {
	c := &Config{Listeners: ls, Clusters: cs, Routes: rs, Endpoints: eps, byKey: map[Key]proto.Message{}}
	for _, m := range c.Resources() {
		k, _ := KeyOf(m)
		if _, dup := c.byKey[k]; dup {
			return nil, fmt.Errorf("two resources are %s", k)
		}
		c.byKey[k] = m
	}
	if len(origins) > 0 {
		c.origins = map[RouteRef]Origin{}
		for _, rc := range rs {
			for _, vh := range rc.GetVirtualHosts() {
				for i, r := range vh.GetRoutes() {
					if o, ok := origins[r]; ok {
						c.origins[RouteRef{rc.GetName(), vh.GetName(), i}] = o
					}
				}
			}
		}
	}
	return c, nil
}

// Resources are every resource, listeners first, then clusters, routes
// and endpoints, each type in emitted order.
func (c *Config) Resources() []proto.Message {
	out := make([]proto.Message, 0, len(c.Listeners)+len(c.Clusters)+len(c.Routes)+len(c.Endpoints))
	for _, l := range c.Listeners {
		out = append(out, l)
	}
	for _, cl := range c.Clusters {
		out = append(out, cl)
	}
	for _, r := range c.Routes {
		out = append(out, r)
	}
	for _, e := range c.Endpoints {
		out = append(out, e)
	}
	return out
}

// Get finds a resource by key.
func (c *Config) Get(k Key) (proto.Message, bool) {
	m, ok := c.byKey[k]
	return m, ok
}

// Listener finds a listener by name.
func (c *Config) Listener(name string) *listenerv3.Listener {
	m, _ := c.byKey[Key{Listener, name}].(*listenerv3.Listener)
	return m
}

// Cluster finds a cluster by name.
func (c *Config) Cluster(name string) *clusterv3.Cluster {
	m, _ := c.byKey[Key{Cluster, name}].(*clusterv3.Cluster)
	return m
}

// Route finds a route configuration by name.
func (c *Config) Route(name string) *routev3.RouteConfiguration {
	m, _ := c.byKey[Key{Route, name}].(*routev3.RouteConfiguration)
	return m
}

// EndpointsOf finds a cluster's endpoint assignment, delivered apart from
// it (EDS).
func (c *Config) EndpointsOf(cluster string) *endpointv3.ClusterLoadAssignment {
	m, _ := c.byKey[Key{Endpoints, cluster}].(*endpointv3.ClusterLoadAssignment)
	return m
}

// RouteOrigin is the rule a route came from, when the build recorded one.
func (c *Config) RouteOrigin(r RouteRef) (Origin, bool) {
	o, ok := c.origins[r]
	return o, ok
}
