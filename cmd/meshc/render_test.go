package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/render"
)

const (
	fixtures = "../../internal/render/testdata"
	chart    = fixtures + "/helm/mesh"
)

// finding is what TestRenderedFindings compares of a diagnostic.
type finding struct {
	Code, File string
	Line       int
	Origin     string
}

func findings(t *testing.T, out string) []finding {
	t.Helper()
	var res struct{ Diagnostics []diag.Diagnostic }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []finding
	for _, d := range res.Diagnostics {
		got = append(got, finding{d.Code, d.Object.File, d.Object.Line, d.Object.Origin})
	}
	return got
}

// TestRenderedFindings: findings on rendered overlays and charts point at
// the file a person edits: the base's resource file and line for objects
// no patch changed, the kustomization for a patched one, the template and
// the line in its rendered output for a chart, each saying which it is.
func TestRenderedFindings(t *testing.T) {
	base := fixtures + "/kustomize/base/reviews.yaml"
	prod := fixtures + "/kustomize/overlays/prod/kustomization.yaml"
	vs := chart + "/templates/virtualservice.yaml"
	ratings := finding{"MC4004", base, 47, ""} // spec.host of a DestinationRule for no service
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		want  []finding
	}{
		{"overlay with a patch", "", []string{fixtures + "/kustomize/overlays/prod"},
			[]finding{ratings, {"MC4003", prod, 5, render.PatchedHere}}},
		{"overlay without", "", []string{fixtures + "/kustomize/overlays/staging"}, []finding{ratings}},
		{"chart, default values", "", []string{chart},
			[]finding{{"MC4003", vs, 15, render.RenderedLine}}},
		{"chart, prod values", "", []string{chart, "--helm-values", chart + "/env/prod.yaml"},
			[]finding{{"MC4003", vs, 19, render.RenderedLine}}},
		{"chart, prod values and a set", "", []string{chart, "--helm-values", chart + "/env/prod.yaml", "--helm-set", "canary=0"}, nil},
		{"helm template output on stdin", helmTemplate(t, render.HelmOptions{}), []string{"-"},
			[]finding{{"MC4003", "mesh/templates/virtualservice.yaml", 15, render.RenderedLine}}},
		{"kustomize build output on stdin", strings.ReplaceAll(kustomizeBuild, "BASE", base), []string{"-"},
			[]finding{ratings}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, out, errOut := meshc(t, tt.stdin, append([]string{"lint", "-o", "json", "--fail-on", "none"}, tt.args...)...)
			if got := findings(t, out); !slices.Equal(got, tt.want) {
				t.Errorf("findings\n got %v\nwant %v\n%s", got, tt.want, errOut)
			}
		})
	}
}

// helmTemplate renders the fixture chart as helm template prints it.
func helmTemplate(t *testing.T, o render.HelmOptions) string {
	t.Helper()
	docs, err := render.Helm(nil, chart, o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, d := range docs {
		rel, _ := filepath.Rel(filepath.Dir(chart), d.File)
		b.WriteString("---\n# Source: " + filepath.ToSlash(rel) + "\n" + strings.TrimLeft(string(d.Data), "\n"))
	}
	return b.String()
}

// kustomizeBuild is kustomize build output with origin annotations for
// objects of the base's reviews.yaml (BASE), reformatted as Kustomize
// writes them, and a namespace without.
const kustomizeBuild = `apiVersion: v1
kind: Namespace
metadata:
  labels:
    istio-injection: enabled
  name: shop
---
apiVersion: v1
kind: Service
metadata:
  annotations:
    config.kubernetes.io/origin: |
      path: BASE
  name: reviews
  namespace: shop
spec:
  ports:
  - name: http
    port: 9080
  selector:
    app: reviews
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  annotations:
    config.kubernetes.io/origin: |
      path: BASE
  name: ratings
  namespace: shop
spec:
  host: ratings
  trafficPolicy:
    tls:
      mode: ISTIO_MUTUAL
`

// TestRenderFailures: a chart or overlay that cannot render is one error
// (exit 2) naming it, at the template line where Helm gives one, and the
// other inputs still load; a chart that renders nothing is an info.
func TestRenderFailures(t *testing.T) {
	c := "apiVersion: v2\nname: c\nversion: 0.1.0\n"
	dir := writeFiles(t, map[string]string{
		"broken/Chart.yaml":          c,
		"broken/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name | required \"name is required\" }}\n",
		"empty/Chart.yaml":           c,
		"empty/templates/cm.yaml":    "{{- if .Values.on }}\nkind: ConfigMap\n{{- end }}\n",
		"overlay/kustomization.yaml": "resources: [../base]\n",
		"base/kustomization.yaml":    "resources: [../overlay]\n",
		"plain/ns.yaml":              goodNS,
	})
	code, out, _ := meshc(t, "", "lint", "-o", "json", "--fail-on", "none", dir)
	got := findings(t, out)
	want := []finding{
		{"MC1011", filepath.Join(dir, "base/kustomization.yaml"), 0, ""},
		{"MC1011", filepath.Join(dir, "broken/templates/cm.yaml"), 4, ""},
		{"MC1012", filepath.Join(dir, "empty/Chart.yaml"), 0, ""},
		{"MC1011", filepath.Join(dir, "overlay/kustomization.yaml"), 0, ""},
	}
	if code != exitUsage || !slices.Equal(got, want) || !strings.Contains(out, `"objects": 2`) {
		t.Errorf("exit %d, findings\n got %v\nwant %v\n%s", code, got, want, out)
	}
}

// TestProjectRenders: .meshc.yaml's helm and kustomize entries are the
// inputs of a run that names none, each chart with its own values.
func TestProjectRenders(t *testing.T) {
	abs, err := filepath.Abs(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{".meshc.yaml": "helm:\n  - chart: " + abs + "/helm/mesh\n    values: [" + abs + "/helm/mesh/env/prod.yaml]\n    release: shop\n" +
		"kustomize: [" + abs + "/kustomize/overlays/staging]\n" +
		"suppress:\n  - {code: MC1004, reason: the chart and the overlay define the same objects}\n"})
	_, out, errOut := meshc(t, "", "lint", "-o", "json", "--fail-on", "none", "--project-config", filepath.Join(dir, ".meshc.yaml"))
	want := []finding{
		{"MC4003", abs + "/helm/mesh/templates/virtualservice.yaml", 19, render.RenderedLine},
		{"MC4004", abs + "/kustomize/base/reviews.yaml", 47, ""},
	}
	if got := findings(t, out); !slices.Equal(got, want) {
		t.Errorf("findings\n got %v\nwant %v\n%s", got, want, errOut)
	}
}

// TestKustomizeFlag: --kustomize takes auto or off; off reads an overlay's
// files one by one (its patch file then is an object of its own).
func TestKustomizeFlag(t *testing.T) {
	runCLICases(t, []cliCase{
		{name: "bad value", args: []string{"lint", "--kustomize", "maybe", fixtures + "/kustomize/overlays/prod"}, code: exitUsage, err: `--kustomize: want auto or off, got "maybe"`},
		{name: "off", args: []string{"lint", "--kustomize", "off", "--fail-on", "none", fixtures + "/kustomize/overlays/prod"}, out: "from 2 files"},
	})
}
