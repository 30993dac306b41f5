package main

import (
	"context"

	"github.com/meshc/meshc/internal/compile"
)

// analyze compiles paths with the global options and, for lint, the
// suppressions.
func (g *globals) analyze(ctx context.Context, paths []string, suppress []string) (*compile.Result, error) {
	opts := g.opts
	opts.Suppress = suppress
	return compile.Run(ctx, compile.Inputs{Paths: paths, Stdin: g.stdin}, opts)
}
