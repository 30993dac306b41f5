package main

import (
	"bytes"
	"context"
	"encoding/json"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

// meshc runs the CLI in-process and returns exit status, stdout and stderr.
func meshc(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFiles(t *testing.T, files map[string]string) string { return testfiles.Write(t, files) }

const goodNS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80, name: http}]}\n"

// cliCase runs meshc with args and expects the exit code and fragments of
// stdout and stderr.
type cliCase struct {
	name string
	args []string
	code int
	out  string // fragment of stdout
	err  string // fragment of stderr
}

func runCLICases(t *testing.T, tests []cliCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := meshc(t, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwant stdout containing %q and stderr containing %q", code, tt.code, out, errOut, tt.out, tt.err)
			}
		})
	}
}

func TestLintExitCodes(t *testing.T) {
	clean := writeFiles(t, map[string]string{"ns.yaml": goodNS})
	broken := writeFiles(t, map[string]string{
		"good.yaml":   goodNS,
		"broken.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: [x\n",
	})
	warning := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    rootNamespce: x\n"})
	info := writeFiles(t, map[string]string{"s.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: s}\n"})
	runCLICases(t, []cliCase{
		{"bundled example is clean", []string{"lint", filepath.Join("..", "..", "examples", "bookinfo")}, 0, "0 errors, 0 warnings, 0 info in 21 objects from 6 files", ""},
		{"clean folder", []string{"lint", clean}, 0, "2 objects from 1 file", ""},
		{"broken file fails and the rest still loads", []string{"lint", broken}, 1, "broken.yaml:4: error MC1001 InvalidYAML", ""},
		{"broken file summary counts good objects", []string{"lint", broken}, 1, "1 error, 0 warnings, 0 info in 2 objects from 2 files", ""},
		{"fail-on none", []string{"lint", broken, "--fail-on", "none"}, 0, "MC1001", ""},
		{"warning passes the default threshold", []string{"lint", warning}, 0, "warning MC1003", ""},
		{"fail-on warning", []string{"lint", warning, "--fail-on", "warning"}, 1, "warning MC1003", ""},
		{"info passes fail-on warning", []string{"lint", info, "--fail-on", "warning"}, 0, "info MC1005", ""},
		{"fail-on info", []string{"lint", info, "--fail-on", "info"}, 1, "info MC1005", ""},
		{"unreadable input", []string{"lint", filepath.Join(clean, "missing")}, 2, "MC1006", ""},
		{"unreadable input wins over fail-on none", []string{"lint", clean, filepath.Join(clean, "missing"), "--fail-on", "none"}, 2, "MC1006", ""},
		{"unknown flag", []string{"lint", "--frobnicate"}, 2, "", "unknown flag"},
		{"unknown output", []string{"lint", clean, "-o", "xml"}, 2, "", "unknown output format"},
		{"bad fail-on", []string{"lint", clean, "--fail-on", "fatal"}, 2, "", "--fail-on"},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"explain", []string{"lint", "--explain", "mc1004"}, 0, "MC1004 DuplicateObject (error)", ""},
		{"explain by name", []string{"lint", "--explain", "InvalidYAML"}, 0, "MC1001 InvalidYAML", ""},
		{"explain unknown", []string{"lint", "--explain", "MC9999"}, 2, "", "no diagnostic"},
		{"version", []string{"version"}, 0, "meshc ", ""},
		{"completion", []string{"completion", "bash"}, 0, "bash completion", ""},
		{"mesh config flag", []string{"lint", clean, "--mesh-config", filepath.Join(clean, "none.yaml")}, 2, "mesh config: cannot read", ""},
		{"bad placeholder range", []string{"lint", clean, "--placeholder-vips", "10.0.0.0/31"}, 2, "", "--placeholder-vips"},
	})
}

