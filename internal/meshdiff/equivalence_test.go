package meshdiff

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/meshgen"
)

// TestSkippingIsSound mutates random meshes one object at a time
// (removed, one scalar field changed, or copied under a new name) and
// checks that the comparison which skips proxies whose inputs digest the
// same reports exactly what building and comparing every proxy reports.
// HEAD is written to another directory than BASE, so file positions
// differ everywhere, as they may not matter.
func TestSkippingIsSound(t *testing.T) {
	seeds := []int64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:1]
	}
	builtFast, builtFull := 0, 0
	for _, seed := range seeds {
		files := meshgen.Random(seed)
		base := compileGenerated(t, files)
		docs := documents(files)
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		for i := range docs {
			kind := (i + int(seed)) % 3
			head, what := mutate(docs, i, kind, r)
			if what == "" {
				continue
			}
			name := fmt.Sprintf("seed %d doc %d: %s", seed, i, what)
			hr := compileGenerated(t, head)
			fast, err := Compare(context.Background(), Side{Result: base}, Side{Result: hr}, Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			full, err := Compare(context.Background(), Side{Result: base}, Side{Result: hr}, Options{Full: true})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if a, b := proxiesJSON(t, fast), proxiesJSON(t, full); a != b {
				t.Errorf("%s: skipping changes the report\nfast: %s\nfull: %s", name, a, b)
			}
			if testing.Verbose() {
				t.Logf("%s: built %d, changed %d of %d", name, fast.built, fast.Summary.Proxies.Changed, fast.Summary.Proxies.Compared)
			}
			builtFast += fast.built
			builtFull += full.built
		}
	}
	// The fast path must skip something, or the test proves nothing.
	if builtFast >= builtFull {
		t.Errorf("built %d proxies skipping, %d without: too few skipped", builtFast, builtFull)
	}
	t.Logf("built %d proxies skipping, %d without", builtFast, builtFull)
}

func proxiesJSON(t *testing.T, r *Report) string {
	t.Helper()
	raw, err := json.Marshal(struct {
		Counts  ProxyCounts
		Proxies []ProxyGroup
	}{r.Summary.Proxies, r.Proxies})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// compileGenerated writes files to a new directory and compiles it.
func compileGenerated(t testing.TB, files []meshgen.File) *compile.Result {
	t.Helper()
	dir := t.TempDir()
	if _, err := meshgen.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	r, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{dir}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// doc is one YAML document of a generated file.
type doc struct {
	file int
	text string
}

func documents(files []meshgen.File) []doc {
	var out []doc
	for i, f := range files {
		for _, d := range strings.Split(string(f.Data), "\n---\n") {
			if strings.TrimSpace(d) != "" {
				out = append(out, doc{i, d})
			}
		}
	}
	return out
}

// mutate returns the files with document i removed (kind 0), one of its
// scalars changed (1) or a copy of it under another name added (2), and
// says what it did; "" when the document offers nothing to change.
func mutate(docs []doc, i, kind int, r *rand.Rand) ([]meshgen.File, string) {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(docs[i].text), &node); err != nil || len(node.Content) == 0 {
		return nil, ""
	}
	root := node.Content[0]
	what := "removed"
	var extra string
	switch kind {
	case 1:
		var leaves []*yaml.Node
		var paths []string
		scalars(root, "", &leaves, &paths)
		if len(leaves) == 0 {
			return nil, ""
		}
		j := r.IntN(len(leaves))
		old := leaves[j].Value
		changeScalar(leaves[j])
		what = fmt.Sprintf("%s %q → %q", paths[j], old, leaves[j].Value)
	case 2:
		name := field(field(root, "metadata"), "name")
		if name == nil {
			return nil, ""
		}
		name.Value += "-copy"
		what = "copied as " + name.Value
	}
	text := docs[i].text
	if kind != 0 {
		raw, err := yaml.Marshal(root)
		if err != nil {
			return nil, ""
		}
		if kind == 1 {
			text = string(raw)
		} else {
			extra = string(raw)
		}
	} else {
		text = ""
	}
	byFile := map[int][]string{}
	last := 0
	for j, d := range docs {
		t := d.text
		if j == i {
			t = text
		}
		if t != "" {
			byFile[d.file] = append(byFile[d.file], t)
		}
		last = max(last, d.file)
	}
	if extra != "" {
		byFile[docs[i].file] = append(byFile[docs[i].file], extra)
	}
	var out []meshgen.File
	for f := 0; f <= last; f++ {
		out = append(out, meshgen.File{Name: "f" + strconv.Itoa(f) + ".yaml", Data: []byte(strings.Join(byFile[f], "\n---\n") + "\n")})
	}
	return out, what
}

func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalars lists the scalar values under n but the object's kind,
// apiVersion and name, which would make it another object.
func scalars(n *yaml.Node, path string, out *[]*yaml.Node, paths *[]string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := strings.TrimPrefix(path+"."+n.Content[i].Value, ".")
			if p == "kind" || p == "apiVersion" || p == "metadata.name" {
				continue
			}
			scalars(n.Content[i+1], p, out, paths)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			scalars(c, fmt.Sprintf("%s[%d]", path, i), out, paths)
		}
	case yaml.ScalarNode:
		*out = append(*out, n)
		*paths = append(*paths, path)
	}
}

