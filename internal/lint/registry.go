package lint

import (
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// registryAnalyzers check the service registry, hosts, exportTo and ports (MC3xxx).
var registryAnalyzers = []*Analyzer{
	hiddenFromOwnNamespace,
	exportToUnknownNamespace,
	nonFQDNDottedHost,
	shortHostResolvesElsewhere,
	portNameWithoutProtocol,
	externalNamePortName,
	workloadPortProtocolConflict,
	workloadTargetPortConflict,
	serviceEntryProtocolConflict,
}

// MC3001: one hostname, services in several namespaces, one namespace wins.
var ambiguousHost = &Analyzer{Entry: diag.AmbiguousHost, Run: func(p *Pass) {
	type key struct {
		host   host.Name
		winner *model.ObjectMeta
	}
	type finding struct {
		choice  resolve.HostChoice
		proxies []*resolve.Proxy
	}
	var found groups[key, finding]
	for _, sc := range p.Mesh.Scopes {
		for _, hc := range sc.Ambiguous {
			k := key{hc.Host, hc.Winner.Object}
			f := found.add(k, func() finding { return finding{choice: hc} })
			f.proxies = append(f.proxies, sc.Proxies...)
		}
	}
	for _, k := range found.order {
		f := found.byKey[k]
		var losers []string
		seen := map[string]bool{}
		for _, l := range f.choice.Losers {
			if !seen[l.Namespace] {
				seen[l.Namespace] = true
				losers = append(losers, l.Namespace)
			}
		}
		d := p.Report(k.winner, nil, diag.AmbiguousHostChosen,
			k.host, f.choice.Winner.Namespace, strings.Join(losers, ", "), f.choice.TieBreak)
		for _, l := range f.choice.Losers {
			d.Related = append(d.Related, related(l.Object, "ignored for these proxies"))
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}
