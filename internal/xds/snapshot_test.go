package xds

import (
	"path/filepath"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/envoycfg"
)

var bookinfoDir = filepath.Join("..", "..", "examples", "bookinfo")

// Versions are content hashes, equal across compiles; proxies of one
// scope share their routes and endpoints, not their listeners.
func TestSnapshotVersionsAndSharing(t *testing.T) {
	snaps := func() map[string]*snapshot {
		r, cs := compileConfigs(t, bookinfoDir)
		d, out := newDigester(nil), map[string]*snapshot{}
		for i, v := range r.Mesh.Views {
			var err error
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
	// Shared: the very same resources, not copies.
	first0 := func(s *snapshot, url string) proto.Message {
		return s.list(typeIndex(url))[0]
	}
	for _, url := range []string{resource.RouteType, resource.EndpointType} {
		if pp.GetVersion(url) != details.GetVersion(url) || first0(pp, url) != first0(details, url) {
			t.Errorf("%s: productpage and details do not share their resources", typeName(url))
		}
	}
	if pp.GetVersion(resource.ListenerType) == details.GetVersion(resource.ListenerType) {
		t.Errorf("productpage and details have the same listener version; their inbound listeners differ")
	}
}

// A snapshot answers the cache as go-control-plane's own snapshot of the
// same resources would: the same resources by name for every type, and a
// version for each of them.
func TestSnapshotReadsAsCacheSnapshot(t *testing.T) {
	r, cs := compileConfigs(t, bookinfoDir)
	d := newDigester(nil)
	for i, v := range r.Mesh.Views {
		ours, err := d.snapshot(cs[i])
		if err != nil {
			t.Fatal(err)
		}
		byType := map[string][]types.Resource{}
		for _, m := range cs[i].Resources() {
			k, _ := envoycfg.KeyOf(m)
			for _, tu := range typeURLs {
				if tu.name == k.Type {
					byType[tu.url] = append(byType[tu.url], m)
				}
			}
		}
		theirs, err := cache.NewSnapshot("1", byType)
		if err != nil {
			t.Fatal(err)
		}
		for _, tu := range typeURLs {
			got, want := ours.GetResourcesAndTTL(tu.url), theirs.GetResourcesAndTTL(tu.url)
			if len(got) != len(want) || len(want) != len(byType[tu.url]) {
				t.Errorf("%s %s: %d resources, want %d", v.Proxy.ID(), tu.name, len(got), len(want))
			}
			for name, w := range want {
				if got[name].Resource != w.Resource || ours.GetResources(tu.url)[name] != w.Resource || ours.GetVersionMap(tu.url)[name] == "" {
					t.Errorf("%s %s %s: not the same resource, or no version", v.Proxy.ID(), tu.name, name)
				}
			}
		}
		if ours.GetResources("type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig") != nil {
			t.Errorf("%s: resources of a type not served", v.Proxy.ID())
		}
	}
}
