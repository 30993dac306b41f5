package compile

import (
	"context"

	"github.com/meshc/meshc/internal/deephash"
	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/resolve"
)

// ConfigSet is every proxy's configuration of one compile, in memory,
// with a digest of what each was built from, so that the next compile
// rebuilds only the proxies whose inputs changed (serve's recompiles).
type ConfigSet struct {
	// Configs are the configurations of Mesh.Views, in order.
	Configs []*envoycfg.Config
	// Rebuilt counts the proxies built rather than taken from the set
	// before.
	Rebuilt int
	// Carried counts what among them was taken from the set before
	// (emit.Carry): sidecar parts' clusters and outbound listeners, and
	// sidecars' own resources.
	Carried emit.Taken
	opts    emit.Options
	// byID are the configurations with their digests, by proxy ID; nil
	// when the mesh could not be digested.
	byID map[string]digested
	// carry is what the build left for the next one: what of sidecars it
	// built or took (emit.Carry).
	carry *emit.Carry
}

type digested struct {
	sum deephash.Sum
	cfg *envoycfg.Config
}

// ConfigSet builds every proxy's configuration as Configs does with
// opts, taking from prev, the set of an earlier compile (nil for none),
// the configuration of each proxy whose view digests as it did there
// (resolve.Digester: the view and what emit reads of the mesh). Equal
// digests mean emit reads equal data, and its output is a function of
// that and the options; with other options, or a mesh that cannot be
// digested, every proxy is built.
func (r *Result) ConfigSet(ctx context.Context, opts BuildOptions, prev *ConfigSet) (*ConfigSet, error) {
	views := r.Mesh.Views
	set := &ConfigSet{Configs: make([]*envoycfg.Config, len(views)), opts: opts.emitOptions()}
	sums, carrySums, ok := digestViews(r.Mesh)
	reuse := ok && prev != nil && prev.byID != nil && prev.opts == set.opts
	var todo []*resolve.ProxyView
	var at []int
	e := emit.New(r.Mesh, set.opts)
	if ok {
		var from *emit.Carry
		if reuse {
			from = prev.carry
		}
		set.carry = e.CarryFrom(from, carrySums)
	}
	for i, v := range views {
		if reuse {
			if d, hit := prev.byID[v.Proxy.ID()]; hit && d.sum == sums[i] {
				set.Configs[i] = d.cfg
				e.Retain(v)
				continue
			}
		}
		todo, at = append(todo, v), append(at, i)
	}
	built, err := e.Configs(ctx, todo)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		set.Configs[i] = built[j]
	}
	set.Rebuilt = len(todo)
	if set.carry != nil {
		set.Carried = set.carry.Taken()
	}
	if ok {
		set.byID = make(map[string]digested, len(views))
		for i, v := range views {
			set.byID[v.Proxy.ID()] = digested{sums[i], set.Configs[i]}
		}
	}
	return set, nil
}

// digestViews digests every view of m, in order, and what of every
// sidecar's view emit carries from build to build (resolve.Digester's
// Clusters, Listeners and Own); false when m cannot be digested.
func digestViews(m *resolve.Mesh) ([]deephash.Sum, map[*resolve.ProxyView]emit.Sums, bool) {
	d, err := m.NewDigester()
	if err != nil {
		return nil, nil, false
	}
	sums := make([]deephash.Sum, len(m.Views))
	carried := make(map[*resolve.ProxyView]emit.Sums, len(m.Views))
	for i, v := range m.Views {
		if sums[i], err = d.View(v); err != nil {
			return nil, nil, false
		}
		if v.Proxy.Type != resolve.SidecarProxy {
			continue
		}
		if carried[v], err = carrySums(d, v); err != nil {
			return nil, nil, false
		}
	}
	return sums, carried, true
}

// carrySums digests what of a sidecar's view emit carries.
func carrySums(d *resolve.Digester, v *resolve.ProxyView) (emit.Sums, error) {
	var c emit.Sums
	var err error
	if c.Clusters, err = d.Clusters(v); err != nil {
		return c, err
	}
	if c.Listeners, err = d.Listeners(v); err != nil {
		return c, err
	}
	c.Own, err = d.Own(v)
	return c, err
}
