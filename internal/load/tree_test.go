package load

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/outdir"
	"github.com/meshc/meshc/internal/testfiles"
)

// loaded is what a load gives, with names relative to the directory
// loaded, for comparing a load from disk with one from an fs.FS.
type loaded struct {
	objects, files, skipped, findings []string
}

func summarize(t *testing.T, res Result, ds []diag.Diagnostic, dir string) loaded {
	t.Helper()
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil && dir != "" {
			return filepath.ToSlash(r)
		}
		return p
	}
	var l loaded
	for _, o := range res.Objects {
		r := o.Meta().Ref()
		l.objects = append(l.objects, fmt.Sprintf("%s@%s:%d", o.Meta().Name, rel(r.File), r.Line))
	}
	for _, f := range res.Files {
		l.files = append(l.files, rel(f))
	}
	for _, s := range res.Skipped {
		l.skipped = append(l.skipped, rel(s.File)+" "+s.Reason)
	}
	for _, d := range ds {
		msg := d.Message
		if dir != "" {
			msg = strings.ReplaceAll(msg, dir+"/", "")
		}
		l.findings = append(l.findings, d.Code+" "+rel(d.Object.File)+" "+msg)
	}
	return l
}

// TestLoadTree: a directory read through an fs.FS loads as from the disk
// (objects, files, skipped files, findings), its files named as the fs.FS
// names them: hidden entries and exclusions left out, Helm templates
// passed over, a kustomization and a chart rendered, a committed build
// skipped.
func TestLoadTree(t *testing.T) {
	ns := func(name string) string { return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n" }
	kust := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
	dir := testfiles.Write(t, map[string]string{
		"a/one.yaml":                 ns("one"),
		"a/deeper/two.json":          `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "two"}}`,
		"a/notes.txt":                "not a manifest",
		".git/config.yaml":           ns("hidden"),
		"vendor/x.yaml":              ns("excluded"),
		"a/broken.yaml":              "a: [\n",
		"package.json":               `{"name": "shop"}`,
		"overlay/kustomization.yaml": kust + "resources: [../base]\nnamePrefix: p-\n",
		"base/kustomization.yaml":    kust + "resources: [ns.yaml]\n",
		"base/ns.yaml":               ns("base"),
		"chart/Chart.yaml":           "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/ns.yaml":    "apiVersion: v1\nkind: Namespace\nmetadata: {name: {{ .Release.Name }}}\n",
		"loose/templates/cm.yaml":    ns("{{ .X }}"),
		"out/" + outdir.Marker:       "# Written by meshc build. It may replace this directory, deleting only the files listed here.\nindex.json\n",
		"out/" + outdir.IndexFile:    "{}",
		"big.yaml":                   ns("big") + strings.Repeat("# padding\n", 100),
	})
	opts := Options{Exclude: []string{"vendor"}, MaxFileSize: 300}
	disk, dds, err := Paths(context.Background(), []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.FS = os.DirFS(dir)
	tree, tds, err := Paths(context.Background(), []string{"."}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, got := summarize(t, disk, dds, dir), summarize(t, tree, tds, "")
	if !slices.Equal(got.objects, want.objects) || !slices.Equal(got.files, want.files) || !slices.Equal(got.skipped, want.skipped) || !slices.Equal(got.findings, want.findings) {
		t.Errorf("from the fs.FS\n%+v\nfrom the disk\n%+v", got, want)
	}
	if len(got.objects) != 4 || len(got.findings) != 2 || len(got.skipped) != 3 {
		t.Errorf("the fixture does not load as meant: %+v", got)
	}
}

// TestLoadTreeBounds: in an fs.FS a link is not followed when walking,
// and a file named that is not a regular file, or is over the limit, is
// MC1006 with its name.
func TestLoadTreeBounds(t *testing.T) {
	ns := []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
	tree := fstest.MapFS{
		"m/a.yaml":     {Data: ns},
		"m/link.yaml":  {Data: []byte("a.yaml"), Mode: fs.ModeSymlink},
		"m/up":         {Data: []byte(".."), Mode: fs.ModeSymlink},
		"pipe.yaml":    {Mode: fs.ModeNamedPipe},
		"huge.yaml":    {Data: append(ns, make([]byte, 400)...)},
		"rev/n/b.yaml": {Data: ns},
	}
	res, ds, err := Paths(context.Background(), []string{"m", "pipe.yaml", "huge.yaml", "absent"}, Options{FS: tree, MaxFileSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds {
		got[d.Object.File] = d.Code + " " + d.Message
	}
	want := map[string]string{
		"pipe.yaml": "MC1006 pipe.yaml is a pipe, not a regular file",
		"huge.yaml": "MC1006 huge.yaml is 451 bytes, over the 300 bytes limit",
		"absent":    "MC1006 cannot read absent: file does not exist",
	}
	if !maps.Equal(got, want) || !slices.Equal(res.Files, []string{"m/a.yaml"}) {
		t.Errorf("files %v, findings\n%v\nwant\n%v", res.Files, got, want)
	}
}
