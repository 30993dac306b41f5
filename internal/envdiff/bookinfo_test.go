package envdiff

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/envoycfg"
)

// TestBookinfoWeights: moving reviews' weights from 50/50 to 20/80
// changes the two weights of the split in every sidecar, the same way,
// and nothing else; the gateway does not change.
func TestBookinfoWeights(t *testing.T) {
	const src = "../../examples/bookinfo"
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "virtual-services.yaml" {
			edited := strings.Replace(string(data), "subset: v1\n          weight: 50", "subset: v1\n          weight: 20", 1)
			edited = strings.Replace(edited, "subset: v3\n          weight: 50", "subset: v3\n          weight: 80", 1)
			if edited == string(data) {
				t.Fatal("the edit changed nothing")
			}
			data = []byte(edited)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	configs := func(path string) map[string]*envoycfg.Config {
		r, err := compile.Run(ctx, compile.Inputs{Paths: []string{path}}, compile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfgs, err := r.Configs(ctx, r.Mesh.Views, compile.BuildOptions{Format: "xds"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*envoycfg.Config{}
		for i, v := range r.Mesh.Views {
			out[v.Proxy.ID()] = cfgs[i]
		}
		return out
	}
	before, after := configs(src), configs(dir)
	byProxy := map[string][]Change{}
	for id, cfg := range before {
		byProxy[id] = Configs(cfg, after[id])
	}
	groups := GroupChanges(byProxy)
	if len(groups) != 1 {
		t.Fatalf("%d groups: %+v", len(groups), groups)
	}
	if want := []string{"default/details-v1", "default/productpage-v1", "default/ratings-v1", "default/reviews-v1", "default/reviews-v2", "default/reviews-v3"}; !slices.Equal(groups[0].Proxies, want) {
		t.Errorf("proxies %v, want %v", groups[0].Proxies, want)
	}
	var got []string
	for _, c := range groups[0].Changes {
		got = append(got, c.String())
	}
	// The VirtualService's host is reviews on every port, 80 too.
	split := func(port string) string {
		return "~ route " + port + " › reviews.default.svc.cluster.local:" + port + " › route[1] › route.weighted_clusters.clusters"
	}
	if want := []string{split("80") + "[0].weight: 50 → 20", split("80") + "[1].weight: 50 → 80",
		split("9080") + "[0].weight: 50 → 20", split("9080") + "[1].weight: 50 → 80"}; !slices.Equal(got, want) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
