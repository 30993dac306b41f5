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

// destinationRuleAnalyzers check DestinationRules (MC4xxx).
var destinationRuleAnalyzers = []*Analyzer{
	destinationRuleHostNotFound,
	unreachableDestinationRuleExport,
	selectorRuleDropsSubsets,
	subsetSelectsNoWorkload,
	noCACertificates,
	mtlsDisabledForStrictServer,
}

// kubeNamespace is Mesh.KubernetesNamespace for a DestinationRule host,
// which may be a wildcard: "*.NS.svc.<domain>" names NS too. It returns
// the host to ask the mesh about in place of h.
func kubeNamespace(m *resolve.Mesh, h host.Name) (ns string, name host.Name, ok bool) {
	name = h
	if h.IsWildcard() {
		name = "x" + h[1:] // any one name under the wildcard
	}
	ns, ok = m.KubernetesNamespace(name)
	return ns, name, ok
}

// repeatsSource reports whether dr is an HNC copy whose host expands as
// its source's does: the source's per-object findings speak for it.
func repeatsSource(dr *model.DestinationRule, domain string) bool {
	src := dr.InheritedFrom
	return src != nil && host.FQDN(dr.Spec.GetHost(), dr.Namespace, domain) == host.FQDN(dr.Spec.GetHost(), src.Namespace, domain)
}

// MC4004: a DestinationRule host that matches no service.
var destinationRuleHostNotFound = &Analyzer{Entry: diag.DestinationRuleHostNotFound, Requires: []*fact{factInWorkloads}, Run: func(p *Pass) {
	domain := p.Mesh.Config.DomainSuffix
	// The input speaks for a Kubernetes host when it carries services or
	// workloads of the namespace, or Mesh.Describes says the namespace does
	// not exist (and HNC does not create it either); for an external host
	// when it carries ServiceEntries at all.
	in := p.inWorkloads()
	entries := slices.ContainsFunc(p.Mesh.Services, func(s *resolve.Service) bool { return s.Registry == resolve.External })
	kubeNames, withServices := map[string]bool{}, map[string]bool{}
	for _, s := range p.Mesh.Services {
		withServices[s.Namespace] = true
		if s.Registry == resolve.Kubernetes {
			kubeNames[s.Name] = true
		}
	}
	for _, dr := range p.Mesh.DestinationRules {
		raw := dr.Spec.GetHost()
		h := host.FQDN(raw, dr.Namespace, domain)
		if h == "" || h == "*" || repeatsSource(dr, domain) {
			continue
		}
		// A short host naming a Service of another namespace, and a
		// "name.namespace" host whose .svc form is a service, are
		// MC3005's and MC3004's: one finding, which names the fix.
		if (!strings.Contains(raw, ".") && kubeNames[raw]) ||
			(strings.Contains(raw, ".") && len(p.Mesh.ServicesNamed(host.Name(raw+".svc."+domain))) > 0) {
			continue
		}
		if ns, name, kube := kubeNamespace(p.Mesh, h); kube {
			if !withServices[ns] && len(in.labels[ns]) == 0 && !p.Mesh.Describes(name) {
				continue
			}
		} else if !entries {
			continue
		}
		if len(p.Mesh.ServicesCovering(h)) > 0 {
			continue
		}
		why := "no Service or ServiceEntry has that hostname"
		switch {
		case h.IsWildcard():
			why = "no Service or ServiceEntry hostname falls under it"
		case strings.Count(string(h), ".") == 1:
			why += " (a name with one dot is not expanded: write the short name or the full name)"
		}
		p.Report(&dr.ObjectMeta, model.ParsePath("spec.host"), diag.RuleHostMatchesNothing,
			h, objName(&dr.ObjectMeta), why)
	}
}}

