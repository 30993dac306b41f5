package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/job"
)

// buildFlags are meshc build's own flags.
type buildFlags struct {
	out, format, endpoints     string
	proxies                    []string
	maxBytes                   int
	quiet, dedup, force, whole bool
	sharedRoot, maxOutput, ads string
	envoy                      envoyFlags
	compile                    compileFlags
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
the proxy's own resources (inbound listeners and clusters, identity, and the
clusters of services its namespace sees but not every namespace does) and
loads the shared files through filesystem config sources, and an xds
directory holds the proxy's own resources while index.json names its shared
files. --self-contained writes each proxy's whole configuration in its own
files instead.

--ads HOST:PORT writes only bootstraps, OUT/<namespace>/<proxy>.json, that
fetch everything over ADS from meshc serve at HOST:PORT (plaintext gRPC; a
DNS name or an IP): the node id serve knows the proxy by, a cluster to the
server and, as for files, one to istio-agent's SDS socket. The resources
are built and checked as serve sends them (the xds format).

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
  meshc build ./manifests -o out/ --ads meshc-serve.infra.svc:15010
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
			if _, err := job.ParseFailOn(f.compile.s.FailOn); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			s := g.settings(cmd, &f.compile, args)
			if strings.Contains(f.out, envPlaceholder) {
				return f.buildEach(cmd, g, s, opts)
			}
			out, err := job.CheckOut(f.out, s, f.force)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			plan, err := g.plan(&f.compile, s)
			if err != nil {
				return err
			}
			// Compiled together, several environments' objects would clash.
			envs, err := plan.Environments()
			if err == nil && len(envs) > 1 {
				err = fmt.Errorf("the inputs hold %d environments (%s); -o needs %s, replaced by each one's name (-o out/%s)", len(envs), envNames(envs), envPlaceholder, envPlaceholder)
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return f.build(cmd, g, plan, out, f.out, opts)
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
	fl.StringVar(&f.ads, "ads", "", "write bootstraps that fetch their configuration over ADS from meshc serve at `HOST:PORT` instead of files")
	fl.BoolVar(&f.dedup, "dedup", false, "")
	_ = fl.MarkDeprecated("dedup", "sharing is the default now; --self-contained writes whole per-proxy files")
	fl.StringVar(&f.sharedRoot, "dedup-root", "", "")
	_ = fl.MarkDeprecated("dedup-root", "use --shared-root")
	fl.StringVar(&f.compile.s.FailOn, "fail-on", "error", "exit 1 when a diagnostic is at least this `severity`: error, warning, info or none")
	fl.BoolVar(&f.force, "force", false, "replace OUT even if it is a directory meshc did not write or holds files meshc did not write (never /, the working or home directory, their parents, a mount point, a file or an input)")
	f.envoy.add(cmd)
	f.compile.add(cmd, true)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(compile.Formats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("endpoints", cobra.FixedCompletions(compile.EndpointModes, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// buildEach builds each environment of the inputs on its own into -o
// with {env} replaced by its name, one after the other. Every OUT is
// checked before the first is built; a failing environment stops the
// build, and the OUTs written before it stay.
func (f *buildFlags) buildEach(cmd *cobra.Command, g *globals, s job.Settings, opts compile.BuildOptions) error {
	plan, err := g.plan(&f.compile, s)
	if err != nil {
		return err
	}
	envs, err := plan.Environments()
	if err == nil && len(envs) == 0 {
		err = fmt.Errorf("-o %s: the inputs hold no environment (kustomization or chart) to name %s after", f.out, envPlaceholder)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	outs := make([]*job.Out, len(envs))
	for i, e := range envs {
		if outs[i], err = job.CheckOut(f.outOf(e), s, f.force); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	for i, e := range envs {
		err := f.build(cmd, g, e.Plan, outs[i], f.outOf(e), opts)
		if err != nil && len(envs) > 1 {
			return inEnvironment(e.Name, err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// outOf is environment e's OUT: -o with {env} replaced by its name.
func (f *buildFlags) outOf(e job.Environment) string {
	return strings.ReplaceAll(f.out, envPlaceholder, e.Name)
}

// build builds plan into out, named name, as one transaction (job.Build).
func (f *buildFlags) build(cmd *cobra.Command, g *globals, plan *job.Plan, out *job.Out, name string, opts compile.BuildOptions) error {
	b := job.Build{Proxies: f.proxies, Options: opts, Budget: f.budget, Waiting: f.waiting(g, name), Writing: f.writing(g), Deliver: f.deliver(g)}
	res, err := plan.Build(cmd.Context(), out, b)
	var refused *job.Refused
	switch {
	case errors.As(err, &refused):
		return f.refuse(g, plan, refused, name)
	case err != nil:
		return &exitError{code: exitUsage, err: err}
	}
	if !f.quiet {
		summary(g.stderr, res, name)
	}
	return nil
}

// refuse reports why nothing was written: the diagnostics, then what
// stopped the build.
func (f *buildFlags) refuse(g *globals, plan *job.Plan, r *job.Refused, out string) error {
	if err := report(g, r.Run, r.Diagnostics); err != nil {
		return err
	}
	why := "findings reach --fail-on " + plan.FailOn + " (--fail-on none builds anyway)"
	code := exitFindings
	if job.Incomplete(r.Diagnostics) {
		why, code = "some input could not be read (MC1006) or rendered (MC1011)", exitUsage
	}
	diag.Fprintf(g.stderr, "meshc: nothing written: %s; %s left as it was\n", why, out)
	return &exitError{code: code}
}

// waiting says that another build holds out's lock, unless --quiet.
func (f *buildFlags) waiting(g *globals, out string) func(lock string) {
	if f.quiet {
		return nil
	}
	return func(lock string) {
		diag.Fprintf(g.stderr, "meshc: another build is writing %s; waiting for it (lock %s)\n", out, lock)
	}
}

// writing shows a progress bar while the proxies are written, on a
// terminal unless --quiet.
func (f *buildFlags) writing(g *globals) func(int) (func(done, total int), func()) {
	return func(proxies int) (func(done, total int), func()) {
		// main trades memory for speed over the small objects of
		// compiling (compileGC); documents of tens of megabytes are
		// another matter, and peak memory must follow the proxies in
		// flight.
		leaveCompileGC(100)
		if f.quiet || !g.color(g.stderr) {
			return nil, nil
		}
		bar := progressbar.NewOptions(proxies, progressbar.OptionSetWriter(g.stderr),
			progressbar.OptionSetDescription("compiling proxies"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		return func(done, _ int) { _ = bar.Set(done) }, func() { _ = bar.Finish() }
	}
}

// deliver prints a build's diagnostics (none with --quiet when there are
// none) before the swap: a build whose diagnostics cannot be delivered
// (standard error a closed pipe) is not swapped in. With SIGPIPE ignored
// such a write fails with EPIPE instead of killing meshc, here and when
// main says why it stopped: the exit status stays 2.
func (f *buildFlags) deliver(g *globals) func(*compile.Result, []diag.Diagnostic) error {
	return func(run *compile.Result, ds []diag.Diagnostic) error {
		signal.Ignore(syscall.SIGPIPE)
		if f.quiet && len(ds) == 0 {
			return nil
		}
		return report(g, run, ds)
	}
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
	opts.ADS = f.ads
	if err := f.adsAlone(); err != nil {
		return opts, err
	}
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

// adsAlone checks --ads and refuses the flags that shape files it does
// not write.
func (f *buildFlags) adsAlone() error {
	if f.ads == "" {
		return nil
	}
	if err := compile.CheckADS(f.ads); err != nil {
		return fmt.Errorf("--ads: %w", err)
	}
	for _, c := range []struct {
		set  bool
		flag string
	}{
		{f.format != compile.Formats[0], "--format " + f.format},
		{f.endpoints != compile.EndpointModes[0], "--endpoints " + f.endpoints},
		{f.whole, "--self-contained"},
		{f.sharedRoot != "", "--shared-root"},
	} {
		if c.set {
			return fmt.Errorf("--ads writes bootstraps that fetch every resource from the server; %s shapes files it does not write", c.flag)
		}
	}
	return nil
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
