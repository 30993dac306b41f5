package emit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/resolve"
)

// TestReuseIsSound: what a build takes from its caches (virtual hosts
// built for one scope and served to another) equals what it would build
// afresh, for every proxy of bookinfo, of random meshes and of each with
// one of its objects removed (every other one): resources, findings and
// the VirtualService rule of every route.
func TestReuseIsSound(t *testing.T) {
	seeds, every := []int64{1, 2, 3}, 2
	if testing.Short() {
		seeds, every = seeds[:1], 4
	}
	hits := 0
	hits += checkReuse(t, "bookinfo", loadMesh(t, bookinfoObjects(t)))
	hits += checkReuse(t, "rules by namespace and selector", randomMesh(t, rulesByClient))
	for _, seed := range seeds {
		var docs []string
		for _, f := range meshgen.Random(seed) {
			for _, d := range strings.Split(string(f.Data), "\n---\n") {
				if strings.TrimSpace(d) != "" {
					docs = append(docs, d)
				}
			}
		}
		hits += checkReuse(t, fmt.Sprintf("seed %d", seed), randomMesh(t, docs))
		for i := range docs {
			if i%every != 0 {
				continue
			}
			hits += checkReuse(t, fmt.Sprintf("seed %d without document %d", seed, i), randomMesh(t, slices.Delete(slices.Clone(docs), i, i+1)))
		}
	}
	// The caches must serve something, or the test proves nothing.
	if hits == 0 {
		t.Error("no virtual host was taken from the cache")
	}
	t.Logf("%d virtual hosts taken from the cache", hits)
}

// rulesByClient are clients of web.default in namespaces c1 and c2 that
// see the same virtual host for it, and use different DestinationRules:
// c1's own, whose consistent hash the default route carries, and in c1
// one with a workload selector for the pods labelled hashed.
var rulesByClient = []string{injectedNs, webService,
	`apiVersion: v1
kind: Namespace
metadata: {name: c1, labels: {istio-injection: enabled}}`,
	`apiVersion: v1
kind: Namespace
metadata: {name: c2, labels: {istio-injection: enabled}}`,
	`apiVersion: v1
kind: Pod
metadata: {name: a, namespace: c1, labels: {app: a}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 1.1.1.2}`,
	`apiVersion: v1
kind: Pod
metadata: {name: b, namespace: c1, labels: {app: b, hashed: "yes"}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 1.1.1.3}`,
	`apiVersion: v1
kind: Pod
metadata: {name: c, namespace: c2, labels: {app: c}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 1.1.1.4}`,
	`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: c1}
spec: {host: web.default.svc.cluster.local, trafficPolicy: {loadBalancer: {consistentHash: {httpHeaderName: x-c1}}}}`,
	`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web-hashed, namespace: c1}
spec:
  host: web.default.svc.cluster.local
  workloadSelector: {matchLabels: {hashed: "yes"}}
  trafficPolicy: {loadBalancer: {consistentHash: {httpHeaderName: x-hashed}}}`,
}

func randomMesh(t *testing.T, docs []string) *resolve.Mesh {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mesh.yaml"), []byte(strings.Join(docs, "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadMesh(t, loadtest.Dir(t, dir))
}

// checkReuse builds every proxy of m with the caches and without, and
// reports differences; it returns how many virtual hosts were served from
// the cache.
func checkReuse(t *testing.T, name string, m *resolve.Mesh) int {
	t.Helper()
	cached := New(m, Options{Format: XDS})
	cached.Share(NewStore())
	fresh := New(m, Options{Format: XDS})
	fresh.vhosts = nil
	for _, v := range m.Views {
		if d := configDiff(cached.Build(v), fresh.Build(v)); d != "" {
			t.Errorf("%s: proxy %s: %s", name, v.Proxy.ID(), d)
		}
	}
	return int(cached.vhosts.served.Load())
}

// configDiff says how two configurations of a proxy differ, "" when not.
func configDiff(got, want *Config) string {
	for _, l := range []struct {
		what      string
		got, want []proto.Message
	}{
		{"clusters", messages(got.Clusters), messages(want.Clusters)},
		{"listeners", messages(got.Listeners), messages(want.Listeners)},
		{"routes", messages(got.Routes), messages(want.Routes)},
		{"endpoints", messages(got.Endpoints), messages(want.Endpoints)},
	} {
		if len(l.got) != len(l.want) {
			return fmt.Sprintf("%d %s, want %d", len(l.got), l.what, len(l.want))
		}
		for i := range l.got {
			if !proto.Equal(l.got[i], l.want[i]) {
				return fmt.Sprintf("%s[%d] differs:\n%v\nwant\n%v", l.what, i, l.got[i], l.want[i])
			}
		}
	}
	if !slices.Equal(got.Problems, want.Problems) {
		return fmt.Sprintf("problems %q, want %q", got.Problems, want.Problems)
	}
	if g, w := routeOrigins(got), routeOrigins(want); !slices.Equal(g, w) {
		return fmt.Sprintf("route origins %v, want %v", g, w)
	}
	return ""
}

// routeOrigins are the VirtualService rules of a configuration's routes,
// in order (nil for a route of none).
func routeOrigins(cfg *Config) []*resolve.Route {
	var out []*resolve.Route
	for _, rc := range cfg.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				out = append(out, cfg.origins[r])
			}
		}
	}
	return out
}
