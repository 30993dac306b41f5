package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/outdir"
)

// buildFlags are meshc build's own flags.
type buildFlags struct {
	out, format, endpoints, failOn string
	proxies                        []string
	maxBytes                       int
	quiet, dedup, force, whole     bool
	sharedRoot, maxOutput          string
	envoy                          envoyFlags
	compile                        compileFlags
	// budget is --max-output-bytes in bytes.
	budget int64
}

func newBuildCmd(g *globals) *cobra.Command {
	var f buildFlags
	cmd := &cobra.Command{
		Use:   "build [PATH...] -o OUT",
		Short: "Compile every proxy's Envoy configuration, as istiod would send it",
		Long: `build loads the manifests under PATH (as lint does), resolves what each
proxy sees, and writes its Envoy configuration under OUT:

  --format bootstrap (default)  OUT/<namespace>/<proxy>.json, one Envoy
                                bootstrap with static resources: routes
                                inline in listeners, endpoints in clusters
  --format xds                  OUT/<namespace>/<proxy>/{clusters,endpoints,
                                listeners,routes}.json, each a DiscoveryResponse
                                as an xDS server sends it

What proxies share is written once: each distinct set of outbound clusters
and listeners (with xds also route configurations and endpoints) is a
DiscoveryResponse under OUT/_shared/ named by its content; a bootstrap holds
the proxy's own resources (inbound listeners and clusters, identity) and
loads the shared files through filesystem config sources, and an xds
directory holds the proxy's own resources while index.json names its shared
files. --self-contained writes each proxy's whole configuration in its own
files instead.

OUT/index.json lists every proxy with its kind, labels, Sidecar, resource
counts, size and content hash. Proxies of one namespace that share a name
(a Pod and a Deployment) are written as NAME_KIND; names too long for a
file are cut and given a hash.

OUT is checked before anything else, and again just before the swap. It
must be a directory or absent; /, the working and home directories and
their parents, a mount point, and every file meshc reads (manifests, mesh
and project configs) or a directory holding one are never replaced; a
directory meshc did not write, or holding files it did not write, only
with --force. The build is written beside OUT and swapped in at once when
it succeeds. A build that fails — unreadable input, findings at --fail-on
(--fail-on none builds anyway), a write error, files added to OUT while it
ran, Ctrl-C — writes nothing and leaves OUT as it was.

With inputs of several environments (overlays, .meshc.yaml helm entries;
see meshc lint --help), -o must hold {env}: each environment is built on
its own into OUT with {env} replaced by its name (-o out/{env} writes
out/prod, out/staging), one after the other; a failing environment stops
the build, and the OUTs written before it stay.

Diagnostics print to stderr as lint prints them, before the swap; every
emitted resource is validated (MC8002) and measured against
--max-proxy-bytes (MC8001). Exit status as lint's; 129, 130 or 143 when
interrupted by SIGHUP, SIGINT or SIGTERM.`,
		Example: `  meshc build examples/bookinfo -o out/
  meshc build ./manifests -o out/ --format xds --proxy 'shop/*'
  meshc build ./manifests -o out/ --endpoints dns --tls-mode off
  meshc build ./manifests -o /etc/envoy/mesh --shared-root /etc/envoy/mesh
  meshc build ./manifests -o out/ --self-contained --proxy 'shop/cart'
  meshc build overlays/prod overlays/staging -o 'out/{env}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("out") {
				return &exitError{code: exitUsage, err: errors.New("build needs -o OUT, the directory it writes the configs under (see meshc build --help)")}
			}
			if err := formatNotOut(f.out); err != nil {
				return err
			}
			opts, err := f.options()
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if _, err := parseFailOn(f.failOn); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			p, err := g.plan(cmd, &f.compile, args)
			if err != nil {
				return err
			}
			outs, err := f.outs(p)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			// Every file meshc reads is an input OUT must not hold; the
			// flags name the configs now, compile finds the rest.
			inputs := append(g.paths(&f.compile, args), f.compile.config, f.compile.opts.MeshConfigFile)
			oo := outdir.Options{Inputs: inputs, Force: f.force}
			targets := make([]outdir.Target, len(outs))
			for i, o := range outs {
				if targets[i], err = outdir.Check(o.out, oo); err != nil {
					return &exitError{code: exitUsage, err: err}
				}
			}
			for i, o := range outs {
				err := f.build(cmd, g, p, o, targets[i], oo, opts)
				if err != nil && len(outs) > 1 {
					return inEnvironment(p.envs[i].name, err)
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "write the configs under `DIR` (required; {env} in it is replaced by each environment's name)")
	fl.StringVar(&f.format, "format", compile.Formats[0], "output `layout`: bootstrap or xds")
	fl.StringVar(&f.endpoints, "endpoints", compile.EndpointModes[0], "bootstrap endpoints: inline (from the manifests) or dns (each Kubernetes service by its cluster DNS name)")
	fl.StringArrayVar(&f.proxies, "proxy", nil, "build only proxies matching `NAMESPACE/NAME` (a glob); repeatable")
	fl.IntVar(&f.maxBytes, "max-proxy-bytes", compile.DefaultMaxProxyBytes, "warn (MC8001) when a proxy's config exceeds this many `bytes` on the wire")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar and no summary")
	fl.StringVar(&f.maxOutput, "max-output-bytes", "1Gi", "stop before writing when the build is estimated to exceed this `SIZE` (1Gi, 500M, ...; 0 for no limit)")
	fl.BoolVar(&f.whole, "self-contained", false, "write each proxy's whole configuration in its own files instead of sharing what proxies share under OUT/_shared/")
	fl.StringVar(&f.sharedRoot, "shared-root", "", "the `DIR` bootstraps find _shared/ in (default: relative to Envoy's working directory, meant to be OUT)")
	fl.BoolVar(&f.dedup, "dedup", false, "")
	_ = fl.MarkDeprecated("dedup", "sharing is the default now; --self-contained writes whole per-proxy files")
	fl.StringVar(&f.sharedRoot, "dedup-root", "", "")
	_ = fl.MarkDeprecated("dedup-root", "use --shared-root")
	fl.StringVar(&f.failOn, "fail-on", "error", "exit 1 when a diagnostic is at least this `severity`: error, warning, info or none")
	fl.BoolVar(&f.force, "force", false, "replace OUT even if it is a directory meshc did not write or holds files meshc did not write (never /, the working or home directory, their parents, a mount point, a file or an input)")
	f.envoy.add(cmd)
	f.compile.add(cmd, true)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(compile.Formats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("endpoints", cobra.FixedCompletions(compile.EndpointModes, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// buildOut is one OUT of a build and the inputs compiled into it.
type buildOut struct {
	out string
	in  compile.Inputs
}

// outs are the OUTs of the build: -o with all inputs, or with {env} in
// it, one per environment of its inputs. Inputs holding several
// environments need {env}: compiled together, their objects would clash.
func (f *buildFlags) outs(p *plan) ([]buildOut, error) {
	if !strings.Contains(f.out, envPlaceholder) {
		if len(p.envs) > 1 {
			return nil, fmt.Errorf("the inputs hold %d environments (%s); -o needs %s, replaced by each one's name (-o out/%s)", len(p.envs), envNames(p.envs), envPlaceholder, envPlaceholder)
		}
		return []buildOut{{f.out, p.in}}, nil
	}
	if len(p.envs) == 0 {
		return nil, fmt.Errorf("-o %s: the inputs hold no environment (kustomization or chart) to name %s after", f.out, envPlaceholder)
	}
	if len(p.envs) > 1 && slices.Contains(p.shared, "-") {
		return nil, errSharedStdin
	}
	outs := make([]buildOut, len(p.envs))
	for i, e := range p.envs {
		outs[i] = buildOut{strings.ReplaceAll(f.out, envPlaceholder, e.name), e.inputs(p.in, p.shared)}
	}
	return outs, nil
}

// build compiles o's inputs and writes them to OUT, or nothing when the
// build fails; target is OUT as outdir.Check resolved it.
func (f *buildFlags) build(cmd *cobra.Command, g *globals, p *plan, o buildOut, target outdir.Target, oo outdir.Options, opts compile.BuildOptions) error {
	run, err := g.run(cmd, &f.compile, p, o.in)
	if err != nil {
		return err
	}
	f.failOn = f.compile.failOn(cmd.Flags(), f.failOn)
	threshold, err := parseFailOn(f.failOn)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	views, err := run.SelectProxies(f.proxies)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	// A compiler writes nothing when its input fails: findings at
	// --fail-on stop the build before any proxy is compiled.
	if stop := exitFor(run.Diagnostics, threshold); stop != nil {
		return f.refuse(g, run, run.Diagnostics, stop, o.out)
	}
	// Say what a build would cost before spending it.
	if est := run.Estimate(views, opts); f.budget > 0 && est.Bytes > f.budget {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing written, %s left as it was", &compile.OverBudgetError{Estimate: est, Budget: f.budget}, o.out)}
	}
	oo.Inputs = append(slices.Clone(oo.Inputs), f.compile.read...)
	var waiting outdir.Waiting
	if !f.quiet {
		waiting = func(lock string) {
			diag.Fprintf(g.stderr, "meshc: another build is writing %s; waiting for it (lock %s)\n", o.out, lock)
		}
	}
	b, err := outdir.Begin(cmd.Context(), target, oo, waiting)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	defer b.Abort()
	// main trades memory for speed over the small objects of
	// loading; documents of tens of megabytes are another matter,
	// and peak memory must follow the proxies in flight.
	debug.SetGCPercent(100)
	var bar *progressbar.ProgressBar
	if !f.quiet && g.color(g.stderr) {
		bar = progressbar.NewOptions(len(views), progressbar.OptionSetWriter(g.stderr),
			progressbar.OptionSetDescription("compiling proxies"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		opts.Progress = func(done, _ int) { _ = bar.Set(done) }
	}
	res, err := run.Write(cmd.Context(), views, b.Dir(), opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("build: %w; %s left as it was", err, o.out)}
	}
	ds := res.Diagnostics
	if stop := exitFor(ds, threshold); stop != nil {
		return f.refuse(g, run, ds, stop, o.out)
	}
	// The diagnostics are printed before the swap: a build whose
	// diagnostics cannot be delivered (standard error a closed
	// pipe) is not swapped in. With SIGPIPE ignored such a write
	// fails with EPIPE instead of killing meshc, here and when
	// main says why it stopped: the exit status stays 2.
	signal.Ignore(syscall.SIGPIPE)
	if !f.quiet || len(ds) > 0 {
		if err := report(g, run, ds); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%w; %s left as it was", err, o.out)}
		}
	}
	if err := b.Commit(cmd.Context()); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("build: %w; %s left as it was", err, o.out)}
	}
	if !f.quiet {
		summary(g.stderr, res, o.out)
	}
	return nil
}

// refuse reports why nothing was written: the diagnostics, then what
// stopped the build.
func (f *buildFlags) refuse(g *globals, run *compile.Result, ds []diag.Diagnostic, stop error, out string) error {
	if err := report(g, run, ds); err != nil {
		return err
	}
	why := "findings reach --fail-on " + f.failOn + " (--fail-on none builds anyway)"
	if slices.ContainsFunc(ds, incomplete) {
		why = "some input could not be read (MC1006) or rendered (MC1011)"
	}
	diag.Fprintf(g.stderr, "meshc: nothing written: %s; %s left as it was\n", why, out)
	return stop
}

// report prints diagnostics to stderr as lint prints them.
func report(g *globals, run *compile.Result, ds []diag.Diagnostic) error {
	r, err := diag.NewRenderer("text", diag.Options{
		Color: g.color(g.stderr),
		Input: diag.Input{Files: len(run.Files), Objects: len(run.Objects), Skipped: run.Skipped},
	})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if err := r.Render(g.stderr, ds); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("write diagnostics: %w", err)}
	}
	return nil
}

func (f *buildFlags) options() (compile.BuildOptions, error) {
	opts, err := f.envoy.options()
	if err != nil {
		return opts, err
	}
	opts.Format, opts.Endpoints, opts.SelfContained, opts.SharedRoot, opts.MaxProxyBytes = f.format, f.endpoints, f.whole, f.sharedRoot, f.maxBytes
	opts.Version = readVersion().Version
	switch {
	case !slices.Contains(compile.Formats, f.format):
		return opts, fmt.Errorf("--format: want bootstrap or xds, got %q", f.format)
	case !slices.Contains(compile.EndpointModes, f.endpoints):
		return opts, fmt.Errorf("--endpoints: want inline or dns, got %q", f.endpoints)
	case f.dedup && f.whole:
		return opts, fmt.Errorf("--dedup and --self-contained contradict each other")
	case f.maxBytes <= 0:
		return opts, fmt.Errorf("--max-proxy-bytes: want a positive size, got %d", f.maxBytes)
	}
	q, err := resource.ParseQuantity(f.maxOutput)
	if err != nil || q.Sign() < 0 {
		return opts, fmt.Errorf("--max-output-bytes: want a size such as 1Gi or 500M, got %q", f.maxOutput)
	}
	f.budget = q.Value()
	for _, p := range f.proxies {
		if _, err := path.Match(p, ""); err != nil || !strings.Contains(p, "/") {
			return opts, fmt.Errorf("--proxy %q: want NAMESPACE/NAME, globs allowed", p)
		}
	}
	return opts, nil
}

func summary(w io.Writer, res *compile.Built, out string) {
	noun := "proxies"
	if len(res.Index) == 1 {
		noun = "proxy"
	}
	diag.Fprintf(w, "wrote %d %s (%.1f MB) to %s\n", len(res.Index), noun, float64(res.Written)/(1<<20), out)
	if p := res.Placeholders; p != nil {
		n := "services have"
		if len(p.Services) == 1 {
			n = "service has"
		}
		diag.Fprintf(w, "%d %s no clusterIP in the manifests and got a made-up VIP from %s (listed in index.json); a clusterIP in the manifest or --placeholder-vips pins them\n", len(p.Services), n, p.Range)
	}
}

// formatNotOut refuses an OUT that is a format name and not an existing
// directory: -o means a format on lint and explain, a directory on build.
func formatNotOut(out string) error {
	switch out {
	case "json", "yaml", "text", "sarif", "github", "bootstrap", "xds":
	default:
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("-o %s: build's -o is the directory to write, not a format; did you mean --format (bootstrap or xds), or meshc lint -o %s? Nothing written", out, out)}
}

// envoyFlags shape the Envoy configuration built or served.
type envoyFlags struct {
	tlsMode, certDir string
	headlessChains   bool
}

func (f *envoyFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.tlsMode, "tls-mode", compile.TLSModes[0], "Istio mutual TLS: istio (SDS from istio-agent), files (certificates in --cert-dir) or off")
	fl.StringVar(&f.certDir, "cert-dir", "/etc/certs", "`DIR` with cert-chain.pem, key.pem and root-cert.pem for --tls-mode files")
	fl.BoolVar(&f.headlessChains, "headless-cidr-chains", false, "one wildcard listener per headless TCP service port, a chain per pod, as istiod does with PILOT_ENABLE_HEADLESS_FILTER_CHAIN_LISTENER=true")
	_ = cmd.RegisterFlagCompletionFunc("tls-mode", cobra.FixedCompletions(compile.TLSModes, cobra.ShellCompDirectiveNoFileComp))
}

func (f *envoyFlags) options() (compile.BuildOptions, error) {
	opts := compile.BuildOptions{TLS: f.tlsMode, CertDir: f.certDir, HeadlessCIDRChains: f.headlessChains}
	if !slices.Contains(compile.TLSModes, f.tlsMode) {
		return opts, fmt.Errorf("--tls-mode: want istio, files or off, got %q", f.tlsMode)
	}
	return opts, nil
}
