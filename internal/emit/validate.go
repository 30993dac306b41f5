package emit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
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
	base := b.checkBase(cfg.Clusters, cfg.Listeners, cfg.Routes, b.refs, b.rdsNames, b.omitted)
	return b.checkOwn(base, nil, nil, nil, nil, nil)
}

// checkState is crossCheck's account of a set of resources: a sidecar's
// part is checked once and each proxy's own resources against it, as
// the part is most of every proxy's configuration (thousands of clusters
// on a large mesh) and was once checked again for every proxy.
type checkState struct {
	clusters, listeners, routes map[string]bool
	// addrs are the bound addresses, each with the last listener binding it.
	addrs map[string]string
	// refs are the clusters sent to, with where: a route configuration
	// over a tcp_proxy.
	refs    map[string]string
	omitted map[string]bool
	// The findings on these resources alone: those of each loop, and the
	// route configurations and clusters named but missing, sorted.
	clusterFails, listenerFails, routeFails []string
	missingRDS, missingRefs                 []string
}

// checkBase checks resources with what their build recorded: the clusters
// tcp_proxy filters name (refs), the route configurations listeners name
// (rds) and the clusters left out on purpose (omitted).
func (b *builder) checkBase(cs []*clusterv3.Cluster, ls []*listenerv3.Listener, rs []*routev3.RouteConfiguration,
	refs map[string]string, rds, omitted map[string]bool) *checkState {
	st := &checkState{clusters: make(map[string]bool, len(cs)), listeners: map[string]bool{}, addrs: map[string]string{},
		routes: map[string]bool{}, refs: maps.Clone(refs), omitted: omitted}
	st.clusterFails = checkClusters(cs, st.clusters, nil)
	st.listenerFails = checkListeners(ls, st.listeners, st.addrs, nil, nil)
	for _, rc := range rs {
		if st.routes[rc.GetName()] {
			st.routeFails = append(st.routeFails, fmt.Sprintf("route configuration %q is emitted twice", rc.GetName()))
		}
		st.routes[rc.GetName()] = true
		for _, target := range routeTargets(rc) {
			if b.expected(target) {
				st.refs[target] = "route configuration " + rc.GetName()
			}
		}
	}
	for _, name := range sortedKeys(rds) {
		if !st.routes[name] {
			st.missingRDS = append(st.missingRDS, name)
		}
	}
	for _, target := range sortedKeys(st.refs) {
		if !st.clusters[target] && !omitted[target] && !b.outOfScope(target) {
			st.missingRefs = append(st.missingRefs, target)
		}
	}
	return st
}

// checkOwn is crossCheck's findings on base's resources followed by a
// proxy's own clusters and listeners (it has no route configurations of
// its own), with what their build recorded; where both name a cluster,
// base says where from, as base's resources lead the configuration.
func (b *builder) checkOwn(base *checkState, cs []*clusterv3.Cluster, ls []*listenerv3.Listener, refs map[string]string, rds, omitted map[string]bool) []string {
	clusters := map[string]bool{}
	out := slices.Concat(base.clusterFails, checkClusters(cs, clusters, base.clusters), base.listenerFails,
		checkListeners(ls, map[string]bool{}, map[string]string{}, base.listeners, base.addrs), base.routeFails)
	missing := slices.Clone(base.missingRDS)
	for name := range rds {
		if !base.routes[name] && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	for _, name := range missing {
		out = append(out, fmt.Sprintf("a listener names route configuration %q, which is not emitted", name))
	}
	type miss struct{ target, where string }
	var refFails []miss
	for _, target := range base.missingRefs {
		if !clusters[target] && !omitted[target] {
			refFails = append(refFails, miss{target, base.refs[target]})
		}
	}
	for target, where := range refs {
		if _, ok := base.refs[target]; ok {
			continue
		}
		if !base.clusters[target] && !clusters[target] && !base.omitted[target] && !omitted[target] && !b.outOfScope(target) {
			refFails = append(refFails, miss{target, where})
		}
	}
	slices.SortFunc(refFails, func(x, y miss) int { return strings.Compare(x.target, y.target) })
	for _, m := range refFails {
		out = append(out, fmt.Sprintf("%s sends traffic to cluster %q, which is not emitted", m.where, m.target))
	}
	return out
}

// checkClusters checks cluster names unique among cs and those of prior,
// adding cs's to seen, and original-destination load balancing.
func checkClusters(cs []*clusterv3.Cluster, seen, prior map[string]bool) []string {
	var out []string
	for _, c := range cs {
		if seen[c.GetName()] || prior[c.GetName()] {
			out = append(out, fmt.Sprintf("cluster %q is emitted twice", c.GetName()))
		}
		seen[c.GetName()] = true
		if (c.GetType() == clusterv3.Cluster_ORIGINAL_DST) != (c.GetLbPolicy() == clusterv3.Cluster_CLUSTER_PROVIDED) {
			out = append(out, fmt.Sprintf("cluster %q: an original-destination cluster needs lb_policy CLUSTER_PROVIDED, and only it", c.GetName()))
		}
	}
	return out
}

// checkListeners checks listener names and bound addresses unique among
// ls and those of prior (names, and addresses with their last listener),
// adding ls's to seen and addrs.
func checkListeners(ls []*listenerv3.Listener, seen map[string]bool, addrs map[string]string, prior map[string]bool, priorAddrs map[string]string) []string {
	var out []string
	for _, l := range ls {
		if seen[l.GetName()] || prior[l.GetName()] {
			out = append(out, fmt.Sprintf("listener %q is emitted twice", l.GetName()))
		}
		seen[l.GetName()] = true
		if l.GetBindToPort() != nil && !l.GetBindToPort().GetValue() {
			continue // reached through virtualOutbound, never bound
		}
		sa := l.GetAddress().GetSocketAddress()
		key := fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
		if pipe := l.GetAddress().GetPipe(); pipe != nil {
			key = "unix://" + pipe.GetPath()
		}
		other, dup := addrs[key]
		if !dup {
			other, dup = priorAddrs[key]
		}
		if dup {
			out = append(out, fmt.Sprintf("listeners %q and %q both bind %s", other, l.GetName(), key))
		}
		addrs[key] = l.GetName()
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
