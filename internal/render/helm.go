package render

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	valuesutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
)

// IsChart reports whether dir holds a Helm chart (a Chart.yaml).
func IsChart(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "Chart.yaml"))
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
}

// DefaultRelease names the release when none is given, as helm template does.
const DefaultRelease = "release-name"

// ErrNothing is returned, wrapped in Error, for a chart whose templates
// render no manifest with the values given.
var ErrNothing = errors.New("the chart renders no manifests with these values")

// Helm renders the chart in dir as helm template would, without a cluster
// or network: its dependencies must be in its charts/ folder. Each
// template's output is one Doc, at the template's file; positions inside
// it are the template's lines where Lines knows them, else lines of the
// rendered output.
func Helm(dir string, o HelmOptions) ([]Doc, error) {
	files := chartFiles{dir: dir}
	fail := func(err error) ([]Doc, error) {
		e := &Error{What: "Helm chart " + dir, File: filepath.Join(dir, "Chart.yaml"), Err: err}
		if file, line, ok := templateErrorAt(files, err); ok {
			e.File, e.Line = file, line
		}
		return nil, e
	}
	loaded, err := loader.LoadDir(dir)
	if err != nil {
		return fail(err)
	}
	// helm template renders charts of apiVersion v1 and v2 only; v3 is
	// still experimental in Helm 4.
	ch, ok := loaded.(*chart.Chart)
	if !ok {
		return fail(errors.New("only charts of apiVersion v1 and v2 render, as with helm template"))
	}
	if err := missingDependencies(ch); err != nil {
		return fail(err)
	}
	folders := chartFolders(ch, dir)
	vals := map[string]any{}
	for _, f := range o.Values {
		v, err := common.ReadValuesFile(f)
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
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return fail(err)
	}
	// After the dependencies are processed: an alias is a subchart of its own.
	files = newChartFiles(ch, dir, folders)
	release := common.ReleaseOptions{
		Name:      cmp.Or(o.Release, DefaultRelease),
		Namespace: cmp.Or(o.Namespace, "default"),
		Revision:  1,
		IsInstall: true,
	}
	rv, err := valuesutil.ToRenderValues(ch, vals, release, common.DefaultCapabilities)
	if err != nil {
		return fail(err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return fail(err)
	}
	lines := templateLines(ch, rv, out)
	var docs []Doc
	for _, name := range slices.Sorted(maps.Keys(out)) {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, "NOTES.txt") || strings.TrimSpace(out[name]) == "" {
			continue // partials and notes are no manifests
		}
		file, own := files.file(name)
		doc := Doc{Data: []byte(out[name]), File: file, Origin: RenderedLine}
		if own {
			doc.Lines = lines[name]
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		return fail(ErrNothing)
	}
	return docs, nil
}

// chartFiles maps Helm's names for templates ("mesh/charts/sub/templates/x.yaml":
// the chart's name, then each subchart's name or alias) to their files.
// A subchart's folder in charts/ may be named otherwise than the chart, so
// the folders are matched by the names in their Chart.yaml; a subchart
// packed in an archive has no file of its own for its templates.
type chartFiles struct {
	dir string
	// folders holds, by Helm's name prefix, the chart's folder or archive.
	folders map[string]chartFolder
}

type chartFolder struct {
	path    string
	archive bool
}

// chartFolders tells, by template, the folder of the chart holding it, for
// the chart in dir as loaded: subcharts are still named as in their
// Chart.yaml, before aliases copy them.
func chartFolders(ch *chart.Chart, dir string) map[*common.File]chartFolder {
	out := map[*common.File]chartFolder{}
	var walk func(*chart.Chart, chartFolder)
	walk = func(c *chart.Chart, at chartFolder) {
		for _, t := range c.Templates {
			out[t] = at
		}
		if at.archive {
			return // its subcharts are inside it too
		}
		byName := subchartFolders(at.path)
		for _, sub := range c.Dependencies() {
			if folder, ok := byName[sub.Name()]; ok {
				walk(sub, folder)
			}
		}
	}
	walk(ch, chartFolder{path: dir})
	return out
}

// newChartFiles names the folders of the charts of ch, its dependencies
// processed (aliases are copies sharing their templates), by Helm's name
// prefixes; folders are chartFolders' of ch as loaded.
func newChartFiles(ch *chart.Chart, dir string, folders map[*common.File]chartFolder) chartFiles {
	f := chartFiles{dir: dir, folders: map[string]chartFolder{}}
	var walk func(*chart.Chart, string)
	walk = func(c *chart.Chart, prefix string) {
		if len(c.Templates) > 0 {
			if at, ok := folders[c.Templates[0]]; ok {
				f.folders[prefix] = at
			}
		}
		for _, sub := range c.Dependencies() {
			walk(sub, prefix+"/charts/"+sub.Name())
		}
	}
	walk(ch, ch.Name())
	return f
}

// subchartFolders finds the charts in dir/charts by the names their
// Chart.yaml gives; an archive is taken by its file name, NAME-VERSION.tgz.
func subchartFolders(dir string) map[string]chartFolder {
	out := map[string]chartFolder{}
	entries, _ := os.ReadDir(filepath.Join(dir, "charts"))
	for _, e := range entries {
		p := filepath.Join(dir, "charts", e.Name())
		if e.IsDir() {
			if meta, err := chartutil.LoadChartfile(filepath.Join(p, "Chart.yaml")); err == nil {
				out[meta.Name] = chartFolder{path: p}
			}
			continue
		}
		if base, ok := strings.CutSuffix(e.Name(), ".tgz"); ok {
			if i := strings.LastIndex(base, "-"); i > 0 {
				if _, taken := out[base[:i]]; !taken {
					out[base[:i]] = chartFolder{path: p, archive: true}
				}
			}
		}
	}
	return out
}

// file is the file of the template Helm names name, and whether it is a
// file of its own (not inside an archive); Helm's name without the
// chart's, below the chart's directory, when no folder is known for it.
func (f chartFiles) file(name string) (string, bool) {
	best := ""
	for prefix := range f.folders {
		if strings.HasPrefix(name, prefix+"/") && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		_, rest, _ := strings.Cut(name, "/")
		return filepath.Join(f.dir, filepath.FromSlash(rest)), true
	}
	at := f.folders[best]
	if at.archive {
		return at.path, false
	}
	return filepath.Join(at.path, filepath.FromSlash(strings.TrimPrefix(name, best+"/"))), true
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
