package compile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/testfiles"
)

const bookinfo = "../../examples/bookinfo"

// TestTwoCompilesCoexist: compiles of other inputs and options in one
// process keep their own results (a diff needs BASE and HEAD at once).
func TestTwoCompilesCoexist(t *testing.T) {
	ctx := context.Background()
	a, err := Run(ctx, Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := netip.MustParsePrefix("100.64.0.0/16")
	b, err := Run(ctx, Inputs{Paths: []string{"-"}, Stdin: strings.NewReader(service)}, Options{PlaceholderVIPs: other})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Mesh.Views) != 7 || len(a.Files) != 6 || len(b.Mesh.Views) != 0 || len(b.Files) != 1 {
		t.Fatalf("bookinfo: %d proxies from %d files; stdin: %d proxies from %d files", len(a.Mesh.Views), len(a.Files), len(b.Mesh.Views), len(b.Files))
	}
	vip := func(r *Result) netip.Addr {
		for _, s := range r.Mesh.Services {
			if strings.HasPrefix(string(s.Host), "web.shop.") {
				return netip.MustParseAddr(s.Addresses[0])
			}
		}
		t.Fatal("no service web.shop")
		return netip.Addr{}
	}
	if got := vip(b); !other.Contains(got) {
		t.Errorf("placeholder VIP %s outside %s", got, other)
	}
	c, err := Run(ctx, Inputs{Paths: []string{"-"}, Stdin: strings.NewReader(service)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := vip(c); other.Contains(got) || !DefaultPlaceholderVIPs().Contains(got) {
		t.Errorf("second compile took the first one's range: %s", got)
	}
}

const service = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80, name: http}]}
`

// TestRunEndsWithContext: a compile blocked reading standard input returns
// the context's cause as soon as the context ends.
func TestRunEndsWithContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	cause := errors.New("interrupted")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	_, err := Run(ctx, Inputs{Paths: []string{"-"}, Stdin: r}, Options{})
	if !errors.Is(err, cause) || time.Since(start) > 5*time.Second {
		t.Errorf("err = %v after %v, want the cause at once", err, time.Since(start))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		ok   bool
	}{
		{Options{}, true},
		{Options{PlaceholderVIPs: netip.MustParsePrefix("10.0.0.0/31")}, false},
		{Options{PlaceholderVIPs: netip.MustParsePrefix("fd00::/64")}, false},
		{Options{Only: []string{"MC4003", "IST0109"}}, true},
		{Options{Only: []string{"MC1001"}}, false},
	} {
		if err := tc.opts.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.opts, err)
		}
	}
}

// TestBuildRunsBuildChecks: a build writes every selected proxy and adds
// the build checks' findings to the compile's, here MC8001 under a tiny
// budget and MC8003 for a policy meshc does not build.
func TestBuildRunsBuildChecks(t *testing.T) {
	authz := filepath.Join(t.TempDir(), "authz.yaml")
	if err := os.WriteFile(authz, []byte("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: deny, namespace: default}\nspec: {selector: {matchLabels: {app: ratings}}, action: DENY, rules: [{}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Inputs{Paths: []string{bookinfo, authz}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	views, err := r.SelectProxies([]string{"default/ratings-*"})
	if err != nil || len(views) != 1 {
		t.Fatalf("%d views, %v", len(views), err)
	}
	if _, err := r.SelectProxies([]string{"default/nope"}); err == nil {
		t.Error("a pattern matching nothing was accepted")
	}
	built, err := r.Write(context.Background(), views, t.TempDir(), BuildOptions{MaxProxyBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, d := range built.Diagnostics {
		codes[d.Code]++
	}
	if len(built.Index) != 1 || codes["MC8001"] != 1 || codes["MC8003"] != 1 {
		t.Errorf("index %d entries, codes %v", len(built.Index), codes)
	}
}

// TestProxySuggests: a proxy that does not exist gets the nearest names;
// a stand-in's name says what it is.
func TestProxySuggests(t *testing.T) {
	r, err := Run(context.Background(), Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Proxy("default", "reviews-v1"); err != nil {
		t.Error(err)
	}
	if _, err := r.Proxy("default", "reviews"); err == nil || !strings.Contains(err.Error(), "did you mean default/reviews-v1") {
		t.Errorf("err = %v", err)
	}
	// A stand-in named in a finding is explained, not suggested against.
	if _, err := r.Proxy("default", "*"); err == nil || !strings.Contains(err.Error(), "default/* in a finding stands for any proxy of default") {
		t.Errorf("stand-in: err = %v", err)
	}
}

// TestProxyConfigTooLargeGroupedByScope: bookinfo's six sidecars share one
// scope and the gateway has its own, so a tiny budget gives two MC8001,
// naming six proxies and one.
func TestProxyConfigTooLargeGroupedByScope(t *testing.T) {
	r, err := Run(context.Background(), Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	built, err := r.Write(context.Background(), r.Mesh.Views, t.TempDir(), BuildOptions{MaxProxyBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, d := range built.Diagnostics {
		if d.Code == "MC8001" {
			sizes = append(sizes, len(d.Proxies))
			if !strings.Contains(d.Message, "over the budget of 100") {
				t.Errorf("message %q", d.Message)
			}
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{1, 6}) {
		t.Errorf("MC8001 groups of %v proxies, want [1 6]", sizes)
	}
}

// TestEstimateWithinAFactorOfTwo: on a generated mesh with and without
// Sidecars, with a private ServiceEntry in every namespace, and routed by
// mesh HTTPRoutes (whose destinations name one port of two-port
// services), the estimate of both layouts is within a factor of two of
// what the build writes, and sharing is estimated smaller.
func TestEstimateWithinAFactorOfTwo(t *testing.T) {
	small := meshgen.Options{Namespaces: 6, ServicesPerNS: 5, SidecarEveryNth: 2}
	for _, c := range []struct {
		opts    meshgen.Options
		private bool
	}{
		{small, false},
		{small, true},
		{meshgen.Options{Namespaces: 12, ServicesPerNS: 10, SidecarEveryNth: -1, HTTPRoutes: true}, false},
	} {
		estimateWithinAFactorOfTwo(t, c.opts, c.private)
	}
}

func estimateWithinAFactorOfTwo(t *testing.T, mesh meshgen.Options, private bool) {
	dir := t.TempDir()
	if _, _, err := meshgen.Write(dir, mesh); err != nil {
		t.Fatal(err)
	}
	for i := 1; private && i <= 6; i++ {
		ns := fmt.Sprintf("ns-%03d", i)
		se := fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: private, namespace: %s}\n"+
			"spec: {hosts: [api.%s.internal], exportTo: [.], resolution: DNS, ports: [{number: 443, name: https, protocol: TLS}]}\n", ns, ns)
		if err := os.WriteFile(filepath.Join(dir, ns, "private.yaml"), []byte(se), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(context.Background(), Inputs{Paths: []string{dir}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var estimates [3]int64
	for i, opts := range []BuildOptions{{}, {SelfContained: true}, {ADS: "127.0.0.1:15010"}} {
		est := r.Estimate(r.Mesh.Views, opts)
		out := t.TempDir()
		built, err := r.Write(context.Background(), r.Mesh.Views, out, opts)
		if err != nil {
			t.Fatal(err)
		}
		var written, proxyFiles int64
		_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, _ error) error {
			if info, err := d.Info(); err == nil && !d.IsDir() {
				written += info.Size()
				if d.Name() != "index.json" {
					proxyFiles += info.Size()
				}
			}
			return nil
		})
		if built.Written != proxyFiles {
			t.Errorf("%+v: Written %d, the proxies' files on disk %d", opts, built.Written, proxyFiles)
		}
		if ratio := float64(est.Bytes) / float64(written); ratio < 0.5 || ratio > 2 {
			t.Errorf("%+v, %+v: estimated %d bytes, wrote %d (ratio %.2f)", mesh, opts, est.Bytes, written, ratio)
		}
		if len(est.Scopes) == 0 || est.Scopes[0].Proxies == 0 {
			t.Errorf("no scopes in the estimate: %+v", est)
		}
		estimates[i] = est.Bytes
	}
	if estimates[2] >= estimates[0] || estimates[0] >= estimates[1] {
		t.Errorf("estimates with ADS %d, shared %d and self-contained %d not in increasing order", estimates[2], estimates[0], estimates[1])
	}
}

// TestFileKeysRelativeToInputs: a finding about a file, not an object, is
// keyed by the file's path below the inputs, however the inputs are
// spelled, so a baseline matches a run from another directory; with two
// inputs the path starts where they part.
func TestFileKeysRelativeToInputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"m/x.yaml", "n/y.yaml"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("a: [b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := filepath.Join(dir, "m")
	for _, tt := range []struct {
		paths []string
		// tree are the same inputs in an fs.FS of dir.
		tree []string
		want []string
	}{
		{[]string{m}, []string{"m"}, []string{"MC1001/file=x.yaml/doc=1"}},
		{[]string{m + string(filepath.Separator) + "."}, []string{"m/."}, []string{"MC1001/file=x.yaml/doc=1"}},
		{[]string{filepath.Join(m, "x.yaml")}, []string{"m/x.yaml"}, []string{"MC1001/file=x.yaml/doc=1"}},
		{[]string{m, filepath.Join(dir, "n")}, []string{"m", "n"}, []string{"MC1001/file=m/x.yaml/doc=1", "MC1001/file=n/y.yaml/doc=1"}},
	} {
		for _, in := range []Inputs{{Paths: tt.paths}, {Paths: tt.tree, FS: os.DirFS(dir)}} {
			r, err := Run(context.Background(), in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, d := range r.Diagnostics {
				keys = append(keys, d.Key)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tt.want) {
				t.Errorf("%v: keys %q, want %q", in.Paths, keys, tt.want)
			}
		}
	}
}

// TestRunFromTree: inputs read from an fs.FS compile as from the disk,
// with the mesh config read there too, and findings name the fs.FS's
// files.
func TestRunFromTree(t *testing.T) {
	ctx := context.Background()
	mesh := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n    bogus: 1\n"
	dir := testfiles.Write(t, map[string]string{"mesh.yaml": mesh})
	disk, err := Run(ctx, Inputs{Paths: []string{bookinfo}}, Options{MeshConfigFile: filepath.Join(dir, "mesh.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Run(ctx, Inputs{Paths: []string{"bookinfo"}, FS: os.DirFS("../../examples")}, Options{MeshConfigFile: "mesh.yaml", MeshConfigIn: os.DirFS(dir)})
	if err != nil {
		t.Fatal(err)
	}
	findings := func(r *Result, prefix string) []string {
		var out []string
		for _, d := range r.Diagnostics {
			out = append(out, strings.ReplaceAll(d.Key+" "+d.Object.File+" "+d.Message, prefix, ""))
		}
		return out
	}
	got, want := findings(tree, ""), findings(disk, dir+"/")
	if !slices.Equal(got, want) || len(tree.Mesh.Views) != len(disk.Mesh.Views) || len(tree.Files) != len(disk.Files) {
		t.Errorf("from the tree: %d proxies, %d files, findings\n%q\nfrom the disk: %d proxies, %d files, findings\n%q",
			len(tree.Mesh.Views), len(tree.Files), got, len(disk.Mesh.Views), len(disk.Files), want)
	}
	if len(got) == 0 || !strings.HasPrefix(tree.Files[0], "bookinfo/") {
		t.Errorf("files %v, findings %v", tree.Files, got)
	}
	if tree.Mesh.Config.OutboundTrafficPolicy.GetMode().String() != "REGISTRY_ONLY" {
		t.Error("the mesh config in the tree was not read")
	}
}

// TestStagesRunInOrder: a compile runs the named stages in order, times
// each and calls AfterStage as each ends.
func TestStagesRunInOrder(t *testing.T) {
	var ended []string
	r, err := Run(context.Background(), Inputs{Paths: []string{bookinfo}}, Options{AfterStage: func(s string) { ended = append(ended, s) }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Stages {
		names = append(names, s.Name)
	}
	want := []string{StageLoad, StageMeshConfig, StageHierarchy, StageGatewayAPI, StageResolve, StageAnalyze, StageSuppress}
	if !slices.Equal(names, want) {
		t.Errorf("stages %v, want %v", names, want)
	}
	if !slices.Equal(ended, want) {
		t.Errorf("AfterStage heard %v, want %v", ended, want)
	}
}

// TestCancelledCompileLeavesNoGoroutine: whenever the context ends, during
// whichever stage, Run returns its cause promptly and no goroutine of the
// compile is left running, as a server that recompiles on every save
// needs.
func TestCancelledCompileLeavesNoGoroutine(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := meshgen.Write(dir, meshgen.Options{Namespaces: 40, ServicesPerNS: 10, SidecarEveryNth: 3}); err != nil {
		t.Fatal(err)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	baseline := runtime.NumGoroutine()
	full := time.Now()
	if _, err := Run(context.Background(), Inputs{Paths: []string{dir}}, Options{}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(full)
	cause := errors.New("stop")
	for _, frac := range []float64{0, 0.1, 0.3, 0.5, 0.7, 0.9} {
		ctx, cancel := context.WithCancelCause(context.Background())
		timer := time.AfterFunc(time.Duration(frac*float64(took)), func() { cancel(cause) })
		_, err := Run(ctx, Inputs{Paths: []string{dir}}, Options{})
		timer.Stop()
		cancel(nil)
		// A run that finished before the cancel is fine; one that saw it
		// must report the cause.
		if err != nil && !errors.Is(err, cause) {
			t.Errorf("cancel at %.0f%%: %v, want the cause", frac*100, err)
		}
		// Counted at once, allowing the timer's goroutine a moment to
		// end: a compile left to finish unobserved would still be running
		// for most of a full compile's time.
		if n := settledGoroutines(baseline, took/2); n > baseline {
			t.Errorf("cancel at %.0f%%: %d goroutines after Run, %d before", frac*100, n, baseline)
		}
	}
}

// settledGoroutines polls the goroutine count for up to d until it is at
// most want, and returns the last count.
func settledGoroutines(want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// TestNoAnalyzers: without the analyzers the mesh is the same, and only
// the stages' own diagnostics remain.
func TestNoAnalyzers(t *testing.T) {
	const in = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: shop}
spec:
  hosts: [web]
  http: [{route: [{destination: {host: nowhere}}]}]
`
	ctx := context.Background()
	full, err := Run(ctx, Inputs{Paths: []string{"-"}, Stdin: strings.NewReader(service + "---\n" + in)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := Run(ctx, Inputs{Paths: []string{"-"}, Stdin: strings.NewReader(service + "---\n" + in)}, Options{NoAnalyzers: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Diagnostics) == 0 || len(bare.Diagnostics) != 0 {
		t.Errorf("%d diagnostics with the analyzers, %d without; want some, then none", len(full.Diagnostics), len(bare.Diagnostics))
	}
	if len(full.Mesh.Services) != len(bare.Mesh.Services) || len(full.Mesh.VirtualServices) != len(bare.Mesh.VirtualServices) {
		t.Errorf("the mesh differs without the analyzers")
	}
}

// TestIndexRecordsTheBuild: index.json says which meshc wrote a build,
// with which options, and which services got a made-up VIP.
func TestIndexRecordsTheBuild(t *testing.T) {
	r, err := Run(context.Background(), Inputs{Paths: []string{"-"}, Stdin: strings.NewReader(service)}, Options{PlaceholderVIPs: netip.MustParsePrefix("100.64.0.0/16"), DualStack: true})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	built, err := r.Write(context.Background(), r.Mesh.Views, out, BuildOptions{Format: "xds", SelfContained: true, Version: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Build struct {
			Meshc           string
			Options         map[string]string
			PlaceholderVIPs struct {
				Range    string
				Services []string
			}
		}
	}
	if err := json.Unmarshal(data, &index); err != nil {
		t.Fatal(err)
	}
	b := index.Build
	want := map[string]string{"format": "xds", "endpoints": "inline", "tls-mode": "istio", "layout": "self-contained", "placeholder-vips": "100.64.0.0/16", "dual-stack": "true"}
	if b.Meshc != "v9.9.9" || !maps.Equal(b.Options, want) {
		t.Errorf("build %q with %v, want v9.9.9 with %v", b.Meshc, b.Options, want)
	}
	if p := b.PlaceholderVIPs; p.Range != "100.64.0.0/16" || !slices.Equal(p.Services, []string{"web.shop.svc.cluster.local"}) || built.Placeholders == nil {
		t.Errorf("placeholders %+v (Built: %+v)", p, built.Placeholders)
	}
}

// TestInputDigest: index.json's digest of the inputs is the same for the
// same documents in other files and another order, and changes with any
// document.
func TestInputDigest(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80, name: http}]}\n",
		// Left out as invalid: not part of what the build was made from.
		"apiVersion: v1\nkind: Service\nmetadata: {namespace: shop}\n",
	}
	digest := func(files map[string]string) emit.InputDigest {
		t.Helper()
		dir := t.TempDir()
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Run(context.Background(), Inputs{Paths: []string{dir}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.inputDigest()
	}
	one := digest(map[string]string{"all.yaml": docs[0] + "---\n" + docs[1] + "---\n" + docs[2]})
	swapped := digest(map[string]string{"a.yaml": docs[1], "b.yaml": docs[0]})
	changed := digest(map[string]string{"a.yaml": docs[1], "b.yaml": strings.Replace(docs[0], "shop", "shop2", 1)})
	if one != swapped || one.Documents != 2 || !strings.HasPrefix(one.Digest, "sha256:") {
		t.Errorf("same documents, other files and order: %+v and %+v", one, swapped)
	}
	if changed == one {
		t.Errorf("a changed document kept the digest %+v", one)
	}
}
