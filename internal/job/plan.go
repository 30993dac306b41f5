// Package job is one meshc run over a repository's manifests, whatever
// the command: Merge joins the command line's settings with the
// .meshc.yaml found for the inputs into a Plan; Plan.Compile compiles it;
// Plan.Build writes its Envoy configuration into OUT as one transaction.
// lint, build, diff, serve, explain and test all go through here, so a
// setting means the same to each; the commands only parse flags and print.
package job

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/projectconfig"
	"github.com/meshc/meshc/internal/render"
	"github.com/meshc/meshc/internal/suppress"
)

// Settings are a run's settings as the command line gives them. Each is
// named after its flag: Given says which flags were given, and
// .meshc.yaml supplies the ones that were not.
type Settings struct {
	// Paths are the inputs named: files, directories, "-" for Stdin.
	// None means the charts and kustomizations .meshc.yaml names, else
	// the working directory.
	Paths []string
	Stdin io.Reader
	// FS, when set, holds Paths (compile.Inputs.FS): a git revision's
	// tree, say, whose root is the repository's. The .meshc.yaml is then
	// searched for there, and the files it names read there; the files
	// the flags name stay the OS's.
	FS fs.FS
	// ProjectConfig is --project-config: read it instead of searching
	// for .meshc.yaml.
	ProjectConfig string
	// Exclude and Suppress add to .meshc.yaml's; the others replace it.
	Exclude, Suppress           []string
	InjectNamespaces, Revisions []string
	PlaceholderVIPs             string
	// PlaceholderVIPs is a CIDR (compile.DefaultPlaceholderVIPs by
	// default). Kustomize is "auto" or "off"; Helm applies to every chart when any
	// of its flags is given, else each chart .meshc.yaml names has its own.
	Kustomize string
	Helm      render.HelmOptions
	// AllowEmpty accepts inputs without any Kubernetes object.
	AllowEmpty bool
	// FailOn is the command's --fail-on, "" for commands without one.
	FailOn string
	// Compile holds what flags set directly: the mesh config file, HNC's
	// options, and the analyzers to run.
	Compile compile.Options
	// Given reports whether the flag of that name was given; nil means
	// none was.
	Given func(flag string) bool
}

// given is Settings.Given, false when unset.
func (s *Settings) given(flag string) bool { return s.Given != nil && s.Given(flag) }

// named are the inputs as the search for .meshc.yaml sees them: the
// working directory when none is named.
func (s *Settings) named() []string {
	if len(s.Paths) == 0 {
		return []string{"."}
	}
	return s.Paths
}

// Plan is a run's inputs and options once .meshc.yaml is merged in.
type Plan struct {
	Inputs  compile.Inputs
	Options compile.Options
	// Project is the .meshc.yaml in effect, nil for none. Searched is
	// where the search for it started ("" when --project-config named it).
	Project  *projectconfig.Config
	Searched string
	// FailOn is the --fail-on threshold in effect: the flag's when given,
	// else the project's, else the flag's default.
	FailOn     string
	allowEmpty bool
	// read are the files of the OS read besides the manifests (project
	// and mesh configs), which a build must not replace.
	read []string
	// projectIn is the file system the project config is in: Settings.FS
	// when it was found there, else nil, the OS's.
	projectIn fs.FS
}

// ProjectPath is the .meshc.yaml in effect, or "".
func (p *Plan) ProjectPath() string {
	if p.Project == nil {
		return ""
	}
	return p.Project.Path
}

// Merge reads the project config (--project-config, or the nearest
// .meshc.yaml above the first input, up to the repository root) and
// merges it with s: a setting given on the command line wins.
func Merge(s Settings) (*Plan, error) {
	p := &Plan{Options: s.Compile}
	if err := p.loadProject(s); err != nil {
		return nil, err
	}
	if err := p.merge(s); err != nil {
		return nil, err
	}
	ro, err := p.render(s)
	if err != nil {
		return nil, err
	}
	paths := s.named()
	// A repository that names its charts and overlays checks them when
	// no input is named, rather than walking the working directory.
	if named := p.Project.Inputs(); len(named) > 0 && len(s.Paths) == 0 {
		paths = named
	}
	c := p.project()
	p.Inputs = compile.Inputs{Paths: paths, Stdin: s.Stdin, Exclude: append(slices.Clone(c.Exclude), s.Exclude...), Render: ro, FS: s.FS}
	p.FailOn = s.FailOn
	if !s.given("fail-on") && c.FailOn != "" {
		p.FailOn = c.FailOn
	}
	p.allowEmpty = s.AllowEmpty
	return p, nil
}

