package emit

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
	"github.com/meshc/meshc/internal/testfiles"
)

const bookinfo = "../../examples/bookinfo"

func loadMesh(_ *testing.T, objs []model.Object) *resolve.Mesh { return resolvetest.Resolve(objs) }

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
			testfiles.Golden(t, filepath.Join("testdata/bookinfo-xds", f.Path), f.Data)
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
	for _, opts := range []Options{{Format: Bootstrap}, {Format: XDS}, {Format: Bootstrap, Shared: true}, {Format: XDS, Shared: true}} {
		format := fmt.Sprintf("%+v", opts)
		first := build(t, objs, opts, 1)
		shuffled := append([]model.Object(nil), objs...)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		prev := runtime.GOMAXPROCS(4)
		second := build(t, shuffled, opts, 8)
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

// writeShared writes a shared build of m in format to a new directory.
func writeShared(t *testing.T, m *resolve.Mesh, format Format) (string, Result) {
	t.Helper()
	out := t.TempDir()
	res, err := New(m, Options{Format: format, Shared: true}).Write(context.Background(), m.Views, WriteOptions{Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// TestSharedLayout: with Shared, bookinfo's sidecars (one scope) name the
// same shared files, which load back as DiscoveryResponses; a bootstrap
// holds only its own resources and loads the shared ones through
// filesystem config sources.
func TestSharedLayout(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	for _, format := range []Format{Bootstrap, XDS} {
		out, res := writeShared(t, m, format)
		want := map[Format]int{Bootstrap: 2, XDS: 4}[format]
		var sidecarShared []string
		for _, e := range res.Index {
			if e.Type != "sidecar" {
				continue
			}
			if len(e.Shared) != want {
				t.Fatalf("%s: %s names %d shared files, want %d", format, e.Name, len(e.Shared), want)
			}
			if sidecarShared == nil {
				sidecarShared = e.Shared
			} else if !slices.Equal(sidecarShared, e.Shared) {
				t.Errorf("%s: %s shares %v, the first sidecar %v", format, e.Name, e.Shared, sidecarShared)
			}
			for _, s := range e.Shared {
				data, err := os.ReadFile(filepath.Join(out, s))
				if err != nil {
					t.Fatal(err)
				}
				var resp discoveryv3.DiscoveryResponse
				if err := protojson.Unmarshal(data, &resp); err != nil || len(resp.GetResources()) == 0 && !strings.Contains(s, "routes") && !strings.Contains(s, "endpoints") {
					t.Errorf("%s: %v, %d resources", s, err, len(resp.GetResources()))
				}
			}
		}
	}
}

// TestSharedEqualsSelfContained: every proxy's resources, own and shared
// together, are those of the self-contained layout, name for name and
// field for field, in both formats, for bookinfo, the gateway world and a
// generated mesh with and without Sidecars.
func TestSharedEqualsSelfContained(t *testing.T) {
	gw, _ := load.Bytes("gw.yaml", []byte(strings.Join(gatewayWorld, "\n---\n")))
	var gen []model.Object
	for _, f := range meshgen.Generate(meshgen.Options{Namespaces: 3, ServicesPerNS: 3, SidecarEveryNth: 2}) {
		objs, _ := load.Bytes(f.Name, f.Data)
		gen = append(gen, objs...)
	}
	for _, objs := range [][]model.Object{bookinfoObjects(t), gw, gen, privateServicesMesh(t)} {
		m := loadMesh(t, objs)
		for _, format := range []Format{Bootstrap, XDS} {
			whole, shared := t.TempDir(), t.TempDir()
			a, err := New(m, Options{Format: format}).Write(context.Background(), m.Views, WriteOptions{Dir: whole})
			if err != nil {
				t.Fatal(err)
			}
			b, err := New(m, Options{Format: format, Shared: true}).Write(context.Background(), m.Views, WriteOptions{Dir: shared})
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.Index {
				got, want := proxyResources(t, shared, b.Index[i]), proxyResources(t, whole, a.Index[i])
				if len(got) != len(want) || len(want) == 0 {
					t.Errorf("%s %s: %d resources shared, %d whole", format, a.Index[i].Path, len(got), len(want))
				}
				for name, w := range want {
					if g, ok := got[name]; !ok || !proto.Equal(g, w) {
						t.Errorf("%s %s: %s differs or is missing", format, a.Index[i].Path, name)
					}
				}
			}
		}
	}
}

// privateServicesMesh is a generated mesh without Sidecars whose
// namespaces each have a ServiceEntry of their own (exportTo "."): every
// scope sees the mesh-wide services and one private one.
func privateServicesMesh(t *testing.T) []model.Object {
	t.Helper()
	var objs []model.Object
	for _, f := range meshgen.Generate(meshgen.Options{Namespaces: 3, ServicesPerNS: 2, SidecarEveryNth: -1}) {
		o, _ := load.Bytes(f.Name, f.Data)
		objs = append(objs, o...)
	}
	for _, ns := range []string{"ns-001", "ns-002", "ns-003"} {
		o, ds := load.Bytes(ns+"/private.yaml", []byte(fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: private-api, namespace: %s}
spec:
  hosts: [api.%s.internal]
  exportTo: ["."]
  ports: [{number: 443, name: https, protocol: TLS}]
  resolution: DNS
  location: MESH_EXTERNAL
`, ns, ns)))
		if len(o) != 1 || len(ds) > 0 {
			t.Fatalf("private ServiceEntry of %s: %v", ns, ds)
		}
		objs = append(objs, o...)
	}
	return objs
}

// TestPrivateClustersStayWithProxy: where scopes see the same mesh-wide
// services plus a private one each, the shared layout writes one cluster
// file for all of them and each proxy's private cluster with the proxy
// (static in a bootstrap, in its own clusters.json with xds), never in
// both places.
func TestPrivateClustersStayWithProxy(t *testing.T) {
	m := loadMesh(t, privateServicesMesh(t))
	for _, format := range []Format{Bootstrap, XDS} {
		out, res := writeShared(t, m, format)
		clusterFiles := map[string]bool{}
		for _, e := range res.Index {
			if e.Type != "sidecar" {
				continue
			}
			own, shared := ownAndSharedClusters(t, out, e)
			for _, f := range e.Shared {
				if strings.HasPrefix(filepath.Base(f), "clusters-") {
					clusterFiles[f] = true
				}
			}
			private := "Cluster/outbound|443||api." + e.Namespace + ".internal"
			if !slices.Contains(own, private) || slices.Contains(shared, private) {
				t.Errorf("%s %s: %s not with the proxy alone (own %d clusters, shared %d)", format, e.Path, private, len(own), len(shared))
			}
			for _, c := range own {
				if slices.Contains(shared, c) {
					t.Errorf("%s %s: %s both with the proxy and shared", format, e.Path, c)
				}
				if strings.HasSuffix(c, ".internal") && c != private {
					t.Errorf("%s %s: another namespace's %s", format, e.Path, c)
				}
			}
		}
		if len(clusterFiles) != 1 {
			t.Errorf("%s: %d shared cluster files, want one for every namespace: %v", format, len(clusterFiles), clusterFiles)
		}
	}
}

// ownAndSharedClusters are the names of a proxy's clusters in its own
// files and in the shared files it names.
func ownAndSharedClusters(t *testing.T, out string, e IndexEntry) (own, shared []string) {
	t.Helper()
	read := func(path string) []string {
		var names []string
		for _, m := range readResponse(t, out, path) {
			names = append(names, resourceKey(m))
		}
		return names
	}
	for _, f := range e.Shared {
		if strings.HasPrefix(filepath.Base(f), "clusters-") {
			shared = append(shared, read(f)...)
		}
	}
	if !strings.HasSuffix(e.Path, ".json") {
		return read(filepath.Join(e.Path, "clusters.json")), shared
	}
	for _, c := range readBootstrap(t, out, e.Path).GetStaticResources().GetClusters() {
		own = append(own, resourceKey(c))
	}
	return own, shared
}

// readBootstrap reads a bootstrap of a build.
func readBootstrap(t *testing.T, out, path string) *bootstrapv3.Bootstrap {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, path))
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(data, &b); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &b
}

// proxyResources reads a proxy's resources from a build, by type and
// name: a bootstrap's static ones and those its config sources load, or
// the xDS files and the shared files the index names.
func proxyResources(t *testing.T, out string, e IndexEntry) map[string]proto.Message {
	t.Helper()
	res := map[string]proto.Message{}
	addResponse := func(path string) {
		for _, m := range readResponse(t, out, path) {
			if err := deepValidate(m); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			res[resourceKey(m)] = m
		}
	}
	if strings.HasSuffix(e.Path, ".json") {
		b := readBootstrap(t, out, e.Path)
		for _, l := range b.GetStaticResources().GetListeners() {
			res[resourceKey(l)] = l
		}
		for _, c := range b.GetStaticResources().GetClusters() {
			res[resourceKey(c)] = c
		}
		for _, src := range []*corev3.ConfigSource{b.GetDynamicResources().GetCdsConfig(), b.GetDynamicResources().GetLdsConfig()} {
			if p := src.GetPathConfigSource().GetPath(); p != "" {
				addResponse(p)
			}
		}
		return res
	}
	for _, f := range []string{"clusters.json", "endpoints.json", "listeners.json", "routes.json"} {
		addResponse(filepath.Join(e.Path, f))
	}
	for _, s := range e.Shared {
		addResponse(s)
	}
	return res
}

// readResponse reads the resources of a DiscoveryResponse file of a build.
func readResponse(t *testing.T, out, path string) []proto.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, path))
	if err != nil {
		t.Fatal(err)
	}
	var resp discoveryv3.DiscoveryResponse
	if err := protojson.Unmarshal(data, &resp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ms []proto.Message
	for _, a := range resp.GetResources() {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func resourceKey(m proto.Message) string {
	name := ""
	switch r := m.(type) {
	case interface{ GetClusterName() string }:
		name = r.GetClusterName()
	case interface{ GetName() string }:
		name = r.GetName()
	}
	return string(m.ProtoReflect().Descriptor().Name()) + "/" + name
}

// TestBootstrapsLoad: every bootstrap written, for every bookinfo proxy
// and the gateway world, in each TLS mode and with DNS endpoints, decodes
// back as an Envoy Bootstrap that passes Envoy's validation down to the
// configs packed inside, and has the agent's cluster if it names it.
func TestBootstrapsLoad(t *testing.T) {
	gw, _ := load.Bytes("gw.yaml", []byte(strings.Join(gatewayWorld, "\n---\n")))
	for _, objs := range [][]model.Object{bookinfoObjects(t), gw} {
		for _, opts := range []Options{{}, {TLS: TLSFiles, CertDir: "/certs"}, {TLS: TLSOff, Endpoints: EndpointsDNS}} {
			for _, shared := range []bool{false, true} {
				opts.Shared = shared
				files := build(t, objs, opts, 2)
				for path, data := range files {
					if path == "index.json" || strings.HasPrefix(path, SharedDir) {
						continue
					}
					checkBootstrap(t, fmt.Sprintf("%s (%+v)", path, opts), data, files)
				}
			}
		}
	}
}

// checkBootstrap decodes a bootstrap and validates it, down to configs
// packed inside and the resources of the files its config sources name
// (in files, by path); protojson must render it to the same bytes; the
// agent's cluster must be there when an SDS config names it.
func checkBootstrap(t *testing.T, what string, data []byte, files map[string][]byte) {
	t.Helper()
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(data, &b); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := deepValidate(&b); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if again, err := indentedJSON(&b, 0); err != nil || !bytes.Equal(append(again, '\n'), data) {
		t.Errorf("%s: not protojson's rendering of itself (%v)", what, err)
	}
	clusters := names(b.GetStaticResources().GetClusters())
	loaded := 0
	for _, src := range []*corev3.ConfigSource{b.GetDynamicResources().GetCdsConfig(), b.GetDynamicResources().GetLdsConfig()} {
		p := src.GetPathConfigSource().GetPath()
		if p == "" {
			continue
		}
		var resp discoveryv3.DiscoveryResponse
		if err := protojson.Unmarshal(files[filepath.FromSlash(p)], &resp); err != nil {
			t.Fatalf("%s: %s: %v", what, p, err)
		}
		for _, a := range resp.GetResources() {
			m, err := a.UnmarshalNew()
			if err == nil {
				err = deepValidate(m)
			}
			if err != nil {
				t.Errorf("%s: %s: %v", what, p, err)
			}
			if c, ok := m.(*clusterv3.Cluster); ok {
				clusters = append(clusters, c.GetName())
			}
			loaded++
		}
	}
	if len(clusters) == 0 || b.GetNode().GetId() == "" || (b.GetDynamicResources() != nil && loaded == 0) {
		t.Errorf("%s: no clusters, node or loaded resources", what)
	}
	// Envoy refuses an SDS config naming a cluster it lacks.
	if bytes.Contains(data, []byte(`"cluster_name": "`+SDSCluster+`"`)) && !slices.Contains(clusters, SDSCluster) {
		t.Errorf("%s: SDS from %s, which the bootstrap lacks", what, SDSCluster)
	}
}
