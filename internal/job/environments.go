package job

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/projectconfig"
	"github.com/meshc/meshc/internal/render"
)

// Environment is one rendering of what a repository deploys: a
// kustomization named as an input (on the command line or in
// .meshc.yaml's kustomize), or one entry of .meshc.yaml's helm (a chart
// named without entries is one environment, rendered with the --helm-*
// flags). Inputs holding several are compiled once per environment, each
// run reading the environment and the inputs that are none, so that
// prod's and staging's copies of an object do not clash.
type Environment struct {
	Name string
	// Plan compiles or builds the environment alone.
	Plan *Plan
	path string
	// helm is a helm entry's options for its chart; nil for the others.
	helm *render.HelmOptions
}

// ErrSharedStdin refuses standard input with several environments: it
// can be read once.
var ErrSharedStdin = errors.New("standard input cannot be read once per environment; write it to a file, or name one environment")

// Environments splits the plan's inputs into environments, in the order
// given, each with its plan. A chart named by several paths (.meshc.yaml
// lists it once per entry) counts once, with all its entries. Two
// environments of one name, or standard input beside several, are an
// error.
func (p *Plan) Environments() ([]Environment, error) {
	var envs []Environment
	var shared []string
	seen := map[string]bool{}
	for _, in := range p.Inputs.Paths {
		abs, err := filepath.Abs(in)
		if in == "-" || err != nil || !p.isDir(in) {
			shared = append(shared, in)
			continue
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		fsys := p.Inputs.FS
		switch {
		case !p.Inputs.Render.NoKustomize && render.Kustomization(fsys, in) != "":
			envs = append(envs, Environment{Name: p.base(abs, in), path: in})
		case render.IsChart(fsys, in):
			envs = append(envs, p.chartEnvironments(in, abs)...)
		default:
			shared = append(shared, in)
		}
	}
	if err := uniqueNames(envs); err != nil {
		return nil, err
	}
	if len(envs) > 1 && slices.Contains(shared, "-") {
		return nil, ErrSharedStdin
	}
	for i := range envs {
		envs[i].Plan = p.environment(envs[i], shared)
	}
	return envs, nil
}

// isDir reports whether the input in is a directory of the plan's file
// system.
func (p *Plan) isDir(in string) bool {
	var fi fs.FileInfo
	var err error
	if p.Inputs.FS != nil {
		fi, err = fs.Stat(p.Inputs.FS, in)
	} else {
		fi, err = os.Stat(in)
	}
	return err == nil && fi.IsDir()
}

// base is the folder name of input in (abs on the disk).
func (p *Plan) base(abs, in string) string {
	if p.Inputs.FS != nil {
		return path.Base(in)
	}
	return filepath.Base(abs)
}

// chartEnvironments are the environments of the chart at in: one per
// .meshc.yaml helm entry for it, unless --helm-* flags were given (then
// Render.Charts is nil), else one rendered with the flags.
func (p *Plan) chartEnvironments(in, abs string) []Environment {
	var envs []Environment
	if p.Project != nil && p.Inputs.Render.Charts != nil {
		for _, c := range p.Project.Helm {
			if a, err := filepath.Abs(c.Chart); err == nil && a == abs {
				h := p.helmOptions(c)
				envs = append(envs, Environment{Name: entryName(c), path: in, helm: &h})
			}
		}
	}
	if len(envs) == 0 {
		envs = append(envs, Environment{Name: p.base(abs, in), path: in})
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

// uniqueNames gives overlays of the same folder name (clusters/a/prod,
// clusters/b/prod) their paths as names, and refuses other clashes.
func uniqueNames(envs []Environment) error {
	count := map[string]int{}
	for _, e := range envs {
		count[e.Name]++
	}
	for i, e := range envs {
		if count[e.Name] > 1 && e.helm == nil {
			envs[i].Name = filepath.Clean(e.path)
		}
	}
	clear(count)
	for _, e := range envs {
		if count[e.Name]++; count[e.Name] == 2 {
			return fmt.Errorf("two environments are named %q; give the helm entries of .meshc.yaml a name", e.Name)
		}
	}
	return nil
}

// environment is the plan of e alone: its path after the shared inputs,
// and for a helm entry its options for its chart.
func (p *Plan) environment(e Environment, shared []string) *Plan {
	ep := *p
	ep.Inputs.Paths = append(slices.Clone(shared), e.path)
	if e.helm != nil {
		if abs, err := filepath.Abs(e.path); err == nil {
			ep.Inputs.Render.Charts = maps.Clone(p.Inputs.Render.Charts)
			ep.Inputs.Render.Charts[abs] = *e.helm
		}
	}
	return &ep
}
