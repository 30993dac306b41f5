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
	return r.Configurer(opts, nil).Configs(ctx, views)
}

// Configurer builds configurations in memory batch after batch, as
// Configs does, keeping between batches what every batch may share (a
// service's clusters and endpoints, built once for the mesh): for callers
// that go through many proxies a batch at a time to bound memory.
type Configurer struct{ e *emit.Emitter }

// Store holds resources by content for Configurers and ConfigSets to
// share (emit.Store).
type Store = emit.Store

// NewStore returns an empty Store.
func NewStore() *Store { return emit.NewStore() }

// Configurer prepares batches of Configs with opts. With a Store, equal
// resources are shared with what other Configurers of the Store build: a
// diff's two sides then compare them by pointer.
func (r *Result) Configurer(opts BuildOptions, store *Store) *Configurer {
	e := emit.New(r.Mesh, opts.emitOptions())
	e.Share(store)
	return &Configurer{e}
}

// Configs builds one batch (Result.Configs).
func (c *Configurer) Configs(ctx context.Context, views []*resolve.ProxyView) ([]*envoycfg.Config, error) {
	return c.e.Configs(ctx, views)
}

// Config is one proxy's configuration in memory (Configs).
func (r *Result) Config(ctx context.Context, view *resolve.ProxyView, opts BuildOptions) (*envoycfg.Config, error) {
	cs, err := r.Configs(ctx, []*resolve.ProxyView{view}, opts)
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}
