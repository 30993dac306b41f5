package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/hierarchy"
)

func newTreeCmd(g *globals) *cobra.Command {
	var files []string
	var format string
	var compat, propagated, describe, config bool
	cmd := &cobra.Command{
		Use:   "tree [NAMESPACE...]",
		Short: "Draw the namespace hierarchy HNC would build, with its conditions",
		Long: `tree computes, from HierarchyConfigurations and SubnamespaceAnchors in the
manifests, the namespace forest the Hierarchical Namespace Controller would
converge to, and draws it like "kubectl hns tree -A": subnamespaces marked
[s], conditions as numbered footnotes. Unlike kubectl-hns, namespaces whose
parent is missing are listed too (--hns-compat hides them).`,
		Example: `  meshc tree -f ./manifests
  meshc tree acme-org -f ./manifests --propagated
  meshc tree -f ./manifests -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or json)", format)}
			}
			run, err := g.analyze(cmd.Context(), files, nil)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			f := run.mesh.Hierarchy
			switch {
			case config:
				return hierarchy.WriteConfig(g.stdout, hierarchy.ConfigStatus(f, run.input.Objects, run.mesh.Objects))
			case describe:
				for i, ns := range args {
					if i > 0 {
						fmt.Fprintln(g.stdout)
					}
					if err := hierarchy.WriteDescribe(g.stdout, f, ns); err != nil {
						return &exitError{code: exitUsage, err: err}
					}
				}
				return nil
			}
			if format == "json" {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(treeJSON(f))
			}
			if err := hierarchy.WriteTree(g.stdout, f, hierarchy.TreeOptions{Roots: args, HNSCompat: compat}); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if propagated {
				return hierarchy.WriteCopies(g.stdout, run.mesh.Objects)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifests to read: a file, a directory or - (repeatable; default .)")
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	cmd.Flags().BoolVar(&compat, "hns-compat", false, "hide namespaces with a missing parent, as kubectl-hns does")
	cmd.Flags().BoolVar(&describe, "describe", false, "describe each NAMESPACE like kubectl hns describe (parent, children with anchor states, conditions)")
	cmd.Flags().BoolVar(&config, "config", false, "print the HNCConfiguration status like kubectl hns config describe")
	cmd.Flags().BoolVar(&propagated, "propagated", false, "also list, per namespace, the copies HNC propagates into it and their sources")
	return cmd
}

// namespaceJSON is one namespace in `meshc tree -o json`.
type namespaceJSON struct {
	Name        string                `json:"name"`
	Parent      string                `json:"parent,omitempty"`
	Subns       bool                  `json:"subnamespace,omitempty"`
	Children    []string              `json:"children,omitempty"`
	Conditions  []hierarchy.Condition `json:"conditions,omitempty"`
	Labels      map[string]string     `json:"labels,omitempty"`
	Annotations map[string]string     `json:"annotations,omitempty"`
	Implied     bool                  `json:"implied,omitempty"`
	Synthesized bool                  `json:"synthesized,omitempty"`
	Managed     bool                  `json:"managed"`
}

func treeJSON(f *hierarchy.Forest) []namespaceJSON {
	var out []namespaceJSON
	for _, n := range f.Sorted() {
		if !n.Exists {
			continue
		}
		out = append(out, namespaceJSON{Name: n.Name, Parent: n.Parent, Subns: n.IsSub, Children: n.Children, Conditions: n.Conditions,
			Labels: n.Labels, Annotations: n.Annotations, Implied: n.Implied, Synthesized: n.Synthesized, Managed: n.Managed})
	}
	return out
}
