package render

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// fromTree maps the placements of an OS render under testdata to the
// names an fs.FS rooted there gives.
func fromTree(ws []where) []where {
	strip := func(s string) string { return strings.TrimPrefix(filepath.ToSlash(s), "testdata/") }
	for i, w := range ws {
		ws[i] = where{strip(w.File), strip(w.Source), strip(w.Patched), w.Origin}
	}
	return ws
}

func data(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, string(d.Data))
	}
	return out
}

// TestRenderFromTree: an overlay and a chart read from an fs.FS render as
// from the disk, placed at the fs.FS's names, its bases named so too.
func TestRenderFromTree(t *testing.T) {
	tree := os.DirFS("testdata")
	for _, overlay := range []string{"prod", "staging"} {
		t.Run(overlay, func(t *testing.T) {
			disk, _, err := Kustomize(nil, filepath.Join(kustomizeDir, "overlays", overlay), ".")
			if err != nil {
				t.Fatal(err)
			}
			docs, bases, err := Kustomize(tree, "kustomize/overlays/"+overlay, ".")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := placements(docs), fromTree(placements(disk)); !slices.Equal(got, want) {
				t.Errorf("placements\n got %v\nwant %v", got, want)
			}
			if !slices.Equal(data(docs), data(disk)) || !slices.Equal(bases, []string{"kustomize/base"}) {
				t.Errorf("content differs from the disk's, or bases %v", bases)
			}
		})
	}
	t.Run("chart", func(t *testing.T) {
		disk, err := Helm(nil, chartDir, HelmOptions{Values: []string{filepath.Join(chartDir, "env/prod.yaml")}})
		if err != nil {
			t.Fatal(err)
		}
		docs, err := Helm(tree, "helm/mesh", HelmOptions{Values: []string{"helm/mesh/env/prod.yaml"}, ValuesIn: tree})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := placements(docs), fromTree(placements(disk)); !slices.Equal(got, want) || !slices.Equal(data(docs), data(disk)) {
			t.Errorf("placements\n got %v\nwant %v", got, want)
		}
		if !IsChart(tree, "helm/mesh") || IsChart(tree, "helm") || Kustomization(tree, "kustomize/base") != "kustomize/base/kustomization.yaml" {
			t.Error("chart or kustomization not recognised in the tree")
		}
	})
}

// TestTreeBounds: in an fs.FS too, a kustomization reads only below the
// root it is given, and a link in a chart is refused as Helm refuses
// irregular files.
func TestTreeBounds(t *testing.T) {
	kust := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
	tree := fstest.MapFS{
		"repo/outside/kustomization.yaml": {Data: []byte(kust + "resources: [../../elsewhere]\n")},
		"elsewhere/kustomization.yaml":    {Data: []byte(kust)},
		"chart/Chart.yaml":                {Data: []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n")},
		"chart/templates/cm.yaml":         {Data: []byte("../../etc/passwd"), Mode: os.ModeSymlink},
	}
	if _, _, err := Kustomize(tree, "repo/outside", "repo"); err == nil || !strings.Contains(err.Error(), "elsewhere is outside the input tree repo") {
		t.Errorf("Kustomize: %v", err)
	}
	if _, err := Helm(tree, "chart", HelmOptions{}); err == nil || !strings.Contains(err.Error(), "irregular file chart/templates/cm.yaml") {
		t.Errorf("Helm: %v", err)
	}
}
