package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/job"
	"github.com/meshc/meshc/internal/projectconfig"
)

// compileFlags are the flags of the commands that compile manifests
// (lint, build, diff, explain, test, tree, serve); .meshc.yaml gives their
// defaults (job.Merge).
type compileFlags struct {
	files []string
	// s holds what the flags bind; a command with --fail-on binds it to
	// s.FailOn.
	s job.Settings
	// plan is the merge of the flags and .meshc.yaml, once compile has
	// run.
	plan *job.Plan
}

func (f *compileFlags) add(cmd *cobra.Command, suppression bool) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "manifests to read: a file, a directory or - (repeatable; added to PATH arguments)")
	fl.StringVar(&f.s.ProjectConfig, "project-config", "", "read repository defaults from `FILE` instead of the nearest .meshc.yaml above the inputs, up to the repository root")
	fl.StringArrayVar(&f.s.Exclude, "exclude", nil, "leave out paths matching this `GLOB` when searching directories (** allowed; a pattern without / matches a name anywhere; repeatable)")
	fl.StringArrayVar(&f.s.InjectNamespaces, "inject-namespace", nil, "treat `NAMESPACE` as injected whatever its labels (repeatable)")
	fl.StringArrayVar(&f.s.Revisions, "revision", nil, "an installed control-plane `REVISION`: istio.io/rev=REVISION injects (repeatable; default: default)")
	fl.StringVar(&f.s.Compile.MeshConfigFile, "mesh-config", "", "read the mesh config from `FILE` (a MeshConfig YAML, a ConfigMap with a mesh key, an IstioOperator or istiod Helm values) instead of the input's")
	fl.StringVar(&f.s.Kustomize, "kustomize", "auto", "`auto` renders a directory holding a kustomization.yaml with Kustomize; off reads its files one by one")
	fl.StringArrayVar(&f.s.Helm.Values, "helm-values", nil, "a values `FILE` merged over the values.yaml of each Helm chart rendered (repeatable, later files win)")
	fl.StringArrayVar(&f.s.Helm.Set, "helm-set", nil, "set a chart value, `KEY=VALUE` as helm --set does (repeatable)")
	fl.StringVar(&f.s.Helm.Release, "helm-release", "", "the release `NAME` charts are rendered for (default release-name)")
	fl.StringVar(&f.s.Helm.Namespace, "helm-namespace", "", "the `NAMESPACE` charts are rendered for (default default)")
	fl.BoolVar(&f.s.AllowEmpty, "allow-empty", false, "accept inputs without any Kubernetes object (else exit 2: a run that checked nothing should not pass)")
	fl.BoolVar(&f.s.Compile.DualStack, "dual-stack", false, "build dual-stack proxies as istiod does with ISTIO_DUAL_STACK=true: both IP families' addresses, binds and endpoints")
	fl.BoolVar(&f.s.Compile.AlphaGatewayAPI, "alpha-gateway-api", false, "read the experimental Gateway API kinds istiod reads with PILOT_ENABLE_ALPHA_GATEWAY_API=true (XBackendTrafficPolicy)")
	fl.StringVar(&f.s.PlaceholderVIPs, "placeholder-vips", compile.DefaultPlaceholderVIPs().String(), "IPv4 `CIDR` for made-up cluster IPs of Services the manifests give none")
	if suppression {
		fl.StringArrayVar(&f.s.Suppress, "suppress", nil, "leave out a diagnostic `CODE` (MC or IST code, or name), or CODE=namespace/name (a glob) for one object; repeatable")
	}
	h, p := &f.s.Compile.Hierarchy, &f.s.Compile.Propagation
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

// inputs are the inputs named: PATH arguments and -f, else standard
// input when something is piped in; none means the default (job.Settings).
// An empty pipe (`true | meshc lint`) is not an input.
func (g *globals) inputs(f *compileFlags, args []string) []string {
	paths := append(slices.Clone(f.files), args...)
	if len(paths) == 0 && g.stdinCarriesData() {
		return []string{"-"}
	}
	return paths
}

// settings are the run's settings as the flags give them.
func (g *globals) settings(cmd *cobra.Command, f *compileFlags, args []string) job.Settings {
	s := f.s
	s.Paths, s.Stdin, s.Given = g.inputs(f, args), g.stdin, cmd.Flags().Changed
	s.Compile.AfterStage = afterStageGC
	return s
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

// plan merges s and .meshc.yaml (job.Merge) into f.plan. With --verbose
// it says which .meshc.yaml applies.
func (g *globals) plan(f *compileFlags, s job.Settings) (*job.Plan, error) {
	p, err := job.Merge(s)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if g.verbose {
		sayProject(g.stderr, p)
	}
	f.plan = p
	return p, nil
}

// compile runs the pipeline over the inputs with the options the flags
// and .meshc.yaml give; a flag given on the command line wins.
func (g *globals) compile(cmd *cobra.Command, f *compileFlags, args []string) (*compile.Result, error) {
	return g.compileSettings(cmd, f, g.settings(cmd, f, args))
}

// compileSettings is compile with the settings made.
func (g *globals) compileSettings(cmd *cobra.Command, f *compileFlags, s job.Settings) (*compile.Result, error) {
	p, err := g.plan(f, s)
	if err != nil {
		return nil, err
	}
	return compilePlan(cmd, p)
}

// compilePlan compiles p; what stops it is a usage error.
func compilePlan(cmd *cobra.Command, p *job.Plan) (*compile.Result, error) {
	res, err := p.Compile(cmd.Context())
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return res, nil
}

// sayProject tells which .meshc.yaml applies, for --verbose.
func sayProject(w io.Writer, p *job.Plan) {
	if p.Project != nil {
		fmt.Fprintf(w, "meshc: project config %s\n", p.Project.Path)
		return
	}
	fmt.Fprintf(w, "meshc: no project config: no %s in %s or above it, up to the repository root\n", projectconfig.FileName, p.Searched)
}
