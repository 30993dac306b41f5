package render

import (
	"errors"
	"io/fs"
	"os"
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
		"broken/Chart.yaml":         chart,
		"broken/templates/vs.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name | required \"name is required\" }}\n",
		"missing/Chart.yaml":        chart + "dependencies:\n  - name: sub\n    version: 0.1.0\n    repository: https://charts.example.com\n",
		"missing/templates/a.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"nilvalue/Chart.yaml":       chart,
		"nilvalue/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.a.b }}\n",
		"empty/Chart.yaml":          chart,
		"empty/templates/a.yaml":    "{{- if .Values.on }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n{{- end }}\n",
		"v3/Chart.yaml":             "apiVersion: v3\nname: c\nversion: 0.1.0\n",
		"v3/templates/a.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
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
		{chart: "nilvalue", want: "nil pointer evaluating interface {}.b", file: "nilvalue/templates/a.yaml", line: 4},
		{chart: "missing", want: "dependency sub declared in Chart.yaml is not in charts/", file: "missing/Chart.yaml"},
		{chart: "empty", opts: HelmOptions{Values: []string{filepath.Join(dir, "nowhere.yaml")}}, want: "values file " + filepath.Join(dir, "nowhere.yaml"), file: "empty/Chart.yaml"},
		{chart: "empty", want: ErrNothing.Error(), file: "empty/Chart.yaml", nothin: true},
		{chart: "v3", want: "only charts of apiVersion v1 and v2 render", file: "v3/Chart.yaml"},
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

// TestHelmLines: each line of a template's output maps to the template
// line that wrote it, through control flow, ranges and trim markers; a
// line a value, a helper or a function wrote maps to no line; a template
// whose output a second render does not reproduce maps no line at all.
func TestHelmLines(t *testing.T) {
	for _, tt := range []struct {
		name, template, values string
		want                   []int // nil: no map
	}{
		{"plain text and values", "kind: A\nmetadata:\n  name: {{ .Values.name }}\n", "name: a\n", []int{1, 2, 3}},
		{"if and trim markers", "kind: A\n{{- if .Values.enabled }}\nspec:\n  x: 1\n{{- end }}\n", "enabled: true\n", []int{1, 3, 4}},
		{"an action's right trim joins lines", "kind: A\nx: {{ .Values.name -}}\n  y\nz: 1\n", "name: a\n", []int{1, 2, 4}},
		{"a range repeats its lines", "items:\n{{- range .Values.list }}\n  - name: {{ . }}\n    on: true\n{{- end }}\n", "list: [a, b]\n", []int{1, 3, 4, 3, 4}},
		{"values and helpers write lines of their own", "{{- define \"labels\" }}\nl: 1\n{{- end }}\nspec:\n  {{- toYaml .Values.spec | nindent 2 }}\nmeta:\n  {{- include \"labels\" . | nindent 2 }}\n", "spec: {a: 1, b: 2}\n", []int{0, 4, 0, 0, 6, 0, 0}},
		{"a helper's text compared keeps its value", "{{- define \"on\" }}true{{ end }}\nkind: A\n{{- if eq (include \"on\" .) \"true\" }}\non: yes\n{{- end }}\n", "", []int{0, 2, 4}},
		{"random output is not mapped", "kind: A\nname: {{ randAlphaNum 8 }}\n", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := testfiles.Write(t, map[string]string{
				"c/Chart.yaml":       "apiVersion: v2\nname: c\nversion: 0.1.0\n",
				"c/values.yaml":      tt.values,
				"c/templates/a.yaml": tt.template,
			})
			docs, err := Helm(nil, filepath.Join(dir, "c"), HelmOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 1 || !slices.Equal(docs[0].Lines, tt.want) {
				t.Fatalf("lines %v, want %v\n%s", docs[0].Lines, tt.want, docs[0].Data)
			}
		})
	}
}

// TestHelmSubchartFolders: a subchart's templates are placed at their
// files whatever the subchart's folder is called and whatever alias the
// parent gives it, from the disk and from an fs.FS alike; a template
// error inside one names its file too.
func TestHelmSubchartFolders(t *testing.T) {
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: {{ .Chart.Name }}}\nspec: {ports: [{port: 80}]}\n"
	dir := testfiles.Write(t, map[string]string{
		"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n" +
			"  - {name: backend, version: 0.1.0}\n  - {name: backend, version: 0.1.0, alias: api}\n",
		"c/charts/Backend-Folder/Chart.yaml":         "apiVersion: v2\nname: backend\nversion: 0.1.0\n",
		"c/charts/Backend-Folder/templates/svc.yaml": svc,
		"broken/Chart.yaml":                          "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
		"broken/charts/sub-folder/Chart.yaml":        "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"broken/charts/sub-folder/templates/a.yaml":  "kind: A\nname: {{ required \"name!\" .Values.name }}\n",
	})
	for _, src := range []struct {
		name string
		fsys fs.FS
		at   func(string) string // the path of a file below dir
	}{
		{"disk", nil, func(p string) string { return filepath.Join(dir, p) }},
		{"fs.FS", os.DirFS(dir), func(p string) string { return p }},
	} {
		t.Run(src.name, func(t *testing.T) {
			docs, err := Helm(src.fsys, src.at("c"), HelmOptions{})
			if err != nil {
				t.Fatal(err)
			}
			file := src.at("c/charts/Backend-Folder/templates/svc.yaml")
			if len(docs) != 2 || docs[0].File != file || docs[1].File != file || !slices.Equal(docs[1].Lines, []int{1, 2, 3, 4}) {
				t.Errorf("placed at %v, want both at %s with their lines", placements(docs), file)
			}
			_, err = Helm(src.fsys, src.at("broken"), HelmOptions{})
			var re *Error
			if !errors.As(err, &re) || re.File != src.at("broken/charts/sub-folder/templates/a.yaml") || re.Line != 2 {
				t.Errorf("error %v placed at %+v", err, re)
			}
		})
	}
}
