package render

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

const (
	kustomizeDir = "testdata/kustomize"
	chartDir     = "testdata/helm/mesh"
)

// where is a rendered document's placement, for comparison.
type where struct{ File, Source, Patched, Origin string }

func placements(docs []Doc) []where {
	var out []where
	for _, d := range docs {
		out = append(out, where{d.File, d.Source, d.Patched, d.Origin})
	}
	return out
}

// TestKustomizeOverlays: every object of an overlay points at its
// resource file in the base; the overlay with a patch records it as the
// kustomization that may have changed them; the base is reported as read.
func TestKustomizeOverlays(t *testing.T) {
	base := filepath.Join(kustomizeDir, "base")
	ns := filepath.Join(base, "namespace.yaml")
	reviews := filepath.Join(base, "reviews.yaml")
	for _, tt := range []struct {
		overlay, patched string
	}{
		{"prod", filepath.Join(kustomizeDir, "overlays/prod/kustomization.yaml")},
		{"staging", ""},
	} {
		t.Run(tt.overlay, func(t *testing.T) {
			dir := filepath.Join(kustomizeDir, "overlays", tt.overlay)
			docs, bases, err := Kustomize(nil, dir, ".")
			if err != nil {
				t.Fatal(err)
			}
			want := []where{{ns, ns, tt.patched, ""}}
			for range 4 {
				want = append(want, where{reviews, reviews, tt.patched, ""})
			}
			if got := placements(docs); !slices.Equal(got, want) {
				t.Errorf("placements\n got %v\nwant %v", got, want)
			}
			for _, d := range docs {
				if strings.Contains(string(d.Data), "config.kubernetes.io") {
					t.Errorf("build annotations left in the output:\n%s", d.Data)
				}
			}
			abs, _ := filepath.Abs(base)
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			if !slices.Equal(bases, []string{abs}) {
				t.Errorf("bases %v, want %v", bases, abs)
			}
		})
	}
}

// TestKustomizeRefuses: what cannot be rendered without network or
// outside the input tree is one error naming the overlay and the cause.
func TestKustomizeRefuses(t *testing.T) {
	kust := func(body string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" + body
	}
	vs := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r, namespace: shop}\nspec: {hosts: [r]}\n"
	dir := testfiles.Write(t, map[string]string{
		"repo/remote/kustomization.yaml":  kust("resources:\n  - https://github.com/example/mesh//base?ref=v1\n"),
		"repo/cycle-a/kustomization.yaml": kust("resources: [../cycle-b]\n"),
		"repo/cycle-b/kustomization.yaml": kust("resources: [../cycle-a]\n"),
		"repo/badpatch/kustomization.yaml": kust("resources: [vs.yaml]\npatches:\n  - target: {kind: VirtualService, name: r}\n" +
			"    patch: '[{\"op\": \"replace\", \"path\": \"/spec/http/0/timeout\", \"value\": \"1s\"}]'\n"),
		"repo/badpatch/vs.yaml":           vs,
		"repo/outside/kustomization.yaml": kust("resources: [../../elsewhere]\n"),
		"elsewhere/kustomization.yaml":    kust("resources: [vs.yaml]\n"),
		"elsewhere/vs.yaml":               vs,
		"repo/charts/kustomization.yaml":  kust("helmCharts:\n  - name: mesh\n"),
	})
	root := filepath.Join(dir, "repo")
	for _, tt := range []struct{ dir, want string }{
		{"remote", "remote base https://github.com/example/mesh//base?ref=v1"},
		{"cycle-a", "cycle"},
		{"badpatch", "/spec/http/0/timeout"},
		{"outside", "outside the input tree"},
		{"charts", "helmCharts needs the helm binary"},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			in := filepath.Join(root, tt.dir)
			_, _, err := Kustomize(nil, in, root)
			var re *Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "kustomization "+in) {
				t.Fatalf("error %v, want one naming %s and %q", err, in, tt.want)
			}
			if re.File != filepath.Join(in, "kustomization.yaml") {
				t.Errorf("placed at %s", re.File)
			}
		})
	}
}

