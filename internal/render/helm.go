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

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	valuesutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/ignore"
	"helm.sh/helm/v4/pkg/strvals"
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
// it are the template's lines where Lines knows them, else lines of the
// rendered output.
func Helm(fsys fs.FS, dir string, o HelmOptions) ([]Doc, error) {
	files := chartFiles{fsys: fsys, dir: dir}
	fail := func(err error) ([]Doc, error) {
		e := &Error{What: "Helm chart " + dir, File: join(fsys, dir, "Chart.yaml"), Err: err}
		if file, line, ok := templateErrorAt(files, err); ok {
			e.File, e.Line = file, line
		}
		return nil, e
	}
	ch, err := loadChart(fsys, dir)
	if err != nil {
		return fail(err)
	}
	// helm template renders charts of apiVersion v1 and v2 only; v3 is
	// still experimental in Helm 4.
	if v := ch.Metadata.APIVersion; v != chart.APIVersionV1 && v != chart.APIVersionV2 {
		return fail(errors.New("only charts of apiVersion v1 and v2 render, as with helm template"))
	}
	if err := missingDependencies(ch); err != nil {
		return fail(err)
	}
	folders := chartFolders(fsys, ch, dir)
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
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return fail(err)
	}
	// After the dependencies are processed: an alias is a subchart of its own.
	files = newChartFiles(fsys, ch, dir, folders)
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

// readValues reads a values file.
func readValues(fsys fs.FS, file string) (common.Values, error) {
	if fsys == nil {
		return common.ReadValuesFile(file)
	}
	data, err := readFile(fsys, file, 0)
	if err != nil {
		return nil, err
	}
	return common.ReadValues(data)
}

// loadChart loads the chart in dir as helm's loader.LoadDir does: every
// file but those .helmignore leaves out, all together within Helm's size
// limit. In an fs.FS a link is a file Helm cannot load, as it says of
// irregular files.
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
	var files []*archive.BufferedFile
	budget := archive.MaxDecompressedChartSize
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
		case fi.Size() > budget:
			return fmt.Errorf("chart %s is over Helm's limit of %d bytes", dir, archive.MaxDecompressedChartSize)
		}
		data, err := readFile(fsys, name, budget)
		if err != nil {
			return err
		}
		budget -= int64(len(data))
		files = append(files, &archive.BufferedFile{Name: rel, ModTime: fi.ModTime(), Data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// chartFiles maps Helm's names for templates ("mesh/charts/sub/templates/x.yaml":
// the chart's name, then each subchart's name or alias) to their files.
// A subchart's folder in charts/ may be named otherwise than the chart, so
// the folders are matched by the names in their Chart.yaml; a subchart
// packed in an archive has no file of its own for its templates.
type chartFiles struct {
	fsys fs.FS
	dir  string
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
func chartFolders(fsys fs.FS, ch *chart.Chart, dir string) map[*common.File]chartFolder {
	out := map[*common.File]chartFolder{}
	var walk func(*chart.Chart, chartFolder)
	walk = func(c *chart.Chart, at chartFolder) {
		for _, t := range c.Templates {
			out[t] = at
		}
		if at.archive {
			return // its subcharts are inside it too
		}
		byName := subchartFolders(fsys, at.path)
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
func newChartFiles(fsys fs.FS, ch *chart.Chart, dir string, folders map[*common.File]chartFolder) chartFiles {
	f := chartFiles{fsys: fsys, dir: dir, folders: map[string]chartFolder{}}
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
func subchartFolders(fsys fs.FS, dir string) map[string]chartFolder {
	out := map[string]chartFolder{}
	entries, _ := readDir(fsys, join(fsys, dir, "charts"))
	for _, e := range entries {
		p := join(fsys, dir, "charts", e.Name())
		if e.IsDir() {
			if name, ok := chartName(fsys, p); ok {
				out[name] = chartFolder{path: p}
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

// chartName is the name the Chart.yaml in dir gives its chart.
func chartName(fsys fs.FS, dir string) (string, bool) {
	data, err := readFile(fsys, join(fsys, dir, "Chart.yaml"), 0)
	if err != nil {
		return "", false
	}
	var meta struct {
		Name string `yaml:"name"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil || meta.Name == "" {
		return "", false
	}
	return meta.Name, true
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
		return join(f.fsys, f.dir, filepath.FromSlash(rest)), true
	}
	at := f.folders[best]
	if at.archive {
		return at.path, false
	}
	return join(f.fsys, at.path, filepath.FromSlash(strings.TrimPrefix(name, best+"/"))), true
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
