package compile

import (
	"context"

	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/resolve"
)

// Configs builds the Envoy configuration of views in memory, each as
// Build would write it with opts (Format "xds" gives the resources as an
// xDS server sends them: routes and endpoints apart). Nothing is written:
// options about files and workers (SelfContained, SharedRoot, Workers,
// Progress) are ignored; the proxies are built on every core.
// Resources equal between proxies are shared as the build shares them.
// A bootstrap's listeners carry their route configurations inline, and
// list them too; comparing or walking configs, prefer xds.
func (r *Result) Configs(ctx context.Context, views []*resolve.ProxyView, opts BuildOptions) ([]*envoycfg.Config, error) {
	return emit.New(r.Mesh, opts.emitOptions()).Configs(ctx, views)
}

// Config is one proxy's configuration in memory (Configs).
func (r *Result) Config(ctx context.Context, view *resolve.ProxyView, opts BuildOptions) (*envoycfg.Config, error) {
	cs, err := r.Configs(ctx, []*resolve.ProxyView{view}, opts)
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}
