package xds

import (
	"cmp"
	"context"
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/envoycfg"
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
	for _, dir := range []string{bookinfoDir, generated} {
		checkSubscribedNames(t, dir)
	}
}

func checkSubscribedNames(t *testing.T, dir string) {
	t.Helper()
	r, cs := compileConfigs(t, dir)
	d := newDigester(nil)
	checked := 0
	for i, v := range r.Mesh.Views {
		snap, err := d.snapshot(cs[i])
		if err != nil {
			t.Fatal(err)
		}
		eds, err := subscriptions(messages(cs[i].Clusters()))
		if err != nil {
			t.Fatal(err)
		}
		rds, err := subscriptions(messages(cs[i].Listeners()))
		if err != nil {
			t.Fatal(err)
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
			if !slices.Equal(have, tt.want) {
				t.Errorf("%s: %s in the snapshot %v, subscribed %v", v.Proxy.ID(), typeName(tt.url), have, tt.want)
			}
		}
	}
	if checked == 0 {
		t.Errorf("%s: no proxy has both EDS clusters and RDS listeners: the test checks nothing", dir)
	}
}

// compileConfigs compiles dir and builds every proxy's configuration as
// serve does.
func compileConfigs(t *testing.T, dir string) (*compile.Result, []*envoycfg.Config) {
	t.Helper()
	r, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{dir}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.Configs(context.Background(), r.Mesh.Views, compile.BuildOptions{Format: "xds", Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	return r, cs
}

// subscriptions are the names an Envoy subscribes to once it has
// clusters (their EDS service names) or listeners (the route
// configurations their HTTP connection managers name): sorted, each once.
func subscriptions(ms []proto.Message) ([]string, error) {
	var out []string
	for _, m := range ms {
		switch r := m.(type) {
		case *clusterv3.Cluster:
			if r.GetType() == clusterv3.Cluster_EDS {
				out = append(out, cmp.Or(r.GetEdsClusterConfig().GetServiceName(), r.GetName()))
			}
		case *listenerv3.Listener:
			for _, fc := range append(slices.Clone(r.GetFilterChains()), r.GetDefaultFilterChain()) {
				for _, f := range fc.GetFilters() {
					var hcm hcmv3.HttpConnectionManager
					if !f.GetTypedConfig().MessageIs(&hcm) {
						continue
					}
					if err := f.GetTypedConfig().UnmarshalTo(&hcm); err != nil {
						return nil, err
					}
					if name := hcm.GetRds().GetRouteConfigName(); name != "" {
						out = append(out, name)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
