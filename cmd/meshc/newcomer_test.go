package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bookinfoAsInGit is the bundled bookinfo as teams keep it in git: no
// Namespace objects, so nothing labels default for injection.
func bookinfoAsInGit(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"deployments.yaml", "destination-rules.yaml", "gateway.yaml", "services.yaml", "virtual-services.yaml"} {
		data, err := os.ReadFile(filepath.Join(bookinfoDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildExplainsNoSidecars: the sample files, unchanged, give a build
// that says why no sidecar is built and how to inject; with
// --inject-namespace default every workload is built.
func TestBuildExplainsNoSidecars(t *testing.T) {
	in := bookinfoAsInGit(t)
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := meshc(t, "", "build", in, "-o", out)
	if code != 0 || !strings.Contains(errOut, "info MC6006 NoInjectedWorkloads") || !strings.Contains(errOut, "pass --inject-namespace default") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	code, _, errOut = meshc(t, "", "build", in, "-o", out, "--inject-namespace", "default")
	if code != 0 || !strings.Contains(errOut, "wrote 7 proxies") || strings.Contains(errOut, "MC6006") {
		t.Errorf("--inject-namespace default: exit %d\n%s", code, errOut)
	}
}

// TestRevisionInstalls: a namespace labelled for revision 1-24 is injected
// only when 1-24 is declared installed, and the finding says so.
func TestRevisionInstalls(t *testing.T) {
	in := writeFiles(t, map[string]string{"app.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: prod, labels: {istio.io/rev: 1-24}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: prod}
spec: {containers: [{name: c, image: i}]}
`})
	if code, out, _ := meshc(t, "", "lint", in); code != 0 || !strings.Contains(out, "pass --revision 1-24") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if code, out, _ := meshc(t, "", "lint", in, "--revision", "1-24"); code != 0 || strings.Contains(out, "MC6006") {
		t.Errorf("--revision 1-24: exit %d\n%s", code, out)
	}
}

// TestApplicationRepositoryLintsClean: package.json, swagger.yaml, a chart
// and a kustomization beside the manifests: the chart and the
// kustomization are rendered, no finding, the skipped files named in one
// line.
func TestApplicationRepositoryLintsClean(t *testing.T) {
	in := writeFiles(t, map[string]string{
		"package.json":                   `{"name": "shop", "scripts": {"test": "jest"}}`,
		"api/swagger.yaml":               "swagger: '2.0'\ninfo: {title: shop, version: '1'}\npaths: {}\n",
		"chart/Chart.yaml":               "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
		"chart/values.yaml":              "replicaCount: 1\n",
		"chart/templates/service.yaml":   "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: shop\nspec: {ports: [{port: 80, name: http}]}\n",
		"deploy/kustomization.yaml":      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [ns.yaml, serviceaccount.yaml, secret.yaml, hpa.yaml, pdb.yaml]\n",
		"deploy/ns.yaml":                 goodNS,
		"deploy/serviceaccount.yaml":     "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: shop}\n",
		"deploy/secret.yaml":             "apiVersion: v1\nkind: Secret\nmetadata: {name: web, namespace: shop}\n",
		"deploy/hpa.yaml":                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\n",
		"deploy/pdb.yaml":                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\n",
		"node_modules/lib/package.json":  `{"name": "lib"}`,
		"node_modules/lib/settings.yaml": "a: [\n",
	})
	code, out, _ := meshc(t, "", "lint", in, "--exclude", "node_modules", "--fail-on", "info")
	if code != 0 || !strings.Contains(out, "0 errors, 0 warnings, 0 info") ||
		!strings.Contains(out, "in 7 objects") || !strings.Contains(out, "skipped 2 files without Kubernetes objects") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestSuppressionEverywhere: a loader code is suppressible like any other,
// an unknown code is a usage error, an Istio code suppresses its meshc
// equivalents.
func TestSuppressionEverywhere(t *testing.T) {
	in := writeFiles(t, map[string]string{"w.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"})
	if code, out, _ := meshc(t, "", "lint", in, "--suppress", "MC1005", "--fail-on", "info"); code != 0 || strings.Contains(out, "MC1005") {
		t.Errorf("--suppress MC1005: exit %d\n%s", code, out)
	}
	if code, _, errOut := meshc(t, "", "lint", in, "--suppress", "MC9999"); code != exitUsage || !strings.Contains(errOut, `unknown diagnostic code "MC9999"`) {
		t.Errorf("--suppress MC9999: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := meshc(t, "", "build", in, "-o", filepath.Join(t.TempDir(), "o"), "--suppress", "MC1005", "-q", "--fail-on", "info"); code != 0 || errOut != "" {
		t.Errorf("build --suppress: exit %d\n%s", code, errOut)
	}
}

// TestProjectConfig: .meshc.yaml above the inputs sets excludes,
// suppressions (an expired one reported at its line), the injector and
// --fail-on; a flag wins; a bad file is a usage error at its line.
func TestProjectConfig(t *testing.T) {
	root := writeFiles(t, map[string]string{
		".meshc.yaml": `exclude: [vendor]
failOn: info
injectNamespaces: [shop]
suppress:
  - {code: MC1005, object: "*/w", reason: "our widgets", expires: 2999-01-01}
  - {code: MC6006, reason: "was never meant to stay", expires: 2020-01-01}
`,
		"m/w.yaml":         "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
		"m/ns.yaml":        goodNS,
		"m/pod.yaml":       "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec: {containers: [{name: c, image: i}]}\n",
		"m/vendor/x.yaml":  "a: [\n",
		"other/plain.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: plain}\nspec: {containers: [{name: c, image: i}]}\n",
	})
	code, out, _ := meshc(t, "", "lint", filepath.Join(root, "m"))
	if code != 1 || !strings.Contains(out, ".meshc.yaml:6: warning MC1007 ExpiredSuppression") || strings.Contains(out, "MC1005") || strings.Contains(out, "MC1001") || strings.Contains(out, "info MC6006") {
		t.Errorf("with .meshc.yaml: exit %d (want 1: failOn info and the expired warning)\n%s", code, out)
	}
	if code, out, _ := meshc(t, "", "lint", filepath.Join(root, "m"), "--fail-on", "error"); code != 0 {
		t.Errorf("--fail-on error wins over the file: exit %d\n%s", code, out)
	}
	// The expired suppression no longer hides MC6006 where nothing is injected.
	if code, out, _ := meshc(t, "", "lint", filepath.Join(root, "other"), "--fail-on", "error"); code != 0 || !strings.Contains(out, "info MC6006") {
		t.Errorf("expired suppression: exit %d\n%s", code, out)
	}
	bad := writeFiles(t, map[string]string{".meshc.yaml": "failon: info\n", "ns.yaml": goodNS})
	if code, _, errOut := meshc(t, "", "lint", bad); code != exitUsage || !strings.Contains(errOut, ".meshc.yaml") || !strings.Contains(errOut, "failon") {
		t.Errorf("bad .meshc.yaml: exit %d\n%s", code, errOut)
	}
}

// TestPipedStdin: with no path, piped standard input is read.
func TestPipedStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString(goodNS); w.Close() }()
	defer r.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"lint"}, r, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "2 objects from 1 file") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// TestFlagsWhereUsed: the compile flags are on the commands that compile,
// not on version or completion; -f works on lint and build.
func TestFlagsWhereUsed(t *testing.T) {
	for _, cmd := range []string{"lint", "build", "tree"} {
		if _, out, _ := meshc(t, "", cmd, "--help"); !strings.Contains(out, "--hnc-excluded-namespace") || !strings.Contains(out, "--inject-namespace") || !strings.Contains(out, "-f, --filename") {
			t.Errorf("%s --help lacks the compile flags", cmd)
		}
	}
	if _, out, _ := meshc(t, "", "version", "--help"); strings.Contains(out, "--hnc") || strings.Contains(out, "--mesh-config") {
		t.Errorf("version --help lists compile flags:\n%s", out)
	}
	if code, out, _ := meshc(t, "", "lint", "-f", bookinfoDir); code != 0 || !strings.Contains(out, "from 6 files") {
		t.Errorf("lint -f: exit %d\n%s", code, out)
	}
}

// TestCompletion: proxy names complete from the inputs, namespaces for
// tree.
func TestCompletion(t *testing.T) {
	_, out, _ := meshc(t, "", "__complete", "explain", "proxy", "-f", bookinfoDir, "")
	if !strings.Contains(out, "default/productpage-v1\tDeployment") || !strings.Contains(out, "istio-system/istio-ingressgateway") {
		t.Errorf("explain proxy completion:\n%s", out)
	}
	_, out, _ = meshc(t, "", "__complete", "tree", "-f", bookinfoDir, "")
	if !strings.Contains(out, "default\n") || !strings.Contains(out, "istio-system\n") {
		t.Errorf("tree completion:\n%s", out)
	}
}

// TestMissingSubsetWithAndWithoutWorkloads is issue 14's "done when":
// bookinfo as kept in git plus a VirtualService routing reviews to subset
// v4, which no DestinationRule defines, fails the lint (exit 1) whether
// the input has workloads without injection, no workloads, no Services,
// or injected workloads; stand-ins (ns/*) speak for the namespace until
// real proxies are in the input.
func TestMissingSubsetWithAndWithoutWorkloads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string
		proxies string
	}{
		{"workloads without injection", []string{"services.yaml", "deployments.yaml", "destination-rules.yaml"}, "proxies: default/*\n"},
		{"no workloads", []string{"services.yaml", "destination-rules.yaml"}, "proxies: default/*\n"},
		{"only Istio objects", []string{"destination-rules.yaml"}, "proxies: default/*\n"},
		{"injected workloads", []string{"namespace.yaml", "services.yaml", "deployments.yaml", "destination-rules.yaml"}, "proxies: default/details-v1, default/productpage-v1, default/ratings-v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"reviews-v4.yaml": reviewsV4}
			for _, f := range tc.files {
				data, err := os.ReadFile(filepath.Join(bookinfoDir, f))
				if err != nil {
					t.Fatal(err)
				}
				files[f] = string(data)
			}
			in := writeFiles(t, files)
			code, out, _ := meshc(t, "", "lint", in)
			if code != 1 || !strings.Contains(out, `reviews-v4.yaml:8: error MC4003 UnknownSubset: default/reviews routes to subset "v4"`) || !strings.Contains(out, tc.proxies) {
				t.Errorf("exit %d\n%s", code, out)
			}
		})
	}
}

// TestExplainIstioCode: an istioctl analyze code names the meshc codes
// that report it and prints their docs; a meshc code lists its aliases.
func TestExplainIstioCode(t *testing.T) {
	code, out, _ := meshc(t, "", "lint", "--explain", "ist0101")
	if code != 0 || !strings.HasPrefix(out, "IST0101 (istioctl analyze) is reported by MC4003 UnknownSubset, MC5002 DestinationHostNotFound, ") || !strings.Contains(out, "\nMC5002 DestinationHostNotFound (error)\n") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if code, out, _ := meshc(t, "", "lint", "--explain", "MC6002"); code != 0 || !strings.Contains(out, "istioctl analyze reports the same as IST0110.") {
		t.Errorf("MC6002: exit %d\n%s", code, out)
	}
	if code, _, errOut := meshc(t, "", "lint", "--explain", "IST9999"); code != exitUsage || !strings.Contains(errOut, `no diagnostic "IST9999"`) {
		t.Errorf("IST9999: exit %d\n%s", code, errOut)
	}
}

// TestIstioOperatorIsMeshConfig: a nameless IstioOperator, as Istio's own
// samples write it, lints clean; one given with --mesh-config, or the
// istiod chart's values, is read as the mesh config.
func TestIstioOperatorIsMeshConfig(t *testing.T) {
	in := writeFiles(t, map[string]string{
		"iop.yaml":    "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: demo\n  meshConfig:\n    accessLogFile: /dev/stdout\n",
		"values.yaml": "meshConfig:\n  acessLogFile: /dev/stdout\n",
	})
	if code, out, _ := meshc(t, "", "lint", filepath.Join(in, "iop.yaml")); code != 0 || !strings.Contains(out, "0 errors, 0 warnings, 0 info") {
		t.Errorf("nameless IstioOperator: exit %d\n%s", code, out)
	}
	code, out, _ := meshc(t, "", "lint", filepath.Join(in, "iop.yaml"), "--mesh-config", filepath.Join(in, "values.yaml"))
	if code != 0 || !strings.Contains(out, "values.yaml:2") || !strings.Contains(out, `unknown field "acessLogFile"`) {
		t.Errorf("chart values as --mesh-config: exit %d\n%s", code, out)
	}
}
