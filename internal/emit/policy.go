package emit

import (
	networking "istio.io/api/networking/v1alpha3"
)

// policy is the part of a DestinationRule traffic policy that shapes one
// cluster, after port-level and subset settings are applied.
type policy struct {
	lb      *networking.LoadBalancerSettings
	pool    *networking.ConnectionPoolSettings
	outlier *networking.OutlierDetection
	tls     *networking.ClientTLSSettings
}

// policyFor composes the policy of a cluster for port (istio.md §5.6).
// A port-level entry for the port replaces the rule's policy wholesale:
// what it leaves unset takes defaults, not the rule's values. A subset's
// policy then replaces each section it sets; when it has a port-level
// entry for the port, every section, set or not.
func policyFor(top *networking.TrafficPolicy, subset *networking.Subset, port uint32) policy {
	p, _ := forPort(top, port)
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
	return policy{lb: tp.GetLoadBalancer(), pool: tp.GetConnectionPool(), outlier: tp.GetOutlierDetection(), tls: tp.GetTls()}, false
}
