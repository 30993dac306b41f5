package compile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/lint"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/suggest"
)

// BuildOptions shape a build's Envoy configuration and where it goes.
type BuildOptions struct {
	// Format is "bootstrap" (default) or "xds"; Endpoints "inline"
	// (default) or "dns"; TLS "istio" (default), "files" or "off".
	Format, Endpoints, TLS string
	// CertDir holds the certificate files of TLS "files".
	CertDir string
	// SelfContained writes every proxy's whole configuration in its own
	// files; otherwise what proxies share is written once under _shared/
	// (emit.Options.Shared), and bootstraps name those files under
	// SharedRoot (default: relative to Envoy's working directory).
	SelfContained bool
	SharedRoot    string
	// ADS, when set, is the HOST:PORT of meshc serve: each proxy gets a
	// bootstrap that fetches its configuration from there over ADS
	// instead of files (emit.Options.ADS).
	ADS string
	// HeadlessCIDRChains is istiod's PILOT_ENABLE_HEADLESS_FILTER_CHAIN_LISTENER.
	HeadlessCIDRChains bool
	// Unchecked leaves out the build's validation (emit.Options.Unchecked),
	// for comparing configurations in memory; Build ignores it, as its
	// checks report what validation finds.
	Unchecked bool
	// MaxProxyBytes is MC8001's budget on the wire.
	MaxProxyBytes int
	// Workers bounds parallel proxy builds; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each proxy is written.
	Progress func(done, total int)
	// Version is the meshc that writes the build, for index.json.
	Version string
}

func (opts BuildOptions) emitOptions() emit.Options {
	return emit.Options{Format: emit.Format(opts.Format), Endpoints: emit.EndpointMode(opts.Endpoints), TLS: emit.TLSMode(opts.TLS),
		CertDir: opts.CertDir, Shared: !opts.SelfContained, SharedRoot: opts.SharedRoot, HeadlessCIDRChains: opts.HeadlessCIDRChains, ADS: opts.ADS, Unchecked: opts.Unchecked}
}

// The values BuildOptions' string fields take.
var (
	Formats       = []string{string(emit.Bootstrap), string(emit.XDS)}
	EndpointModes = []string{string(emit.EndpointsInline), string(emit.EndpointsDNS)}
	TLSModes      = []string{string(emit.TLSIstio), string(emit.TLSFiles), string(emit.TLSOff)}
)

// CheckADS checks BuildOptions.ADS: HOST:PORT, HOST an IP or a DNS name.
func CheckADS(addr string) error {
	_, _, err := emit.ParseADS(addr)
	return err
}

// DefaultMaxProxyBytes is istiod's gRPC message limit.
const DefaultMaxProxyBytes = 4 << 20

// Built is a finished build.
type Built struct {
	// Index lists every proxy written, as index.json does.
	Index []emit.IndexEntry
	// Diagnostics are the compile's and the build checks', sorted.
	Diagnostics []diag.Diagnostic
	// Written is the bytes of the proxies' files, each shared file once.
	Written int64
	// Placeholders are the services that got a made-up VIP, nil for none.
	Placeholders *emit.Placeholders
}

// Write compiles the Envoy configuration of views (from SelectProxies)
// into dir, a fresh directory, and runs the build checks (MC8001–MC8003)
// over it. It stops when ctx ends; dir is then incomplete.
func (r *Result) Write(ctx context.Context, views []*resolve.ProxyView, dir string, opts BuildOptions) (*Built, error) {
	opts.Unchecked = false
	info := r.buildInfo(opts)
	res, err := emit.New(r.Mesh, opts.emitOptions()).Write(ctx, views, emit.WriteOptions{Dir: dir, Workers: opts.Workers, Progress: opts.Progress, Info: info})
	if err != nil {
		return nil, err
	}
	b := &lint.BuildOutput{Views: views, Result: res, MaxProxyBytes: opts.MaxProxyBytes}
	if b.MaxProxyBytes <= 0 {
		b.MaxProxyBytes = DefaultMaxProxyBytes
	}
	found, err := lint.Run(ctx, r.Mesh, lint.BuildAnalyzers(), lint.Options{Build: b})
	if err != nil {
		return nil, err
	}
	ds := append(slices.Clone(r.Diagnostics), r.suppressed.Filter(found)...)
	diag.Sort(ds)
	return &Built{Index: res.Index, Diagnostics: ds, Written: res.Written, Placeholders: info.PlaceholderVIPs}, nil
}

// SelectProxies keeps the proxies whose NAMESPACE/NAME matches any glob,
// all when none is given; a pattern matching nothing is an error, as a
// typo would be.
func (r *Result) SelectProxies(patterns []string) ([]*resolve.ProxyView, error) {
	if len(patterns) == 0 {
		return r.Mesh.Views, nil
	}
	var out []*resolve.ProxyView
	used := make([]bool, len(patterns))
	for _, v := range r.Mesh.Views {
		hit := false
		for i, p := range patterns {
			if ok, _ := path.Match(p, v.Proxy.ID()); ok {
				used[i], hit = true, true
			}
		}
		if hit {
			out = append(out, v)
		}
	}
	for i, p := range patterns {
		if !used[i] {
			return nil, fmt.Errorf("--proxy %q matches no proxy", p)
		}
	}
	return out, nil
}

