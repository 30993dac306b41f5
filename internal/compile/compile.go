// Package compile is meshc's pipeline as a library: inputs and options are
// values, so two compiles can coexist in one process (a diff compiles BASE
// and HEAD, a server recompiles in the background). Run loads the inputs,
// reads the mesh config, builds the namespace hierarchy, resolves every
// proxy's view and runs the analyzers; Build emits Envoy configuration on
// demand and runs the checks that read it.
package compile

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/gatewayapi"
	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/lint"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/suppress"
)

// Inputs are what a compile reads.
type Inputs struct {
	// Paths are files, directories (searched recursively) and "-" for
	// Stdin; none means the working directory.
	Paths []string
	Stdin io.Reader
	// Exclude are globs of paths that walking directories leaves out
	// (load.Options.Exclude).
	Exclude []string
	// Render says how Helm charts and kustomizations are rendered.
	Render RenderOptions
	// FS, when set, is read instead of the OS's file system (a git
	// revision's tree): Paths are its names, and diagnostics name its
	// files so (load.Options.FS).
	FS fs.FS
}

// RenderOptions say how Helm charts and kustomizations are rendered.
type RenderOptions = load.RenderOptions

// Options are a compile's settings. The zero value is istiod's defaults.
type Options struct {
	// MeshConfigFile, when set, is read instead of the istio ConfigMap in
	// the inputs.
	MeshConfigFile string
	// MeshConfigIn is the file system MeshConfigFile is in: nil for the
	// OS's (--mesh-config), Inputs.FS for a .meshc.yaml read there.
	MeshConfigIn fs.FS
	// Hierarchy and Propagation are HNC's operator options.
	Hierarchy   hierarchy.Options
	Propagation hierarchy.PropagateOptions
	// PlaceholderVIPs is where Services without a cluster IP get one;
	// the zero prefix means resolve's default range.
	PlaceholderVIPs netip.Prefix
	// Injection is the sidecar injector as installed.
	Injection resolve.Injection
	// DualStack is istiod's ISTIO_DUAL_STACK (resolve.Options.DualStack).
	DualStack bool
	// AlphaGatewayAPI is istiod's PILOT_ENABLE_ALPHA_GATEWAY_API
	// (gatewayapi.Options.AlphaGatewayAPI).
	AlphaGatewayAPI bool
	// Suppress are the suppression rules (flags, .meshc.yaml); the
	// objects' annotations apply too.
	Suppress []suppress.Rule
	// Now dates suppression expiry; zero means the current time.
	Now time.Time
	// NoAnalyzers leaves the analyzers out, for callers that use the
	// resolved mesh and not its diagnostics (explain request, test);
	// Diagnostics then hold only the stages' own.
	NoAnalyzers bool
	// Only are the codes (names, istioctl analyze codes) whose analyzers
	// run, with the facts they read; none means every analyzer.
	Only []string
	// Timing, when set, hears how long each lint fact and analyzer took
	// (lint.Options.Timing), and each stage, as "stage NAME", once it ends.
	Timing func(what string, d time.Duration)
	// AfterStage, when set, runs in Run's goroutine as each stage ends
	// without error, with the stage's name: a command's place to set
	// its policy for what follows (cmd/meshc collects load's garbage).
	AfterStage func(stage string)
}

// Validate checks the options that can be wrong.
func (o Options) Validate() error {
	if err := hierarchy.ValidateOptions(o.Hierarchy); err != nil {
		return err
	}
	for _, r := range o.Suppress {
		if err := r.Check(); err != nil {
			return err
		}
	}
	if _, err := o.analyzers(); err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	if p := o.PlaceholderVIPs; p.IsValid() && (!p.Addr().Is4() || p.Bits() > 30) {
		return fmt.Errorf("placeholder VIPs: want an IPv4 CIDR of at least 4 addresses, got %s", p)
	}
	return nil
}

// analyzers are the analyzers Only selects.
func (o Options) analyzers() ([]*lint.Analyzer, error) {
	if len(o.Only) == 0 {
		return lint.Analyzers(), nil
	}
	return lint.Select(o.Only)
}

