package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// globals are the flags every command shares.
type globals struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	noColor        bool
	cpuProfile     string
	// verbose says on stderr which .meshc.yaml applies; explain proxy
	// prints more details too.
	verbose bool
	// stdinKnown: stdinData says whether standard input carries data
	// (see stdinCarriesData).
	stdinKnown, stdinData bool
	// ctx is the run's context: a signal ends it.
	ctx context.Context
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "meshc",
		Short: "Compile and lint Kubernetes + Istio manifests offline",
		Long: `meshc reads Kubernetes, Istio and HNC manifests and tells, before anything
reaches a cluster, what istiod would make of them: diagnostics with stable
codes (lint), each proxy's Envoy configuration as istiod would send it
(build), and why a proxy sees what it sees (explain).

Defaults for a repository live in .meshc.yaml, found upward from the
inputs up to the repository root (-v says which applies): excludes,
suppressions with reasons and expiry dates, --fail-on, the mesh config,
injected namespaces and revisions, HNC options.`,
		Example: `  meshc lint ./manifests
  meshc lint ./manifests -o sarif > meshc.sarif
  helm template ./chart | meshc lint
  meshc build ./manifests -o out/
  meshc explain proxy shop/cart -f ./manifests`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().BoolVar(&g.noColor, "no-color", false, "never color output (NO_COLOR in the environment does the same)")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "say on stderr which .meshc.yaml applies; explain proxy also adds egress listeners, hidden services and merge details")
	root.PersistentFlags().StringVar(&g.cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` (for performance reports)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var stopProfile func()
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		g.ctx = cmd.Context()
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
	root.AddCommand(newBuildCmd(g), newLintCmd(g), newDiffCmd(g), newExplainCmd(g), newTestCmd(g), newTreeCmd(g), newServeCmd(g), newVersionCmd(g), newGenCmd(g))
	root.Version = readVersion().Version
	root.SetVersionTemplate(readVersion().text())
	strictCompletion(root)
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

// strictCompletion makes `meshc completion SHELL` refuse a shell it cannot
// write a script for, naming the ones it can, instead of printing help and
// succeeding.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		c.Args = func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("no completion for shell %q (want %s)", args[0], strings.Join(shells, ", "))}
			}
			return nil
		}
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
}
