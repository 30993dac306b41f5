package xds

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/meshc/meshc/internal/compile"
)

// Versions are content hashes, equal across compiles; proxies of one
// scope share their route and endpoint sets, not their listeners.
func TestSnapshotVersionsAndSharing(t *testing.T) {
	snaps := func() map[string]*cache.Snapshot {
		r, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{filepath.Join("..", "..", "examples", "bookinfo")}}, compile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := r.Configs(context.Background(), r.Mesh.Views, compile.BuildOptions{Format: "xds"})
		if err != nil {
			t.Fatal(err)
		}
		d, out := newDigester(), map[string]*cache.Snapshot{}
		for i, v := range r.Mesh.Views {
			if out[v.Proxy.ID()], err = d.snapshot(cs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	first, second := snaps(), snaps()
	for id, s := range first {
		if !sameVersions(s, second[id]) {
			t.Errorf("%s: versions differ between two compiles of the same input", id)
		}
	}
	pp, details := first["default/productpage-v1"], first["default/details-v1"]
	items := func(s *cache.Snapshot, url string) uintptr {
		return reflect.ValueOf(s.GetResourcesAndTTL(url)).Pointer()
	}
	for _, url := range []string{resource.RouteType, resource.EndpointType} {
		if pp.GetVersion(url) != details.GetVersion(url) || items(pp, url) != items(details, url) {
			t.Errorf("%s: productpage and details do not share one set", typeName(url))
		}
	}
	if pp.GetVersion(resource.ListenerType) == details.GetVersion(resource.ListenerType) {
		t.Errorf("productpage and details have the same listener version; their inbound listeners differ")
	}
}
