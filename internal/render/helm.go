package render

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/strvals"
)

// IsChart reports whether dir holds a Helm chart (a Chart.yaml).
func IsChart(fsys fs.FS, dir string) bool {
	fi, err := stat(fsys, join(fsys, dir, "Chart.yaml"))
	return err == nil && fi.Mode().IsRegular()
}

// HelmOptions are helm template's inputs.
type HelmOptions struct {
	// Values are values files, merged in order over the chart's values.yaml.
	Values []string
	// Set are key=value assignments (helm --set), applied after Values.
	Set       []string
	Release   string
	Namespace string
	// ValuesIn is the file system Values are read from: nil for the OS's
	// (the flags' files), a chart's fs.FS for .meshc.yaml's entries there.
	ValuesIn fs.FS
}

// DefaultRelease names the release when none is given, as helm template does.
const DefaultRelease = "release-name"

// ErrNothing is returned, wrapped in Error, for a chart whose templates
// render no manifest with the values given.
var ErrNothing = errors.New("the chart renders no manifests with these values")

// Helm renders the chart in dir as helm template would, without a cluster
// or network: its dependencies must be in its charts/ folder. Each
// template's output is one Doc, at the template's file; positions inside
// it are lines of the rendered output.
func Helm(fsys fs.FS, dir string, o HelmOptions) ([]Doc, error) {
	fail := func(err error) ([]Doc, error) {
		e := &Error{What: "Helm chart " + dir, File: join(fsys, dir, "Chart.yaml"), Err: err}
		if file, line, ok := templateErrorAt(fsys, dir, err); ok {
			e.File, e.Line = file, line
		}
		return nil, e
	}
	ch, err := loadChart(fsys, dir)
	if err != nil {
		return fail(err)
	}
	if err := missingDependencies(ch); err != nil {
		return fail(err)
	}
	vals := map[string]any{}
	for _, f := range o.Values {
		v, err := readValues(o.ValuesIn, f)
		if err != nil {
			return fail(fmt.Errorf("values file %s: %w", f, err))
		}
		vals = merge(vals, v)
	}
	for _, s := range o.Set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return fail(fmt.Errorf("--helm-set %s: %w", s, err))
		}
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return fail(err)
	}
	release := chartutil.ReleaseOptions{
		Name:      cmp.Or(o.Release, DefaultRelease),
		Namespace: cmp.Or(o.Namespace, "default"),
		Revision:  1,
		IsInstall: true,
	}
	rv, err := chartutil.ToRenderValues(ch, vals, release, chartutil.DefaultCapabilities)
	if err != nil {
		return fail(err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return fail(err)
	}
	var docs []Doc
	for _, name := range slices.Sorted(maps.Keys(out)) {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, "NOTES.txt") || strings.TrimSpace(out[name]) == "" {
			continue // partials and notes are no manifests
		}
		docs = append(docs, Doc{Data: []byte(out[name]), File: templateFile(fsys, dir, name), Origin: RenderedLine})
	}
	if len(docs) == 0 {
		return fail(ErrNothing)
	}
	return docs, nil
}

// templateFile maps Helm's name for a template ("mesh/charts/sub/templates/x.yaml",
// the chart's name first) to its path below the chart directory.
func templateFile(fsys fs.FS, dir, name string) string {
	_, rest, _ := strings.Cut(name, "/")
	return join(fsys, dir, filepath.FromSlash(rest))
}

// readValues reads a values file.
func readValues(fsys fs.FS, file string) (chartutil.Values, error) {
	if fsys == nil {
		return chartutil.ReadValuesFile(file)
	}
	data, err := readFile(fsys, file, 0)
	if err != nil {
		return nil, err
	}
	return chartutil.ReadValues(data)
}

// loadChart loads the chart in dir as helm's loader.LoadDir does: every
// file but those .helmignore leaves out, each within Helm's size limit.
// In an fs.FS a link is a file Helm cannot load, as it says of irregular
// files.
func loadChart(fsys fs.FS, dir string) (*chart.Chart, error) {
	if fsys == nil {
		return loader.LoadDir(dir)
	}
	rules := ignore.Empty()
	if data, err := readFile(fsys, path.Join(dir, ignore.HelmIgnore), 0); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, err
		}
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == dir {
			return nil
		}
		rel := name
		if dir != "." {
			rel = strings.TrimPrefix(name, dir+"/")
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && rules.Ignore(rel, fi):
			return fs.SkipDir
		case d.IsDir() || rules.Ignore(rel, fi):
			return nil
		case !fi.Mode().IsRegular():
			return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", name)
		}
		data, err := readFile(fsys, name, loader.MaxDecompressedFileSize)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: rel, Data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// missingDependencies names the dependencies Chart.yaml declares that are
// not in charts/: meshc does not download them.
func missingDependencies(ch *chart.Chart) error {
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		if !slices.ContainsFunc(ch.Dependencies(), func(c *chart.Chart) bool { return c.Name() == d.Name }) {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("dependency %s declared in Chart.yaml is not in charts/; meshc does not download charts: run helm dependency build first", strings.Join(missing, ", "))
	}
	for _, sub := range ch.Dependencies() {
		if err := missingDependencies(sub); err != nil {
			return fmt.Errorf("subchart %s: %w", sub.Name(), err)
		}
	}
	return nil
}

// merge lays b over a: maps merge key by key, anything else in b wins, as
// helm merges several values files.
func merge(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