// project is the project config, empty when there is none.
func (p *Plan) project() *projectconfig.Config {
	if p.Project == nil {
		return &projectconfig.Config{}
	}
	return p.Project
}

// loadProject reads --project-config, or the nearest .meshc.yaml above the
// first input (the working directory for standard input), up to the
// repository's root; in Settings.FS, up to its root.
func (p *Plan) loadProject(s Settings) error {
	file := s.ProjectConfig
	if file == "" {
		var err error
		if file, err = p.findProject(s); err != nil || file == "" {
			return err
		}
	}
	if p.projectIn == nil {
		p.read = append(p.read, file)
	}
	c, err := projectconfig.Load(p.projectIn, file)
	if err != nil {
		return err
	}
	p.Project = c
	return nil
}

// findProject searches for .meshc.yaml from the first input's directory.
func (p *Plan) findProject(s Settings) (string, error) {
	first := s.named()[0]
	if s.FS != nil {
		p.Searched, p.projectIn = first, s.FS
		if fi, err := fs.Stat(s.FS, first); err != nil || !fi.IsDir() {
			p.Searched = path.Dir(first)
		}
		return projectconfig.FindIn(s.FS, p.Searched)
	}
	p.Searched = "."
	if first != "-" {
		p.Searched = first
		if fi, err := os.Stat(first); err != nil || !fi.IsDir() {
			p.Searched = filepath.Dir(first)
		}
	}
	return projectconfig.Find(p.Searched)
}

// merge sets p.Options from s and the project config.
func (p *Plan) merge(s Settings) error {
	c, o := p.project(), &p.Options
	if !s.given("mesh-config") && c.MeshConfig != "" {
		o.MeshConfigFile, o.MeshConfigIn = c.MeshConfig, p.projectIn
	}
	if o.MeshConfigFile != "" && o.MeshConfigIn == nil {
		p.read = append(p.read, o.MeshConfigFile)
	}
	placeholders := s.PlaceholderVIPs
	if !s.given("placeholder-vips") && c.PlaceholderVIPs != "" {
		placeholders = c.PlaceholderVIPs
	}
	vips, err := netip.ParsePrefix(placeholders)
	if err != nil || !vips.Addr().Is4() || vips.Bits() > 30 {
		return fmt.Errorf("--placeholder-vips: want an IPv4 CIDR of at least 4 addresses, got %q", placeholders)
	}
	o.PlaceholderVIPs = vips
	if !s.given("dual-stack") {
		o.DualStack = o.DualStack || c.DualStack
	}
	if !s.given("alpha-gateway-api") {
		o.AlphaGatewayAPI = o.AlphaGatewayAPI || c.AlphaGatewayAPI
	}
	pick := func(flag string, given, config []string) []string {
		if s.given(flag) || len(config) == 0 {
			return given
		}
		return config
	}
	o.Injection.Namespaces = pick("inject-namespace", s.InjectNamespaces, c.InjectNamespaces)
	o.Injection.Revisions = pick("revision", s.Revisions, c.Revisions)
	h, ch := &o.Hierarchy, c.HNC
	h.ExcludedNamespaces = pick("hnc-excluded-namespace", h.ExcludedNamespaces, ch.ExcludedNamespaces)
	h.ManagedLabels = pick("hnc-managed-namespace-label", h.ManagedLabels, ch.ManagedLabels)
	h.ManagedAnnotations = pick("hnc-managed-namespace-annotation", h.ManagedAnnotations, ch.ManagedAnnotations)
	if !s.given("hnc-included-namespace-regex") && ch.IncludedNamespaceRegex != "" {
		h.IncludedNamespaceRegex = ch.IncludedNamespaceRegex
	}
	if !s.given("tke-projects") {
		h.TKEProjects = h.TKEProjects || ch.TKEProjects
	}
	if !s.given("tke-project-home") && len(ch.TKEProjectHomes) > 0 {
		h.TKEProjectHomes = ch.TKEProjectHomes
	}
	pr := &o.Propagation
	pr.NoPropagationLabels = pick("hnc-nopropagation-label", pr.NoPropagationLabels, ch.NoPropagationLabels)
	pr.UnpropagatedLabels = pick("hnc-unpropagated-label", pr.UnpropagatedLabels, ch.UnpropagatedLabels)
	pr.UnpropagatedAnnotations = pick("hnc-unpropagated-annotation", pr.UnpropagatedAnnotations, ch.UnpropagatedAnnotations)
	// Suppressions add up: the repository's, then the command line's.
	if o.Suppress, err = c.Rules(); err != nil {
		return err
	}
	for _, text := range s.Suppress {
		r, err := suppress.Parse(text)
		if err != nil {
			return fmt.Errorf("--suppress: %w", err)
		}
		o.Suppress = append(o.Suppress, r)
	}
	return o.Validate()
}

