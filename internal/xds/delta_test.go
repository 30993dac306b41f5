package xds

import (
	"context"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Delta ADS sends all clusters first, then only those an edit changed.
func TestDeltaSendsOnlyChanged(t *testing.T) {
	h := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(h.conn()).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: productpageNode}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.ClusterType, ResponseNonce: first.GetNonce()}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the delta ACK in syncz", func() bool {
		ts := h.status(productpageNode).Types["cluster"]
		return ts.Acked != "" && ts.Acked == ts.Sent
	})
	h.edit("destination-rules.yaml", "  host: details\n", "  host: details\n  trafficPolicy:\n    loadBalancer:\n      simple: RANDOM\n")
	next, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(next.GetResources()) == 0 || len(next.GetResources()) >= len(first.GetResources()) || len(next.GetRemovedResources()) > 0 {
		t.Fatalf("delta after one DestinationRule edit: %d resources, %d removed, of %d", len(next.GetResources()), len(next.GetRemovedResources()), len(first.GetResources()))
	}
	for _, r := range next.GetResources() {
		if !strings.Contains(r.GetName(), "details") {
			t.Errorf("delta resent unchanged cluster %s", r.GetName())
		}
		var c clusterv3.Cluster
		if err := r.GetResource().UnmarshalTo(&c); err != nil {
			t.Fatal(err)
		}
		if c.GetLbPolicy() != clusterv3.Cluster_RANDOM {
			t.Errorf("%s: lb policy %s, want RANDOM", c.GetName(), c.GetLbPolicy())
		}
	}
}

// The per-type services serve the same snapshots as ADS.
func TestClusterDiscoveryService(t *testing.T) {
	h := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := clusterservice.NewClusterDiscoveryServiceClient(h.conn()).StreamClusters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: productpageNode}, TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetResources()) != len(h.names(productpageNode, resource.ClusterType)) {
		t.Errorf("CDS sent %d clusters, the snapshot has %d", len(r.GetResources()), len(h.names(productpageNode, resource.ClusterType)))
	}
}