// MC4005: exportTo that no proxy outside the DR's namespace can use
// (docs/semantics/destination-rules.md §5.4: proxies in Y consult a DR of
// X ≠ Y only when X hosts the service or is the root namespace).
var unreachableDestinationRuleExport = &Analyzer{Entry: diag.UnreachableDestinationRuleExport, Run: func(p *Pass) {
	domain, root := p.Mesh.Config.DomainSuffix, p.Mesh.Config.RootNamespace
	carried := map[string]bool{}
	for _, s := range p.Mesh.Services {
		carried[s.Namespace] = true
	}
	for _, dr := range p.Mesh.DestinationRules {
		ns := dr.Namespace
		// An HNC copy's exportTo is its source's, which users wrote for
		// the source's namespace; the source is judged.
		if ns == root || dr.InheritedFrom != nil {
			continue
		}
		var lost []string
		own, all := false, false // local to its namespace; exported to "*"
		for _, e := range dr.Spec.GetExportTo() {
			switch e {
			case ".", ns:
				own = true
			case "*":
				own, all = true, true
			default:
				lost = append(lost, e)
			}
		}
		if len(lost) == 0 && !all {
			continue
		}
		slices.Sort(lost)
		lost = slices.Compact(lost)
		what := fmt.Sprintf("%s %s", plural(len(lost), "namespace", "namespaces"), list(lost, 8))
		if all {
			what = "all other namespaces"
		}
		if dr.Spec.GetWorkloadSelector() != nil {
			// A selector DR's export set is {"."} (§5.1).
			p.Report(&dr.ObjectMeta, model.ParsePath("spec.exportTo"), diag.SelectorRuleExported,
				objName(&dr.ObjectMeta), what, ns)
			continue
		}
		h := host.FQDN(dr.Spec.GetHost(), ns, domain)
		var homes []string // the namespaces of the services h names
		if svcNs, _, kube := kubeNamespace(p.Mesh, h); kube {
			homes = []string{svcNs}
		} else {
			if h.IsWildcard() && !carried[ns] {
				continue // services of ns under h may lie outside the input
			}
			for _, s := range p.Mesh.ServicesCovering(h) {
				homes = append(homes, s.Namespace)
			}
			slices.Sort(homes)
			homes = slices.Compact(homes)
		}
		if len(homes) == 0 || slices.Contains(homes, ns) {
			continue
		}
		users := "only proxies in " + ns + " use it"
		if !own {
			users = "and its exportTo leaves out its own namespace " + ns + ", so no proxy uses it at all"
		}
		p.Report(&dr.ObjectMeta, model.ParsePath("spec.exportTo"), diag.ExportNeverConsulted,
			objName(&dr.ObjectMeta), what, h, list(homes, 4), plural(len(homes), "service is", "services are"), root, users, plural(len(homes), homes[0], "one of those"))
	}
}}

// MC4006: a selector DR replaces, for the workloads it selects, a plain DR
// whose subsets were not merged into it (docs/semantics/destination-rules.md
// §5.3, §5.5).
var selectorRuleDropsSubsets = &Analyzer{Entry: diag.SelectorRuleDropsSubsets, Run: func(p *Pass) {
	type key struct{ selected, plain *resolve.Rule }
	found := map[key][]*resolve.Proxy{}
	var order []key
	for _, sc := range p.Mesh.Scopes {
		for _, dec := range sc.DestinationRules() {
			plain := dec.Rule
			if plain == nil || len(plain.Subsets) == 0 || !slices.ContainsFunc(dec.Lookup.Rules, func(r *resolve.Rule) bool { return r.Selector != nil }) {
				continue
			}
			for _, px := range sc.Proxies {
				r := dec.Lookup.RuleFor(px)
				if r == nil || r == plain || len(missingSubsets(r, plain)) == 0 {
					continue
				}
				k := key{r, plain}
				if _, ok := found[k]; !ok {
					order = append(order, k)
				}
				found[k] = append(found[k], px)
			}
		}
	}
	for _, k := range order {
		sel, plain := k.selected.First(), k.plain.First()
		missing := missingSubsets(k.selected, k.plain)
		ids := proxyIDs(found[k])
		d := p.Report(&sel.ObjectMeta, model.ParsePath("spec.workloadSelector"), diag.SelectorRuleLacksSubsets,
			objName(&sel.ObjectMeta), objName(&plain.ObjectMeta), plural(len(ids), "workload ", "workloads ")+list(ids, 5), plural(len(missing), "subset ", "subsets ")+list(missing, 8),
			k.plain.Host, plural(len(ids), "this workload", "these workloads"), plural(len(missing), "it", "them"),
			plural(len(missing), "subset", "subsets"))
		d.Related = append(d.Related, related(&plain.ObjectMeta, "defines the subsets; used by workloads the selector does not match"))
		d.Proxies = ids
	}
}}