// render merges .meshc.yaml's helm entries with --kustomize and the
// --helm-* flags: a --helm-* flag given applies to every chart, the
// config's entries included; else each entry's options apply to its chart.
func (p *Plan) render(s Settings) (compile.RenderOptions, error) {
	ro := compile.RenderOptions{Helm: s.Helm}
	switch s.Kustomize {
	case "auto":
	case "off":
		ro.NoKustomize = true
	default:
		return ro, fmt.Errorf("--kustomize: want auto or off, got %q", s.Kustomize)
	}
	if p.Project == nil || slices.ContainsFunc([]string{"helm-values", "helm-set", "helm-release", "helm-namespace"}, s.given) {
		return ro, nil
	}
	ro.Charts = map[string]render.HelmOptions{}
	for _, c := range p.Project.Helm {
		abs, err := filepath.Abs(c.Chart)
		if err != nil {
			return ro, err
		}
		ro.Charts[abs] = p.helmOptions(c)
	}
	return ro, nil
}

// helmOptions are a .meshc.yaml helm entry's options for its chart.
func (p *Plan) helmOptions(c projectconfig.Chart) render.HelmOptions {
	return render.HelmOptions{Values: c.Values, Set: c.Set, Release: c.Release, Namespace: c.Namespace, ValuesIn: p.projectIn}
}

// Compile runs the compile the plan describes. A run that loaded nothing
// checked nothing: unless AllowEmpty, it is an error. Inputs that failed
// to load say so themselves, as diagnostics.
func (p *Plan) Compile(ctx context.Context) (*compile.Result, error) {
	run, err := compile.Run(ctx, p.Inputs, p.Options)
	if err != nil {
		return nil, err
	}
	if len(run.Objects) == 0 && !p.allowEmpty && !slices.ContainsFunc(run.Diagnostics, func(d diag.Diagnostic) bool { return d.Severity == diag.Error }) {
		return nil, fmt.Errorf("no Kubernetes objects found in %s; --allow-empty accepts inputs without any", strings.Join(p.Inputs.Paths, ", "))
	}
	return run, nil
}

// ParseFailOn reads a --fail-on threshold; 0 means never fail.
func ParseFailOn(s string) (diag.Severity, error) {
	if s == "none" {
		return 0, nil
	}
	sev, err := diag.ParseSeverity(s)
	if err != nil {
		return 0, fmt.Errorf("--fail-on: unknown threshold %q (want error, warning, info or none)", s)
	}
	return sev, nil
}

// Incomplete reports whether ds say that part of the input was not
// loaded: a file that could not be read, a chart or overlay that could
// not be rendered. Such a run does not cover what was asked.
func Incomplete(ds []diag.Diagnostic) bool {
	return slices.ContainsFunc(ds, func(d diag.Diagnostic) bool {
		return diag.UnreadableInput.Is(d) || diag.RenderFailed.Is(d)
	})
}
