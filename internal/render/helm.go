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
	fail := func(err error) ([]Doc, error) {
		e := &Error{What: "Helm chart " + dir, File: filepath.Join(dir, "Chart.yaml"), Err: err}
		if file, line, ok := templateErrorAt(dir, err); ok {
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
		docs = append(docs, Doc{Data: []byte(out[name]), File: templateFile(dir, name), Lines: lines[name], Origin: RenderedLine})
	}
	if len(docs) == 0 {
		return fail(ErrNothing)
	}
	return docs, nil
}

// templateFile maps Helm's name for a template ("mesh/charts/sub/templates/x.yaml",
// the chart's name first) to its path below the chart directory.
func templateFile(dir, name string) string {
	_, rest, _ := strings.Cut(name, "/")
	return filepath.Join(dir, filepath.FromSlash(rest))
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
