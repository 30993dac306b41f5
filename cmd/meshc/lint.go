package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/job"
)

func newLintCmd(g *globals) *cobra.Command {
	var format, explain, baseline string
	var only []string
	var timing bool
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

Environments: each kustomization named as an input (or in .meshc.yaml's
kustomize) and each helm entry of .meshc.yaml is one. Inputs holding
several are checked one environment at a time, each with the inputs that
are none, and each finding is printed once with the environments where it
occurs (environments: prod, staging).

With --baseline, only findings whose key is absent from an earlier
"meshc lint -o json" report are printed and counted: a key names the code,
the object and what the finding is about, never a line, so moving or
reformatting a manifest keeps its findings known.

Exit status: 0 when nothing reaches --fail-on, 1 when something does, 2 on a
usage error or when some input could not be read (MC1006) or rendered
(MC1011); with --baseline, only the new findings count.`,
		Example: `  meshc lint ./manifests
  kubectl get virtualservices,destinationrules -A -o yaml | meshc lint
  meshc lint . --exclude 'charts/**' --inject-namespace shop
  meshc lint overlays/prod
  meshc lint charts/mesh --helm-values charts/mesh/env/prod.yaml
  meshc lint overlays/prod overlays/staging
  helm template mesh charts/mesh | meshc lint -
  meshc lint . -o sarif > meshc.sarif
  meshc lint . -o github --fail-on warning
  meshc lint . -o json > baseline.json; meshc lint . --baseline baseline.json
  meshc lint . --only MC4003,MC5002 --timing
  meshc lint --explain MC1003`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if explain != "" {
				return explainCode(g, explain)
			}
			if _, err := job.ParseFailOn(cf.s.FailOn); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			cf.s.Compile.Only = only
			var times []timed
			if timing {
				cf.s.Compile.Timing = func(what string, d time.Duration) { times = append(times, timed{what, d}) }
			}
			var known *diag.Baseline
			if baseline != "" {
				b, err := readBaseline(baseline)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				known = &b
			}
			ds, input, err := g.lintRuns(cmd, &cf, args)
			if err != nil {
				return err
			}
			input.ProjectConfig = cf.plan.ProjectPath()
			if timing {
				if err := writeTimes(g.stderr, times); err != nil {
					return err
				}
			}
			threshold, err := job.ParseFailOn(cf.plan.FailOn)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if known != nil {
				var n int
				ds, n = known.New(ds)
				if n > 0 {
					word := "findings"
					if n == 1 {
						word = "finding"
					}
					fmt.Fprintf(g.stderr, "meshc: %d %s of the baseline not shown\n", n, word)
				}
			}
			r, err := diag.NewRenderer(format, diag.Options{
				Color:       g.color(g.stdout),
				Input:       input,
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
	cmd.Flags().StringVar(&cf.s.FailOn, "fail-on", "error", "exit 1 when a diagnostic is at least this `severity`: error, warning, info or none")
	cf.add(cmd, true)
	cmd.Flags().StringSliceVar(&only, "only", nil, "run only the analyzers reporting these `CODE`s (codes, names or istioctl analyze codes, comma-separated or repeated) and the facts they read; the loader's and the hierarchy's findings are reported as always")
	cmd.Flags().BoolVar(&timing, "timing", false, "print to stderr how long each stage, each analyzer and each fact the analyzers share took (the analyzers then run one at a time)")
	cmd.Flags().StringVar(&baseline, "baseline", "", "report only findings whose key is not in `REPORT.json`, an earlier report of meshc lint -o json")
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

// lintRuns compiles the inputs, once per environment when they hold
// several, and returns the findings (each once, with its environments)
// and the input.
func (g *globals) lintRuns(cmd *cobra.Command, f *compileFlags, args []string) ([]diag.Diagnostic, diag.Input, error) {
	p, err := g.plan(f, g.settings(cmd, f, args))
	if err != nil {
		return nil, diag.Input{}, err
	}
	envs, err := p.Environments()
	if err != nil {
		return nil, diag.Input{}, &exitError{code: exitUsage, err: err}
	}
	if len(envs) < 2 {
		res, err := compilePlan(cmd, p)
		if err != nil {
			return nil, diag.Input{}, err
		}
		return res.Diagnostics, diag.Input{Files: len(res.Files), Objects: len(res.Objects), Skipped: res.Skipped}, nil
	}
	runs := make([]*compile.Result, len(envs))
	for i, e := range envs {
		if runs[i], err = compilePlan(cmd, e.Plan); err != nil {
			return nil, diag.Input{}, inEnvironment(e.Name, err)
		}
	}
	ds, in := mergeRuns(envs, runs)
	return ds, in, nil
}

// timed is one lint fact's or analyzer's time.
type timed struct {
	what string
	d    time.Duration
}

// writeTimes prints --timing's report: the stages first, with their
// total, then the shared facts and analyzers timed inside the analyze
// stage.
func writeTimes(w io.Writer, times []timed) error {
	var b strings.Builder
	b.WriteString("meshc: lint timing (each stage, then inside analyze the shared facts first and each analyzer alone):\n")
	line := func(what string, d time.Duration) {
		fmt.Fprintf(&b, "  %-48s %9.3f ms\n", what, float64(d.Microseconds())/1000)
	}
	var total time.Duration
	for _, t := range times {
		if strings.HasPrefix(t.what, "stage ") {
			line(t.what, t.d)
			total += t.d
		}
	}
	line("total", total)
	for _, t := range times {
		if !strings.HasPrefix(t.what, "stage ") {
			line(t.what, t.d)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readBaseline reads --baseline.
func readBaseline(path string) (diag.Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return diag.Baseline{}, fmt.Errorf("--baseline: %w", err)
	}
	defer f.Close()
	b, err := diag.ReadBaseline(f)
	if err != nil {
		return diag.Baseline{}, fmt.Errorf("--baseline %s: %w", path, err)
	}
	return b, nil
}

// exitFor turns diagnostics into lint's exit status: unreadable input wins,
// because the result does not cover what was asked.
func exitFor(ds []diag.Diagnostic, threshold diag.Severity) error {
	if job.Incomplete(ds) {
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
