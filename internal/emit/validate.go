package emit

import (
	"fmt"
	"maps"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/meshc/meshc/internal/resolve"
)

// pgv runs Envoy's generated validators on every resource; the extension
// configs packed inside were checked when packed.
func pgv(cfg *Config) []string {
	var out []string
	check := func(kind, name string, v validator) {
		if err := v.ValidateAll(); err != nil {
			out = append(out, fmt.Sprintf("%s %q: %v", kind, name, err))
		}
	}
	for _, c := range cfg.Clusters {
		check("cluster", c.GetName(), c)
	}
	for _, l := range cfg.Listeners {
		check("listener", l.GetName(), l)
	}
	for _, rc := range cfg.Routes {
		check("route configuration", rc.GetName(), rc)
	}
	for _, cla := range cfg.Endpoints {
		check("endpoints", cla.GetClusterName(), cla)
	}
	return out
}

// crossCheck makes the checks validators cannot (docs/semantics/envoy-output.md §E3):
// unique names, unique bound addresses, original-destination clusters
// load balanced by the cluster, every route configuration a listener names
// emitted, and every cluster a route or a tcp_proxy names emitted.
func (b *builder) crossCheck(cfg *Config) []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	clusters := make(map[string]bool, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		if clusters[c.GetName()] {
			fail("cluster %q is emitted twice", c.GetName())
		}
		clusters[c.GetName()] = true
		if (c.GetType() == clusterv3.Cluster_ORIGINAL_DST) != (c.GetLbPolicy() == clusterv3.Cluster_CLUSTER_PROVIDED) {
			fail("cluster %q: an original-destination cluster needs lb_policy CLUSTER_PROVIDED, and only it", c.GetName())
		}
	}
	listeners, addrs := map[string]bool{}, map[string]string{}
	for _, l := range cfg.Listeners {
		if listeners[l.GetName()] {
			fail("listener %q is emitted twice", l.GetName())
		}
		listeners[l.GetName()] = true
		if l.GetBindToPort() != nil && !l.GetBindToPort().GetValue() {
			continue // reached through virtualOutbound, never bound
		}
		sa := l.GetAddress().GetSocketAddress()
		key := fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
		if pipe := l.GetAddress().GetPipe(); pipe != nil {
			key = "unix://" + pipe.GetPath()
		}
		if other, dup := addrs[key]; dup {
			fail("listeners %q and %q both bind %s", other, l.GetName(), key)
		}
		addrs[key] = l.GetName()
	}
	routes := map[string]bool{}
	refs := maps.Clone(b.refs)
	for _, rc := range cfg.Routes {
		if routes[rc.GetName()] {
			fail("route configuration %q is emitted twice", rc.GetName())
		}
		routes[rc.GetName()] = true
		for _, target := range routeTargets(rc) {
			if b.expected(target) {
				refs[target] = "route configuration " + rc.GetName()
			}
		}
	}
	for _, name := range sortedKeys(b.rdsNames) {
		if !routes[name] {
			fail("a listener names route configuration %q, which is not emitted", name)
		}
	}
	for _, target := range sortedKeys(refs) {
		if !clusters[target] && !b.omitted[target] && !b.outOfScope(target) {
			fail("%s sends traffic to cluster %q, which is not emitted", refs[target], target)
		}
	}
	return out
}

// expected says whether a route's target cluster must exist: its host is
// in the proxy's scope with that port. Routes to other hosts are lint's
// MC5002; routes to a port the service lacks are istiod's own doing (a
// destination without a port takes the listener's, docs/semantics/cases.md Q8), which
// Envoy accepts and answers with 503.
func (b *builder) expected(clusterName string) bool {
	s, id := b.serviceOf(clusterName)
	if s == nil {
		return false
	}
	_, ok := s.PortServing(id.Port)
	return ok
}

// outOfScope says whether an outbound cluster names a host the proxy
// cannot see: a TCP route to it is lint's MC5002, and Envoy accepts a
// tcp_proxy whose cluster is missing (the connection is closed). So too
// for a port the proxy sees its service declare for UDP only: a Sidecar
// egress port trims a service to its first port of the number (UDP 53
// before TCP 53), and istiod still writes the listener, no cluster.
func (b *builder) outOfScope(clusterName string) bool {
	if !strings.HasPrefix(clusterName, "outbound|") {
		return false
	}
	s, id := b.serviceOf(clusterName)
	if s == nil {
		return true
	}
	_, served := s.PortServing(id.Port)
	return !served && s.PortsNumbered(id.Port) > 0
}

// routeTargets are the clusters a route configuration sends to.
func routeTargets(rc *routev3.RouteConfiguration) []string {
	var out []string
	for _, vh := range rc.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			a := r.GetRoute()
			if c := a.GetCluster(); c != "" {
				out = append(out, c)
			}
			for _, wc := range a.GetWeightedClusters().GetClusters() {
				out = append(out, wc.GetName())
			}
			for _, m := range a.GetRequestMirrorPolicies() {
				out = append(out, m.GetCluster())
			}
		}
	}
	return out
}

// serviceOf finds the scope's service a cluster name read back from the
// emitted configuration points at, with the cluster's identity; nil for a
// cluster of no service.
func (b *builder) serviceOf(clusterName string) (*resolve.Service, resolve.ClusterID) {
	id, ok := resolve.ParseClusterID(clusterName)
	if !ok {
		return nil, id
	}
	s, _ := b.view.Scope.Service(id.Host)
	return s, id
}
