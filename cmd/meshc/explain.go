package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/explain"
)

func newExplainCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain why a proxy sees what it sees",
		Example: `  meshc explain proxy default/productpage-v1 -f examples/bookinfo
  meshc explain proxy shop/cart -f ./manifests -o json
  meshc explain gateway infra/public examples/gateway-api`,
	}
	cmd.AddCommand(newExplainProxyCmd(g), newExplainRequestCmd(g), newExplainGatewayCmd(g))
	return cmd
}

func newExplainProxyCmd(g *globals) *cobra.Command {
	var cf compileFlags
	var format string
	var routes bool
	cmd := &cobra.Command{
		Use:   "proxy [NAMESPACE/]NAME [PATH...]",
		Short: "Report a proxy's Sidecar, visible services, DestinationRules, VirtualServices and diagnostics",
		Long: `proxy resolves the manifests under PATH and -f (default: piped standard
input, else .) as istiod would and reports,
for one proxy (an injected Pod, or a workload such as a Deployment, named
after it): the Sidecar that applies and why, each visible service and the
egress host or VirtualService that let it in, the DestinationRule chosen per
host with the lookup step and the rules it shadows, the VirtualService in
force per host and the ones that lost, and the diagnostics that concern the
proxy. --verbose adds egress listeners, hidden services and merge details;
--routes the HTTP route tables. A NAME without namespace is in "default",
as kubectl has it.`,
		Example: `  meshc explain proxy default/productpage-v1 -f examples/bookinfo
  meshc explain proxy shop/cart -f base/ -f overlays/prod/ --verbose
  meshc explain proxy shop/cart -o json | jq .destinationRules
  meshc explain proxy productpage-v1 examples/bookinfo --routes`,
		Args: cobra.MinimumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault // paths
			}
			return g.proxyNames(cmd, &cf)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			run, ns, name, err := g.explainInput(cmd, &cf, args, format)
			if err != nil {
				return err
			}
			v, err := run.Proxy(ns, name)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			rep := explain.ProxyReport(run.Mesh, v, run.Diagnostics)
			if routes {
				rep.AddRoutes(run.Mesh, v)
			}
			if format == "json" {
				return explain.WriteJSON(g.stdout, rep)
			}
			return explain.WriteText(g.stdout, rep, explain.TextOptions{Color: g.color(g.stdout), Verbose: g.verbose})
		},
	}
	cf.add(cmd, false)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	cmd.Flags().BoolVar(&routes, "routes", false, "add the HTTP route tables, each route with the VirtualService rule that wrote it")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newExplainGatewayCmd(g *globals) *cobra.Command {
	var cf compileFlags
	var format string
	cmd := &cobra.Command{
		Use:   "gateway [NAMESPACE/]NAME [PATH...]",
		Short: "Report a Gateway API Gateway's listeners, the routes attached to each and the conditions istiod would set",
		Long: `gateway converts the Gateway API objects under PATH and -f (default: piped
standard input, else .) as istiod would and reports, for one Gateway of a
class istiod compiles: the Deployment and Service istiod would deploy (or
the Services its addresses name), the gateway proxies of the input that
serve it, the Accepted, Programmed and ResolvedRefs conditions, and per
listener the Istio Gateway istiod makes of it, its conditions and the
routes attached; then the routes whose parentRef it does not accept, the
backend policies (BackendTLSPolicy, XBackendTrafficPolicy) of the hosts its
routes send to with the status istiod would give them, and the findings
about the Gateway, those routes and policies. An ambient waypoint or
east-west Gateway is checked but its proxy is not compiled; for a
waypoint, the Services that use it and their mesh routes are listed. A
NAME without namespace is in "default".`,
		Example: `  meshc explain gateway infra/public examples/gateway-api
  meshc explain gateway infra/public -f ./manifests -o json | jq .listeners`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run, ns, name, err := g.explainInput(cmd, &cf, args, format)
			if err != nil {
				return err
			}
			gw, err := run.Gateway(ns, name)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			rep := explain.Gateway(run.Mesh, gw, run.GatewayAPI.Policies, run.Diagnostics)
			if format == "json" {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return explain.WriteGatewayText(g.stdout, rep, explain.TextOptions{Color: g.color(g.stdout)})
		},
	}
	cf.add(cmd, false)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// explainInput reads an explain command's target, args[0], checks its
// output format and compiles the inputs the other args name.
func (g *globals) explainInput(cmd *cobra.Command, cf *compileFlags, args []string, format string) (run *compile.Result, ns, name string, err error) {
	if ns, name, err = explainTarget(args[0], format); err != nil {
		return nil, "", "", err
	}
	run, err = g.compile(cmd, cf, args[1:])
	return run, ns, name, err
}

// explainTarget reads an explain command's [NAMESPACE/]NAME and checks
// its output format.
func explainTarget(arg, format string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(arg, "/")
	if !ok {
		ns, name = "default", arg
	}
	if ns == "" || name == "" {
		return "", "", &exitError{code: exitUsage, err: fmt.Errorf("want [NAMESPACE/]NAME, got %q", arg)}
	}
	if format != "text" && format != "json" {
		return "", "", &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or json)", format)}
	}
	return ns, name, nil
}

// proxyNames completes a proxy argument with the proxies of the inputs.
func (g *globals) proxyNames(cmd *cobra.Command, cf *compileFlags) ([]string, cobra.ShellCompDirective) {
	run, err := g.compile(cmd, cf, nil)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var ids []string
	for _, p := range run.Mesh.Proxies {
		ids = append(ids, p.ID()+"\t"+p.Kind)
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}
