package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/projectconfig"
	"github.com/meshc/meshc/internal/render"
	"github.com/meshc/meshc/internal/suppress"
)

// compileFlags are the flags of the commands that compile manifests
// (lint, build, explain, tree); .meshc.yaml gives their defaults.
type compileFlags struct {
	files, exclude, suppress, inject, revisions []string
	config, placeholders                        string
	// opts holds what flags bind directly: the mesh config file and
	// HNC's options.
	opts compile.Options
	// project is the .meshc.yaml in effect, once compile has run.
	project *projectconfig.Config
	// searched is where the search for .meshc.yaml started ("" when
	// --project-config named it).
	searched string
	// kustomize is --kustomize; helm holds the --helm-* flags.
	kustomize string
	helm      render.HelmOptions
	// read are the files besides the manifests that compile read: the
	// project config and the mesh config, for build not to replace them.
	read []string
	// allowEmpty accepts inputs without any Kubernetes object.
	allowEmpty bool
}

func (f *compileFlags) add(cmd *cobra.Command, suppression bool) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "manifests to read: a file, a directory or - (repeatable; added to PATH arguments)")
	fl.StringVar(&f.config, "project-config", "", "read repository defaults from `FILE` instead of the nearest .meshc.yaml above the inputs, up to the repository root")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "leave out paths matching this `GLOB` when searching directories (** allowed; a pattern without / matches a name anywhere; repeatable)")
	fl.StringArrayVar(&f.inject, "inject-namespace", nil, "treat `NAMESPACE` as injected whatever its labels (repeatable)")
	fl.StringArrayVar(&f.revisions, "revision", nil, "an installed control-plane `REVISION`: istio.io/rev=REVISION injects (repeatable; default: default)")
	fl.StringVar(&f.opts.MeshConfigFile, "mesh-config", "", "read the mesh config from `FILE` (a MeshConfig YAML, a ConfigMap with a mesh key, an IstioOperator or istiod Helm values) instead of the input's")
	fl.StringVar(&f.kustomize, "kustomize", "auto", "`auto` renders a directory holding a kustomization.yaml with Kustomize; off reads its files one by one")
	fl.StringArrayVar(&f.helm.Values, "helm-values", nil, "a values `FILE` merged over the values.yaml of each Helm chart rendered (repeatable, later files win)")
	fl.StringArrayVar(&f.helm.Set, "helm-set", nil, "set a chart value, `KEY=VALUE` as helm --set does (repeatable)")
	fl.StringVar(&f.helm.Release, "helm-release", "", "the release `NAME` charts are rendered for (default release-name)")
	fl.StringVar(&f.helm.Namespace, "helm-namespace", "", "the `NAMESPACE` charts are rendered for (default default)")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "accept inputs without any Kubernetes object (else exit 2: a run that checked nothing should not pass)")
	fl.StringVar(&f.placeholders, "placeholder-vips", compile.DefaultPlaceholderVIPs().String(), "IPv4 `CIDR` for made-up cluster IPs of Services the manifests give none")
	if suppression {
		fl.StringArrayVar(&f.suppress, "suppress", nil, "leave out a diagnostic `CODE` (MC or IST code, or name), or CODE=namespace/name (a glob) for one object; repeatable")
	}
	h, p := &f.opts.Hierarchy, &f.opts.Propagation
	fl.StringArrayVar(&h.ExcludedNamespaces, "hnc-excluded-namespace", nil, "a namespace HNC does not manage (repeatable; default kube-system, kube-public, kube-node-lease, hnc-system)")
	fl.StringVar(&h.IncludedNamespaceRegex, "hnc-included-namespace-regex", "", "namespaces HNC manages must match this `REGEX` (default .*)")
	fl.StringArrayVar(&h.ManagedLabels, "hnc-managed-namespace-label", nil, "a `REGEX` of namespace label keys HNC manages (repeatable)")
	fl.StringArrayVar(&h.ManagedAnnotations, "hnc-managed-namespace-annotation", nil, "a `REGEX` of namespace annotation keys HNC manages (repeatable)")
	fl.BoolVar(&h.TKEProjects, "tke-projects", false, "treat namespaces labelled tkestack.io/projectName as children of an abstract TKE project")
	fl.StringToStringVar(&h.TKEProjectHomes, "tke-project-home", nil, "`PROJECT=NAMESPACE`: the project's namespaces become children of NAMESPACE, so objects propagate (with --tke-projects)")
	fl.StringArrayVar(&p.NoPropagationLabels, "hnc-nopropagation-label", nil, "objects with this exact `KEY=VALUE` label are never propagated (repeatable; default cattle.io/creator=norman)")
	fl.StringArrayVar(&p.UnpropagatedLabels, "hnc-unpropagated-label", nil, "a label `KEY` stripped from propagated copies (repeatable)")
	fl.StringArrayVar(&p.UnpropagatedAnnotations, "hnc-unpropagated-annotation", nil, "an annotation `KEY` stripped from propagated copies (repeatable)")
}

