package emit

import (
	"context"
	"errors"
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/parallel"
	"github.com/meshc/meshc/internal/resolve"
)

// Resources is the config as values found by type and name, with the
// VirtualService rule of each route translated from one. A sidecar's
// config extends its part's, made once for every proxy with the part.
func (c *Config) Resources() (*envoycfg.Config, error) {
	var out *envoycfg.Config
	var err error
	if p := c.part; p != nil {
		p.resOnce.Do(func() {
			base, err := p.half.resources()
			if err != nil {
				p.resErr = err
				return
			}
			p.res, p.resErr = base.Add(p.listeners, nil, p.routes, originsByRoute(p.origins))
		})
		if p.resErr == nil {
			out, err = p.res.Extend(c.ownListeners, c.ownClusters)
		} else {
			err = p.resErr
		}
	} else {
		out, err = resources(c.Listeners, c.Clusters, c.Routes, c.Endpoints, c.origins)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", c.View.Proxy.ID(), err)
	}
	out.Problems = c.Problems
	return out, nil
}

func resources(ls []*listenerv3.Listener, cs []*clusterv3.Cluster, rs []*routev3.RouteConfiguration, eps []*endpointv3.ClusterLoadAssignment,
	origins map[*routev3.Route]*resolve.Route) (*envoycfg.Config, error) {
	return envoycfg.New(ls, cs, rs, eps, originsByRoute(origins))
}

// originsByRoute are the VirtualService rules of routes as envoycfg places
// them.
func originsByRoute(origins map[*routev3.Route]*resolve.Route) map[*routev3.Route]envoycfg.Origin {
	byRoute := make(map[*routev3.Route]envoycfg.Origin, len(origins))
	for r, src := range origins {
		byRoute[r] = envoycfg.Origin{Object: &src.From.Object.ObjectMeta, Path: model.Path{}.Key("spec").Key("http").Index(src.Index)}
	}
	return byRoute
}

// Configs builds the given proxies on every core, in memory: what Write
// would write, as values, with the resources proxies of one scope share
// shared between their Configs. It stops when ctx ends.
func (e *Emitter) Configs(ctx context.Context, views []*resolve.ProxyView) ([]*envoycfg.Config, error) {
	e.parts.expect(e.shared.mesh, views)
	out := make([]*envoycfg.Config, len(views))
	errs := make([]error, len(views))
	parallel.For(ctx, len(views), func(i int) {
		cfg := e.build(views[i])
		if cfg.part != nil {
			e.parts.done(cfg.key)
		}
		out[i], errs[i] = cfg.Resources()
	})
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
