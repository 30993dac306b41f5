package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/diag"
)

func newLintCmd(g *globals) *cobra.Command {
	var format, failOn, explain string
	var cf compileFlags
	cmd := &cobra.Command{
		Use:   "lint [PATH...]",
		Short: "Report problems in manifests, with stable codes",
		Long: `lint loads every manifest under PATH and -f (files, directories searched
recursively for .yaml, .yml and .json, or - for stdin; with none, piped
standard input, else .) and prints diagnostics. Helm charts (Chart.yaml)
and kustomizations (kustomization.yaml) are rendered in-process, and
findings point at the templates and resource files. Files without
Kubernetes objects and template files outside a chart are skipped and
listed.

Exit status: 0 when nothing reaches --fail-on, 1 when something does, 2 on a
usage error or when some input could not be read (MC1006) or rendered
(MC1011).`,
		Example: `  meshc lint ./manifests
  kubectl get virtualservices,destinationrules -A -o yaml | meshc lint
  meshc lint . --exclude 'charts/**' --inject-namespace shop
  meshc lint overlays/prod
  meshc lint charts/mesh --helm-values charts/mesh/env/prod.yaml
  helm template mesh charts/mesh | meshc lint -
  meshc lint . -o sarif > meshc.sarif
  meshc lint . -o github --fail-on warning
  meshc lint --explain MC1003`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if explain != "" {
				return explainCode(g, explain)
			}
			if _, err := parseFailOn(failOn); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			run, err := g.compile(cmd, &cf, args)
			if err != nil {
				return err
			}
			threshold, err := parseFailOn(cf.failOn(cmd.Flags(), failOn))
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			ds := run.Diagnostics
			r, err := diag.NewRenderer(format, diag.Options{
				Color:       g.color(g.stdout),
				Input:       diag.Input{Files: len(run.Files), Objects: len(run.Objects), Skipped: run.Skipped, ProjectConfig: cf.projectPath()},
				ToolVersion: readVersion().Version,
			})
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if err := r.Render(g.stdout, ds); err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("write diagnostics: %w", err)}
			}
			return exitFor(ds, threshold)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: "+strings.Join(diag.Formats(), ", "))
	cmd.Flags().StringVar(&failOn, "fail-on", "error", "exit 1 when a diagnostic is at least this `severity`: error, warning, info or none")
	cf.add(cmd, true)
	cmd.Flags().StringVar(&explain, "explain", "", "print the documentation of a diagnostic `CODE` (a name, or an istioctl analyze code such as IST0101) and exit")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(diag.Formats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning", "info", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("explain", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var codes []string
		for _, e := range diag.Catalog() {
			codes = append(codes, e.Code+"\t"+e.Name)
		}
		return codes, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// parseFailOn reads --fail-on; 0 means never fail.
func parseFailOn(s string) (diag.Severity, error) {
	if s == "none" {
		return 0, nil
	}
	sev, err := diag.ParseSeverity(s)
	if err != nil {
		return 0, fmt.Errorf("--fail-on: unknown threshold %q (want error, warning, info or none)", s)
	}
	return sev, nil
}

// incomplete reports a diagnostic that means part of the input was not
// loaded: a file that could not be read, a chart or overlay that could not
// be rendered.
func incomplete(d diag.Diagnostic) bool {
	return diag.UnreadableInput.Is(d) || diag.RenderFailed.Is(d)
}

// exitFor turns diagnostics into lint's exit status: unreadable input wins,
// because the result does not cover what was asked.
func exitFor(ds []diag.Diagnostic, threshold diag.Severity) error {
	if slices.ContainsFunc(ds, incomplete) {
		return &exitError{code: exitUsage}
	}
	if threshold > 0 && diag.AtLeast(ds, threshold) {
		return &exitError{code: exitFindings}
	}
	return nil
}

func explainCode(g *globals, code string) error {
	if e, ok := diag.Lookup(code); ok {
		return explainEntry(g, e)
	}
	// An istioctl analyze code: name the meshc codes reporting the same.
	entries := diag.ByIstioCode(code)
	if len(entries) == 0 {
		return &exitError{code: exitUsage, err: fmt.Errorf("no diagnostic %q; codes are listed in docs/diagnostics.md", code)}
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Code + " " + e.Name
	}
	if _, err := fmt.Fprintf(g.stdout, "%s (istioctl analyze) is reported by %s; --suppress %s and the galley.istio.io/analyze-suppress annotation suppress the same findings.\n",
		strings.ToUpper(code), strings.Join(names, ", "), strings.ToUpper(code)); err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := fmt.Fprintln(g.stdout); err != nil {
			return err
		}
		if err := explainEntry(g, e); err != nil {
			return err
		}
	}
	return nil
}

func explainEntry(g *globals, e *diag.Entry) error {
	istio := ""
	if len(e.Istio) > 0 {
		istio = "\n\nistioctl analyze reports the same as " + strings.Join(e.Istio, ", ") + "."
	}
	_, err := fmt.Fprintf(g.stdout, "%s %s (%s)\n\n%s\n\n%s%s\n\nMore: %s\n", e.Code, e.Name, e.Severity, e.Summary, e.Doc, istio, e.HelpURI())
	return err
}