// paths are the inputs: PATH arguments and -f, else standard input when
// something is piped in, else the working directory. An empty pipe
// (`true | meshc lint`) is not an input: the working directory is.
func (g *globals) paths(f *compileFlags, args []string) []string {
	paths := append(slices.Clone(f.files), args...)
	if len(paths) > 0 {
		return paths
	}
	if g.stdinCarriesData() {
		return []string{"-"}
	}
	return []string{"."}
}

// stdinCarriesData reports, once per run, whether standard input is a
// pipe or a file with something in it. Telling an empty pipe from one
// still being written takes a read, which waits for the writer (helm
// template, say) as reading the input would; the byte read is put back.
// A signal ends the wait as it ends a read of the input: the read is left
// behind, and the compile that follows stops at once.
func (g *globals) stdinCarriesData() bool {
	if g.stdinKnown {
		return g.stdinData
	}
	g.stdinKnown = true
	file, ok := g.stdin.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	switch {
	case err != nil:
		return false
	case fi.Mode().IsRegular():
		g.stdinData = fi.Size() > 0
		return g.stdinData
	case fi.Mode()&os.ModeNamedPipe == 0:
		return false // a terminal: nothing was piped in
	}
	read := make(chan []byte, 1)
	go func() {
		var first [1]byte
		n, _ := io.ReadFull(file, first[:])
		read <- first[:n]
	}()
	ctx := cmp.Or(g.ctx, context.Background())
	select {
	case first := <-read:
		g.stdin = io.MultiReader(bytes.NewReader(first), file)
		g.stdinData = len(first) > 0
	case <-ctx.Done():
	}
	return g.stdinData
}

// compile runs the pipeline over the inputs with the options the flags
// and .meshc.yaml give; a flag given on the command line wins.
func (g *globals) compile(cmd *cobra.Command, f *compileFlags, args []string) (*compile.Result, error) {
	paths := g.paths(f, args)
	opts, exclude, err := f.options(cmd.Flags(), paths)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if g.verbose {
		f.sayProject(g.stderr)
	}
	ro, err := f.render(cmd.Flags())
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	// A repository that names its charts and overlays checks them when
	// no input is named, rather than walking the working directory.
	if named := f.project.Inputs(); len(named) > 0 && len(f.files) == 0 && len(args) == 0 && slices.Equal(paths, []string{"."}) {
		paths = named
	}
	run, err := compile.Run(cmd.Context(), compile.Inputs{Paths: paths, Stdin: g.stdin, Exclude: exclude, Render: ro}, opts)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	// A run that loaded nothing checked nothing: unless asked to accept
	// that, it is no pass. Inputs that failed to load say so themselves.
	if len(run.Objects) == 0 && !f.allowEmpty && !slices.ContainsFunc(run.Diagnostics, func(d diag.Diagnostic) bool { return d.Severity == diag.Error }) {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("no Kubernetes objects found in %s; --allow-empty accepts inputs without any", strings.Join(paths, ", "))}
	}
	return run, nil
}

