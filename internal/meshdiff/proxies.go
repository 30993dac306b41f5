package meshdiff

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/envdiff"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/parallel"
	"github.com/meshc/meshc/internal/resolve"
)

// ProxyGroup is proxies with the same status and, when changed, the same
// changes.
type ProxyGroup struct {
	Status string `json:"status"`
	// Proxies are "namespace/name", sorted.
	Proxies []string `json:"proxies"`
	// Summary is e.g. "240 proxies in 12 namespaces".
	Summary string   `json:"summary"`
	Changes []Change `json:"changes,omitempty"`
	// Causes are the changed input objects the changes come from.
	Causes []Cause `json:"causes,omitempty"`
}

// Change is one difference in a proxy's configuration.
type Change struct {
	// Kind is changed, added, removed or reordered.
	Kind envdiff.Kind `json:"kind"`
	// Type and Resource identify the resource (listener, cluster, route,
	// endpoints and its name).
	Type     string `json:"type"`
	Resource string `json:"resource"`
	// Path is the field's readable path inside the resource; empty when
	// the whole resource was added or removed.
	Path string `json:"path,omitempty"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

func newChange(c envdiff.Change) Change {
	return Change{Kind: c.Kind, Type: string(c.Resource.Type), Resource: c.Resource.Name, Path: c.Path.String(), Old: c.Old, New: c.New}
}

// compareProxies compares the configurations of the proxies present on
// both sides. A proxy whose inputs digest the same on both sides is
// unchanged (changedPairs) and not built; the others are built and
// compared a batch of whole scopes at a time, so memory stays bounded
// while the resources a scope's proxies share are built and compared once
// (envdiff.Comparer).
func compareProxies(ctx context.Context, base, head *compile.Result, opts Options) (proxyResult, error) {
	bopts := opts.Build
	bopts.Format = cmp.Or(bopts.Format, "xds")
	// Validation reports on a build; a comparison does not need it.
	bopts.Unchecked = true
	batch := cmp.Or(opts.Batch, 64)
	baseViews := map[string]*resolve.ProxyView{}
	for _, v := range base.Mesh.Views {
		baseViews[v.Proxy.ID()] = v
	}
	headIDs := map[string]bool{}
	var counts ProxyCounts
	var added, removed []string
	var pairs []viewPair
	for _, v := range head.Mesh.Views {
		id := v.Proxy.ID()
		headIDs[id] = true
		if old, ok := baseViews[id]; ok {
			pairs = append(pairs, viewPair{old, v})
		} else {
			added = append(added, id)
		}
	}
	compared := len(pairs)
	for _, v := range base.Mesh.Views {
		if !headIDs[v.Proxy.ID()] {
			removed = append(removed, v.Proxy.ID())
		}
	}
	build := compile.NewPair(base, head, bopts)
	if !opts.Full {
		pairs = changedPairs(build, pairs)
	}
	// Whole scopes per batch: proxies of a scope share their resources.
	scopeAt := map[*resolve.Scope]int{}
	for i, s := range head.Mesh.Scopes {
		scopeAt[s] = i
	}
	slices.SortStableFunc(pairs, func(a, b viewPair) int { return cmp.Compare(scopeAt[a.new.Scope], scopeAt[b.new.Scope]) })
	byProxy := map[string][]envdiff.Change{}
	// One builder per side and one comparer for all batches: a service's
	// clusters and endpoints are built and compared once, not per batch.
	// What the sides build alike is one value the comparer passes over.
	cp := envdiff.NewComparer()
	for start := 0; start < len(pairs); {
		end := start + 1
		for end < len(pairs) && (end-start < batch || pairs[end].new.Scope == pairs[end-1].new.Scope) {
			end++
		}
		olds, news := make([]*resolve.ProxyView, end-start), make([]*resolve.ProxyView, end-start)
		for i, p := range pairs[start:end] {
			olds[i], news[i] = p.old, p.new
		}
		oc, nc, err := build.Configs(ctx, olds, news)
		if err != nil {
			return proxyResult{}, err
		}
		changes := make([][]envdiff.Change, len(oc))
		parallel.For(ctx, len(oc), func(i int) { changes[i] = cp.Configs(oc[i], nc[i]) })
		if err := context.Cause(ctx); err != nil {
			return proxyResult{}, err
		}
		for i, cs := range changes {
			if len(cs) > 0 {
				byProxy[news[i].Proxy.ID()] = cs
			}
		}
		// Clusters and endpoints are the builders' mesh-wide ones; the
		// rest belongs to this batch's scopes.
		cp.Forget(envoycfg.Cluster, envoycfg.Endpoints)
		start = end
	}
	counts = ProxyCounts{Compared: compared, Changed: len(byProxy), Added: len(added), Removed: len(removed)}
	var groups []ProxyGroup
	for _, g := range envdiff.GroupChanges(byProxy) {
		pg := ProxyGroup{Status: StatusChanged, Proxies: g.Proxies, Summary: describe(g.Proxies)}
		for _, c := range g.Changes {
			pg.Changes = append(pg.Changes, newChange(c))
		}
		groups = append(groups, pg)
	}
	for _, g := range []struct {
		status string
		ids    []string
	}{{StatusAdded, added}, {StatusRemoved, removed}} {
		if len(g.ids) > 0 {
			slices.Sort(g.ids)
			groups = append(groups, ProxyGroup{Status: g.status, Proxies: g.ids, Summary: describe(g.ids)})
		}
	}
	parts, own := build.Omitted()
	return proxyResult{groups, counts, len(pairs), [2]int{parts, own}}, nil
}

// proxyResult is compareProxies': the groups and counts, how many
// proxies it built per side and what both sides left out
// (compile.Pair.Omitted).
type proxyResult struct {
	groups  []ProxyGroup
	counts  ProxyCounts
	built   int
	omitted [2]int
}

// describe summarizes proxies as "240 proxies in 12 namespaces".
func describe(ids []string) string {
	ns := map[string]bool{}
	for _, id := range ids {
		n, _, _ := strings.Cut(id, "/")
		ns[n] = true
	}
	return fmt.Sprintf("%s in %s", plural(len(ids), "proxy", "proxies"), plural(len(ns), "namespace", "namespaces"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// viewPair is a proxy's views on both sides.
type viewPair struct{ old, new *resolve.ProxyView }

// changedPairs drops the pairs whose configurations cannot differ
// (compile.Pair.Digest).
func changedPairs(build *compile.Pair, pairs []viewPair) []viewPair {
	olds, news := make([]*resolve.ProxyView, len(pairs)), make([]*resolve.ProxyView, len(pairs))
	for i, p := range pairs {
		olds[i], news[i] = p.old, p.new
	}
	differ := build.Digest(olds, news)
	var out []viewPair
	for i, p := range pairs {
		if differ[i] {
			out = append(out, p)
		}
	}
	return out
}
