package resolve

import (
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// What the route analyzers (MC5xxx) read of resolution beyond the route
// model itself.

// CatchAllMatch reports whether an HTTP match takes every request for
// every source: a match of everything as istiod tests it (see
// catchAllMatch) that names no port, gateway, source labels or source
// namespace.
func CatchAllMatch(m *networking.HTTPMatchRequest) bool {
	return catchAllMatch(m) && m.GetPort() == 0 && len(m.GetGateways()) == 0 &&
		len(m.GetSourceLabels()) == 0 && m.GetSourceNamespace() == ""
}

// ExportedTo reports whether the VirtualService is visible to proxies in
// ns (docs/semantics/exportto.md §2.3).
func (vs *VirtualService) ExportedTo(ns string) bool { return vs.exportTo.visibleIn(ns) }

// ImportsVSHost reports whether the listener's egress hosts import host h
// of vs, by the test that imports VirtualServices
// (docs/semantics/sidecar-scope.md §4.7): not excluded, and overlapping an
// entry of vs's namespace or of "*/".
func (l *EgressListener) ImportsVSHost(vs *VirtualService, h host.Name) bool {
	if _, all := l.hosts.importsAll(); all {
		return true
	}
	own, star := l.hosts.byNs[vs.Namespace()], l.hosts.byNs["*"]
	if _, ex := own.excludes(h); ex {
		return false
	}
	if _, ex := star.excludes(h); ex {
		return false
	}
	return own.vsMatches(h) || star.vsMatches(h)
}

// ServerHosts are the hosts of every server of gw that VirtualServices of
// namespace vsNs can bind, as istiod binds them (bindGateways): "./host"
// is the Gateway's namespace, "ns/host" counts only for ns.
func ServerHosts(gw *model.Gateway, vsNs string) []host.Name {
	var out []host.Name
	for _, srv := range gw.Spec.GetServers() {
		out = append(out, host.NamesForNamespace(ownNamespace(srv.GetHosts(), gw.Namespace), vsNs)...)
	}
	return out
}

// Selects reports whether the policy's selector matches labels: a policy
// without one selects every workload of the namespaces it applies to.
func (p *Policy) Selects(labels map[string]string) bool { return LabelsMatch(p.selector, labels) }