func TestLintStdin(t *testing.T) {
	code, out, _ := meshc(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: Bad_Name\n", "lint", "-")
	if code != 1 || !strings.Contains(out, "<stdin>:4: error MC1002 InvalidObject") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestLintJSONAndSARIF(t *testing.T) {
	dir := writeFiles(t, map[string]string{"good.yaml": goodNS, "broken.yaml": "a: b: c\n"})
	code, out, _ := meshc(t, "", "lint", dir, "-o", "json")
	var doc struct {
		Diagnostics []struct {
			Code   string
			Object struct {
				File string
				Line int
			}
		}
		Summary struct{ Error, Warning, Info int }
		Input   struct{ Files, Objects int }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	if code != 1 || len(doc.Diagnostics) != 1 || doc.Diagnostics[0].Code != "MC1001" || doc.Diagnostics[0].Object.Line != 1 ||
		doc.Summary.Error != 1 || doc.Input.Objects != 2 || doc.Input.Files != 2 {
		t.Errorf("exit %d, json %+v", code, doc)
	}
	code, out, _ = meshc(t, "", "lint", dir, "-o", "sarif")
	var log struct {
		Version string
		Runs    []struct{ Results []struct{ RuleID string } }
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != 1 || log.Version != "2.1.0" || len(log.Runs[0].Results) != 1 {
		t.Errorf("exit %d, sarif %+v, err %v", code, log, err)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range [][]string{{"--help"}, {"lint", "--help"}, {"version", "--help"}} {
		code, out, _ := meshc(t, "", cmd...)
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%v: exit %d, no examples:\n%s", cmd, code, out)
		}
	}
}

func TestNoColorWhenNotATerminal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"broken.yaml": "a: b: c\n"})
	_, out, _ := meshc(t, "", "lint", dir)
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colored output to a buffer:\n%q", out)
	}
}

func TestExplainProxy(t *testing.T) {
	bookinfo := filepath.Join("..", "..", "examples", "bookinfo")
	runCLICases(t, []cliCase{
		{"text", []string{"explain", "proxy", "default/reviews-v2", "-f", bookinfo}, 0, "reviews.default.svc.cluster.local  default/reviews (proxy namespace)  subsets v1, v2, v3", ""},
		{"json", []string{"explain", "proxy", "default/reviews-v2", "-f", bookinfo, "-o", "json"}, 0, `"virtualService": "default/reviews"`, ""},
		{"verbose", []string{"explain", "proxy", "default/reviews-v2", "-f", bookinfo, "--verbose"}, 0, "egress on any port: */*", ""},
		{"near match", []string{"explain", "proxy", "default/reviews", "-f", bookinfo}, 2, "", "did you mean default/reviews-v1"},
		{"not a proxy at all", []string{"explain", "proxy", "nowhere/zzzzzzzzzzzz", "-f", bookinfo}, 2, "", "a proxy is an injected Pod or workload"},
		{"bad argument", []string{"explain", "proxy", "shop/", "-f", bookinfo}, 2, "", "want [NAMESPACE/]NAME"},
		{"name alone is in default", []string{"explain", "proxy", "reviews", "-f", bookinfo}, 2, "", "no proxy default/reviews in the input (7 proxies found); did you mean default/reviews-v1"},
		{"paths after the proxy", []string{"explain", "proxy", "productpage-v1", bookinfo}, 0, "Proxy default/productpage-v1", ""},
		{"bad format", []string{"explain", "proxy", "default/reviews-v2", "-f", bookinfo, "-o", "yaml"}, 2, "", "unknown output format"},
		// A bound gateway server names its own listener and route; one the
		// merge of the gateway's servers drops says so.
		{"bound server", []string{"explain", "proxy", "istio-system/conflicts", "-f", gatewayBind}, 0, "istio-system/conflicts port 8080 bind 10.10.0.1 (listener 10.10.0.1_8080, route http.8080.10.10.0.1), hosts a.example.com", ""},
		{"bound server dropped", []string{"explain", "proxy", "istio-system/conflicts", "-f", gatewayBind}, 0, "port 8080 bind 10.10.0.1 (left out when the gateway's servers merge), hosts db.example.com", ""},
		{"bound server json", []string{"explain", "proxy", "istio-system/conflicts", "-f", gatewayBind, "-o", "json"}, 0, `"bind": "10.10.0.2",
      "listener": "10.10.0.2_8080",
      "routeConfiguration": "https.8080.https.conflicts.istio-system.10.10.0.2"`, ""},
	})
}

// gatewayBind is a mesh of Gateway servers with bind addresses.
var gatewayBind = filepath.Join("..", "..", "testdata", "gateway-bind")

