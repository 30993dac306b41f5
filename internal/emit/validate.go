package emit

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// validate runs Envoy's generated validators on every resource (packed
// extension configs were checked when packed) and the checks they cannot
// make: unique names, unique listener addresses, original-destination
// clusters load balanced by the cluster, and every cluster a route or a
// tcp_proxy names emitted (envoy-output.md §3).
func (b *builder) validate() []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	check := func(kind, name string, v validator) {
		if err := v.ValidateAll(); err != nil {
			fail("%s %q: %v", kind, name, err)
		}
	}
	clusters := map[string]bool{}
	for _, c := range b.cfg.Clusters {
		check("cluster", c.GetName(), c)
		if clusters[c.GetName()] {
			fail("cluster %q is emitted twice", c.GetName())
		}
		clusters[c.GetName()] = true
		if (c.GetType() == clusterv3.Cluster_ORIGINAL_DST) != (c.GetLbPolicy() == clusterv3.Cluster_CLUSTER_PROVIDED) {
			fail("cluster %q: an original-destination cluster needs lb_policy CLUSTER_PROVIDED, and only it", c.GetName())
		}
	}
	listeners, addrs := map[string]bool{}, map[string]string{}
	for _, l := range b.cfg.Listeners {
		check("listener", l.GetName(), l)
		if listeners[l.GetName()] {
			fail("listener %q is emitted twice", l.GetName())
		}
		listeners[l.GetName()] = true
		if l.GetBindToPort() != nil && !l.GetBindToPort().GetValue() {
			continue // reached through virtualOutbound, never bound
		}
		sa := l.GetAddress().GetSocketAddress()
		key := fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
		if other, dup := addrs[key]; dup {
			fail("listeners %q and %q both bind %s", other, l.GetName(), key)
		}
		addrs[key] = l.GetName()
	}
	routes := map[string]bool{}
	for _, rc := range b.cfg.Routes {
		check("route configuration", rc.GetName(), rc)
		if routes[rc.GetName()] {
			fail("route configuration %q is emitted twice", rc.GetName())
		}
		routes[rc.GetName()] = true
		for _, target := range routeTargets(rc) {
			if b.expected(target) {
				b.refs[target] = "route configuration " + rc.GetName()
			}
		}
	}
	for name := range b.rdsNames {
		if !routes[name] {
			fail("a listener names route configuration %q, which is not emitted", name)
		}
	}
	for _, cla := range b.cfg.Endpoints {
		check("endpoints", cla.GetClusterName(), cla)
	}
	for _, target := range sortedKeys(b.refs) {
		if !clusters[target] && !b.omitted[target] {
			fail("%s sends traffic to cluster %q, which is not emitted", b.refs[target], target)
		}
	}
	return out
}

// expected says whether a route's target cluster must exist: its host is
// in the proxy's scope with that port. Routes to other hosts are lint's
// MC5002; routes to a port the service lacks are istiod's own doing (a
// destination without a port takes the listener's, istio.md Q8), which
// Envoy accepts and answers with 503.
func (b *builder) expected(clusterName string) bool {
	s := b.serviceOf(clusterName)
	if s == nil {
		return false
	}
	port, _ := clusterPortSubset(clusterName)
	_, ok := s.PortNumbered(port)
	return ok
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
