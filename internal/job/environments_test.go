package job

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshc/meshc/internal/projectconfig"
)

const (
	kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
	chart         = "apiVersion: v2\nname: mesh\nversion: 0.1.0\n"
)

// TestEnvironments: overlays and helm entries are environments, each
// planned with its own input after the shared ones and, for a helm entry,
// its options for its chart; --helm-* flags make a chart one
// environment; names clash only between helm entries.
func TestEnvironments(t *testing.T) {
	dir := repo(t, map[string]string{
		"overlays/prod/kustomization.yaml":    kustomization,
		"overlays/staging/kustomization.yaml": kustomization,
		"a/prod/kustomization.yaml":           kustomization,
		"chart/Chart.yaml":                    chart,
		"ns.yaml":                             "",
		"two.yaml": "helm:\n  - chart: chart\n    values: [chart/prod.yaml]\n" +
			"  - chart: chart\n    name: eu\n    values: [chart/prod.yaml]\n",
		"clash.yaml": "helm:\n  - chart: chart\n    values: [chart/prod.yaml]\n  - chart: chart\n    values: [x/prod.yaml]\n",
	})
	t.Chdir(dir)
	type env struct{ name, paths, values string }
	for _, tc := range []struct {
		name    string
		s       Settings
		want    []env
		wantErr string
	}{
		{"overlays beside a shared file", settings("overlays/prod", "ns.yaml", "overlays/staging"), []env{
			{"prod", "ns.yaml overlays/prod", ""}, {"staging", "ns.yaml overlays/staging", ""},
		}, ""},
		{"a folder named twice counts once", settings("overlays/prod", "overlays/prod/"), []env{{"prod", "overlays/prod", ""}}, ""},
		{"overlays of one name are named by their paths", settings("overlays/prod", "a/prod"), []env{
			{"overlays/prod", "overlays/prod", ""}, {"a/prod", "a/prod", ""},
		}, ""},
		{"helm entries", func() Settings { s := settings("chart"); s.ProjectConfig = "two.yaml"; return s }(), []env{
			{"prod", "chart", "chart/prod.yaml"}, {"eu", "chart", "chart/prod.yaml"},
		}, ""},
		{"--helm-* flags make a chart one environment", func() Settings {
			s := settings("chart")
			s.ProjectConfig, s.Given = "two.yaml", givenFlags("helm-set")
			return s
		}(), []env{{"chart", "chart", ""}}, ""},
		{"none", settings("ns.yaml"), nil, ""},
		{"helm entries of one name", func() Settings { s := settings("chart"); s.ProjectConfig = "clash.yaml"; return s }(), nil,
			`two environments are named "prod"`},
		{"standard input beside several", settings("-", "overlays/prod", "overlays/staging"), nil, ErrSharedStdin.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Merge(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			envs, err := p.Environments()
			if tc.wantErr != "" || err != nil {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || tc.wantErr == "" {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			var got []env
			for _, e := range envs {
				abs, _ := filepath.Abs(e.Plan.Inputs.Paths[len(e.Plan.Inputs.Paths)-1])
				got = append(got, env{e.Name, strings.Join(e.Plan.Inputs.Paths, " "), strings.Join(e.Plan.Inputs.Render.Charts[abs].Values, " ")})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("environments %v, want %v", got, tc.want)
			}
			if !slices.Equal(p.Inputs.Paths, tc.s.Paths) {
				t.Errorf("the plan's own inputs changed: %v", p.Inputs.Paths)
			}
		})
	}
}

// TestEnvironmentsInTree: with the inputs in an fs.FS, environments are
// found there, and a helm entry's values stay read from it.
func TestEnvironmentsInTree(t *testing.T) {
	tree := fstest.MapFS{
		"repo/" + projectconfig.FileName:           {Data: []byte("helm:\n  - chart: chart\n    values: [chart/prod.yaml]\n  - chart: chart\n    values: [chart/staging.yaml]\n")},
		"repo/overlays/prod/kustomization.yaml":    {Data: []byte(kustomization)},
		"repo/overlays/staging/kustomization.yaml": {Data: []byte(kustomization)},
		"repo/chart/Chart.yaml":                    {Data: []byte(chart)},
	}
	s := settings("repo/overlays/prod", "repo/overlays/staging", "repo/chart")
	s.FS = tree
	p, err := Merge(s)
	if err != nil {
		t.Fatal(err)
	}
	envs, err := p.Environments()
	if err != nil {
		t.Fatal(err)
	}
	chartAbs, err := filepath.Abs("repo/chart")
	if err != nil {
		t.Fatal(err)
	}
	// The overlays, of the helm entries' names, are named by their paths.
	var names []string
	for _, e := range envs {
		names = append(names, e.Name)
		if h, ok := e.Plan.Inputs.Render.Charts[chartAbs]; e.Plan.Inputs.FS == nil || !ok || h.ValuesIn == nil {
			t.Errorf("%s: the plan left the tree", e.Name)
		}
	}
	if want := []string{"repo/overlays/prod", "repo/overlays/staging", "prod", "staging"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
}
