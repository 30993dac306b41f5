package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/compile"
)

func newTreeCmd(g *globals) *cobra.Command {
	var cf compileFlags
	var format string
	var compat, propagated, describe, config bool
	cmd := &cobra.Command{
		Use:   "tree [NAMESPACE...]",
		Short: "Draw the namespace hierarchy HNC would build, with its conditions",
		Long: `tree computes, from HierarchyConfigurations and SubnamespaceAnchors in the
manifests under -f (default: piped standard input, else .), the namespace forest the Hierarchical Namespace Controller would
converge to, and draws it like "kubectl hns tree -A": subnamespaces marked
[s], conditions as numbered footnotes. Unlike kubectl-hns, namespaces whose
parent is missing are listed too (--hns-compat hides them).`,
		Example: `  meshc tree -f ./manifests
  meshc tree acme-org -f ./manifests --propagated
  meshc tree -f ./manifests -o json`,
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			run, err := g.compile(cmd, &cf, nil)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, n := range run.Tree() {
				names = append(names, n.Name)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or json)", format)}
			}
			if err := namespacesNotPaths(args); err != nil {
				return err
			}
			run, err := g.compile(cmd, &cf, nil)
			if err != nil {
				return err
			}
			switch {
			case config:
				return run.WriteHNCConfig(g.stdout)
			case describe:
				for i, ns := range args {
					if i > 0 {
						fmt.Fprintln(g.stdout)
					}
					if err := run.WriteDescribe(g.stdout, ns); err != nil {
						return unknownNamespace(err, args)
					}
				}
				return nil
			}
			if format == "json" {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(run.Tree())
			}
			if err := run.WriteTree(g.stdout, compile.TreeOptions{Roots: args, HNSCompat: compat}, propagated); err != nil {
				return unknownNamespace(err, args)
			}
			return nil
		},
	}
	cf.add(cmd, false)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	cmd.Flags().BoolVar(&compat, "hns-compat", false, "hide namespaces with a missing parent, as kubectl-hns does")
	cmd.Flags().BoolVar(&describe, "describe", false, "describe each NAMESPACE like kubectl hns describe (parent, children with anchor states, conditions)")
	cmd.Flags().BoolVar(&config, "config", false, "print the HNCConfiguration status like kubectl hns config describe")
	cmd.Flags().BoolVar(&propagated, "propagated", false, "also list, per namespace, the copies HNC propagates into it and their sources")
	return cmd
}

// namespacesNotPaths refuses an argument that can only be a path, not a
// namespace (no namespace name holds a slash or starts with a dot), and
// points at -f, which is how tree takes its inputs.
func namespacesNotPaths(args []string) error {
	for _, a := range args {
		if strings.ContainsAny(a, `/\`) || strings.HasPrefix(a, ".") {
			return pathNotNamespace(a)
		}
	}
	return nil
}

// unknownNamespace adds to err, a namespace missing from the input, that a
// directory of that name exists: the user meant -f.
func unknownNamespace(err error, args []string) error {
	for _, a := range args {
		if fi, statErr := os.Stat(a); statErr == nil && fi.IsDir() && strings.Contains(err.Error(), strconv.Quote(a)) {
			return pathNotNamespace(a)
		}
	}
	return &exitError{code: exitUsage, err: err}
}

func pathNotNamespace(p string) error {
	return &exitError{code: exitUsage, err: fmt.Errorf("%q is a path, not a namespace: tree reads its inputs with -f (meshc tree -f %s)", p, p)}
}
