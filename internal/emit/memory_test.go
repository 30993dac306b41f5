package emit

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestConfigsHoldWhatBuildBuilds: a configuration built in memory
// (Configs, which leaves a sidecar's lists unjoined) holds every resource
// Build's lists hold, in order, for every bookinfo proxy.
func TestConfigsHoldWhatBuildBuilds(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	cfgs, err := New(m, Options{Format: XDS}).Configs(context.Background(), m.Views)
	if err != nil {
		t.Fatal(err)
	}
	e := New(m, Options{Format: XDS})
	for i, v := range m.Views {
		built := e.Build(v)
		want := slices.Concat(messages(built.Listeners), messages(built.Clusters), messages(built.Routes), messages(built.Endpoints))
		got := cfgs[i].Resources()
		if !slices.EqualFunc(got, want, proto.Equal) {
			t.Errorf("%s: the %d resources in memory are not the %d Build made", v.Proxy.ID(), len(got), len(want))
		}
	}
}