// changeScalar changes a value to another of its type: a number by one,
// a boolean flipped, a string to a neighbour (a label value another
// workload's, a host another service's).
func changeScalar(n *yaml.Node) {
	if v, err := strconv.Atoi(n.Value); err == nil {
		n.Value = strconv.Itoa(v + 1)
		return
	}
	switch n.Value {
	case "true":
		n.Value = "false"
		return
	case "false":
		n.Value = "true"
		return
	}
	// A trailing digit moves to the next (v1 → v2, s1 → s2, r2 → r3),
	// which names other objects of the mesh; anything else gets a suffix.
	if last := len(n.Value) - 1; last >= 0 && n.Value[last] >= '0' && n.Value[last] < '9' {
		n.Value = n.Value[:last] + string(n.Value[last]+1)
		return
	}
	n.Value += "x"
}

// TestUnchangedScopesAreNotBuilt: a Sidecar added to one namespace
// changes what that namespace's proxies see and nothing else, so only
// they are built.
func TestUnchangedScopesAreNotBuilt(t *testing.T) {
	files := meshgen.Generate(meshgen.Options{Namespaces: 3, ServicesPerNS: 2, SidecarEveryNth: -1})
	sidecar := meshgen.File{Name: "ns-002/sidecar.yaml", Data: []byte("apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: ns-002}\nspec: {egress: [{hosts: [./*]}]}\n")}
	base, head := compileGenerated(t, files), compileGenerated(t, append(slices.Clone(files), sidecar))
	r, err := Compare(context.Background(), Side{Result: base}, Side{Result: head}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var inNs2 int
	for _, v := range head.Mesh.Views {
		if v.Proxy.Namespace == "ns-002" {
			inNs2++
		}
	}
	if inNs2 == 0 || r.built != inNs2 || r.Summary.Proxies.Changed != inNs2 || r.Summary.Proxies.Compared <= inNs2 {
		t.Errorf("built %d, changed %d of %d compared; want the %d proxies of ns-002 built and changed", r.built, r.Summary.Proxies.Changed, r.Summary.Proxies.Compared, inNs2)
	}
}

// TestOmittedIsSound: what both sides leave out because it digests alike
// (a part's clusters, a proxy's inbound resources) changes no report. A
// route edit leaves every proxy's clusters and inbound resources as they
// were, so both are left out. When a proxy moves to a part of its own on
// one side (a label a client-selecting DestinationRule picks, on a
// workload no Service selects) and its clusters change, the other
// proxies of its namespace, whose clusters digest alike, shared its part
// on the other side: they keep their clusters there, or the part would
// hold none for it.
func TestOmittedIsSound(t *testing.T) {
	files := meshgen.Generate(meshgen.Options{Namespaces: 2, ServicesPerNS: 2})
	// A client named to come after the namespace's other proxies: the
	// part they share is built by one of them first.
	client := func(tier string) meshgen.File {
		return meshgen.File{Name: "ns-001/client.yaml", Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: zz-client, namespace: ns-001}
spec:
  selector: {matchLabels: {app: zz-client}}
  template:
    metadata: {labels: {app: zz-client, tier: ` + tier + `}}
    spec: {containers: [{name: c, image: c}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: special, namespace: ns-001}
spec:
  host: svc-01.ns-002.svc.cluster.local
  workloadSelector: {matchLabels: {tier: special}}
  trafficPolicy: {connectionPool: {tcp: {maxConnections: 7}}}
`)}
	}
	weights := func(files []meshgen.File) []meshgen.File {
		out := slices.Clone(files)
		for i, f := range out {
			if f.Name == "ns-001/virtual-services.yaml" {
				out[i].Data = []byte(strings.NewReplacer("weight: 90", "weight: 70", "weight: 10", "weight: 30").Replace(string(f.Data)))
			}
		}
		return out
	}
	tests := []struct {
		name       string
		base, head []meshgen.File
	}{
		{"route weights", files, weights(files)},
		{"a proxy moves to a part of its own", append(slices.Clone(files), client("plain")), append(weights(files), client("special"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, head := compileGenerated(t, tt.base), compileGenerated(t, tt.head)
			fast, err := Compare(context.Background(), Side{Result: base}, Side{Result: head}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			full, err := Compare(context.Background(), Side{Result: base}, Side{Result: head}, Options{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := proxiesJSON(t, fast), proxiesJSON(t, full); a != b {
				t.Errorf("leaving out changes the report\nfast: %s\nfull: %s", a, b)
			}
			if fast.Summary.Proxies.Changed == 0 {
				t.Error("no proxy changed: the edit tests nothing")
			}
			if parts, own := fast.omitted[0], fast.omitted[1]; parts == 0 || own == 0 {
				t.Errorf("left out the clusters of %d parts and the inbound resources of %d proxies", parts, own)
			}
		})
	}
}
