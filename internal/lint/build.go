package lint

import (
	"fmt"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/resolve"
)

// BuildOutput is what the build checks read: the proxies built and what emit made
// of them.
type BuildOutput struct {
	Views  []*resolve.ProxyView
	Result emit.Result
	// MaxProxyBytes is the budget of MC8001, on the wire.
	MaxProxyBytes int
}

// BuildAnalyzers check a build; they run only with Options.Build set.
func BuildAnalyzers() []*Analyzer {
	return []*Analyzer{proxyConfigTooLarge, invalidEnvoyConfig, untranslatedPolicy}
}

// proxyConfigTooLarge (MC8001) reports once per scope: its proxies share
// their outbound configuration, so they are over the budget together and
// one Sidecar trims them all.
var proxyConfigTooLarge = &Analyzer{Entry: diag.ProxyConfigTooLarge, Run: func(p *Pass) {
	type group struct {
		views   []*resolve.ProxyView
		largest emit.IndexEntry
	}
	groups := map[*resolve.Scope]*group{}
	var order []*resolve.Scope
	for i, v := range p.Build.Views {
		e := p.Build.Result.Index[i]
		if e.WireBytes <= p.Build.MaxProxyBytes {
			continue
		}
		g := groups[v.Scope]
		if g == nil {
			g = &group{}
			groups[v.Scope] = g
			order = append(order, v.Scope)
		}
		g.views = append(g.views, v)
		if e.WireBytes > g.largest.WireBytes {
			g.largest = e
		}
	}
	for _, sc := range order {
		g := groups[sc]
		first := g.views[0]
		subject := first.Proxy.Object
		hint := "a Sidecar in namespace " + first.Proxy.Namespace + " whose egress hosts list only what the workloads call would trim them"
		if s := first.Choice.Sidecar; s != nil {
			subject = &s.ObjectMeta
			hint = "the Sidecar imports " + fmt.Sprint(len(sc.Services)) + " services; narrowing its egress hosts would trim them"
		}
		e := g.largest
		d := p.Report(subject, nil, diag.ConfigOverBudget,
			plural(len(g.views), "1 proxy", fmt.Sprintf("%d proxies", len(g.views))), sc.Name(), e.WireBytes, e.Counts.Clusters, e.Counts.Listeners, p.Build.MaxProxyBytes, hint)
		for _, v := range g.views {
			d.Proxies = append(d.Proxies, v.Proxy.ID())
		}
	}
}}

var invalidEnvoyConfig = &Analyzer{Entry: diag.InvalidEnvoyConfig, Run: func(p *Pass) {
	for _, v := range p.Build.Views {
		for _, problem := range p.Build.Result.Problems[v.Proxy.ID()] {
			d := p.Report(v.Proxy.Object, nil, diag.ConfigInvalid, v.Proxy.ID(), problem)
			d.Proxies = []string{v.Proxy.ID()}
		}
	}
}}

// untranslatedPolicy names each policy that applies to built proxies whose
// configs lack it.
var untranslatedPolicy = &Analyzer{Entry: diag.UntranslatedPolicy, Run: func(p *Pass) {
	affected := map[*resolve.Policy][]string{}
	for _, v := range p.Build.Views {
		for _, pol := range p.Mesh.PoliciesFor(v.Proxy) {
			affected[pol] = append(affected[pol], v.Proxy.ID())
		}
	}
	for _, pol := range p.Mesh.Policies {
		ids := affected[pol]
		if len(ids) == 0 {
			continue
		}
		d := p.Report(pol.Object, nil, diag.PolicyNotBuilt,
			pol.Object.Kind, pol.Object.Namespace, pol.Object.Name, len(ids), pol.Omits)
		d.Proxies = ids
	}
}}
