package compile

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/meshgen"
)

// TestConfigSetReuseEqualsFullBuild: on random meshes mutated one object
// at a time (a field changed, or the object removed), the configurations
// built reusing the unmutated compile's equal those built from scratch,
// proxy for proxy and byte for byte, in both formats and TLS modes; and
// so do those of rebuilt proxies whose scope's clusters or listeners, or
// whose own resources, were taken from the compile before (emit.Carry).
func TestConfigSetReuseEqualsFullBuild(t *testing.T) {
	ctx := context.Background()
	seeds, mutations := 4, 6
	if testing.Short() {
		seeds, mutations = 2, 4
	}
	var reused, rebuilt int
	var carried emit.Taken
	for seed := range int64(seeds) {
		files := meshgen.Random(seed + 1)
		base := compileFiles(t, files)
		for _, opts := range []BuildOptions{{Format: "xds", Unchecked: true}, {TLS: "off"}} {
			prev, err := base.ConfigSet(ctx, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			for m := range mutations {
				mutated, what := mutate(t, files, r)
				head := compileFiles(t, mutated)
				inc, full := incrementalAndFull(t, head, opts, prev)
				name := fmt.Sprintf("seed %d, %+v, mutation %d (%s)", seed+1, opts.Format, m, what)
				if full.Rebuilt != len(head.Mesh.Views) {
					t.Errorf("%s: a build from scratch built %d of %d proxies", name, full.Rebuilt, len(head.Mesh.Views))
				}
				sameConfigs(t, name, head, inc.Configs, full.Configs)
				reused += len(head.Mesh.Views) - inc.Rebuilt
				rebuilt += inc.Rebuilt
				carried.Clusters += inc.Carried.Clusters
				carried.Listeners += inc.Carried.Listeners
				carried.Own += inc.Carried.Own
			}
		}
	}
	// The comparison means something only if both paths were taken.
	if reused == 0 || rebuilt == 0 || carried.Clusters == 0 || carried.Listeners == 0 || carried.Own == 0 {
		t.Errorf("reused %d and rebuilt %d proxies in all, carried %+v: want some of each", reused, rebuilt, carried)
	}
	t.Logf("reused %d proxies, rebuilt %d, carried %+v", reused, rebuilt, carried)
}

// TestConfigSetUnchangedReusesAll: the same inputs compiled again rebuild
// nothing; other build options rebuild everything.
func TestConfigSetUnchangedReusesAll(t *testing.T) {
	ctx := context.Background()
	files := meshgen.Random(3)
	first, err := compileFiles(t, files).ConfigSet(ctx, BuildOptions{Format: "xds"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again := compileFiles(t, files)
	same, err := again.ConfigSet(ctx, BuildOptions{Format: "xds"}, first)
	if err != nil {
		t.Fatal(err)
	}
	if same.Rebuilt != 0 {
		t.Errorf("unchanged inputs rebuilt %d proxies", same.Rebuilt)
	}
	other, err := again.ConfigSet(ctx, BuildOptions{Format: "xds", TLS: "off"}, first)
	if err != nil {
		t.Fatal(err)
	}
	if other.Rebuilt != len(again.Mesh.Views) {
		t.Errorf("other options rebuilt %d of %d proxies", other.Rebuilt, len(again.Mesh.Views))
	}
}

// incrementalAndFull builds r's configurations reusing prev, and from
// scratch.
func incrementalAndFull(t *testing.T, r *Result, opts BuildOptions, prev *ConfigSet) (inc, full *ConfigSet) {
	t.Helper()
	inc, err := r.ConfigSet(context.Background(), opts, prev)
	if err != nil {
		t.Fatal(err)
	}
	full, err = r.ConfigSet(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return inc, full
}

func compileFiles(t *testing.T, files []meshgen.File) *Result {
	t.Helper()
	dir := t.TempDir()
	if _, err := meshgen.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Inputs{Paths: []string{dir}}, Options{NoAnalyzers: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sameConfigs compares two builds of r's proxies resource by resource.
func sameConfigs(t *testing.T, name string, r *Result, got, want []*envoycfg.Config) {
	t.Helper()
	if len(got) != len(want) || len(got) != len(r.Mesh.Views) {
		t.Fatalf("%s: %d and %d configs for %d proxies", name, len(got), len(want), len(r.Mesh.Views))
	}
	for i, v := range r.Mesh.Views {
		g, w := got[i].Resources(), want[i].Resources()
		if len(g) != len(w) {
			t.Errorf("%s: %s: %d resources, built from scratch %d", name, v.Proxy.ID(), len(g), len(w))
			continue
		}
		for j := range g {
			if !bytes.Equal(marshal(t, g[j]), marshal(t, w[j])) {
				k, _ := envoycfg.KeyOf(w[j])
				t.Errorf("%s: %s: %s differs from the build from scratch", name, v.Proxy.ID(), k)
				break
			}
		}
	}
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate changes one object of files: one of its scalar fields (a number
// plus one, a boolean flipped, a string suffixed), or, one time in five,
// the whole object removed. It says what it did.
func mutate(t *testing.T, files []meshgen.File, r *rand.Rand) ([]meshgen.File, string) {
	t.Helper()
	out := append([]meshgen.File(nil), files...)
	fi := r.IntN(len(out))
	docs := strings.Split(string(out[fi].Data), "\n---\n")
	di := r.IntN(len(docs))
	if r.IntN(5) == 0 {
		what := "removed " + firstLine(docs[di], "name:") + " from " + out[fi].Name
		docs = append(docs[:di:di], docs[di+1:]...)
		out[fi].Data = []byte(strings.Join(docs, "\n---\n"))
		return out, what
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(docs[di]), &doc); err != nil {
		t.Fatalf("%s: %v", out[fi].Name, err)
	}
	var leaves []*yaml.Node
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		switch n.Kind {
		case yaml.ScalarNode:
			if key != "apiVersion" && key != "kind" {
				leaves = append(leaves, n)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], n.Content[i].Value)
			}
		default:
			for _, c := range n.Content {
				walk(c, key)
			}
		}
	}
	walk(&doc, "")
	if len(leaves) == 0 {
		return out, "nothing"
	}
	leaf := leaves[r.IntN(len(leaves))]
	before := leaf.Value
	switch {
	case leaf.Tag == "!!bool":
		leaf.Value = strconv.FormatBool(leaf.Value != "true")
	case leaf.Tag == "!!int":
		n, _ := strconv.Atoi(leaf.Value)
		leaf.Value = strconv.Itoa(n + 1)
	default:
		leaf.Value += "x"
	}
	b, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	docs[di] = string(b)
	out[fi].Data = []byte(strings.Join(docs, "\n---\n"))
	return out, fmt.Sprintf("%s: %q to %q", out[fi].Name, before, leaf.Value)
}

func firstLine(doc, prefix string) string {
	for l := range strings.Lines(doc) {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, prefix) {
			return strings.TrimSpace(s)
		}
	}
	return "an object"
}

// TestConfigSetCarriedFollowInputs: an edit to each kind of input of
// what a build carries to the next (resolve.Digester's Clusters,
// Listeners and Own) rebuilds it rather than taking it from the compile
// before. Each edit changes one input and nothing else in the digest of
// what it reaches, so dropping that input from the digest makes its case
// fail; each case also checks that the build carried something, so that
// it compares a carried build with a full one.
func TestConfigSetCarriedFollowInputs(t *testing.T) {
	ctx := context.Background()
	// A workload no service selects, with a DestinationRule for it alone:
	// its labels reach clusters only as the proxy's own.
	lonely := meshgen.File{Name: "r1/lonely.yaml", Data: []byte(`apiVersion: v1
kind: Pod
metadata: {name: lonely, namespace: r1, labels: {app: lonely}}
spec: {containers: [{name: app, image: app}]}
status: {podIP: 10.10.9.1}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: lonely, namespace: r1}
spec:
  host: s1.r1.svc.cluster.local
  workloadSelector: {matchLabels: {tier: front}}
  trafficPolicy: {connectionPool: {tcp: {maxConnections: 7}}}
`)}
	// TCP and TLS routes, which make outbound listeners' filter chains
	// and nothing else.
	l4 := meshgen.File{Name: "r1/l4.yaml", Data: []byte(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: tcp, namespace: r1}
spec:
  hosts: [s2.r1.svc.cluster.local]
  tcp:
  - route:
    - {destination: {host: s2.r1.svc.cluster.local}, weight: 60}
    - {destination: {host: s1.r1.svc.cluster.local}, weight: 40}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: tls, namespace: r1}
spec:
  hosts: [s4.r1.svc.cluster.local]
  tls:
  - match: [{port: 27017, sniHosts: [s4.r1.svc.cluster.local]}]
    route:
    - {destination: {host: s4.r1.svc.cluster.local, port: {number: 27017}}, weight: 70}
    - {destination: {host: s2.r1.svc.cluster.local, port: {number: 27017}}, weight: 30}
`)}
	// A service hidden from its own namespace that targets a port of s3's
	// pods: it reaches their own resources only (ServedPorts), not their
	// scope.
	hidden := meshgen.File{Name: "r1/hidden.yaml", Data: []byte(`apiVersion: v1
kind: Service
metadata: {name: hidden, namespace: r1, annotations: {networking.istio.io/exportTo: r2}}
spec: {clusterIP: 10.96.9.1, selector: {app: s3}, ports: [{name: http-7070, port: 7070, targetPort: 9080}]}
`)}
	base := append(meshgen.Random(1), lonely, l4, hidden)
	for _, tc := range []struct {
		name, file, old, new string
		// carried is what the incremental build must take from the one
		// before for the case to mean something.
		carried func(emit.Taken) int
	}{
		{"mesh-wide PeerAuthentication", "config.yaml", "{mtls: {mode: STRICT}}", "{mtls: {mode: DISABLE}}", nil},
		{"DestinationRule", "config.yaml", "maxConnections: 18", "maxConnections: 19", nil},
		{"proxy labels", "r1/lonely.yaml", "{app: lonely}", "{app: lonely, tier: front}", nil},
		{"TCP route", "r1/l4.yaml", "weight: 60}", "weight: 50}", func(c emit.Taken) int { return c.Clusters }},
		{"TLS route", "r1/l4.yaml", "weight: 70}", "weight: 80}", func(c emit.Taken) int { return c.Clusters }},
		{"TCP route's hosts", "r1/l4.yaml", "hosts: [s2.r1.svc.cluster.local]", "hosts: [s4.r1.svc.cluster.local]", func(c emit.Taken) int { return c.Clusters }},
		{"served port", "r1/hidden.yaml", "targetPort: 9080", "targetPort: 9090", func(c emit.Taken) int { return c.Clusters + c.Listeners }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := BuildOptions{Format: "xds", Unchecked: true}
			prev, err := compileFiles(t, base).ConfigSet(ctx, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			edited := append([]meshgen.File(nil), base...)
			found := false
			for i, f := range edited {
				if f.Name == tc.file && bytes.Contains(f.Data, []byte(tc.old)) {
					edited[i].Data, found = bytes.Replace(f.Data, []byte(tc.old), []byte(tc.new), 1), true
				}
			}
			if !found {
				t.Fatalf("%s lacks %q", tc.file, tc.old)
			}
			head := compileFiles(t, edited)
			inc, full := incrementalAndFull(t, head, opts, prev)
			sameConfigs(t, tc.name, head, inc.Configs, full.Configs)
			if tc.carried != nil && tc.carried(inc.Carried) == 0 {
				t.Errorf("rebuilt %d proxies and carried %+v: nothing this case needs", inc.Rebuilt, inc.Carried)
			}
		})
	}
}
