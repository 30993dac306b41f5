package lint

import (
	"fmt"
	"maps"
	"slices"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// MC6003: a Sidecar egress host that imports no service. Judged only
// when the input holds services of the namespace the entry means (any
// namespace, for "*/"): a repository may keep a namespace's Services
// elsewhere, and then an entry naming them is no mistake we can see.
var egressHostMatchesNothing = &Analyzer{Entry: diag.EgressHostMatchesNothing, Run: func(p *Pass) {
	for _, e := range p.Mesh.EgressHosts() {
		if !e.Judged || e.Imported > 0 {
			continue
		}
		sc := &e.Sidecar.ObjectMeta
		raw := e.Sidecar.Spec.GetEgress()[e.Listener].GetHosts()[e.Index]
		where := "namespace " + e.Namespace
		if e.Namespace == "*" {
			where = "any namespace"
		}
		var why string
		var others []*resolve.Service
		switch {
		case len(e.Hidden) > 0:
			why, others = fmt.Sprintf("the services it names are not exported to namespace %s", sc.Namespace), e.Hidden
		case len(e.OffPort) > 0:
			why, others = fmt.Sprintf("the services it names lack the egress listener's port %d", e.Sidecar.Spec.GetEgress()[e.Listener].GetPort().GetNumber()), e.OffPort
		default:
			why = fmt.Sprintf("no Service or ServiceEntry in %s has a host matching %s", where, e.Host)
		}
		d := p.Report(sc, model.ParsePath(fmt.Sprintf("spec.egress[%d].hosts[%d]", e.Listener, e.Index)), diag.EgressHostImportsNothing,
			raw, objName(sc), why)
		for _, s := range others {
			d.Related = append(d.Related, related(s.Object, "named by the egress host but not imported"))
		}
	}
}}

// MC6001: several selector-less Sidecars in one namespace.
var multipleDefaultSidecars = &Analyzer{Entry: diag.MultipleDefaultSidecars, Run: func(p *Pass) {
	nss := make([]string, 0, len(p.Mesh.Sidecars))
	for ns := range p.Mesh.Sidecars {
		nss = append(nss, ns)
	}
	slices.Sort(nss)
	for _, ns := range nss {
		var defaults []*model.Sidecar
		for _, sc := range p.Mesh.Sidecars[ns] {
			// An inherited copy next to a local default is MC2006's.
			if sc.Spec.GetWorkloadSelector() == nil && sc.InheritedFrom == nil {
				defaults = append(defaults, sc)
			}
		}
		for _, sc := range defaults[min(1, len(defaults)):] {
			d := p.Report(&sc.ObjectMeta, nil, diag.SecondDefaultSidecar,
				ns, defaults[0].Name, sc.Name)
			d.Related = append(d.Related, related(&defaults[0].ObjectMeta, "the namespace default in effect"))
		}
	}
}}

// MC6002: several Sidecars select one workload. The workloads are the
// proxies, and in namespaces whose proxies the input does not show (a
// stand-in's) every workload of the input there, as istiod would see them
// once injected.
var conflictingSidecarSelectors = &Analyzer{Entry: diag.ConflictingSidecarSelectors, Requires: []*fact{factWorkloads}, Run: func(p *Pass) {
	type key struct{ winner, loser *model.Sidecar }
	found := map[key][]string{}
	var order []key
	check := func(ns, id string, labels map[string]string) {
		var winner *model.Sidecar
		for _, sc := range p.Mesh.Sidecars[ns] {
			sel := sc.Spec.GetWorkloadSelector()
			if sel == nil || !resolve.LabelsMatch(sel.GetLabels(), labels) {
				continue
			}
			if winner == nil {
				winner = sc
				continue
			}
			k := key{winner, sc}
			if _, ok := found[k]; !ok {
				order = append(order, k)
			}
			found[k] = append(found[k], id)
		}
	}
	for _, v := range p.Mesh.Views {
		if v.Proxy.Type == resolve.SidecarProxy {
			check(v.Proxy.Namespace, v.Proxy.ID(), v.Proxy.Labels)
		}
	}
	ws := p.workloads()
	for _, ns := range slices.Sorted(maps.Keys(standInNamespaces(p.Mesh))) {
		for _, w := range ws[ns] {
			check(ns, objName(w.obj), w.labels)
		}
	}
	for _, k := range order {
		ids := slices.Compact(slices.Sorted(slices.Values(found[k])))
		d := p.Report(&k.loser.ObjectMeta, model.ParsePath("spec.workloadSelector"), diag.SidecarsSelectSameWorkloads,
			objName(&k.winner.ObjectMeta), objName(&k.loser.ObjectMeta), plural(len(ids), "workload ", "workloads ")+list(ids, 5), k.winner.Name)
		d.Related = append(d.Related, related(&k.winner.ObjectMeta, "applies to these workloads"))
		d.Proxies = ids
	}
}}

// standInNamespaces are the namespaces judged through a stand-in proxy.
func standInNamespaces(m *resolve.Mesh) map[string]bool {
	out := map[string]bool{}
	for _, sc := range m.Scopes {
		for _, px := range sc.Proxies {
			if px.StandIn {
				out[px.Namespace] = true
			}
		}
	}
	return out
}
