package meshgen

import (
	"bytes"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/load"
)

// countKinds counts the objects in files by their top-level kind.
func countKinds(files []File) map[string]int {
	kinds := map[string]int{}
	re := regexp.MustCompile(`(?m)^kind: (\w+)$`)
	for _, f := range files {
		for _, m := range re.FindAllSubmatch(f.Data, -1) {
			kinds[string(m[1])]++
		}
	}
	return kinds
}

func total(kinds map[string]int) int {
	n := 0
	for _, c := range kinds {
		n += c
	}
	return n
}

func TestGenerate(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		minObjects int
		maxObjects int
		kinds      map[string]int // exact counts, when set
	}{
		{
			name:       "defaults",
			opts:       Options{},
			minObjects: 7000,
			maxObjects: 9000,
			kinds: map[string]int{
				"Namespace": 101, "Service": 2000, "Deployment": 3000,
				"DestinationRule": 2000, "VirtualService": 1000, "Sidecar": 25,
			},
		},
		{
			name: "small",
			opts: Options{Namespaces: 3, ServicesPerNS: 10, SidecarEveryNth: 2, Seed: 7},
			kinds: map[string]int{
				"Namespace": 4, "Service": 30, "Deployment": 45,
				"DestinationRule": 30, "VirtualService": 15, "Sidecar": 1,
			},
		},
		{
			name: "one version, no sidecars",
			opts: Options{Namespaces: 2, ServicesPerNS: 20, VersionsPerSvc: 1, SidecarEveryNth: -1},
			// Only the cross-namespace services (svc-10, svc-20) need a VirtualService.
			kinds: map[string]int{
				"Namespace": 3, "Service": 40, "Deployment": 40,
				"DestinationRule": 40, "VirtualService": 4,
			},
		},
		{
			name: "many versions, wide names",
			opts: Options{Namespaces: 1000, ServicesPerNS: 1, VersionsPerSvc: 7},
			kinds: map[string]int{
				"Namespace": 1001, "Service": 1000, "Deployment": 7000,
				"DestinationRule": 1000, "VirtualService": 1000, "Sidecar": 250,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, objects := generate(tt.opts)
			b := Generate(tt.opts)
			if len(a) != len(b) {
				t.Fatalf("two calls gave %d and %d files", len(a), len(b))
			}
			for i := range a {
				if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
					t.Fatalf("two calls differ at file %d (%s, %s)", i, a[i].Name, b[i].Name)
				}
			}

			names := make([]string, len(a))
			for i, f := range a {
				names[i] = f.Name
				if f.Name == "" || strings.HasPrefix(f.Name, "/") || strings.Contains(f.Name, "\\") ||
					slices.Contains(strings.Split(f.Name, "/"), "..") || filepath.IsAbs(f.Name) {
					t.Errorf("file name %q is not a relative slash path", f.Name)
				}
				if len(f.Data) == 0 || f.Data[len(f.Data)-1] != '\n' {
					t.Errorf("%s: empty or not newline-terminated", f.Name)
				}
			}
			if !slices.IsSorted(names) {
				t.Errorf("file names not sorted: %v", names)
			}
			if len(slices.Compact(slices.Clone(names))) != len(names) {
				t.Errorf("duplicate file names")
			}

			kinds := countKinds(a)
			if got := total(kinds); got != objects {
				t.Errorf("generate reported %d objects, files hold %d (%v)", objects, got, kinds)
			}
			if seps := countSeparators(a); seps+len(a) != objects {
				t.Errorf("%d files with %d separators, want %d objects", len(a), seps, objects)
			}
			if tt.maxObjects > 0 && (objects < tt.minObjects || objects > tt.maxObjects) {
				t.Errorf("%d objects, want %d–%d", objects, tt.minObjects, tt.maxObjects)
			}
			if tt.kinds != nil {
				for k, want := range tt.kinds {
					if kinds[k] != want {
						t.Errorf("%d %s objects, want %d", kinds[k], k, want)
					}
				}
				if total(kinds) != total(tt.kinds) {
					t.Errorf("kinds %v, want %v", kinds, tt.kinds)
				}
			}
		})
	}
}