// DefaultPlaceholderVIPs is the range Options.PlaceholderVIPs defaults to.
func DefaultPlaceholderVIPs() netip.Prefix { return resolve.DefaultPlaceholderVIPs() }

// Result is one compile: what was read, the resolved mesh and every
// diagnostic, sorted. It is read-only.
type Result struct {
	// Files are the files read, in input order.
	Files []string
	// Skipped are files read but passed over (no Kubernetes objects, or
	// unrendered Helm templates).
	Skipped []diag.Skipped
	// Objects are the objects loaded, before HNC propagation.
	Objects []model.Object
	// GatewayAPI is what the Gateway API objects converted to, with the
	// conditions istiod would set.
	GatewayAPI *gatewayapi.Result
	// Mesh is the resolution, with provenance.
	Mesh        *resolve.Mesh
	Diagnostics []diag.Diagnostic
	// Stages are the stages run, in order, with how long each took.
	Stages []Stage
	// suppressed filters the build checks' findings as Run filtered these.
	suppressed *suppress.Set
	// options are the compile's, which index.json records.
	options Options
}

// Stage names a stage of Run and its wall time.
type Stage struct {
	Name     string
	Duration time.Duration
}

// The stages of Run, in order. Each is a function of the previous stage's
// value and the options, and each stops when ctx ends.
const (
	StageLoad       = "load"       // inputs to objects (internal/load)
	StageMeshConfig = "meshconfig" // the mesh config from a file or the objects
	StageHierarchy  = "hierarchy"  // HNC's forest and propagation
	StageGatewayAPI = "gatewayapi" // Gateway API objects to what istiod makes of them
	StageResolve    = "resolve"    // what istiod computes per proxy
	StageAnalyze    = "analyze"    // the analyzers (internal/lint)
	StageSuppress   = "suppress"   // suppression rules and annotations
)

// Run compiles inputs, one stage after the other in the caller's
// goroutine. When ctx ends the running stage stops at its next check
// (between files, scopes or analyzers) and Run returns ctx's cause; no
// goroutine of it outlives the call. Problems with the input are
// diagnostics; the error is ctx's.
func Run(ctx context.Context, in Inputs, opts Options) (*Result, error) {
	paths := in.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	r := &Result{options: opts}
	var ds []diag.Diagnostic
	var loaded load.Result
	var mc model.MeshConfig
	var h hierarchy.Result
	var found []diag.Diagnostic
	steps := []struct {
		name string
		run  func() error
	}{
		{StageLoad, func() error {
			res, lds, err := load.Paths(ctx, paths, load.Options{Stdin: in.Stdin, Exclude: in.Exclude, Render: in.Render, FS: in.FS})
			loaded, ds = res, lds
			return err
		}},
		{StageMeshConfig, func() error {
			var mds []diag.Diagnostic
			mc, mds = load.MeshConfig(loaded.Objects, load.MeshOptions{File: opts.MeshConfigFile, FileIn: opts.MeshConfigIn})
			ds = append(ds, mds...)
			return nil
		}},
		{StageHierarchy, func() error {
			var err error
			h, err = hierarchy.Run(ctx, loaded.Objects, opts.Hierarchy, opts.Propagation)
			ds = append(ds, h.Diagnostics...)
			return err
		}},
		{StageGatewayAPI, func() error {
			conv, err := gatewayapi.Convert(ctx, h.Objects, gatewayapi.Options{DomainSuffix: mc.DomainSuffix, Namespaces: h.Forest.ExistingLabels(), AlphaGatewayAPI: opts.AlphaGatewayAPI})
			if err != nil {
				return err
			}
			h.Objects, r.GatewayAPI = conv.Objects, conv
			ds = append(ds, conv.Diagnostics...)
			return nil
		}},
		{StageResolve, func() error {
			var err error
			r.Mesh, err = resolve.Resolve(ctx, h, resolve.Options{Mesh: mc, PlaceholderVIPs: opts.PlaceholderVIPs, Injection: opts.Injection, DualStack: opts.DualStack})
			if err == nil {
				ds = append(ds, r.Mesh.Diagnostics...)
			}
			return err
		}},
		{StageAnalyze, func() error {
			if opts.NoAnalyzers {
				return nil
			}
			analyzers, err := opts.analyzers()
			if err != nil {
				return err
			}
			found, err = lint.Run(ctx, r.Mesh, analyzers, lint.Options{Timing: opts.Timing})
			ds = append(ds, found...)
			return err
		}},
		{StageSuppress, func() error {
			set, expired := suppress.New(opts.Suppress, r.Mesh.Objects, cmp.Or(opts.Now, time.Now()))
			ds = append(set.Filter(ds), expired...)
			r.suppressed = set
			return nil
		}},
	}
	for _, s := range steps {
		start := time.Now()
		err := s.run()
		r.Stages = append(r.Stages, Stage{s.name, time.Since(start)})
		if opts.Timing != nil {
			opts.Timing("stage "+s.name, r.Stages[len(r.Stages)-1].Duration)
		}
		if err == nil {
			err = context.Cause(ctx)
		}
		if err != nil {
			return nil, err
		}
		if opts.AfterStage != nil {
			opts.AfterStage(s.name)
		}
	}
	fileKeys(paths, in.FS, ds)
	diag.Sort(ds)
	r.Files, r.Skipped, r.Objects, r.Diagnostics = loaded.Files, loaded.Skipped, loaded.Objects, ds
	return r, nil
}

