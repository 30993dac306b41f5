package main

import (
	"context"
	"net/netip"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/lint"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve"
)

// analysis is one run of the passes every command shares.
type analysis struct {
	input load.Result
	mesh  *resolve.Mesh
	diags []diag.Diagnostic
}

// analyze loads paths, resolves them and runs the analyzers. These passes
// write nothing, so when ctx ends they are left to finish unobserved and
// analyze returns at once: an interrupt never waits for a long resolve.
func (g *globals) analyze(ctx context.Context, paths []string, suppress []string) (analysis, error) {
	type result struct {
		a   analysis
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := g.analyzeNow(ctx, paths, suppress)
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		return r.a, r.err
	case <-ctx.Done():
		return analysis{}, context.Cause(ctx)
	}
}

func (g *globals) analyzeNow(ctx context.Context, paths []string, suppress []string) (analysis, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	res, ds, err := load.Paths(ctx, paths, load.Options{Stdin: g.stdin})
	if err != nil {
		return analysis{}, err
	}
	mc, meshDiags := load.MeshConfig(res.Objects, load.MeshOptions{File: g.meshConfig})
	ds = append(ds, meshDiags...)
	vips, _ := netip.ParsePrefix(g.placeholders) // validated before the command runs
	mesh := resolve.Resolve(res.Objects, resolve.Options{Mesh: mc, Hierarchy: g.hierarchy, Propagation: g.propagation, PlaceholderVIPs: vips})
	ds = append(ds, mesh.Diagnostics...)
	ds = append(ds, lint.Run(mesh, mesh.Objects, lint.Analyzers(), lint.Options{Suppress: suppress})...)
	diag.Sort(ds)
	return analysis{input: res, mesh: mesh, diags: ds}, nil
}
