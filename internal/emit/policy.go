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

// policyFor composes the policy of a cluster for port (istio.md §5.6): the
// rule's policy, its port-level settings for the port, then the subset's
// policy and the subset's port-level settings. Each later layer replaces a
// whole section (load balancer, pool, outlier detection, TLS), never a
// single field of it.
func policyFor(top *networking.TrafficPolicy, subset *networking.Subset, port uint32) policy {
	var p policy
	p.apply(top, port)
	if subset != nil {
		p.apply(subset.GetTrafficPolicy(), port)
	}
	return p
}

func (p *policy) apply(tp *networking.TrafficPolicy, port uint32) {
	if tp == nil {
		return
	}
	p.set(tp.GetLoadBalancer(), tp.GetConnectionPool(), tp.GetOutlierDetection(), tp.GetTls())
	for _, ps := range tp.GetPortLevelSettings() {
		if ps.GetPort().GetNumber() == port {
			p.set(ps.GetLoadBalancer(), ps.GetConnectionPool(), ps.GetOutlierDetection(), ps.GetTls())
			return // istiod uses the first entry for a port
		}
	}
}

func (p *policy) set(lb *networking.LoadBalancerSettings, pool *networking.ConnectionPoolSettings, od *networking.OutlierDetection, tls *networking.ClientTLSSettings) {
	if lb != nil {
		p.lb = lb
	}
	if pool != nil {
		p.pool = pool
	}
	if od != nil {
		p.outlier = od
	}
	if tls != nil {
		p.tls = tls
	}
}