// options merges .meshc.yaml and the flags.
func (f *compileFlags) options(fl *pflag.FlagSet, paths []string) (compile.Options, []string, error) {
	if err := f.loadProject(paths); err != nil {
		return compile.Options{}, nil, err
	}
	opts := f.opts
	c := f.project
	if c == nil {
		c = &projectconfig.Config{}
	}
	changed := fl.Changed
	if !changed("mesh-config") && c.MeshConfig != "" {
		opts.MeshConfigFile = c.MeshConfig
	}
	if opts.MeshConfigFile != "" {
		f.read = append(f.read, opts.MeshConfigFile)
	}
	placeholders := f.placeholders
	if !changed("placeholder-vips") && c.PlaceholderVIPs != "" {
		placeholders = c.PlaceholderVIPs
	}
	p, err := netip.ParsePrefix(placeholders)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return opts, nil, fmt.Errorf("--placeholder-vips: want an IPv4 CIDR of at least 4 addresses, got %q", placeholders)
	}
	opts.PlaceholderVIPs = p
	opts.Injection.Namespaces = pick(changed("inject-namespace"), f.inject, c.InjectNamespaces)
	opts.Injection.Revisions = pick(changed("revision"), f.revisions, c.Revisions)
	h, ch := &opts.Hierarchy, c.HNC
	h.ExcludedNamespaces = pick(changed("hnc-excluded-namespace"), h.ExcludedNamespaces, ch.ExcludedNamespaces)
	h.ManagedLabels = pick(changed("hnc-managed-namespace-label"), h.ManagedLabels, ch.ManagedLabels)
	h.ManagedAnnotations = pick(changed("hnc-managed-namespace-annotation"), h.ManagedAnnotations, ch.ManagedAnnotations)
	if !changed("hnc-included-namespace-regex") && ch.IncludedNamespaceRegex != "" {
		h.IncludedNamespaceRegex = ch.IncludedNamespaceRegex
	}
	if !changed("tke-projects") {
		h.TKEProjects = h.TKEProjects || ch.TKEProjects
	}
	if !changed("tke-project-home") && len(ch.TKEProjectHomes) > 0 {
		h.TKEProjectHomes = ch.TKEProjectHomes
	}
	pr := &opts.Propagation
	pr.NoPropagationLabels = pick(changed("hnc-nopropagation-label"), pr.NoPropagationLabels, ch.NoPropagationLabels)
	pr.UnpropagatedLabels = pick(changed("hnc-unpropagated-label"), pr.UnpropagatedLabels, ch.UnpropagatedLabels)
	pr.UnpropagatedAnnotations = pick(changed("hnc-unpropagated-annotation"), pr.UnpropagatedAnnotations, ch.UnpropagatedAnnotations)
	// Suppressions and exclusions add up: the repository's, then the
	// command line's.
	opts.Suppress, err = c.Rules()
	if err != nil {
		return opts, nil, err
	}
	for _, s := range f.suppress {
		r, err := suppress.Parse(s)
		if err != nil {
			return opts, nil, fmt.Errorf("--suppress: %w", err)
		}
		opts.Suppress = append(opts.Suppress, r)
	}
	return opts, append(slices.Clone(c.Exclude), f.exclude...), opts.Validate()
}

// render merges .meshc.yaml's helm entries and the --kustomize and --helm-*
// flags: a --helm-* flag given applies to every chart, the config's
// entries included; else each entry's options apply to its chart.
func (f *compileFlags) render(fl *pflag.FlagSet) (compile.RenderOptions, error) {
	ro := compile.RenderOptions{Helm: f.helm}
	switch f.kustomize {
	case "auto":
	case "off":
		ro.NoKustomize = true
	default:
		return ro, fmt.Errorf("--kustomize: want auto or off, got %q", f.kustomize)
	}
	if f.project == nil || slices.ContainsFunc([]string{"helm-values", "helm-set", "helm-release", "helm-namespace"}, fl.Changed) {
		return ro, nil
	}
	ro.Charts = map[string]render.HelmOptions{}
	for _, c := range f.project.Helm {
		abs, err := filepath.Abs(c.Chart)
		if err != nil {
			return ro, err
		}
		ro.Charts[abs] = render.HelmOptions{Values: c.Values, Set: c.Set, Release: c.Release, Namespace: c.Namespace}
	}
	return ro, nil
}

// pick is the flag's value when given, else the config's.
func pick(flagGiven bool, flag, config []string) []string {
	if flagGiven || len(config) == 0 {
		return flag
	}
	return config
}

// loadProject reads --project-config, or the nearest .meshc.yaml above the
// first input (the working directory for standard input), up to the
// repository root.
func (f *compileFlags) loadProject(paths []string) error {
	file := f.config
	if file == "" {
		start := "."
		if paths[0] != "-" {
			start = paths[0]
			if fi, err := os.Stat(start); err != nil || !fi.IsDir() {
				start = filepath.Dir(start)
			}
		}
		f.searched = start
		var err error
		if file, err = projectconfig.Find(start); err != nil || file == "" {
			return err
		}
	}
	f.read = append(f.read, file)
	c, err := projectconfig.Load(file)
	if err != nil {
		return err
	}
	f.project = c
	return nil
}

// sayProject tells which .meshc.yaml applies, for --verbose.
func (f *compileFlags) sayProject(w io.Writer) {
	if f.project != nil {
		fmt.Fprintf(w, "meshc: project config %s\n", f.project.Path)
		return
	}
	fmt.Fprintf(w, "meshc: no project config: no %s in %s or above it, up to the repository root\n", projectconfig.FileName, f.searched)
}

// projectPath is the .meshc.yaml in effect, or "".
func (f *compileFlags) projectPath() string {
	if f.project == nil {
		return ""
	}
	return f.project.Path
}

// failOn is the --fail-on threshold: the flag's when given, else the
// project's, else the flag's default.
func (f *compileFlags) failOn(fl *pflag.FlagSet, flag string) string {
	if !fl.Changed("fail-on") && f.project != nil && f.project.FailOn != "" {
		return f.project.FailOn
	}
	return flag
}
