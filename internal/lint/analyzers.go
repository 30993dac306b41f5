package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

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

// MC4001: a DR for a host loses the lookup for some proxy namespaces.
var shadowedDestinationRule = &Analyzer{Entry: diag.ShadowedDestinationRule, Run: func(p *Pass) {
	type key struct {
		shadowed, winner *model.DestinationRule
		step             resolve.LookupStep
	}
	found := map[key][]string{}
	var order []key
	for _, sc := range p.Mesh.Scopes {
		for _, d := range sc.DestinationRules() {
			var winner *model.DestinationRule
			if d.Rule != nil {
				winner = d.Rule.First()
			}
			for _, dr := range d.Shadowed {
				k := key{dr, winner, d.Lookup.Step}
				if _, ok := found[k]; !ok {
					order = append(order, k)
				}
				if !slices.Contains(found[k], sc.Namespace) {
					found[k] = append(found[k], sc.Namespace)
				}
			}
		}
	}
	for _, k := range order {
		nss := found[k]
		slices.Sort(nss)
		if k.winner == nil {
			p.Report(&k.shadowed.ObjectMeta, model.ParsePath("spec.host"), diag.ShadowedBySelectorRule,
				objName(&k.shadowed.ObjectMeta), plural(len(nss), "namespace ", "namespaces ")+list(nss, 8))
			continue
		}
		d := p.Report(&k.shadowed.ObjectMeta, model.ParsePath("spec.host"), diag.ShadowedBy,
			objName(&k.shadowed.ObjectMeta), plural(len(nss), "namespace ", "namespaces ")+list(nss, 8), objName(&k.winner.ObjectMeta), k.step)
		d.Related = append(d.Related, related(&k.winner.ObjectMeta, "chosen instead (%s)", k.step))
	}
}}

// MC4002: merging DRs for one host dropped a trafficPolicy or a subset.
var destinationRuleMergeConflict = &Analyzer{Entry: diag.DestinationRuleMergeConflict, Run: func(p *Pass) {
	type key struct {
		from   *model.DestinationRule
		subset string
	}
	seen := map[key]bool{}
	for _, r := range p.Mesh.Rules() {
		for _, loss := range r.Dropped {
			k := key{loss.From, loss.Subset}
			if seen[k] {
				continue
			}
			seen[k] = true
			if loss.Subset == "" {
				d := p.Report(&loss.From.ObjectMeta, model.ParsePath("spec.trafficPolicy"), diag.MergeDropsTrafficPolicy,
					objName(&loss.From.ObjectMeta), objName(&loss.Kept.ObjectMeta), r.Host)
				d.Related = append(d.Related, related(&loss.Kept.ObjectMeta, "its trafficPolicy is used"))
				continue
			}
			d := p.Report(&loss.From.ObjectMeta, model.ParsePath("spec.subsets"), diag.MergeDropsSubset,
				loss.Subset, objName(&loss.From.ObjectMeta), objName(&loss.Kept.ObjectMeta), r.Host)
			d.Related = append(d.Related, related(&loss.Kept.ObjectMeta, "its subset %q is used", loss.Subset))
		}
	}
}}

