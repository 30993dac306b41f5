package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/xds"
)

// serveFlags are meshc serve's own flags.
type serveFlags struct {
	listen, metrics, logFormat string
	debounceAfter, debounceMax time.Duration
	drain                      time.Duration
	envoy                      envoyFlags
	compile                    compileFlags
}

func newServeCmd(g *globals) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [PATH...]",
		Short: "Serve every proxy's Envoy configuration over xDS, recompiling as the inputs change",
		Long: `serve compiles the manifests under PATH (as build does) and serves each
proxy's configuration to Envoys over gRPC xDS on --listen: aggregated (ADS)
and per-type (CDS, EDS, LDS, RDS) services, state-of-the-world and delta.

An Envoy is matched to its proxy by its node id: istiod's form,
sidecar~IP~POD.NAMESPACE~DOMAIN or router~..., where a pod named after
its Deployment (NAME-HASH-XXXXX) finds the Deployment's proxy, or plain
NAMESPACE/NAME. A node that matches no proxy is logged with the nearest
names and gets nothing until its proxy appears in the inputs.

serve watches the inputs, every directory below them included. After a
change it waits for --debounce-after without further changes (at most
--debounce-max since the first), recompiles in the background, rebuilding
only the proxies whose inputs changed, and sends only the types whose
content changed, only to the proxies they belong to; each type's version
is the hash of its resources. Input with error
diagnostics is logged and not served: the last good configuration stays.
SIGHUP recompiles at once. SIGTERM or SIGINT stops accepting streams,
closes the open ones and waits up to --drain for them.

--metrics serves /metrics (Prometheus), /healthz, /readyz (ready after the
first good compile) and /debug/syncz (per node and type, the versions sent
and acknowledged, and NACKs with Envoy's error). Logs are structured, on
stderr. serve keeps no state beyond its inputs: replicas behind a TCP load
balancer serve more Envoys.`,
		Example: `  meshc serve examples/bookinfo
  meshc serve ./manifests --listen 0.0.0.0:15010 --metrics 0.0.0.0:15014
  meshc serve ./manifests --debounce-after 1s --log-format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, g, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:15010", "serve xDS (gRPC) on this `ADDRESS`")
	fl.StringVar(&f.metrics, "metrics", "127.0.0.1:15014", "serve /metrics, /healthz, /readyz and /debug/syncz on this `ADDRESS` (empty: none)")
	fl.DurationVar(&f.debounceAfter, "debounce-after", 100*time.Millisecond, "recompile once the inputs have not changed for this long (as istiod's PILOT_DEBOUNCE_AFTER)")
	fl.DurationVar(&f.debounceMax, "debounce-max", 10*time.Second, "recompile at the latest this long after the first change (as istiod's PILOT_DEBOUNCE_MAX)")
	fl.DurationVar(&f.drain, "drain", 5*time.Second, "on SIGTERM, wait this long for open streams to close")
	fl.StringVar(&f.logFormat, "log-format", "text", "log `FORMAT`: text or json")
	f.envoy.add(cmd)
	f.compile.add(cmd, true)
	_ = cmd.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (f *serveFlags) run(cmd *cobra.Command, g *globals, args []string) error {
	usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
	bopts, err := f.envoy.options()
	if err != nil {
		return usage(err)
	}
	switch {
	case f.debounceAfter <= 0 || f.debounceMax < f.debounceAfter:
		return usage(fmt.Errorf("--debounce-after and --debounce-max: want 0 < after ≤ max, got %s and %s", f.debounceAfter, f.debounceMax))
	case f.logFormat != "text" && f.logFormat != "json":
		return usage(fmt.Errorf("--log-format: want text or json, got %q", f.logFormat))
	}
	s := g.settings(cmd, &f.compile, args)
	if slices.Contains(s.Paths, "-") {
		return usage(errors.New("serve reads files it can watch: standard input is not one; give PATH arguments"))
	}
	plan, err := g.plan(&f.compile, s)
	if err != nil {
		return err
	}
	// The first compile checks the input as every command does (no
	// Kubernetes object is a usage error without --allow-empty); it is
	// served, and later ones with error diagnostics are not.
	first, err := plan.Compile(cmd.Context())
	if err != nil {
		return usage(err)
	}
	log := slog.New(slog.NewTextHandler(g.stderr, nil))
	if f.logFormat == "json" {
		log = slog.New(slog.NewJSONHandler(g.stderr, nil))
	}
	if p := plan.ProjectPath(); p != "" {
		log.Info("project config", "file", p)
	}
	xdsLis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usage(fmt.Errorf("--listen: %w", err))
	}
	var webLis net.Listener
	if f.metrics != "" {
		if webLis, err = net.Listen("tcp", f.metrics); err != nil {
			xdsLis.Close()
			return usage(fmt.Errorf("--metrics: %w", err))
		}
	}
	// A server lives long: main's trade of memory for speed suits a
	// batch run and each recompile (Phase), not the time between.
	leaveCompileGC(serveGCPercent)

	ctx, stop := context.WithCancelCause(cmd.Context())
	defer stop(nil)
	srv := xds.New(log)
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(xdsLis); err != nil {
			stop(fmt.Errorf("serve xDS: %w", err))
		}
	}()
	log.Info("serving xDS", "address", xdsLis.Addr().String())
	web := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	webDone := make(chan struct{})
	go func() {
		defer close(webDone)
		if webLis == nil {
			return
		}
		log.Info("serving metrics and status", "address", webLis.Addr().String())
		if err := web.Serve(webLis); !errors.Is(err, http.ErrServerClosed) {
			stop(fmt.Errorf("serve metrics: %w", err))
		}
	}()

	// To a server SIGHUP means reload, as to most daemons: main's
	// handler, which stops the other commands on it, lets go of it.
	signal.Reset(syscall.SIGHUP)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reload := make(chan struct{})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: recompiling")
				select {
				case reload <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	runErr := srv.Run(ctx, xds.Source{
		// The recompiles read what the first compile read, with the same
		// options.
		Watch: plan.Inputs.Paths,
		Compile: func(ctx context.Context) (*compile.Result, error) {
			return compile.Run(ctx, plan.Inputs, plan.Options)
		},
		First:         first,
		Build:         bopts,
		DebounceAfter: f.debounceAfter,
		DebounceMax:   f.debounceMax,
		Reload:        reload,
		Phase:         func() func() { return recompileGC(totalMemory()) },
	})
	stop(runErr)
	log.Info("stopping", "reason", context.Cause(ctx).Error())
	shutdown, cancel := context.WithTimeout(context.Background(), f.drain)
	defer cancel()
	_ = web.Shutdown(shutdown)
	srv.Shutdown(f.drain)
	<-served
	<-webDone
	log.Info("stopped")
	if err := context.Cause(ctx); err != nil && cmd.Context().Err() == nil {
		return usage(err)
	}
	return nil
}
