package xds

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/emit"
)

// TestADSBootstrapsReachServer: the bootstraps build --ads writes pass
// Envoy's validation, point at the server, and a client with each one's
// node id gets from the server the configuration index.json counts.
func TestADSBootstrapsReachServer(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	r, err := compile.Run(ctx, compile.Inputs{Paths: []string{h.dir}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	built, err := r.Write(ctx, r.Mesh.Views, out, compile.BuildOptions{ADS: h.addr})
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(h.addr)
	for _, e := range built.Index {
		data, err := os.ReadFile(filepath.Join(out, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		var b bootstrapv3.Bootstrap
		if err := protojson.Unmarshal(data, &b); err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		if err := b.ValidateAll(); err != nil {
			t.Errorf("%s: %v", e.Path, err)
		}
		var addr string
		for _, c := range b.GetStaticResources().GetClusters() {
			if c.GetName() == emit.XDSCluster {
				sa := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
				addr = net.JoinHostPort(sa.GetAddress(), strconv.Itoa(int(sa.GetPortValue())))
			}
		}
		if addr != net.JoinHostPort(host, port) {
			t.Errorf("%s: %s cluster reaches %q, want the server at %s", e.Path, emit.XDSCluster, addr, h.addr)
		}

		c := h.dial(b.GetNode().GetId())
		got := c.subscribe(h)
		if p := h.status(c.node.Id).Proxy; p != e.Namespace+"/"+e.Name {
			t.Errorf("%s: node %s matched %q", e.Path, c.node.Id, p)
		}
		for typeURL, want := range map[string]int{
			resource.ClusterType: e.Counts.Clusters, resource.ListenerType: e.Counts.Listeners,
			resource.RouteType: e.Counts.Routes, resource.EndpointType: e.Counts.Endpoints,
		} {
			if n := len(got[typeURL].GetResources()); n != want {
				t.Errorf("%s: served %d %s, index.json counts %d", e.Path, n, typeName(typeURL), want)
			}
		}
	}
}
