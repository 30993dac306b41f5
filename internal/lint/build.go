package lint

import (
	"fmt"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/emit"
	"github.com/meshc/meshc/internal/resolve"
)

// Build is what the build checks read: the proxies built and what emit made
// of them.
type Build struct {
	Views  []*resolve.ProxyView
	Result emit.Result
	// MaxProxyBytes is the budget of MC8001, on the wire.
	MaxProxyBytes int
}

// BuildAnalyzers check a build; they run only with Options.Build set.
func BuildAnalyzers() []*Analyzer {
	return []*Analyzer{proxyConfigTooLarge, invalidEnvoyConfig, untranslatedPolicy}
}

var proxyConfigTooLarge = &Analyzer{Entry: diag.ProxyConfigTooLarge, Run: func(p *Pass) {
	for i, v := range p.Build.Views {
		e := p.Build.Result.Index[i]
		if e.WireBytes <= p.Build.MaxProxyBytes {
			continue
		}
		hint := "a Sidecar in namespace " + v.Proxy.Namespace + " whose egress hosts list only what the workload calls would trim it"
		if sc := v.Choice.Sidecar; sc != nil {
			hint = "its Sidecar " + sc.Namespace + "/" + sc.Name + " imports " + fmt.Sprint(len(v.Scope.Services)) + " services; narrowing its egress hosts would trim it"
		}
		d := p.Report(v.Proxy.Object, nil, "the Envoy config of proxy %s is %d bytes on the wire (%d clusters, %d listeners), over the budget of %d; %s",
			v.Proxy.ID(), e.WireBytes, e.Counts.Clusters, e.Counts.Listeners, p.Build.MaxProxyBytes, hint)
		d.Proxies = []string{v.Proxy.ID()}
	}
}}

var invalidEnvoyConfig = &Analyzer{Entry: diag.InvalidEnvoyConfig, Run: func(p *Pass) {
	for _, v := range p.Build.Views {
		for _, problem := range p.Build.Result.Problems[v.Proxy.ID()] {
			d := p.Report(v.Proxy.Object, nil, "the Envoy config of proxy %s is invalid: %s", v.Proxy.ID(), problem)
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
		d := p.Report(pol.Object, nil, "%s %s/%s applies to %d of the proxies built, but meshc does not build %s",
			pol.Object.Kind, pol.Object.Namespace, pol.Object.Name, len(ids), pol.Omits)
		d.Proxies = ids
	}
}}