// Gateway finds a Gateway API Gateway istiod compiles, as the conversion
// left it; the error says why there is none.
func (r *Result) Gateway(ns, name string) (*gatewayapi.Gateway, error) {
	if r.GatewayAPI != nil {
		for _, gw := range r.GatewayAPI.Gateways {
			if gw.Object.Namespace == ns && gw.Object.Name == name {
				return gw, nil
			}
		}
	}
	for _, o := range r.Objects {
		if gw, ok := o.(*model.KubeGateway); ok && gw.Namespace == ns && gw.Name == name {
			return nil, fmt.Errorf("the Gateway %s/%s has class %q, which meshc does not compile (MC7101)", ns, name, gw.Spec.GatewayClassName)
		}
	}
	return nil, fmt.Errorf("no Gateway API Gateway %s/%s in the input", ns, name)
}

// fileKeys makes the keys of findings about a file rather than an object
// name the file relative to the directory holding every input, so a
// baseline written by "meshc lint manifests" matches "meshc lint ." run
// in manifests, and a revision's tree matches the working tree. Files
// outside it (a --mesh-config elsewhere) keep the path as given.
func fileKeys(paths []string, fsys fs.FS, ds []diag.Diagnostic) {
	files := osFiles
	if fsys != nil {
		files = treeFiles(fsys)
	}
	root, ok := inputRoot(paths, files)
	if !ok {
		return
	}
	for i, d := range ds {
		if d.Object.Name != "" || d.Object.File == "" || d.Object.File == load.StdinName {
			continue
		}
		abs, err := files.abs(d.Object.File)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		ds[i] = d.WithKeyFile(filepath.ToSlash(rel))
	}
}

// fileNames say where the inputs' names are: absolute paths, and which
// are directories.
type fileNames struct {
	abs   func(name string) (string, error)
	isDir func(abs string) bool
}

var osFiles = fileNames{abs: filepath.Abs, isDir: func(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}}

// treeFiles are the names of fsys, absolute from "/", its root.
func treeFiles(fsys fs.FS) fileNames {
	return fileNames{
		abs: func(name string) (string, error) { return path.Join("/", name), nil },
		isDir: func(p string) bool {
			info, err := fs.Stat(fsys, cmp.Or(strings.TrimPrefix(p, "/"), "."))
			return err == nil && info.IsDir()
		},
	}
}

// inputRoot is the deepest directory holding every input path (a file
// input counts as its directory); false when there is none, as for stdin
// alone.
func inputRoot(paths []string, files fileNames) (string, bool) {
	root := ""
	for _, p := range paths {
		if p == "-" {
			continue
		}
		dir, err := files.abs(p)
		if err != nil {
			return "", false
		}
		if !files.isDir(dir) {
			dir = filepath.Dir(dir)
		}
		if root == "" {
			root = dir
			continue
		}
		for root != filepath.Dir(root) {
			if rel, err := filepath.Rel(root, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				break
			}
			root = filepath.Dir(root)
		}
	}
	return root, root != ""
}
