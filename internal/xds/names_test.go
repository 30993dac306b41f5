package xds

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/meshgen"
)

// In ADS mode the cache answers an EDS or RDS request only when it names
// every resource of that type in the snapshot, so the names an Envoy
// subscribes to (its EDS clusters' endpoints, its listeners' route
// configurations) must be exactly the snapshot's, or its clusters and
// listeners never leave warming.
func TestSnapshotNamesAreWhatEnvoySubscribes(t *testing.T) {
	generated := t.TempDir()
	if _, _, err := meshgen.Write(generated, meshgen.Options{Namespaces: 4, ServicesPerNS: 10, SidecarEveryNth: 2}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join("..", "..", "examples", "bookinfo"), generated} {
		checkSubscribedNames(t, dir)
	}
}

func checkSubscribedNames(t *testing.T, dir string) {
	t.Helper()
	r, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{dir}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.Configs(context.Background(), r.Mesh.Views, compile.BuildOptions{Format: "xds"})
	if err != nil {
		t.Fatal(err)
	}
	d := newDigester()
	checked := 0
	for i, v := range r.Mesh.Views {
		snap, err := d.snapshot(cs[i])
		if err != nil {
			t.Fatal(err)
		}
		var eds, rds []string
		for _, c := range cs[i].Clusters {
			if c.GetType() == clusterv3.Cluster_EDS {
				eds = append(eds, cmp.Or(c.GetEdsClusterConfig().GetServiceName(), c.GetName()))
			}
		}
		for _, l := range cs[i].Listeners {
			rds = append(rds, routeNames(t, l)...)
		}
		if len(eds) > 0 && len(rds) > 0 {
			checked++
		}
		for _, tt := range []struct {
			url  string
			want []string
		}{{resource.EndpointType, eds}, {resource.RouteType, rds}} {
			var have []string
			for name := range snap.GetResources(tt.url) {
				have = append(have, name)
			}
			slices.Sort(have)
			want := slices.Compact(slices.Sorted(slices.Values(tt.want)))
			if !slices.Equal(have, want) {
				t.Errorf("%s: %s in the snapshot %v, subscribed %v", v.Proxy.ID(), typeName(tt.url), have, want)
			}
		}
	}
	if checked == 0 {
		t.Errorf("%s: no proxy has both EDS clusters and RDS listeners: the test checks nothing", dir)
	}
}

// routeNames are the RDS route configurations a listener's HTTP
// connection managers name.
func routeNames(t *testing.T, l *listenerv3.Listener) []string {
	var out []string
	chains := append(slices.Clone(l.GetFilterChains()), l.GetDefaultFilterChain())
	for _, fc := range chains {
		for _, f := range fc.GetFilters() {
			var hcm hcmv3.HttpConnectionManager
			if f.GetTypedConfig().MessageIs(&hcm) {
				if err := f.GetTypedConfig().UnmarshalTo(&hcm); err != nil {
					t.Fatal(err)
				}
				if name := hcm.GetRds().GetRouteConfigName(); name != "" {
					out = append(out, name)
				}
			}
		}
	}
	return out
}
