package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/meshgen"
)

// buildTree builds inputs into a new OUT and returns every file in it.
func buildTree(t *testing.T, args ...string) map[string]string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := meshc(t, "", append([]string{"build", "-o", out, "-q"}, args...)...); code != 0 {
		t.Fatalf("build %v: exit %d\n%s", args, code, errOut)
	}
	return snapshot(t, out)
}

const (
	endpointService = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{port: 80, name: http}]}\n"
	endpointPod1 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.9}\n"
	endpointPod2 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.10}\n"
)

// TestBuildEndpointOrder: two Pods of one Service in two files give the
// same build, byte for byte, when the files swap their contents.
func TestBuildEndpointOrder(t *testing.T) {
	for _, format := range []string{"bootstrap", "xds"} {
		a := writeFiles(t, map[string]string{"svc.yaml": endpointService, "a.yaml": endpointPod1, "b.yaml": endpointPod2})
		b := writeFiles(t, map[string]string{"svc.yaml": endpointService, "a.yaml": endpointPod2, "b.yaml": endpointPod1})
		sameTree(t, format+" with the Pods' files swapped", buildTree(t, a, "--format", format), buildTree(t, b, "--format", format))
	}
}

var docSeparator = regexp.MustCompile(`(?m)^---\n`)

// documents splits a YAML stream into its documents.
func documents(data []byte) []string {
	var out []string
	for _, d := range docSeparator.Split(string(data), -1) {
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}

// reordered lays out files' documents anew: with scatter, every document
// goes to a file chosen at random, else each file's documents are
// shuffled and the contents change names. The names stay, so the count
// of files read does too.
func reordered(r *rand.Rand, files []meshgen.File, scatter bool) map[string]string {
	names := make([]string, len(files))
	contents := make([][]string, len(files))
	var all []string
	for i, f := range files {
		names[i] = f.Name
		contents[i] = documents(f.Data)
		all = append(all, contents[i]...)
	}
	if scatter {
		contents = make([][]string, len(files))
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for _, d := range all {
			i := r.IntN(len(files))
			contents[i] = append(contents[i], d)
		}
	} else {
		for _, docs := range contents {
			r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		}
		r.Shuffle(len(contents), func(i, j int) { contents[i], contents[j] = contents[j], contents[i] })
	}
	out := map[string]string{}
	for i, name := range names {
		out[name] = strings.Join(contents[i], "---\n")
	}
	return out
}

// outputs is everything meshc writes for a mesh: lint's JSON with the
// findings' places left out (they move with the documents) and the
// findings in a fixed order, the build's files in both formats, and the
// explain reports of two proxies, places left out too.
//
// With order, the files are named on the command line in that order
// instead of found in their directory.
func outputs(t *testing.T, files map[string]string, procs int, order []string) map[string]string {
	t.Helper()
	prev := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(prev)
	dir := writeFiles(t, files)
	paths := []string{dir}
	if order != nil {
		paths = nil
		for _, name := range order {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	out := map[string]string{}
	code, lint, errOut := meshc(t, "", append([]string{"lint", "-o", "json", "--fail-on", "none"}, paths...)...)
	if code != 0 {
		t.Fatalf("lint: exit %d\n%s", code, errOut)
	}
	out["lint.json"] = placeless(t, lint)
	for _, format := range []string{"bootstrap", "xds"} {
		for name, data := range buildTree(t, append([]string{"--format", format, "--fail-on", "none"}, paths...)...) {
			out[format+"/"+name] = data
		}
	}
	// explain's report of the first and the last proxy, routes included.
	var index struct {
		Proxies []struct{ Namespace, Name string }
	}
	if err := json.Unmarshal([]byte(out["bootstrap/index.json"]), &index); err != nil {
		t.Fatal(err)
	}
	if n := len(index.Proxies); n > 0 {
		for _, p := range []int{0, n - 1} {
			id := index.Proxies[p].Namespace + "/" + index.Proxies[p].Name
			args := []string{"explain", "proxy", id, "--routes", "-o", "json"}
			for _, p := range paths {
				args = append(args, "-f", p)
			}
			code, report, errOut := meshc(t, "", args...)
			if code != 0 {
				t.Fatalf("explain %s: exit %d\n%s", id, code, errOut)
			}
			out["explain "+id] = placeless(t, report)
		}
	}
	return out
}

// placeless drops file and line from a JSON document and sorts its
// findings ("diagnostics") by what is left.
func placeless(t *testing.T, doc string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("lint JSON: %v", err)
	}
	stripPlaces(v)
	v["diagnostics"] = sortedJSON(v["diagnostics"])
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stripPlaces drops every "file" and "line" from a decoded JSON value.
func stripPlaces(x any) {
	switch x := x.(type) {
	case map[string]any:
		delete(x, "file")
		delete(x, "line")
		for _, e := range x {
			stripPlaces(e)
		}
	case []any:
		for _, e := range x {
			stripPlaces(e)
		}
	}
}

// sortedJSON is a decoded JSON list as its elements' JSON, sorted.
func sortedJSON(list any) []string {
	l, _ := list.([]any)
	keys := make([]string, len(l))
	for i, d := range l {
		b, _ := json.Marshal(d)
		keys[i] = string(b)
	}
	slices.Sort(keys)
	return keys
}

// TestOutputIgnoresInputOrder: on generated meshes with endpoints of
// every kind, some with Gateway API objects, the layouts of orderFree, each at other parallelism, give
// byte-identical builds, the same findings and the same explain reports.
func TestOutputIgnoresInputOrder(t *testing.T) {
	seeds := 8
	if testing.Short() {
		seeds = 2
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			orderFree(t, meshgen.Random(int64(seed)), uint64(seed))
		})
		// Half the seeds again with Gateway API objects: their conversion
		// and the scopes that share less because of it.
		if seed%2 == 0 {
			t.Run(fmt.Sprint("gateway-api-seed", seed), func(t *testing.T) {
				orderFree(t, meshgen.RandomWith(int64(seed), meshgen.RandomOptions{GatewayAPI: true}), uint64(seed))
			})
		}
	}
}

// TestFixturesIgnoreInputOrder: the same for testdata/order's mesh of
// ties (objects of one age claiming one host, port, namespace default or
// workload), the examples, and the analyzers' seed meshes, each a file of
// conflicts (oldest wins, shadowing, overlaps), spread over three files.
func TestFixturesIgnoreInputOrder(t *testing.T) {
	var paths []string
	for _, glob := range []string{"testdata/order/*.yaml", "../../examples/*/*.yaml", "../../internal/lint/testdata/seeds/*.yaml"} {
		more, err := filepath.Glob(glob)
		if err != nil || len(more) == 0 {
			t.Fatalf("nothing at %s: %v", glob, err)
		}
		paths = append(paths, more...)
	}
	// An example is one mesh in several files.
	meshes := map[string][]meshgen.File{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		key := p
		if strings.Contains(p, "/examples/") {
			key = filepath.Dir(p)
		}
		meshes[key] = append(meshes[key], meshgen.File{Name: filepath.Base(p), Data: data})
	}
	for i, key := range slices.Sorted(maps.Keys(meshes)) {
		files := meshes[key]
		if len(files) == 1 {
			files = append(files, meshgen.File{Name: "b/b.yaml"}, meshgen.File{Name: "c.yaml"})
		}
		t.Run(strings.TrimPrefix(key, "../../"), func(t *testing.T) { orderFree(t, files, uint64(i)) })
	}
}

// orderFree checks that files give the same outputs in three other
// layouts, at other GOMAXPROCS: documents shuffled within their files and
// the contents swapped between names; documents scattered over the
// files; scattered again, each file named on the command line, in a
// shuffled order.
func orderFree(t *testing.T, files []meshgen.File, seed uint64) {
	t.Helper()
	asGiven := map[string]string{}
	var names []string
	for _, f := range files {
		asGiven[f.Name] = string(f.Data)
		names = append(names, f.Name)
	}
	r := rand.New(rand.NewPCG(seed, 22))
	want := outputs(t, asGiven, 1, nil)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for i, layout := range []struct {
		files map[string]string
		order []string
	}{{reordered(r, files, false), nil}, {reordered(r, files, true), nil}, {reordered(r, files, true), names}} {
		got := outputs(t, layout.files, 2+i, layout.order)
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if want[name] != got[name] {
				t.Errorf("layout %d: %s differs", i, name)
			}
		}
		if len(got) != len(want) {
			t.Errorf("layout %d: %d files, want %d", i, len(got), len(want))
		}
	}
}