// missingSubsets names the subsets of plain that r lacks, in plain's order.
func missingSubsets(r, plain *resolve.Rule) []string {
	var out []string
	for _, s := range plain.Subsets {
		if !r.HasSubset(s.GetName()) {
			out = append(out, fmt.Sprintf("%q", s.GetName()))
		}
	}
	return out
}

// MC4007: a subset whose labels select none of the service's workloads.
// Workloads are read from the input, not from the service's endpoints: a
// Pod whose manifest has no IP makes no endpoint, but it shows the labels.
var subsetSelectsNoWorkload = &Analyzer{Entry: diag.SubsetSelectsNoWorkload, Requires: []*fact{factInWorkloads}, Run: func(p *Pass) {
	domain := p.Mesh.Config.DomainSuffix
	in := p.inWorkloads()
	byLabel := labelIndex{in: in}
	for _, dr := range p.Mesh.DestinationRules {
		h := host.FQDN(dr.Spec.GetHost(), dr.Namespace, domain)
		if len(dr.Spec.GetSubsets()) == 0 || h.IsWildcard() || repeatsSource(dr, domain) {
			continue
		}
		// Kubernetes services only: a ServiceEntry's endpoints may be
		// addresses without workloads, and their labels say nothing.
		var svc *resolve.Service
		var selected []map[string]string
		for _, s := range p.Mesh.ServicesNamed(h) {
			if s.Registry != resolve.Kubernetes || len(s.Selector) == 0 {
				continue
			}
			if ls := byLabel.selected(s.Namespace, s.Selector); len(ls) > 0 {
				svc = s
				selected = append(selected, ls...)
			}
		}
		if svc == nil {
			continue // no workloads of the service in the input
		}
		var empty []int         // the subsets that select nothing, by index
		var judged [4][2]string // room for a subset's judged labels
		for i, sub := range dr.Spec.GetSubsets() {
			if labels := judgedLabels(judged[:0], sub.GetLabels()); len(labels) > 0 && !selectsAny(labels, selected) {
				empty = append(empty, i)
			}
		}
		if len(empty) == 0 {
			continue
		}
		subs := dr.Spec.GetSubsets()
		first := subs[empty[0]]
		path := model.ParsePath(fmt.Sprintf("spec.subsets[%d].labels", empty[0]))
		var d *diag.Diagnostic
		if len(empty) == 1 {
			d = p.Report(&dr.ObjectMeta, path, diag.SubsetEmpty,
				first.GetName(), objName(&dr.ObjectMeta), svc.Host, labelList(svc.Selector), labelList(first.GetLabels()), labelValues(first.GetLabels(), selected))
		} else {
			// One finding per rule, however many subsets: the first few
			// named with their labels, the rest counted.
			var named []string
			keys := map[string]string{} // the named subsets' label keys
			for n, i := range empty {
				named = append(named, fmt.Sprintf("%q %s", subs[i].GetName(), labelList(subs[i].GetLabels())))
				if n < subsetsNamed {
					maps.Copy(keys, subs[i].GetLabels())
				}
			}
			d = p.Report(&dr.ObjectMeta, path, diag.SubsetsEmpty,
				len(empty), objName(&dr.ObjectMeta), svc.Host, labelList(svc.Selector), list(named, subsetsNamed), labelValues(keys, selected))
		}
		d.Related = append(d.Related, related(svc.Object, "the service whose workloads the %s from", plural(len(empty), "subset selects", "subsets select")))
	}
}}

// subsetsNamed bounds the subsets one MC4007 finding names; the others
// are counted, so a rule with a thousand empty subsets stays one line.
const subsetsNamed = 5

