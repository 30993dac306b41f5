package main

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime/pprof"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/compile"
)

// globals are the flags every command shares.
type globals struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	noColor        bool
	cpuProfile     string
	placeholders   string
	// opts are the compile options the global flags set.
	opts compile.Options
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "meshc",
		Short: "Compile and lint Kubernetes + Istio manifests offline",
		Long: `meshc reads Kubernetes, Istio and HNC manifests and tells, before anything
reaches a cluster, what istiod would make of them: diagnostics with stable
codes today, per-proxy Envoy config as the passes arrive.`,
		Example: `  meshc lint ./manifests
  meshc lint ./manifests -o sarif > meshc.sarif
  cat all.yaml | meshc lint -`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&g.opts.MeshConfigFile, "mesh-config", "", "read the mesh config from `FILE` (MeshConfig YAML, or a ConfigMap with a mesh key) instead of ConfigMap istio-system/istio")
	root.PersistentFlags().BoolVar(&g.noColor, "no-color", false, "never color output (NO_COLOR in the environment does the same)")
	root.PersistentFlags().StringArrayVar(&g.opts.Hierarchy.ExcludedNamespaces, "hnc-excluded-namespace", nil, "a namespace HNC does not manage (repeatable; default kube-system, kube-public, kube-node-lease, hnc-system)")
	root.PersistentFlags().StringVar(&g.opts.Hierarchy.IncludedNamespaceRegex, "hnc-included-namespace-regex", "", "namespaces HNC manages must match this `REGEX` (default .*)")
	root.PersistentFlags().StringArrayVar(&g.opts.Hierarchy.ManagedLabels, "hnc-managed-namespace-label", nil, "a `REGEX` of namespace label keys HNC manages (repeatable)")
	root.PersistentFlags().StringArrayVar(&g.opts.Hierarchy.ManagedAnnotations, "hnc-managed-namespace-annotation", nil, "a `REGEX` of namespace annotation keys HNC manages (repeatable)")
	root.PersistentFlags().BoolVar(&g.opts.Hierarchy.TKEProjects, "tke-projects", false, "treat namespaces labelled tkestack.io/projectName as children of an abstract TKE project")
	root.PersistentFlags().StringToStringVar(&g.opts.Hierarchy.TKEProjectHomes, "tke-project-home", nil, "`PROJECT=NAMESPACE`: the project's namespaces become children of NAMESPACE, so objects propagate (with --tke-projects)")
	root.PersistentFlags().StringArrayVar(&g.opts.Propagation.NoPropagationLabels, "hnc-nopropagation-label", nil, "objects with this exact `KEY=VALUE` label are never propagated (repeatable; default cattle.io/creator=norman)")
	root.PersistentFlags().StringArrayVar(&g.opts.Propagation.UnpropagatedLabels, "hnc-unpropagated-label", nil, "a label `KEY` stripped from propagated copies (repeatable)")
	root.PersistentFlags().StringArrayVar(&g.opts.Propagation.UnpropagatedAnnotations, "hnc-unpropagated-annotation", nil, "an annotation `KEY` stripped from propagated copies (repeatable)")
	root.PersistentFlags().StringVar(&g.placeholders, "placeholder-vips", compile.DefaultPlaceholderVIPs().String(), "IPv4 `CIDR` for made-up cluster IPs of Services the manifests give none")
	root.PersistentFlags().StringVar(&g.cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` (for performance reports)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var stopProfile func()
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		p, err := netip.ParsePrefix(g.placeholders)
		if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
			return &exitError{code: exitUsage, err: fmt.Errorf("--placeholder-vips: want an IPv4 CIDR of at least 4 addresses, got %q", g.placeholders)}
		}
		g.opts.PlaceholderVIPs = p
		if err := g.opts.Validate(); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		if g.cpuProfile == "" {
			return nil
		}
		f, err := os.Create(g.cpuProfile)
		if err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("cpuprofile: %w", err)}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return &exitError{code: exitUsage, err: fmt.Errorf("cpuprofile: %w", err)}
		}
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		return nil
	}
	root.PersistentPostRun = func(*cobra.Command, []string) {
		if stopProfile != nil {
			stopProfile()
		}
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	root.AddCommand(newBuildCmd(g), newLintCmd(g), newExplainCmd(g), newTreeCmd(g), newVersionCmd(g), newGenCmd(g))
	return root
}

// color reports whether text written to w may be colored: not asked off,
// NO_COLOR unset, and w a terminal.
func (g *globals) color(w io.Writer) bool {
	if g.noColor || os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