// TestHelmValues: each environment's values decide what renders; every
// template's output is placed at its file, the subchart's below charts/.
func TestHelmValues(t *testing.T) {
	vs := filepath.Join(chartDir, "templates/virtualservice.yaml")
	dr := filepath.Join(chartDir, "templates/destinationrule.yaml")
	svc := filepath.Join(chartDir, "charts/backend/templates/service.yaml")
	for _, tt := range []struct {
		name  string
		opts  HelmOptions
		files []string
		in    map[string]string // text the output of a template must hold
	}{
		{"defaults", HelmOptions{}, []string{svc, vs},
			map[string]string{vs: "weight: 100", svc: "port: 9080"}},
		{"prod", HelmOptions{Values: []string{filepath.Join(chartDir, "env/prod.yaml")}}, []string{svc, dr, vs},
			map[string]string{vs: "weight: 10\n", dr: "kind: DestinationRule"}},
		{"staging and a set", HelmOptions{Values: []string{filepath.Join(chartDir, "env/staging.yaml")}, Set: []string{"canary=20,backend.port=7000"}, Release: "shop", Namespace: "mesh"},
			[]string{svc, vs}, map[string]string{vs: "app.kubernetes.io/instance: shop", svc: "port: 7000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Helm(nil, chartDir, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, d := range docs {
				files = append(files, d.File)
				if d.Origin != RenderedLine {
					t.Errorf("%s: origin %q", d.File, d.Origin)
				}
				if want, ok := tt.in[d.File]; ok && !strings.Contains(string(d.Data), want) {
					t.Errorf("%s does not hold %q:\n%s", d.File, want, d.Data)
				}
			}
			if !slices.Equal(files, tt.files) {
				t.Errorf("files %v, want %v", files, tt.files)
			}
		})
	}
}

// TestHelmFails: what keeps a chart from rendering is one error naming the
// chart, at the template line when Helm gives one; a chart that renders
// nothing is ErrNothing.
func TestHelmFails(t *testing.T) {
	chart := "apiVersion: v2\nname: c\nversion: 0.1.0\n"
	dir := testfiles.Write(t, map[string]string{
		"broken/Chart.yaml":        chart,
		"broken/templates/vs.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name | required \"name is required\" }}\n",
		"missing/Chart.yaml":       chart + "dependencies:\n  - name: sub\n    version: 0.1.0\n    repository: https://charts.example.com\n",
		"missing/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"empty/Chart.yaml":         chart,
		"empty/templates/a.yaml":   "{{- if .Values.on }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n{{- end }}\n",
	})
	for _, tt := range []struct {
		chart  string
		opts   HelmOptions
		want   string
		file   string
		line   int
		nothin bool
	}{
		{chart: "broken", want: "name is required", file: "broken/templates/vs.yaml", line: 4},
		{chart: "missing", want: "dependency sub declared in Chart.yaml is not in charts/", file: "missing/Chart.yaml"},
		{chart: "empty", opts: HelmOptions{Values: []string{filepath.Join(dir, "nowhere.yaml")}}, want: "values file " + filepath.Join(dir, "nowhere.yaml"), file: "empty/Chart.yaml"},
		{chart: "empty", want: ErrNothing.Error(), file: "empty/Chart.yaml", nothin: true},
	} {
		t.Run(tt.chart+" "+tt.want, func(t *testing.T) {
			in := filepath.Join(dir, tt.chart)
			_, err := Helm(nil, in, tt.opts)
			var re *Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "Helm chart "+in+": ") {
				t.Fatalf("error %v, want one naming %s and %q", err, in, tt.want)
			}
			if re.File != filepath.Join(dir, tt.file) || re.Line != tt.line {
				t.Errorf("placed at %s:%d, want %s:%d", re.File, re.Line, tt.file, tt.line)
			}
			if errors.Is(err, ErrNothing) != tt.nothin {
				t.Errorf("ErrNothing: %v", errors.Is(err, ErrNothing))
			}
		})
	}
}

// TestAnnotations: the traces helm template and kustomize build leave in
// their output name the source file.
func TestAnnotations(t *testing.T) {
	if f, ok := SourceComment([]byte("\n# Source: mesh/templates/vs.yaml\napiVersion: v1\n")); !ok || f != "mesh/templates/vs.yaml" {
		t.Errorf("SourceComment: %q %v", f, ok)
	}
	if _, ok := SourceComment([]byte("apiVersion: v1\n# Source: x.yaml\n")); ok {
		t.Error("a Source comment after the content counts")
	}
	d, ok := Located(map[string]any{
		OriginAnnotation:         "path: base/vs.yaml\n",
		TransformationAnnotation: "- configuredIn: overlays/prod/kustomization.yaml\n  configuredBy: {apiVersion: builtin, kind: PatchTransformer}\n",
	})
	if want := (Doc{File: "base/vs.yaml", Source: "base/vs.yaml", Patched: "overlays/prod/kustomization.yaml"}); !ok || placements([]Doc{d})[0] != placements([]Doc{want})[0] {
		t.Errorf("Located: %+v %v", d, ok)
	}
	if _, ok := Located(map[string]any{"other": "x"}); ok {
		t.Error("an object without origin is located")
	}
}