func countSeparators(files []File) int {
	n := 0
	for _, f := range files {
		n += bytes.Count(f.Data, []byte("\n---\n"))
	}
	return n
}

func TestGenerateSeed(t *testing.T) {
	opts := Options{Namespaces: 4, ServicesPerNS: 6}
	def := Generate(opts)
	opts.Seed = 1
	if one := Generate(opts); !sameFiles(def, one) {
		t.Error("Seed 0 and Seed 1 differ; 0 should default to 1")
	}
	opts.Seed = 2
	if two := Generate(opts); sameFiles(def, two) {
		t.Error("Seed 1 and Seed 2 give identical meshes")
	}
}

func sameFiles(a, b []File) bool {
	return slices.EqualFunc(a, b, func(x, y File) bool { return x.Name == y.Name && bytes.Equal(x.Data, y.Data) })
}

func TestGenerateContent(t *testing.T) {
	files := Generate(Options{Namespaces: 2, ServicesPerNS: 10})
	byName := map[string]string{}
	for _, f := range files {
		byName[f.Name] = string(f.Data)
	}
	for _, want := range []struct{ file, text string }{
		{"istio-system/namespace.yaml", "kind: Namespace\nmetadata:\n  name: istio-system\n"},
		{"ns-001/namespace.yaml", "  name: ns-001\n  labels:\n    istio-injection: enabled\n"},
		{"ns-001/services.yaml", "    - name: grpc\n      port: 9090\n"},
		{"ns-001/deployments.yaml", "  name: svc-02-v2\n"},
		{"ns-001/destination-rules.yaml", "        maxConnections: 100\n"},
		{"ns-001/virtual-services.yaml", "            subset: v1\n          weight: 90\n"},
		{"ns-001/virtual-services.yaml", "            subset: v2\n          weight: 10\n"},
		{"ns-001/virtual-services.yaml", "            host: svc-10.ns-002.svc.cluster.local\n          weight: 5\n"},
		{"ns-002/virtual-services.yaml", "            host: svc-10.ns-001.svc.cluster.local\n"}, // wraps around
		{"ns-002/virtual-services.yaml", "      timeout: \"5s\"\n"},
	} {
		if !strings.Contains(byName[want.file], want.text) {
			t.Errorf("%s does not contain %q", want.file, want.text)
		}
	}
	if strings.Contains(byName["ns-001/deployments.yaml"], "svc-01-v2") {
		t.Error("svc-01 has a v2; odd services should have v1 only by default")
	}
	if _, ok := byName["ns-001/sidecar.yaml"]; ok {
		t.Error("ns-001 has a Sidecar; by default only every 4th namespace does")
	}
	sc := Generate(Options{Namespaces: 4, ServicesPerNS: 10})
	var sidecar string
	for _, f := range sc {
		if f.Name == "ns-004/sidecar.yaml" {
			sidecar = string(f.Data)
		}
	}
	for _, h := range []string{`"./*"`, `"istio-system/*"`, `"ns-001/*"`} {
		if !strings.Contains(sidecar, h) {
			t.Errorf("ns-004 Sidecar lacks egress host %s:\n%s", h, sidecar)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Namespaces: 5, ServicesPerNS: 4}
	nfiles, objects, err := Write(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, wantObjects := generate(opts)
	if nfiles != len(want) || objects != wantObjects {
		t.Errorf("Write = %d files, %d objects; want %d, %d", nfiles, objects, len(want), wantObjects)
	}
	for _, f := range want {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s: content differs from Generate", f.Name)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&^0o644 != 0 {
			t.Errorf("%s: mode %v, want at most 0644", f.Name, perm)
		}
	}
	var onDisk int
	err = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			onDisk++
		}
		return err
	})
	if err != nil || onDisk != nfiles {
		t.Errorf("%d files on disk, Write reported %d (%v)", onDisk, nfiles, err)
	}
}

func TestWriteError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Write(file, Options{Namespaces: 1, ServicesPerNS: 1}); err == nil {
		t.Error("Write under a regular file succeeded")
	}
}

