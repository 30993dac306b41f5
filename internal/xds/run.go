package xds

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
)

// Source is what the server compiles and when.
type Source struct {
	// Watch are the inputs to watch: files and directories.
	Watch []string
	// Compile compiles the inputs with the command's options.
	Compile func(context.Context) (*compile.Result, error)
	// First, when set, is the first compile, made by the caller: it is
	// served instead of compiling again.
	First *compile.Result
	// Build shapes the configs; the format is always xds.
	Build compile.BuildOptions
	// DebounceAfter and DebounceMax bound the wait from a change to its
	// recompile: a quiet period, and a maximum since the first change.
	DebounceAfter, DebounceMax time.Duration
	// Reload forces a recompile (SIGHUP).
	Reload <-chan struct{}
	// Phase, when set, is called as each compile begins, and what it
	// returns once the compile is built and published or rejected: the
	// command sets the collector's policy for a recompile there.
	Phase func() (end func())
}

// Run compiles the inputs and publishes them, then recompiles when they
// change, until ctx ends. Only a failure to watch the inputs is an error:
// a compile that fails is logged and the last good configs stay served.
func (s *Server) Run(ctx context.Context, src Source) error {
	w, err := newWatcher(src.Watch, s.log)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx) })
	defer wg.Wait()
	if src.First != nil {
		s.refresh(ctx, src, func(context.Context) (*compile.Result, error) { return src.First, nil })
	} else {
		s.refresh(ctx, src, src.Compile)
	}
	debounce(ctx, w.changed, src.Reload, src.DebounceAfter, src.DebounceMax, func() { s.refresh(ctx, src, src.Compile) })
	return nil
}

// maxLoggedDiagnostics bounds the error diagnostics logged for a
// rejected compile; the rest are counted.
const maxLoggedDiagnostics = 20

// refresh compiles with run, builds and publishes; input with error
// diagnostics is not served. Proxies whose inputs did not change since
// the last publish keep their configurations (compile.ConfigSet).
func (s *Server) refresh(ctx context.Context, src Source, run func(context.Context) (*compile.Result, error)) {
	if src.Phase != nil {
		defer src.Phase()()
	}
	start := time.Now()
	r, err := run(ctx)
	rebuilt := 0
	if err == nil {
		var errs []diag.Diagnostic
		for _, d := range r.Diagnostics {
			if d.Severity >= diag.Error {
				errs = append(errs, d)
			}
		}
		if len(errs) > 0 {
			for _, d := range errs[:min(len(errs), maxLoggedDiagnostics)] {
				s.log.Error("input error", "code", d.Code, "object", d.Object.String(), "file", d.Object.File, "line", d.Object.Line, "message", d.Message)
			}
			s.log.Error("input has errors: not served; the last good configuration stays", "errors", len(errs))
			s.metrics.compiles.WithLabelValues(resultRejected).Inc()
			return
		}
		opts := src.Build
		opts.Format = "xds"
		// Validation findings are diagnostics of build and lint; serve
		// reports none, so it skips the checks (a third of the time),
		// and an Envoy that rejects a resource says so by NACK.
		opts.Unchecked = true
		set, berr := r.ConfigSet(ctx, opts, s.built)
		if err = berr; err == nil {
			if err = s.Publish(r, set.Configs); err == nil {
				s.built, rebuilt = set, set.Rebuilt
			}
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("compile failed; the last good configuration stays", "error", err)
			s.metrics.compiles.WithLabelValues(resultFailed).Inc()
		}
		return
	}
	d := time.Since(start)
	s.metrics.compileDuration.Observe(d.Seconds())
	s.metrics.compiles.WithLabelValues(resultServed).Inc()
	s.log.Info("compiled", "proxies", len(r.Mesh.Views), "rebuilt", rebuilt, "diagnostics", len(r.Diagnostics), "duration", d.Round(time.Millisecond))
}

// Handler serves /metrics, /healthz, /readyz (ready after the first good
// compile) and /debug/syncz (every node's sent and acked versions, JSON).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Ready() {
			http.Error(w, "no configuration compiled yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /debug/syncz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Syncz())
	})
	return mux
}