func TestLintReportsResolvedProblems(t *testing.T) {
	dir := writeFiles(t, map[string]string{"mesh.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: a, namespace: shop}
spec: {egress: [{hosts: ["./*"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: b, namespace: shop}
spec: {egress: [{hosts: ["*/*"]}]}
`})
	code, out, _ := meshc(t, "", "lint", dir)
	if code != 1 || !strings.Contains(out, "mesh.yaml:10: error MC6001 MultipleDefaultSidecars") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = meshc(t, "", "lint", dir, "--suppress", "MC6001")
	if code != 0 || strings.Contains(out, "MC6001") {
		t.Errorf("--suppress: exit %d:\n%s", code, out)
	}
}

func TestTree(t *testing.T) {
	dir := writeFiles(t, map[string]string{"h.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: hnc.x-k8s.io/v1alpha2
kind: SubnamespaceAnchor
metadata: {name: service-2, namespace: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: staging}
---
apiVersion: hnc.x-k8s.io/v1alpha2
kind: HierarchyConfiguration
metadata: {name: hierarchy, namespace: staging}
spec: {parent: service-4}
`})
	code, out, _ := meshc(t, "", "tree", "team-a", "-f", dir)
	if code != 0 || out != "team-a\n└── [s] service-2\n\n[s] indicates subnamespaces\n" {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = meshc(t, "", "tree", "-f", dir)
	if code != 0 || !strings.Contains(out, "staging (1)\n") || !strings.Contains(out, `1) ActivitiesHalted (ParentMissing): Parent "service-4" does not exist`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = meshc(t, "", "tree", "-f", dir, "-o", "json")
	if code != 0 || !strings.Contains(out, `"synthesized": true`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, _, errOut := meshc(t, "", "tree", "nowhere", "-f", dir)
	if code != 2 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = meshc(t, "", "tree", "-f", dir, "--hnc-managed-namespace-label", "(")
	if code != 2 || !strings.Contains(errOut, "hierarchy option") {
		t.Errorf("bad regex: exit %d: %s", code, errOut)
	}
}

// TestHierarchyEndToEnd runs the hierarchy example: Sidecar and
// DestinationRule written once in acme reach both teams, resolve in each
// team's namespace, and team-b's own same-named DestinationRule is
// overwritten and reported.
func TestHierarchyEndToEnd(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "hierarchy")
	flags := []string{"-f", dir, "--hnc-managed-namespace-label", "istio-injection"}
	for _, tt := range []struct {
		golden string
		args   []string
		code   int
	}{
		{"tree.txt", append([]string{"tree", "--propagated"}, flags...), 0},
		{"explain-team-a.txt", append([]string{"explain", "proxy", "team-a/web"}, flags...), 0},
		{"explain-team-b.json", append([]string{"explain", "proxy", "team-b/web", "-o", "json"}, flags...), 0},
		{"lint.txt", []string{"lint", dir, "--hnc-managed-namespace-label", "istio-injection"}, 0},
	} {
		code, out, errOut := meshc(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d: %s", tt.args, code, errOut)
		}
		testfiles.Golden(t, filepath.Join("testdata", "hierarchy", tt.golden), []byte(out))
	}
}

// TestImportsOnlyCompileAndRenderers: the commands hold flags, renderers
// and exit codes; the passes are reached through internal/compile, the
// merge of .meshc.yaml and the build into OUT through internal/job.
func TestImportsOnlyCompileAndRenderers(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range src.Imports {
			for _, pass := range []string{"load", "resolve", "hierarchy", "emit", "lint", "outdir", "suppress", "render"} {
				if imp.Path.Value == `"github.com/meshc/meshc/internal/`+pass+`"` {
					t.Errorf("%s imports internal/%s; reach it through internal/compile or internal/job", f, pass)
				}
			}
		}
	}
}

// TestCLIHabits: what a user types out of habit from other tools gets a
// useful answer (issue 28, CLI habits).
func TestCLIHabits(t *testing.T) {
	dir := writeFiles(t, map[string]string{"ns.yaml": goodNS})
	runCLICases(t, []cliCase{
		{"--version", []string{"--version"}, 0, "meshc ", ""},
		{"version -o json", []string{"version", "-o", "json"}, 0, `"go": "go1.`, ""},
		{"version -o xml", []string{"version", "-o", "xml"}, 2, "", "want text or json"},
		{"completion for an unknown shell", []string{"completion", "tcsh"}, 2, "", "no completion for shell \"tcsh\" (want bash, fish, powershell, zsh)"},
		{"build without -o", []string{"build", dir}, 2, "", "see meshc build --help"},
		{"tree given a directory path", []string{"tree", dir}, 2, "", "tree reads its inputs with -f"},
		{"fail-on lists none", []string{"lint", dir, "--fail-on", "fatal"}, 2, "", "want error, warning, info or none"},
		{"build -o a format name", []string{"build", dir, "-o", "json"}, 2, "", "did you mean --format"},
	})
}

// TestVersionJSON: version -o json carries the fields scripts read.
func TestVersionJSON(t *testing.T) {
	code, out, _ := meshc(t, "", "version", "-o", "json")
	var v struct{ Version, Go, Platform string }
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Version == "" || v.Go == "" || v.Platform == "" {
		t.Errorf("exit %d, %v: %s", code, err, out)
	}
}

// TestTreeBareDirectoryName: a bare name that is no namespace of the input
// but a directory is taken for a path.
func TestTreeBareDirectoryName(t *testing.T) {
	dir := writeFiles(t, map[string]string{"manifests/ns.yaml": goodNS})
	t.Chdir(dir)
	code, _, errOut := meshc(t, "", "tree", "-f", "manifests", "manifests")
	if code != 2 || !strings.Contains(errOut, "meshc tree -f manifests") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestListenerSetEndToEnd: explain gateway lists a ListenerSet's listener
// with its route among the Gateway's, and lint reports the ListenerSet the
// Gateway does not admit.
func TestListenerSetEndToEnd(t *testing.T) {
	dir := filepath.Join("testdata", "listenerset")
	runCLICases(t, []cliCase{
		{"explain gateway", []string{"explain", "gateway", "gw/public", dir}, 0, "alt  HTTP 8080, alt.example.com  from ListenerSet team/first", ""},
		{"route of the ListenerSet", []string{"explain", "gateway", "gw/public", dir}, 0, "HTTPRoute team/r", ""},
		{"not admitted", []string{"lint", dir}, 0, "MC7113 ListenerSetNotAccepted: ListenerSet stranger/other", ""},
	})
}

// TestGatewayAPIEndToEnd runs the Gateway API example: it lints clean,
// explain gateway shows each listener with its routes, explain proxy and
// explain request name the route and rule behind each generated route, and
// the build writes the gateway istiod would deploy.
func TestGatewayAPIEndToEnd(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "gateway-api")
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"lint.txt", []string{"lint", dir}},
		{"explain-gateway.txt", []string{"explain", "gateway", "infra/public", dir}},
		{"explain-gateway.json", []string{"explain", "gateway", "infra/public", dir, "-o", "json"}},
		{"explain-proxy.txt", []string{"explain", "proxy", "infra/public-istio", dir, "--routes"}},
		{"explain-request.txt", []string{"explain", "request", "gateway", "infra/public-istio", "http://www.shop.example/cart/items", "-H", "x-session: abc1", dir}},
	} {
		code, out, errOut := meshc(t, "", tt.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tt.args, code, errOut)
		}
		testfiles.Golden(t, filepath.Join("testdata", "gateway-api", tt.golden), []byte(out))
	}
	runCLICases(t, []cliCase{
		{"no such gateway", []string{"explain", "gateway", "infra/nope", dir}, 2, "", "no Gateway API Gateway infra/nope"},
		{"build writes the gateway", []string{"build", dir, "-o", filepath.Join(t.TempDir(), "out")}, 0, "", "wrote"},
	})
}

// TestGatewayPoliciesAndAmbient: explain gateway shows the backend
// policies of the hosts a Gateway's routes send to, with their status, and
// explains ambient Gateways (a waypoint's users, the routes istiod passes
// over); without --alpha-gateway-api an XBackendTrafficPolicy is MC7117.
func TestGatewayPoliciesAndAmbient(t *testing.T) {
	scenarios := filepath.Join("..", "..", "internal", "gatewayapi", "testdata", "scenarios")
	traffic, ambient := filepath.Join(scenarios, "backend-traffic.yaml"), filepath.Join(scenarios, "ambient.yaml")
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"explain-policies.txt", []string{"explain", "gateway", "app/gw", traffic, "--alpha-gateway-api"}},
		{"explain-waypoint.json", []string{"explain", "gateway", "app/waypoint", ambient, "-o", "json"}},
		{"explain-waypoint.txt", []string{"explain", "gateway", "app/waypoint", ambient}},
	} {
		code, out, errOut := meshc(t, "", tt.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tt.args, code, errOut)
		}
		testfiles.Golden(t, filepath.Join("testdata", "gateway-api", tt.golden), []byte(out))
	}
	runCLICases(t, []cliCase{
		{"alpha off", []string{"lint", traffic, "--fail-on", "none"}, 0, "MC7117 AlphaGatewayAPIOff: XBackendTrafficPolicy app/echo-retries is not read", ""},
		{"alpha on", []string{"lint", traffic, "--fail-on", "none", "--alpha-gateway-api"}, 0, "MC7116 BackendTrafficPolicyNotApplied: XBackendTrafficPolicy app/echo-late", ""},
	})
}