// Proxy finds one proxy's view; when there is none, the error lists the
// closest names.
func (r *Result) Proxy(namespace, name string) (*resolve.ProxyView, error) {
	if v, ok := r.Mesh.View(namespace, name); ok {
		return v, nil
	}
	type cand struct {
		id    string
		score int
	}
	var cands []cand
	for _, p := range r.Mesh.Proxies {
		score := suggest.Distance(p.Name, name)
		if p.Namespace != namespace {
			score += 2
		}
		if strings.HasPrefix(p.Name, name) || strings.HasPrefix(name, p.Name) {
			score = min(score, 2)
		}
		if score <= 4 {
			cands = append(cands, cand{p.ID(), score})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.score - b.score })
	msg := fmt.Sprintf("no proxy %s/%s in the input (%d proxies found)", namespace, name, len(r.Mesh.Proxies))
	if name == resolve.StandInName {
		msg += fmt.Sprintf("; %s/%s in a finding stands for any proxy of %s, which the input does not show: add its workloads, or label the namespace for injection (or pass --inject-namespace %s), to explain one", namespace, name, namespace, namespace)
	} else if len(cands) > 0 {
		var ids []string
		for _, c := range cands[:min(5, len(cands))] {
			ids = append(ids, c.id)
		}
		msg += "; did you mean " + strings.Join(ids, ", ") + "?"
	} else {
		msg += "; a proxy is an injected Pod or workload (istio-injection=enabled on its namespace, or sidecar.istio.io/inject=true)"
	}
	return nil, errors.New(msg)
}

// buildInfo is what index.json says of a build: the meshc that wrote it,
// the options that shape Envoy output (defaults spelt out, so that the
// record does not depend on them), and the services with made-up VIPs.
func (r *Result) buildInfo(opts BuildOptions) emit.BuildInfo {
	eo := opts.emitOptions()
	layout := "shared"
	if opts.SelfContained {
		layout = "self-contained"
	}
	o := map[string]string{
		"format":           string(cmp.Or(eo.Format, emit.Bootstrap)),
		"endpoints":        string(cmp.Or(eo.Endpoints, emit.EndpointsInline)),
		"tls-mode":         string(cmp.Or(eo.TLS, emit.TLSIstio)),
		"layout":           layout,
		"placeholder-vips": cmp.Or(r.options.PlaceholderVIPs, DefaultPlaceholderVIPs()).String(),
	}
	set := func(k, v string) {
		if v != "" {
			o[k] = v
		}
	}
	if eo.TLS == emit.TLSFiles {
		set("cert-dir", opts.CertDir)
	}
	set("shared-root", opts.SharedRoot)
	set("ads", opts.ADS)
	set("mesh-config", r.options.MeshConfigFile)
	set("inject-namespace", strings.Join(r.options.Injection.Namespaces, ","))
	set("revision", strings.Join(r.options.Injection.Revisions, ","))
	if opts.HeadlessCIDRChains {
		o["headless-cidr-chains"] = "true"
	}
	if r.options.DualStack {
		o["dual-stack"] = "true"
	}
	if r.options.AlphaGatewayAPI {
		o["alpha-gateway-api"] = "true"
	}
	info := emit.BuildInfo{Meshc: cmp.Or(opts.Version, "(devel)"), Options: o, Inputs: r.inputDigest()}
	var made []string
	for _, s := range r.Mesh.Services {
		if s.PlaceholderVIP {
			made = append(made, string(s.Host))
		}
	}
	if len(made) > 0 {
		slices.Sort(made)
		info.PlaceholderVIPs = &emit.Placeholders{Range: o["placeholder-vips"], Services: slices.Compact(made)}
	}
	return info
}

// inputDigest digests the documents the build was compiled from: those of
// the objects loaded (a rendered object's as rendered) and the mesh
// config's. Sorting the documents' own digests makes the result
// independent of file names and order; objects left out as invalid did
// not shape the build and are not part of it.
func (r *Result) inputDigest() emit.InputDigest {
	var sums []string
	add := func(text []byte) {
		if text != nil {
			sum := sha256.Sum256(text)
			sums = append(sums, hex.EncodeToString(sum[:]))
		}
	}
	for _, o := range r.Objects {
		add(o.Meta().Source.Text())
	}
	add(r.Mesh.Config.From.Text())
	slices.Sort(sums)
	sums = slices.Compact(sums)
	all := sha256.Sum256([]byte(strings.Join(sums, "\n")))
	return emit.InputDigest{Digest: "sha256:" + hex.EncodeToString(all[:]), Documents: len(sums)}
}
