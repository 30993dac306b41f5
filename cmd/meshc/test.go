package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/routecheck"
)

func newTestCmd(g *globals) *cobra.Command {
	var cf compileFlags
	var format string
	cmd := &cobra.Command{
		Use:   "test FILE... [-f PATH]...",
		Short: "Check where requests go against routing tests in YAML, for CI",
		Long: `test reads routing tests (docs/test-files.md): each a request from a proxy
(from, target, method, headers, TLS...) and what should happen to it (the
route and VirtualService rule taken, the destination host, subset and port,
the cluster, a weighted split, a redirect or direct response, the rewritten
path and authority, headers added, or no route at all). It compiles the
manifests under -f (default: piped standard input, else .) once, builds each
proxy the tests name, and walks every request through its Envoy
configuration as meshc explain request does, in parallel.

Exit status: 0 when every test passes, 1 when one fails (each failure shows
what was expected, what happened and the request's trace), 2 when a test
file cannot be read: an unknown field, a missing from or target, a FROM
naming no proxy, a bad target, each at its file:line.`,
		Example: `  meshc test examples/bookinfo-routing-tests.yaml -f examples/bookinfo
  meshc test tests/*.yaml -f ./manifests -o junit > routing.xml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "junit" {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or junit)", format)}
			}
			var files []*routecheck.File
			for _, p := range args {
				f, err := routecheck.Load(p)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				files = append(files, f)
			}
			cf.s.Compile.NoAnalyzers = true // the walk needs the mesh, not its diagnostics
			run, err := g.compile(cmd, &cf, nil)
			if err != nil {
				return err
			}
			results, err := routecheck.Run(cmd.Context(), run, files)
			var fe *routecheck.FormatError
			switch {
			case errors.As(err, &fe):
				return &exitError{code: exitUsage, err: err}
			case err != nil:
				return err
			}
			if format == "junit" {
				err = routecheck.WriteJUnit(g.stdout, results)
			} else {
				err = routecheck.WriteText(g.stdout, results)
			}
			if err != nil {
				return err
			}
			for _, r := range results {
				if !r.Passed() {
					return &exitError{code: exitFindings}
				}
			}
			return nil
		},
	}
	cf.add(cmd, false)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or junit (JUnit XML)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "junit"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
