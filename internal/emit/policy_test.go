package emit

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshv1 "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"
)

// TestPolicyFor pins docs/semantics/destination-rules.md §5.6: a port-level entry replaces the rule's
// policy wholesale (retry budget included), the mesh's defaults fill the
// pool and outlier detection left unset, a subset replaces the sections it
// sets, and a subset's port-level entry replaces every section.
func TestPolicyFor(t *testing.T) {
	random := &networking.LoadBalancerSettings{LbPolicy: &networking.LoadBalancerSettings_Simple{Simple: networking.LoadBalancerSettings_RANDOM}}
	leastReq := &networking.LoadBalancerSettings{LbPolicy: &networking.LoadBalancerSettings_Simple{Simple: networking.LoadBalancerSettings_LEAST_REQUEST}}
	pool := &networking.ConnectionPoolSettings{Tcp: &networking.ConnectionPoolSettings_TCPSettings{MaxConnections: 7}}
	outlier := &networking.OutlierDetection{Consecutive_5XxErrors: nil}
	tls := &networking.ClientTLSSettings{Mode: networking.ClientTLSSettings_SIMPLE}
	budget := &networking.TrafficPolicy_RetryBudget{MinRetryConcurrency: 5}
	meshPool := &networking.ConnectionPoolSettings{Tcp: &networking.ConnectionPoolSettings_TCPSettings{MaxConnections: 99}}
	meshOutlier := &networking.OutlierDetection{Interval: nil, MinHealthPercent: 3}
	meshDefault := &meshv1.MeshConfig_DefaultTrafficPolicy{ConnectionPool: meshPool, OutlierDetection: meshOutlier}
	top := &networking.TrafficPolicy{
		LoadBalancer: leastReq, ConnectionPool: pool, OutlierDetection: outlier, RetryBudget: budget,
		PortLevelSettings: []*networking.TrafficPolicy_PortTrafficPolicy{
			{Port: &networking.PortSelector{Number: 9080}, LoadBalancer: random},
			{Port: &networking.PortSelector{Number: 9080}, Tls: tls}, // a second entry for a port is ignored
		},
	}
	subsetLB := &networking.Subset{Name: "lb", TrafficPolicy: &networking.TrafficPolicy{Tls: tls}}
	subsetBudget := &networking.Subset{Name: "budget", TrafficPolicy: &networking.TrafficPolicy{RetryBudget: &networking.TrafficPolicy_RetryBudget{MinRetryConcurrency: 1}}}
	subsetPort := &networking.Subset{Name: "port", TrafficPolicy: &networking.TrafficPolicy{
		ConnectionPool:    pool,
		RetryBudget:       budget,
		PortLevelSettings: []*networking.TrafficPolicy_PortTrafficPolicy{{Port: &networking.PortSelector{Number: 80}, LoadBalancer: random}},
	}}
	tests := []struct {
		name   string
		top    *networking.TrafficPolicy
		subset *networking.Subset
		port   uint32
		mesh   *meshv1.MeshConfig_DefaultTrafficPolicy
		want   policy
	}{
		{"rule's own policy", top, nil, 80, nil, policy{lb: leastReq, pool: pool, outlier: outlier, budget: budget}},
		{"port-level entry replaces it all", top, nil, 9080, nil, policy{lb: random}},
		{"mesh defaults under a port-level entry", top, nil, 9080, meshDefault, policy{lb: random, pool: meshPool, outlier: meshOutlier}},
		{"mesh defaults never over the rule's", top, nil, 80, meshDefault, policy{lb: leastReq, pool: pool, outlier: outlier, budget: budget}},
		{"mesh defaults without a rule", nil, nil, 80, meshDefault, policy{pool: meshPool, outlier: meshOutlier}},
		{"subset adds a section", top, subsetLB, 80, nil, policy{lb: leastReq, pool: pool, outlier: outlier, tls: tls, budget: budget}},
		{"subset over a port-level entry", top, subsetLB, 9080, nil, policy{lb: random, tls: tls}},
		{"subset's retry budget", top, subsetBudget, 80, nil, policy{lb: leastReq, pool: pool, outlier: outlier, budget: subsetBudget.TrafficPolicy.RetryBudget}},
		{"subset's port-level entry replaces every section", top, subsetPort, 80, meshDefault, policy{lb: random, budget: budget}},
		{"subset's retry budget beside its port-level entry", nil, subsetPort, 80, nil, policy{lb: random, budget: budget}},
		{"subset without an entry for the port", top, subsetPort, 9080, nil, policy{lb: random, pool: pool, budget: budget}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := policyFor(tt.top, tt.subset, tt.port, tt.mesh); got != tt.want {
				t.Errorf("policy = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestOutlierDetection: each check is set, and enforced, only when the
// rule names it; local-origin failures only when split out.
func TestOutlierDetection(t *testing.T) {
	u := wrapperspb.UInt32
	tests := []struct {
		name string
		in   *networking.OutlierDetection
		want *clusterv3.OutlierDetection
	}{
		{"gateway errors only", &networking.OutlierDetection{ConsecutiveGatewayErrors: u(3)},
			&clusterv3.OutlierDetection{EnforcingSuccessRate: u(0), ConsecutiveGatewayFailure: u(3), EnforcingConsecutiveGatewayFailure: u(100)}},
		{"5xx off", &networking.OutlierDetection{Consecutive_5XxErrors: u(0), MaxEjectionPercent: 50},
			&clusterv3.OutlierDetection{EnforcingSuccessRate: u(0), Consecutive_5Xx: u(0), EnforcingConsecutive_5Xx: u(0), MaxEjectionPercent: u(50)}},
		{"local origin not split", &networking.OutlierDetection{ConsecutiveLocalOriginFailures: u(2)},
			&clusterv3.OutlierDetection{EnforcingSuccessRate: u(0)}},
		{"local origin split", &networking.OutlierDetection{SplitExternalLocalOriginErrors: true, ConsecutiveLocalOriginFailures: u(2)},
			&clusterv3.OutlierDetection{EnforcingSuccessRate: u(0), SplitExternalLocalOriginErrors: true, ConsecutiveLocalOriginFailure: u(2),
				EnforcingConsecutiveLocalOriginFailure: u(100), EnforcingLocalOriginSuccessRate: u(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outlierDetection(tt.in); !proto.Equal(got, tt.want) {
				t.Errorf("outlier detection = %v, want %v", got, tt.want)
			}
		})
	}
}
