// Package projectconfig reads .meshc.yaml, a repository's defaults for
// meshc: what to leave out of the inputs, which findings to suppress (each
// with a reason, optionally until a date), the --fail-on threshold, the
// mesh config, the injector as installed and HNC's options. Flags given on
// the command line win over it.
package projectconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/suppress"
)

// FileName is the file Find looks for.
const FileName = ".meshc.yaml"

// Config is a .meshc.yaml.
type Config struct {
	// Path is the file the config was read from.
	Path string `yaml:"-"`
	// Exclude are globs (** allowed) of input paths to leave out.
	Exclude []string `yaml:"exclude"`
	// FailOn is lint's and build's --fail-on.
	FailOn string `yaml:"failOn"`
	// MeshConfig is a mesh config file, relative to the config's folder.
	MeshConfig      string `yaml:"meshConfig"`
	PlaceholderVIPs string `yaml:"placeholderVIPs"`
	// DualStack is --dual-stack: istiod runs with ISTIO_DUAL_STACK.
	DualStack bool `yaml:"dualStack"`
	// AlphaGatewayAPI is --alpha-gateway-api: istiod runs with
	// PILOT_ENABLE_ALPHA_GATEWAY_API.
	AlphaGatewayAPI bool     `yaml:"alphaGatewayAPI"`
	Revisions       []string `yaml:"revisions"`
	// InjectNamespaces are injected whatever their labels.
	InjectNamespaces []string      `yaml:"injectNamespaces"`
	Suppress         []Suppression `yaml:"suppress"`
	HNC              HNC           `yaml:"hnc"`
	// Helm are charts to render, each with its values; Kustomize are
	// kustomization directories to render. Both are relative to the
	// config's folder, and are the inputs when none are named.
	Helm      []Chart  `yaml:"helm"`
	Kustomize []string `yaml:"kustomize"`
}

// Chart is one entry of helm: helm template's inputs for a chart.
type Chart struct {
	Chart string `yaml:"chart"`
	// Name names the environment the entry renders; by default the last
	// values file's name without extension, else the release, else the
	// chart's folder.
	Name string `yaml:"name"`
	// Values are values files merged in order over the chart's values.yaml.
	Values    []string `yaml:"values"`
	Set       []string `yaml:"set"`
	Release   string   `yaml:"release"`
	Namespace string   `yaml:"namespace"`
}

// Suppression is one entry of suppress.
type Suppression struct {
	Code   string `yaml:"code"`
	Object string `yaml:"object"`
	// Reason is required: a suppression nobody can explain is a bug.
	Reason string `yaml:"reason"`
	// Expires is a date (YYYY-MM-DD) from which it no longer applies.
	Expires string `yaml:"expires"`
	line    int
}

// HNC holds HNC's operator options, as the --hnc-* and --tke-* flags.
type HNC struct {
	ExcludedNamespaces      []string          `yaml:"excludedNamespaces"`
	IncludedNamespaceRegex  string            `yaml:"includedNamespaceRegex"`
	ManagedLabels           []string          `yaml:"managedLabels"`
	ManagedAnnotations      []string          `yaml:"managedAnnotations"`
	NoPropagationLabels     []string          `yaml:"noPropagationLabels"`
	UnpropagatedLabels      []string          `yaml:"unpropagatedLabels"`
	UnpropagatedAnnotations []string          `yaml:"unpropagatedAnnotations"`
	TKEProjects             bool              `yaml:"tkeProjects"`
	TKEProjectHomes         map[string]string `yaml:"tkeProjectHomes"`
}

// Find looks for FileName in dir and its parents, up to the repository
// root (the directory holding .git, a directory or, in a worktree or
// submodule, a file) or the file system's root, and returns its path, or
// "" when there is none. A .meshc.yaml above the repository belongs to
// something else: a home directory, another project.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, FileName)
		if _, err := os.Lstat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return "", nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// FindIn is Find in fsys, a repository's tree (a git revision's): the
// search goes from dir up to the tree's root, the repository's.
func FindIn(fsys fs.FS, dir string) (string, error) {
	for dir = path.Clean(dir); ; dir = path.Dir(dir) {
		p := path.Join(dir, FileName)
		if _, err := fs.Lstat(fsys, p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		if dir == "." {
			return "", nil
		}
	}
}

// Load reads a config file strictly: an unknown key, a value of the wrong
// type, a suppression without code or reason, or a bad date is an error
// naming the file and line.
// A nil fsys is the OS's file system; in another, path is its name.
func Load(fsys fs.FS, path string) (*Config, error) {
	data, err := inputfile.ReadFS(fsys, path, inputfile.Options{})
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a config from data as Load does; path names it in errors and
// anchors a relative meshConfig.
func Parse(path string, data []byte) (*Config, error) {
	c := &Config{Path: path}
	// The tree first, to say what is wrong in the config's words; the
	// decoder's own errors name Go types.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkShape(path, &root, reflect.TypeFor[Config](), ""); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The suppressions' lines.
	if len(root.Content) > 0 {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "suppress" {
				for j, item := range m.Content[i+1].Content {
					if j < len(c.Suppress) {
						c.Suppress[j].line = item.Line
					}
				}
			}
		}
	}
	c.MeshConfig = c.relative(c.MeshConfig)
	for i := range c.Helm {
		h := &c.Helm[i]
		if h.Chart == "" {
			return nil, fmt.Errorf("%s: helm entry %d needs a chart", path, i+1)
		}
		h.Chart = c.relative(h.Chart)
		for j := range h.Values {
			h.Values[j] = c.relative(h.Values[j])
		}
	}
	for i := range c.Kustomize {
		c.Kustomize[i] = c.relative(c.Kustomize[i])
	}
	if _, err := c.Rules(); err != nil {
		return nil, err
	}
	return c, nil
}

// Inputs are the charts and kustomizations the config names, the inputs
// of a run that names none; nil when it names none or c is nil.
func (c *Config) Inputs() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, h := range c.Helm {
		out = append(out, h.Chart)
	}
	return append(out, c.Kustomize...)
}

// relative anchors a path written in the config at the config's folder.
func (c *Config) relative(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(c.Path), p)
}

// Rules are the suppressions as suppress rules.
func (c *Config) Rules() ([]suppress.Rule, error) {
	var out []suppress.Rule
	for _, s := range c.Suppress {
		at := fmt.Sprintf("%s:%d", c.Path, s.line)
		r := suppress.Rule{Code: s.Code, Object: s.Object, Reason: s.Reason, Source: diag.ObjectRef{File: c.Path, Line: s.line}}
		switch {
		case s.Code == "":
			return nil, fmt.Errorf("%s: a suppression needs a code", at)
		case s.Reason == "":
			return nil, fmt.Errorf("%s: the suppression of %s needs a reason", at, s.Code)
		}
		if s.Expires != "" {
			d, err := time.Parse(time.DateOnly, s.Expires)
			if err != nil {
				return nil, fmt.Errorf("%s: expires %q: want a date such as 2026-12-31", at, s.Expires)
			}
			r.Expires = d
		}
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		out = append(out, r)
	}
	return out, nil
}