// TestWriteNeverOverwrites: a second Write into the same directory fails
// on the first file that exists and leaves it as it was.
func TestWriteNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Namespaces: 1, ServicesPerNS: 1}
	first := Generate(opts)[0]
	p := filepath.Join(dir, filepath.FromSlash(first.Name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Write(dir, opts); err == nil || !strings.Contains(err.Error(), "writes only new files") {
		t.Errorf("err = %v, want a refusal to overwrite", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "mine" {
		t.Errorf("%s overwritten", first.Name)
	}
}

func BenchmarkGenerate(b *testing.B) {
	var size int64
	for _, f := range Generate(Options{}) {
		size += int64(len(f.Data))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		Generate(Options{})
	}
}

// TestRandom: a seed gives the same files every time, other seeds other
// meshes, and every file loads without a problem.
func TestRandom(t *testing.T) {
	seen := map[string]bool{}
	for seed := int64(1); seed <= 20; seed++ {
		a, b := Random(seed), Random(seed)
		if len(a) != len(b) {
			t.Fatalf("seed %d: %d files, then %d", seed, len(a), len(b))
		}
		var all []byte
		for i := range a {
			if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
				t.Fatalf("seed %d: %s differs between two calls", seed, a[i].Name)
			}
			all = append(all, a[i].Data...)
			objs, ds := load.Bytes(a[i].Name, a[i].Data)
			if len(ds) > 0 || len(objs) == 0 {
				t.Fatalf("seed %d: %s: %d objects, %v", seed, a[i].Name, len(objs), ds)
			}
		}
		seen[string(all)] = true
	}
	if len(seen) < 18 {
		t.Errorf("20 seeds gave only %d distinct meshes", len(seen))
	}
}

// TestRandomGatewayAPI: the Gateway API option adds its files and leaves
// Random's as they were; a seed gives the same files every time, every
// file loads, and over the seeds every kind and every deliberately
// unaccepted case turns up.
func TestRandomGatewayAPI(t *testing.T) {
	seen := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		plain, with := Random(seed), RandomWith(seed, RandomOptions{GatewayAPI: true})
		if !sameFiles(plain, with[:len(plain)]) {
			t.Fatalf("seed %d: the Gateway API option changed Random's files", seed)
		}
		if !sameFiles(with, RandomWith(seed, RandomOptions{GatewayAPI: true})) {
			t.Fatalf("seed %d: two calls differ", seed)
		}
		added := with[len(plain):]
		if len(added) < 2 || len(added) > 3 || added[0].Name != "gateway-api/gateways.yaml" || added[1].Name != "gateway-api/routes.yaml" ||
			len(added) == 3 && added[2].Name != "gateway-api/policies.yaml" {
			t.Fatalf("seed %d: added files %v", seed, added)
		}
		for _, f := range added {
			if _, ds := load.Bytes(f.Name, f.Data); len(ds) > 0 {
				t.Fatalf("seed %d: %s: %v", seed, f.Name, ds)
			}
			for k, n := range countKinds([]File{f}) {
				seen["kind "+k] += n
			}
			for _, c := range []string{"sectionName: missing", ".example.net", "gatewayClassName: other-class", "{namespaces: {from: Same}}",
				"kind: Service, name:", "namespace: r", "type: RequestRedirect", "type: URLRewrite", "type: RequestMirror", "type: CORS", "name: gone,", "weight:", "timeouts:",
				"kind: ListenerSet,", "allowedListeners: {namespaces: {from: Same}}", "allowedListeners: {namespaces: {from: Selector", "name: dup,", "kind: ListenerSet, namespace: r",
				"sessionPersistence:", "-retries-2,", "name: ghost}", "gatewayClassName: istio-waypoint"} {
				seen[c] += strings.Count(string(f.Data), c)
			}
		}
	}
	for _, want := range []string{"kind Gateway", "kind HTTPRoute", "kind GRPCRoute", "kind TCPRoute", "kind TLSRoute", "kind ReferenceGrant", "kind Secret", "kind ListenerSet",
		"kind XBackendTrafficPolicy", "sessionPersistence:", "-retries-2,", "name: ghost}", "gatewayClassName: istio-waypoint",
		"sectionName: missing", ".example.net", "gatewayClassName: other-class", "{namespaces: {from: Same}}",
		"kind: Service, name:", "namespace: r", "type: RequestRedirect", "type: URLRewrite", "type: RequestMirror", "type: CORS", "name: gone,", "weight:", "timeouts:",
		"kind: ListenerSet,", "allowedListeners: {namespaces: {from: Same}}", "allowedListeners: {namespaces: {from: Selector", "name: dup,", "kind: ListenerSet, namespace: r"} {
		if seen[want] == 0 {
			t.Errorf("20 seeds gave no %q", want)
		}
	}
}

// TestGenerateHTTPRoutes: the same routes as mesh HTTPRoutes, to version
// Services, with grants for the cross-namespace share.
func TestGenerateHTTPRoutes(t *testing.T) {
	files := Generate(Options{Namespaces: 2, ServicesPerNS: 10, HTTPRoutes: true})
	kinds := countKinds(files)
	for k, want := range map[string]int{"Service": 40, "HTTPRoute": 10, "ReferenceGrant": 2, "VirtualService": 0, "DestinationRule": 20, "Deployment": 30} {
		if kinds[k] != want {
			t.Errorf("%d %s, want %d", kinds[k], k, want)
		}
	}
	byName := map[string]string{}
	for _, f := range files {
		byName[f.Name] = string(f.Data)
		if _, ds := load.Bytes(f.Name, f.Data); len(ds) > 0 {
			t.Fatalf("%s: %v", f.Name, ds)
		}
	}
	routes := byName["ns-001/http-routes.yaml"]
	for _, want := range []string{
		"  parentRefs:\n    - group: \"\"\n      kind: Service\n      name: svc-02\n",
		"        - name: svc-02-v1\n          port: 8080\n          weight: 90\n        - name: svc-02-v2\n          port: 8080\n          weight: 10\n",
		"        - name: svc-10-v1\n          port: 8080\n          weight: 85\n",
		"        - name: svc-10\n          namespace: ns-002\n          port: 8080\n          weight: 5\n",
		"      timeouts:\n        request: 5s\n",
		"  name: from-ns-002\n  namespace: ns-001\n",
	} {
		if !strings.Contains(routes, want) {
			t.Errorf("ns-001/http-routes.yaml lacks %q", want)
		}
	}
	if !strings.Contains(byName["ns-001/services.yaml"], "  name: svc-04-v2\n") {
		t.Error("no Service for version v2 of svc-04")
	}
}

// TestGenerateVersionServices: the HTTPRoutes mesh with its routes as
// VirtualServices to the version Services; every other file is the same
// in both meshes, so a comparison of the two measures the routes alone.
func TestGenerateVersionServices(t *testing.T) {
	opts := Options{Namespaces: 2, ServicesPerNS: 10, VersionServices: true}
	vs := Generate(opts)
	opts.HTTPRoutes = true
	hr := Generate(opts)
	kinds := countKinds(vs)
	for k, want := range map[string]int{"Service": 40, "VirtualService": 10, "HTTPRoute": 0, "ReferenceGrant": 0, "DestinationRule": 20, "Deployment": 30} {
		if kinds[k] != want {
			t.Errorf("%d %s, want %d", kinds[k], k, want)
		}
	}
	routeFiles := map[string]bool{"virtual-services.yaml": true, "http-routes.yaml": true}
	others := func(files []File) map[string]string {
		out := map[string]string{}
		for _, f := range files {
			if _, ds := load.Bytes(f.Name, f.Data); len(ds) > 0 {
				t.Fatalf("%s: %v", f.Name, ds)
			}
			if !routeFiles[path.Base(f.Name)] {
				out[f.Name] = string(f.Data)
			}
		}
		return out
	}
	if a, b := others(vs), others(hr); !maps.Equal(a, b) {
		t.Error("the meshes differ in more than their routes")
	}
	var routes string
	for _, f := range vs {
		if f.Name == "ns-001/virtual-services.yaml" {
			routes = string(f.Data)
		}
	}
	for _, want := range []string{
		"        - destination:\n            host: svc-02-v1\n          weight: 90\n        - destination:\n            host: svc-02-v2\n          weight: 10\n",
		"        - destination:\n            host: svc-10.ns-002.svc.cluster.local\n          weight: 5\n",
	} {
		if !strings.Contains(routes, want) {
			t.Errorf("ns-001/virtual-services.yaml lacks %q", want)
		}
	}
}
