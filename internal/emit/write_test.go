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
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

const bookinfo = "../../examples/bookinfo"

func loadMesh(t *testing.T, objs []model.Object) *resolve.Mesh {
	t.Helper()
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	return resolve.Resolve(objs, resolve.Options{Mesh: mc})
}

func bookinfoObjects(t *testing.T) []model.Object {
	t.Helper()
	res, ds, err := load.Paths(context.Background(), []string{bookinfo}, load.Options{})
	if err != nil || len(ds) > 0 {
		t.Fatalf("load bookinfo: %v %v", err, ds)
	}
	return res.Objects
}

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
	out := filepath.Join(t.TempDir(), "out")
	if _, err := New(m, opts).Write(context.Background(), m.Views, WriteOptions{Out: out, Workers: workers}); err != nil {
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

// TestWriteRefusesUnsafeNames: a name that is not a DNS-1123 subdomain
// never becomes a path, and the failed build leaves the previous output
// as it was.
func TestWriteRefusesUnsafeNames(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(out, "previous.txt")
	if err := os.WriteFile(marker, []byte("old build"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../escape", "a/b", "..", "UPPER", ""} {
		evil := *m.Views[0]
		p := *evil.Proxy
		p.Name = bad
		evil.Proxy = &p
		views := []*resolve.ProxyView{m.Views[1], &evil}
		_, err := New(m, Options{}).Write(context.Background(), views, WriteOptions{Out: out})
		if err == nil || !strings.Contains(err.Error(), "not a valid name") {
			t.Errorf("name %q: err = %v, want a refusal", bad, err)
		}
	}
	if data, err := os.ReadFile(marker); err != nil || string(data) != "old build" {
		t.Errorf("previous output changed: %q, %v", data, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("temporary directories left beside the output: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "escape")); !os.IsNotExist(err) {
		t.Error("a file was written outside the output directory")
	}
}

// TestWriteReplacesOutput: a successful build replaces the whole
// directory, dropping files of the previous build.
func TestWriteReplacesOutput(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(filepath.Join(out, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := New(m, Options{}).Write(context.Background(), m.Views, WriteOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale")); !os.IsNotExist(err) {
		t.Error("stale directory survived the build")
	}
	for _, e := range res.Index {
		if _, err := os.Stat(filepath.Join(out, e.Path)); err != nil {
			t.Errorf("index names %s: %v", e.Path, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "index.json")); err != nil {
		t.Error(err)
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
	out := filepath.Join(t.TempDir(), "out")
	res, err := New(m, Options{Dedup: true}).Write(context.Background(), m.Views, WriteOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := os.ReadDir(filepath.Join(out, "shared"))
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
