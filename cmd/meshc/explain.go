package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/explain"
)

func newExplainCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain why a proxy sees what it sees",
		Example: `  meshc explain proxy default/productpage-v1 -f examples/bookinfo
  meshc explain proxy shop/cart -f ./manifests -o json`,
	}
	cmd.AddCommand(newExplainProxyCmd(g))
	return cmd
}

func newExplainProxyCmd(g *globals) *cobra.Command {
	var files []string
	var format string
	var verbose, routes bool
	cmd := &cobra.Command{
		Use:   "proxy NAMESPACE/NAME",
		Short: "Report a proxy's Sidecar, visible services, DestinationRules, VirtualServices and diagnostics",
		Long: `proxy resolves the manifests under -f (default .) as istiod would and reports,
for one proxy (an injected Pod, or a workload such as a Deployment, named
after it): the Sidecar that applies and why, each visible service and the
egress host or VirtualService that let it in, the DestinationRule chosen per
host with the lookup step and the rules it shadows, the VirtualService in
force per host and the ones that lost, and the diagnostics that concern the
proxy. --verbose adds egress listeners, hidden services and merge details.`,
		Example: `  meshc explain proxy default/productpage-v1 -f examples/bookinfo
  meshc explain proxy shop/cart -f base/ -f overlays/prod/ --verbose
  meshc explain proxy shop/cart -o json | jq .destinationRules`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, ok := strings.Cut(args[0], "/")
			if !ok || ns == "" || name == "" {
				return &exitError{code: exitUsage, err: fmt.Errorf("want NAMESPACE/NAME, got %q", args[0])}
			}
			if format != "text" && format != "json" {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or json)", format)}
			}
			run, err := g.analyze(cmd.Context(), files, nil)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			v, err := run.Proxy(ns, name)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			rep := explain.Build(run.Mesh, v, run.Diagnostics)
			if routes {
				rep.AddRoutes(run.Mesh, v)
			}
			if format == "json" {
				return explain.WriteJSON(g.stdout, rep)
			}
			return explain.WriteText(g.stdout, rep, explain.TextOptions{Color: g.color(g.stdout), Verbose: verbose})
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifests to read: a file, a directory or - (repeatable; default .)")
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "add egress listeners, hidden services and merge details")
	cmd.Flags().BoolVar(&routes, "routes", false, "add the HTTP route tables, each route with the VirtualService rule that wrote it")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
