package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/projectconfig"
	"github.com/meshc/meshc/internal/render"
)

// environment is one rendering of what a repository deploys: a
// kustomization named as an input (on the command line or in .meshc.yaml's
// kustomize), or one entry of .meshc.yaml's helm (a chart named without
// entries is one environment, rendered with the --helm-* flags). When the
// inputs hold several, lint and build run once per environment, each run
// reading the environment and the inputs that are none.
type environment struct {
	name string
	// path is the overlay or chart; helm, for a helm entry, its options.
	path string
	helm *render.HelmOptions
}

// envPlaceholder in build's -o is replaced by each environment's name.
const envPlaceholder = "{env}"

// environments splits the inputs into environments and the paths they
// share, in the order given. A chart named by several paths (.meshc.yaml
// lists it once per entry) counts once, with all its entries.
func (f *compileFlags) environments(paths []string, ro compile.RenderOptions) (envs []environment, shared []string, err error) {
	seen := map[string]bool{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if p == "-" || err != nil || !fi.IsDir() {
			shared = append(shared, p)
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, err
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		switch {
		case !ro.NoKustomize && render.Kustomization(p) != "":
			envs = append(envs, environment{name: filepath.Base(abs), path: p})
		case render.IsChart(p):
			envs = append(envs, f.chartEnvironments(p, abs, ro)...)
		default:
			shared = append(shared, p)
		}
	}
	return envs, shared, uniqueNames(envs)
}

// chartEnvironments are the environments of the chart at p: one per
// .meshc.yaml helm entry for it, unless --helm-* flags were given (then
// ro.Charts is nil), else one rendered with the flags.
func (f *compileFlags) chartEnvironments(p, abs string, ro compile.RenderOptions) []environment {
	var envs []environment
	if f.project != nil && ro.Charts != nil {
		for _, c := range f.project.Helm {
			if a, err := filepath.Abs(c.Chart); err == nil && a == abs {
				envs = append(envs, environment{name: entryName(c), path: p, helm: helmOptions(c)})
			}
		}
	}
	if len(envs) == 0 {
		envs = append(envs, environment{name: filepath.Base(abs), path: p})
	}
	return envs
}

// entryName names a helm entry's environment: its name, else its last
// values file's name without extension, else its release, else its
// chart's folder.
func entryName(c projectconfig.Chart) string {
	var values string
	if n := len(c.Values); n > 0 {
		base := filepath.Base(c.Values[n-1])
		values = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return cmp.Or(c.Name, values, c.Release, filepath.Base(c.Chart))
}

func helmOptions(c projectconfig.Chart) *render.HelmOptions {
	return &render.HelmOptions{Values: c.Values, Set: c.Set, Release: c.Release, Namespace: c.Namespace}
}

// uniqueNames gives overlays of the same folder name (clusters/a/prod,
// clusters/b/prod) their paths as names, and refuses other clashes.
func uniqueNames(envs []environment) error {
	count := map[string]int{}
	for _, e := range envs {
		count[e.name]++
	}
	for i, e := range envs {
		if count[e.name] > 1 && e.helm == nil {
			envs[i].name = filepath.Clean(e.path)
		}
	}
	clear(count)
	for _, e := range envs {
		if count[e.name]++; count[e.name] == 2 {
			return fmt.Errorf("two environments are named %q; give the helm entries of .meshc.yaml a name", e.name)
		}
	}
	return nil
}

// inputs are the compile inputs of environment e: its path and the
// shared ones, and for a helm entry its options for its chart.
func (e environment) inputs(base compile.Inputs, shared []string) compile.Inputs {
	in := base
	in.Paths = append(slices.Clone(shared), e.path)
	if e.helm != nil {
		abs, err := filepath.Abs(e.path)
		if err == nil {
			in.Render.Charts = maps.Clone(in.Render.Charts)
			if in.Render.Charts == nil {
				in.Render.Charts = map[string]render.HelmOptions{}
			}
			in.Render.Charts[abs] = *e.helm
		}
	}
	return in
}

// envRun is one environment's compile.
type envRun struct {
	env environment
	run *compile.Result
}

// errSharedStdin refuses standard input with several environments: it
// can be read once.
var errSharedStdin = errors.New("standard input cannot be read once per environment; write it to a file, or name one environment")

// mergeRuns is what lint reports of several environments' runs: each
// finding once with its environments, and the input counted per run.
func mergeRuns(runs []envRun) ([]diag.Diagnostic, diag.Input) {
	names := make([]string, len(runs))
	ds := make([][]diag.Diagnostic, len(runs))
	var in diag.Input
	for i, r := range runs {
		names[i], ds[i] = r.env.name, r.run.Diagnostics
		in.Files += len(r.run.Files)
		in.Objects += len(r.run.Objects)
		for _, s := range r.run.Skipped {
			if !slices.Contains(in.Skipped, s) {
				in.Skipped = append(in.Skipped, s)
			}
		}
	}
	return diag.MergeEnvironments(names, ds), in
}

// envNames lists the environments' names.
func envNames(envs []environment) string {
	names := make([]string, len(envs))
	for i, e := range envs {
		names[i] = e.name
	}
	return strings.Join(names, ", ")
}

// inEnvironment says which environment's run an error stopped.
func inEnvironment(name string, err error) error {
	var ee *exitError
	if errors.As(err, &ee) && ee.err != nil {
		ee.err = fmt.Errorf("environment %s: %w", name, ee.err)
	}
	return err
}