// MC4003: a route's subset is missing from the DR a proxy uses.
var unknownSubset = &Analyzer{Entry: diag.UnknownSubset, Run: func(p *Pass) {
	type key struct {
		vs   *resolve.VirtualService
		path string
		rule *resolve.Rule
	}
	type finding struct {
		dest    resolve.Destination
		step    resolve.LookupStep
		proxies []*resolve.Proxy
	}
	var found groups[key, finding]
	for _, sc := range p.Mesh.Scopes {
		sc.RoutedDestinations(func(dest *resolve.Destination) {
			if dest.Subset == "" {
				return
			}
			// The decision names the scope's service for the host. For a
			// service the input does not hold, the rules are looked up
			// by the host alone, as istiod would once the service exists.
			var l resolve.DRLookup
			var scopeRule *resolve.Rule
			if dec, ok := sc.DestinationRule(dest.Host); ok {
				l, scopeRule = dec.Lookup, dec.Rule
			} else if p.Mesh.Describes(dest.Host) {
				return // MC5002's business
			} else {
				l = p.Mesh.LookupDestinationRules(sc.Namespace, dest.Host)
				scopeRule = l.RuleFor(&resolve.Proxy{Namespace: sc.Namespace})
			}
			perProxy := slices.ContainsFunc(l.Rules, func(r *resolve.Rule) bool { return r.Selector != nil })
			if !perProxy && scopeRule != nil && scopeRule.HasSubset(dest.Subset) {
				return // every proxy of the scope uses a rule with the subset
			}
			for _, px := range sc.Proxies {
				rule := l.RuleFor(px) // the scope's rule unless a selector rule picks px
				if rule != nil && rule.HasSubset(dest.Subset) {
					continue
				}
				k := key{dest.In, dest.Path.String(), rule}
				f := found.add(k, func() finding { return finding{dest: *dest, step: l.Step} })
				f.proxies = append(f.proxies, px)
			}
		})
	}
	// A delegate no VirtualService names is judged from its namespace,
	// as istioctl judges every VirtualService.
	judged := map[delegateDest]bool{}
	for _, k := range found.order {
		judged[delegateDest{k.vs, k.path}] = true
	}
	ownDestinations(p.Mesh, func(vs *resolve.VirtualService, dest *resolve.Destination) {
		path := dest.Path.String()
		if !vs.Delegate || dest.Subset == "" || judged[delegateDest{vs, path}] {
			return
		}
		l := p.Mesh.LookupDestinationRules(vs.Namespace(), dest.Host)
		rule := l.RuleFor(&resolve.Proxy{Namespace: vs.Namespace()})
		if rule != nil && rule.HasSubset(dest.Subset) {
			return
		}
		found.add(key{vs, path, rule}, func() finding { return finding{dest: *dest, step: l.Step} })
	})
	for _, k := range found.order {
		f := found.byKey[k]
		vsMeta := &k.vs.Object.ObjectMeta
		who, uses := "these proxies", "these proxies use"
		switch len(proxyIDs(f.proxies)) {
		case 0:
			who, uses = "its namespace", "its namespace uses" // an unreferenced delegate
		case 1:
			who, uses = "this proxy", "this proxy uses"
		}
		var d *diag.Diagnostic
		if k.rule == nil {
			d = p.Report(vsMeta, f.dest.Path.Key("subset"), diag.SubsetWithoutRule,
				objName(vsMeta), f.dest.Subset, f.dest.Host, who)
		} else {
			first := &k.rule.First().ObjectMeta
			d = p.Report(vsMeta, f.dest.Path.Key("subset"), diag.SubsetNotInRule,
				objName(vsMeta), f.dest.Subset, f.dest.Host, uses, objName(first), f.step, subsetList(k.rule))
			d.Related = append(d.Related, related(first, "chosen for these proxies (%s)", f.step))
		}
		for _, dr := range p.Mesh.DestinationRules {
			if dr.Spec.GetWorkloadSelector() == nil && slices.ContainsFunc(dr.Spec.GetSubsets(), func(s *networking.Subset) bool { return s.GetName() == f.dest.Subset }) &&
				host.FQDN(dr.Spec.GetHost(), dr.Namespace, p.Mesh.Config.DomainSuffix).Matches(f.dest.Host) && (k.rule == nil || !slices.Contains(k.rule.From, dr)) {
				d.Related = append(d.Related, related(&dr.ObjectMeta, "defines subset %q but is not the rule these proxies use", f.dest.Subset))
			}
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}

func subsetList(r *resolve.Rule) string {
	if len(r.Subsets) == 0 {
		return "none"
	}
	var names []string
	for _, s := range r.Subsets {
		names = append(names, s.GetName())
	}
	return strings.Join(names, ", ")
}

// MC5001: several VirtualServices claim hosts for the same proxies. One
// finding per conflicting group (one winner, the same losers), listing
// its hosts, so N VirtualServices sharing N hosts make one finding, not
// N² (issue 14's performance case).
var virtualServiceHostConflict = &Analyzer{Entry: diag.VirtualServiceHostConflict, Run: func(p *Pass) {
	type group struct {
		winner  *resolve.VirtualService
		losers  []*resolve.VirtualService
		hosts   []host.Name
		proxies []*resolve.Proxy
		scopes  map[*resolve.Scope]bool
	}
	found := map[string]*group{}
	var order []string
	var key strings.Builder
	for _, sc := range p.Mesh.Scopes {
		for _, c := range sc.VirtualServices {
			if len(c.Losers) == 0 {
				continue
			}
			key.Reset()
			fmt.Fprintf(&key, "%p", c.Winner)
			for _, l := range c.Losers {
				fmt.Fprintf(&key, ",%p", l)
			}
			g := found[key.String()]
			if g == nil {
				g = &group{winner: c.Winner, losers: c.Losers, scopes: map[*resolve.Scope]bool{}}
				found[key.String()] = g
				order = append(order, key.String())
			}
			if !slices.Contains(g.hosts, c.Host) {
				g.hosts = append(g.hosts, c.Host)
			}
			if !g.scopes[sc] {
				g.scopes[sc] = true
				g.proxies = append(g.proxies, sc.Proxies...)
			}
		}
	}
	for _, k := range order {
		g := found[k]
		host.Sort(g.hosts)
		hosts := make([]string, len(g.hosts))
		for i, h := range g.hosts {
			hosts[i] = string(h)
		}
		lm, wm := &g.losers[0].Object.ObjectMeta, &g.winner.Object.ObjectMeta
		var d *diag.Diagnostic
		if len(g.losers) == 1 {
			d = p.Report(lm, model.ParsePath("spec.hosts"), diag.HostClaimedTwice,
				objName(lm), objName(wm), plural(len(hosts), "host ", "hosts ")+list(hosts, 5), plural(len(hosts), "it", "them"))
		} else {
			names := make([]string, len(g.losers))
			for i, l := range g.losers {
				names[i] = objName(&l.Object.ObjectMeta)
			}
			d = p.Report(lm, model.ParsePath("spec.hosts"), diag.HostClaimedByMany,
				len(g.losers)+1, plural(len(hosts), "host ", "hosts ")+list(hosts, 5), objName(wm), list(names, 5), plural(len(hosts), "it", "them"))
		}
		d.Related = append(d.Related, related(wm, "used for %s", plural(len(hosts), "this host", "these hosts")))
		for _, l := range g.losers[1:] {
			d.Related = append(d.Related, related(&l.Object.ObjectMeta, "also ignored"))
		}
		d.Proxies = proxyIDs(g.proxies)
	}
}}

// MC5002: a route destination is not a service the proxies can see.
var destinationHostNotFound = &Analyzer{Entry: diag.DestinationHostNotFound, Run: func(p *Pass) {
	type key struct {
		vs   *resolve.VirtualService
		path string
	}
	type finding struct {
		dest    resolve.Destination
		proxies []*resolve.Proxy
		hidden  []*resolve.Service
	}
	var found groups[key, finding]
	for _, sc := range p.Mesh.Scopes {
		sc.RoutedDestinations(func(dest *resolve.Destination) {
			if _, ok := sc.Service(dest.Host); ok || p.Mesh.Reachable(dest.Host, sc.Namespace) || !p.Mesh.Describes(dest.Host) {
				return
			}
			// A destination that exportTo hides from this namespace
			// matters only if its proxies can reach a host of the
			// VirtualService, which the input must then show.
			var caller *resolve.Scope
			if len(p.Mesh.ServicesNamed(dest.Host)) > 0 && sc.Namespace != dest.In.Namespace() {
				caller = sc
			}
			if !callable(p.Mesh, dest.In, caller) {
				return
			}
			k := key{dest.In, dest.Path.String()}
			f := found.add(k, func() finding { return finding{dest: *dest, hidden: p.Mesh.ServicesNamed(dest.Host)} })
			f.proxies = append(f.proxies, sc.Proxies...)
		})
	}
	// A delegate applies only through the VirtualServices that delegate
	// to it; one no other names is still judged, from its own namespace,
	// as istioctl judges every VirtualService.
	ownDestinations(p.Mesh, func(vs *resolve.VirtualService, dest *resolve.Destination) {
		if !vs.Delegate || p.Mesh.Reachable(dest.Host, vs.Namespace()) || !p.Mesh.Describes(dest.Host) {
			return
		}
		// A finding through the delegating VirtualServices stays.
		found.add(key{vs, dest.Path.String()}, func() finding { return finding{dest: *dest, hidden: p.Mesh.ServicesNamed(dest.Host)} })
	})
	for _, k := range found.order {
		f := found.byKey[k]
		vsMeta := &k.vs.Object.ObjectMeta
		why := "no Service or ServiceEntry has that host"
		if len(f.hidden) > 0 {
			why = "services with that host exist but their exportTo hides them"
		} else if strings.Count(string(f.dest.Host), ".") == 1 {
			why += " (a name with one dot is not expanded: write the short name or the full name)"
		}
		who := "these proxies"
		if len(f.proxies) == 0 {
			who = "its namespace" // an unreferenced delegate
		}
		d := p.Report(vsMeta, f.dest.Path.Key("host"), diag.DestinationUnreachable, objName(vsMeta), f.dest.Host, who, why)
		for _, s := range f.hidden {
			d.Related = append(d.Related, related(s.Object, "defines %s, not visible to these proxies", s.Host))
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}

// delegateDest is a destination of a VirtualService, by its field.
type delegateDest struct {
	vs   *resolve.VirtualService
	path string
}

// callable reports whether some host of vs can be called, so that its
// routes matter: not when every host is a Kubernetes service name that no
// Service defines, as no DNS name exists for it (a VirtualService for a
// short name in a namespace without that service). A name in a namespace
// whose Services the input does not hold counts as callable, unless sc is
// given: then only hosts the input shows proxies of sc can reach count.
// Delegates, wildcards and other hosts are callable.
func callable(m *resolve.Mesh, vs *resolve.VirtualService, sc *resolve.Scope) bool {
	if len(vs.Hosts) == 0 {
		return true
	}
	for _, h := range vs.Hosts {
		if _, kube := m.KubernetesNamespace(h); !kube {
			return true
		}
		if !m.Describes(h) {
			if sc == nil {
				return true
			}
			continue
		}
		if len(m.ServicesNamed(h)) == 0 {
			continue
		}
		if sc == nil {
			return true
		}
		if _, ok := sc.Service(h); ok || m.Reachable(h, sc.Namespace) {
			return true
		}
	}
	return false
}

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
