package emit

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
)

// TestPolicyFor pins istio.md §5.6: a port-level entry replaces the rule's
// policy wholesale, a subset replaces the sections it sets, and a subset's
// port-level entry replaces every section.
func TestPolicyFor(t *testing.T) {
	random := &networking.LoadBalancerSettings{LbPolicy: &networking.LoadBalancerSettings_Simple{Simple: networking.LoadBalancerSettings_RANDOM}}
	leastReq := &networking.LoadBalancerSettings{LbPolicy: &networking.LoadBalancerSettings_Simple{Simple: networking.LoadBalancerSettings_LEAST_REQUEST}}
	pool := &networking.ConnectionPoolSettings{Tcp: &networking.ConnectionPoolSettings_TCPSettings{MaxConnections: 7}}
	outlier := &networking.OutlierDetection{Consecutive_5XxErrors: nil}
	tls := &networking.ClientTLSSettings{Mode: networking.ClientTLSSettings_SIMPLE}
	top := &networking.TrafficPolicy{
		LoadBalancer: leastReq, ConnectionPool: pool, OutlierDetection: outlier,
		PortLevelSettings: []*networking.TrafficPolicy_PortTrafficPolicy{
			{Port: &networking.PortSelector{Number: 9080}, LoadBalancer: random},
			{Port: &networking.PortSelector{Number: 9080}, Tls: tls}, // a second entry for a port is ignored
		},
	}
	subsetLB := &networking.Subset{Name: "lb", TrafficPolicy: &networking.TrafficPolicy{Tls: tls}}
	subsetPort := &networking.Subset{Name: "port", TrafficPolicy: &networking.TrafficPolicy{
		ConnectionPool:    pool,
		PortLevelSettings: []*networking.TrafficPolicy_PortTrafficPolicy{{Port: &networking.PortSelector{Number: 80}, LoadBalancer: random}},
	}}
	tests := []struct {
		name   string
		subset *networking.Subset
		port   uint32
		want   policy
	}{
		{"rule's own policy", nil, 80, policy{lb: leastReq, pool: pool, outlier: outlier}},
		{"port-level entry replaces it all", nil, 9080, policy{lb: random}},
		{"subset adds a section", subsetLB, 80, policy{lb: leastReq, pool: pool, outlier: outlier, tls: tls}},
		{"subset over a port-level entry", subsetLB, 9080, policy{lb: random, tls: tls}},
		{"subset's port-level entry replaces every section", subsetPort, 80, policy{lb: random}},
		{"subset without an entry for the port", subsetPort, 9080, policy{lb: random, pool: pool}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := policyFor(top, tt.subset, tt.port); got != tt.want {
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
