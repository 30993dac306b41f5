package emit

import (
	meshv1 "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"
)

// policy is the part of a DestinationRule traffic policy that shapes one
// cluster, after port-level and subset settings are applied.
type policy struct {
	lb      *networking.LoadBalancerSettings
	pool    *networking.ConnectionPoolSettings
	outlier *networking.OutlierDetection
	tls     *networking.ClientTLSSettings
	// budget and proxyProtocol are the rule's; a port-level entry has
	// neither.
	budget        *networking.TrafficPolicy_RetryBudget
	proxyProtocol *networking.TrafficPolicy_ProxyProtocol
}

// policyFor composes the policy of a cluster for port (docs/semantics/destination-rules.md §5.6).
// A port-level entry for the port replaces the rule's policy wholesale:
// what it leaves unset takes defaults, not the rule's values. The mesh's
// default connection pool and outlier detection fill what is left unset.
// A subset's policy then replaces each section it sets; when it has a
// port-level entry for the port, the four port-level sections, set or not.
func policyFor(top *networking.TrafficPolicy, subset *networking.Subset, port uint32, meshDefault *meshv1.MeshConfig_DefaultTrafficPolicy) policy {
	p, _ := forPort(top, port)
	if p.pool == nil {
		p.pool = meshDefault.GetConnectionPool()
	}
	if p.outlier == nil {
		p.outlier = meshDefault.GetOutlierDetection()
	}
	if sp := subset.GetTrafficPolicy(); sp != nil {
		sub, portLevel := forPort(sp, port)
		if sub.lb != nil || portLevel {
			p.lb = sub.lb
		}
		if sub.pool != nil || portLevel {
			p.pool = sub.pool
		}
		if sub.outlier != nil || portLevel {
			p.outlier = sub.outlier
		}
		if sub.tls != nil || portLevel {
			p.tls = sub.tls
		}
		// The subset's own retry budget and proxy protocol, even beside
		// a port-level entry.
		if b := sp.GetRetryBudget(); b != nil {
			p.budget = b
		}
		if pp := sp.GetProxyProtocol(); pp != nil {
			p.proxyProtocol = pp
		}
	}
	return p
}

// forPort is a traffic policy's sections for port: those of its first
// port-level entry for the port, if any, else its own.
func forPort(tp *networking.TrafficPolicy, port uint32) (p policy, portLevel bool) {
	for _, ps := range tp.GetPortLevelSettings() {
		if ps.GetPort().GetNumber() == port {
			return policy{lb: ps.GetLoadBalancer(), pool: ps.GetConnectionPool(), outlier: ps.GetOutlierDetection(), tls: ps.GetTls()}, true
		}
	}
	return policy{lb: tp.GetLoadBalancer(), pool: tp.GetConnectionPool(), outlier: tp.GetOutlierDetection(), tls: tp.GetTls(),
		budget: tp.GetRetryBudget(), proxyProtocol: tp.GetProxyProtocol()}, false
}