// inputWorkloads index the workloads of the input by namespace: the pod
// labels of every Pod, workload template and WorkloadEntry, and the
// proxies.
type inputWorkloads struct {
	labels  map[string][]map[string]string
	proxies map[string][]*resolve.Proxy
}

func newInputWorkloads(m *resolve.Mesh, byNs map[string][]inputWorkload) *inputWorkloads {
	in := &inputWorkloads{labels: map[string][]map[string]string{}, proxies: map[string][]*resolve.Proxy{}}
	for ns, ws := range byNs {
		for _, w := range ws {
			in.labels[ns] = append(in.labels[ns], w.labels)
		}
	}
	for _, px := range m.Proxies {
		in.proxies[px.Namespace] = append(in.proxies[px.Namespace], px)
	}
	return in
}

// selects reports whether the input holds a workload svc selects.
func (in *inputWorkloads) selects(svc *resolve.Service) bool {
	return len(svc.Selector) > 0 && slices.ContainsFunc(in.labels[svc.Namespace], func(l map[string]string) bool { return resolve.LabelsMatch(svc.Selector, l) })
}

// labelIndex finds the workloads a selector may select without testing
// every workload of the namespace: it indexes a namespace's workload
// labels by the value of one label key, when a selector first asks for
// that key.
type labelIndex struct {
	in    *inputWorkloads
	byKey map[[2]string]map[string][]map[string]string // namespace and key → value → labels
}

// selected returns, in input order, the labels of ns's workloads that
// selector (not empty) selects. They are among those carrying the value
// selector gives one of its keys, any one: all of those when it has no
// other key.
func (x *labelIndex) selected(ns string, selector map[string]string) []map[string]string {
	key := ""
	for k := range selector {
		key = k
		break
	}
	if x.byKey == nil {
		x.byKey = map[[2]string]map[string][]map[string]string{}
	}
	idx, ok := x.byKey[[2]string{ns, key}]
	if !ok {
		idx = map[string][]map[string]string{}
		for _, l := range x.in.labels[ns] {
			if v, ok := l[key]; ok {
				idx[v] = append(idx[v], l)
			}
		}
		x.byKey[[2]string{ns, key}] = idx
	}
	ls := idx[selector[key]]
	if len(selector) == 1 {
		return ls
	}
	var out []map[string]string
	for _, l := range ls {
		if resolve.LabelsMatch(selector, l) {
			out = append(out, l)
		}
	}
	return out
}

// judgedLabels appends to out a subset's labels other than those the
// cluster adds, which the manifests do not show (an empty value is never
// the cluster's).
func judgedLabels(out [][2]string, subset map[string]string) [][2]string {
	for k, v := range subset {
		if v == "" || !clusterLabels[k] {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// selectsAny reports whether some workload's labels carry all of labels.
func selectsAny(labels [][2]string, workloads []map[string]string) bool {
	for _, l := range workloads {
		all := true
		for _, kv := range labels {
			if v, ok := l[kv[0]]; !ok || v != kv[1] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// clusterLabels are the labels istiod adds to an endpoint from the
// cluster (its node's locality, the node, cluster and network), which the
// manifests do not show; it never adds an empty value.
var clusterLabels = map[string]bool{
	"topology.kubernetes.io/region": true,
	"topology.kubernetes.io/zone":   true,
	"topology.istio.io/subzone":     true,
	"topology.istio.io/cluster":     true,
	"topology.istio.io/network":     true,
	"kubernetes.io/hostname":        true,
}

// labelList renders labels as {k: v, ...}, sorted by key.
func labelList(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		if v == "" {
			v = `""`
		}
		parts = append(parts, k+": "+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// labelValues says which values the workloads carry for the keys of want.
func labelValues(want map[string]string, workloads []map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		var vals []string
		for _, l := range workloads {
			if v, ok := l[k]; ok {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		vals = slices.Compact(vals)
		if len(vals) == 0 {
			parts = append(parts, "no "+k+" label")
			continue
		}
		parts = append(parts, k+": "+list(vals, 6))
	}
	return strings.Join(parts, "; ")
}

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
			if dec, ok := sc.DestinationRuleOf(dest); ok {
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
