package emit

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshc/meshc/internal/golden"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/meshtest"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

const bookinfo = "../../examples/bookinfo"

func loadMesh(_ *testing.T, objs []model.Object) *resolve.Mesh { return meshtest.Resolve(objs) }

func bookinfoObjects(t *testing.T) []model.Object { return loadtest.Dir(t, bookinfo) }

// TestGoldenBookinfoXDS pins the xDS output of every bookinfo proxy,
// sidecars and the ingress gateway. Regenerate with -update.
func TestGoldenBookinfoXDS(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	e := New(m, Options{Format: XDS})
	if len(m.Views) == 0 {
		t.Fatal("no proxies")
	}
	for _, v := range m.Views {
		cfg, out, err := e.Render(v)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Problems) > 0 {
			t.Errorf("%s: %v", v.Proxy.ID(), cfg.Problems)
		}
		for _, f := range out.Files {
			golden.Check(t, filepath.Join("testdata/bookinfo-xds", f.Path), f.Data)
		}
	}
}

// build writes a whole build of objs and returns every file's bytes.
func build(t *testing.T, objs []model.Object, opts Options, workers int) map[string][]byte {
	t.Helper()
	m := loadMesh(t, objs)
	out := t.TempDir()
	if _, err := New(m, opts).Write(context.Background(), m.Views, WriteOptions{Dir: out, Workers: workers}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(out, p)
		files[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDeterministic: the same input in another order, built with other
// parallelism, gives byte-identical files in both formats.
func TestDeterministic(t *testing.T) {
	objs := bookinfoObjects(t)
	for _, format := range []Format{Bootstrap, XDS} {
		first := build(t, objs, Options{Format: format}, 1)
		shuffled := append([]model.Object(nil), objs...)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		prev := runtime.GOMAXPROCS(4)
		second := build(t, shuffled, Options{Format: format}, 8)
		runtime.GOMAXPROCS(prev)
		if len(first) != len(second) || len(first) < 2 {
			t.Fatalf("%s: %d files vs %d", format, len(first), len(second))
		}
		for name, data := range first {
			if !bytes.Equal(data, second[name]) {
				t.Errorf("%s: %s differs between builds", format, name)
			}
		}
	}
}

// TestWriteRefusesUnsafeNames: a name that is not a DNS-1123 name never
// becomes a path: the build fails and nothing is written outside its
// directory.
func TestWriteRefusesUnsafeNames(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	parent := t.TempDir()
	for _, tc := range []struct{ namespace, name string }{
		{"default", "../escape"}, {"default", "a/b"}, {"default", ".."}, {"default", "UPPER"}, {"default", ""},
		{"..", "web"}, {"a.b", "web"}, {"", "web"},
	} {
		evil := *m.Views[0]
		p := *evil.Proxy
		p.Namespace, p.Name = tc.namespace, tc.name
		evil.Proxy = &p
		out := filepath.Join(parent, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := New(m, Options{}).Write(context.Background(), []*resolve.ProxyView{m.Views[1], &evil}, WriteOptions{Dir: out})
		if err == nil || !strings.Contains(err.Error(), "not a valid name") {
			t.Errorf("%s/%s: err = %v, want a refusal", tc.namespace, tc.name, err)
		}
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("written outside the build directory: %v", entries)
	}
}

// TestWritePathsUnique: a Deployment, a StatefulSet and a Pod of one name
// are three proxies with three files, each named with its kind; the index
// lists each once with the hash of its own file.
func TestWritePathsUnique(t *testing.T) {
	objs := loadtest.Objects(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {selector: {app: web}, ports: [{port: 80, name: http}]}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: shop}\nspec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web, tier: db}}, spec: {containers: [{name: c, image: i}]}}}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: solo, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}",
	)
	for _, format := range []Format{Bootstrap, XDS} {
		m := loadMesh(t, objs)
		out := t.TempDir()
		res, err := New(m, Options{Format: format}).Write(context.Background(), m.Views, WriteOptions{Dir: out})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, e := range res.Index {
			paths = append(paths, e.Path)
		}
		slices.Sort(paths)
		ext := map[Format]string{Bootstrap: ".json", XDS: ""}[format]
		want := []string{"shop/solo" + ext, "shop/web_deployment" + ext, "shop/web_pod" + ext, "shop/web_statefulset" + ext}
		if !slices.Equal(paths, want) {
			t.Errorf("%s: paths %v, want %v", format, paths, want)
		}
		again, err := New(loadMesh(t, objs), Options{Format: format}).Write(context.Background(), m.Views, WriteOptions{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range res.Index {
			if e.SHA256 != again.Index[i].SHA256 {
				t.Errorf("%s: %s differs between two builds", format, e.Path)
			}
		}
	}
}

// TestWriteLongNames: a valid 253-character name is cut to a stable file
// name that fits, keeping a hash of the whole; two names alike in their
// first 200 characters still get two files.
func TestWriteLongNames(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	long := strings.Repeat("a", 240) + ".x"
	views := []*resolve.ProxyView{}
	for _, name := range []string{long + "1", long + "2"} {
		v := *m.Views[0]
		p := *v.Proxy
		p.Name = name
		v.Proxy = &p
		views = append(views, &v)
	}
	for _, format := range []Format{Bootstrap, XDS} {
		out := t.TempDir()
		res, err := New(m, Options{Format: format}).Write(context.Background(), views, WriteOptions{Dir: out})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if res.Index[0].Path == res.Index[1].Path {
			t.Errorf("%s: both at %s", format, res.Index[0].Path)
		}
		for _, e := range res.Index {
			if base := filepath.Base(e.Path); len(base) > 255 || !strings.HasPrefix(base, strings.Repeat("a", 150)) {
				t.Errorf("%s: file name %q (%d bytes)", format, base, len(base))
			}
			if _, err := os.Stat(filepath.Join(out, e.Path)); err != nil {
				t.Error(err)
			}
		}
	}
	first, _ := proxyPath(views[0].Proxy, false)
	if again, _ := proxyPath(views[0].Proxy, false); first != again {
		t.Errorf("shortened name not stable: %s, %s", first, again)
	}
}

// TestAssembledBootstrapEqualsWholeRendering: the bootstrap assembled from
// shared fragments is byte for byte what rendering the whole bootstrap
// message gives.
func TestAssembledBootstrapEqualsWholeRendering(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	e := New(m, Options{})
	e.parts.expect(m, m.Views)
	for _, v := range m.Views {
		cfg, out, err := e.Render(v)
		if err != nil {
			t.Fatal(err)
		}
		sds, err := sdsCluster()
		if err != nil {
			t.Fatal(err)
		}
		whole, err := indentedJSON(&bootstrapv3.Bootstrap{
			Node:  node(v.Proxy, m.Config.DomainSuffix),
			Admin: &bootstrapv3.Admin{Address: socketAddress("127.0.0.1", 15000)},
			StaticResources: &bootstrapv3.Bootstrap_StaticResources{
				Listeners: cfg.Listeners,
				Clusters:  append(cfg.Clusters[:len(cfg.Clusters):len(cfg.Clusters)], sds),
			},
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Files[0].Data; !bytes.Equal(got, append(whole, '\n')) {
			t.Errorf("%s: assembled bootstrap differs from the whole rendering", v.Proxy.ID())
		}
	}
}

// TestDedupSharesFiles: bookinfo's sidecars share one scope and one
// inbound port, so with Dedup the versions of one service share their
// files (the inbound side names the service); the files load back as
// DiscoveryResponses.
func TestDedupSharesFiles(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	out := t.TempDir()
	res, err := New(m, Options{Dedup: true}).Write(context.Background(), m.Views, WriteOptions{Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := os.ReadDir(filepath.Join(out, SharedDir))
	if err != nil {
		t.Fatal(err)
	}
	// Clusters and listeners: one each per service (details, productpage,
	// ratings, reviews) and for the gateway.
	if len(shared) != 10 {
		t.Errorf("%d shared files, want 10: %v", len(shared), shared)
	}
	byName := map[string][]string{}
	for _, e := range res.Index {
		byName[e.Name] = e.Shared
	}
	if !slices.Equal(byName["reviews-v1"], byName["reviews-v3"]) {
		t.Errorf("reviews-v1 and reviews-v3 do not share files: %v, %v", byName["reviews-v1"], byName["reviews-v3"])
	}
	for _, e := range res.Index {
		if len(e.Shared) != 2 {
			t.Fatalf("%s/%s names %d shared files", e.Namespace, e.Name, len(e.Shared))
		}
		boot, err := os.ReadFile(filepath.Join(out, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range e.Shared {
			if !bytes.Contains(boot, []byte(`"path": "`+s+`"`)) {
				t.Errorf("%s does not name %s", e.Path, s)
			}
			data, err := os.ReadFile(filepath.Join(out, s))
			if err != nil {
				t.Fatal(err)
			}
			var resp discoveryv3.DiscoveryResponse
			if err := protojson.Unmarshal(data, &resp); err != nil || len(resp.GetResources()) == 0 {
				t.Errorf("%s: %v, %d resources", s, err, len(resp.GetResources()))
			}
		}
	}
}

// TestBootstrapsLoad: every bootstrap written, for every bookinfo proxy
// and the gateway world, in each TLS mode and with DNS endpoints, decodes
// back as an Envoy Bootstrap that passes Envoy's validation down to the
// configs packed inside, and has the agent's cluster if it names it.
func TestBootstrapsLoad(t *testing.T) {
	gw, _ := load.Bytes("gw.yaml", []byte(strings.Join(gatewayWorld, "\n---\n")))
	for _, objs := range [][]model.Object{bookinfoObjects(t), gw} {
		for _, opts := range []Options{{}, {TLS: TLSFiles, CertDir: "/certs"}, {TLS: TLSOff, Endpoints: EndpointsDNS}} {
			for path, data := range build(t, objs, opts, 2) {
				if path == "index.json" {
					continue
				}
				var b bootstrapv3.Bootstrap
				if err := protojson.Unmarshal(data, &b); err != nil {
					t.Fatalf("%s (%v): %v", path, opts, err)
				}
				if err := deepValidate(&b); err != nil {
					t.Errorf("%s (%v): %v", path, opts, err)
				}
				if len(b.GetStaticResources().GetClusters()) == 0 || b.GetNode().GetId() == "" {
					t.Errorf("%s (%v): no clusters or node", path, opts)
				}
				// Envoy refuses an SDS config naming a cluster it lacks.
				names := names(b.GetStaticResources().GetClusters())
				if bytes.Contains(data, []byte(`"cluster_name": "`+SDSCluster+`"`)) && !slices.Contains(names, SDSCluster) {
					t.Errorf("%s (%v): SDS from %s, which the bootstrap lacks", path, opts, SDSCluster)
				}
			}
		}
	}
}
