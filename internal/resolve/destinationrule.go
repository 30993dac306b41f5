package resolve

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// Rule is a consolidated DestinationRule: one or more DRs for the same host
// merged as istiod merges them (docs/semantics/destination-rules.md §5.3). It carries the identity of
// the first.
type Rule struct {
	Host host.Name
	// From lists every DR merged into this rule, first (oldest) first.
	From []*model.DestinationRule
	// Selector is the workload selector's labels; nil for none.
	Selector map[string]string
	Subsets  []*networking.Subset
	// TrafficPolicy is the first contributor's that has one.
	TrafficPolicy *networking.TrafficPolicy
	// PolicyFrom is the DR whose trafficPolicy is used.
	PolicyFrom *model.DestinationRule
	// Dropped records what merging lost: later trafficPolicies and
	// duplicate subsets.
	Dropped []MergeLoss
	exports drExport
}

// MergeLoss is a part of a DR that a merge discarded.
type MergeLoss struct {
	From *model.DestinationRule
	// Subset is the duplicate subset name; empty when the loss is the
	// whole trafficPolicy.
	Subset string
	// Kept is the DR whose definition stayed.
	Kept *model.DestinationRule
}

// Namespace is the namespace of the rule (its first DR's).
func (r *Rule) Namespace() string { return r.From[0].Namespace }

// First is the DR that names the rule.
func (r *Rule) First() *model.DestinationRule { return r.From[0] }

// HasSubset reports whether the rule defines a subset.
func (r *Rule) HasSubset(name string) bool {
	return slices.ContainsFunc(r.Subsets, func(s *networking.Subset) bool { return s.GetName() == name })
}

// drExport is a DR's literal exportTo as a set; "." stays "." (docs/semantics/destination-rules.md
// §5.1), and a workload-selector DR counts as {"."}.
type drExport map[string]bool

func (e drExport) equal(o drExport) bool { return maps.Equal(e, o) }

func (e drExport) superset(o drExport) bool {
	for k := range o {
		if !e[k] {
			return false
		}
	}
	return true
}

// drIndex maps host strings to the consolidated rules for them, in merge
// order, with a host index for most-specific lookups.
type drIndex struct {
	rules map[host.Name][]*Rule
	keys  *host.Index
}

func (x *drIndex) lookup(h host.Name) (host.Name, []*Rule, bool) {
	if x == nil || x.keys == nil {
		return "", nil, false
	}
	k, ok := x.keys.Lookup(h)
	if !ok {
		return "", nil, false
	}
	return k, x.rules[k], true
}

// drIndexes are istiod's three DR indexes (docs/semantics/destination-rules.md §5.2).
type drIndexes struct {
	local     map[string]*drIndex
	exported  map[string]*drIndex
	rootLocal *drIndex
	rootNs    string
}

func buildDRIndexes(drs []*model.DestinationRule, rootNs, domain string, meshDefault []string) *drIndexes {
	sorted := slices.Clone(drs)
	slices.SortStableFunc(sorted, func(a, b *model.DestinationRule) int {
		return selectorsFirst(a.Spec.GetWorkloadSelector() != nil, b.Spec.GetWorkloadSelector() != nil, &a.ObjectMeta, &b.ObjectMeta)
	})
	defaultPrivate := slices.Contains(meshDefault, ".")
	lists := struct {
		local, exported map[string]map[host.Name][]*Rule
	}{map[string]map[host.Name][]*Rule{}, map[string]map[host.Name][]*Rule{}}
	rootLocal := map[host.Name][]*Rule{}
	offer := func(m map[string]map[host.Name][]*Rule, ns string, dr *model.DestinationRule, h host.Name, e drExport) {
		if m[ns] == nil {
			m[ns] = map[host.Name][]*Rule{}
		}
		m[ns][h] = mergeRule(m[ns][h], dr, h, e)
	}
	for _, dr := range sorted {
		ns := dr.Namespace
		h := host.FQDN(dr.Spec.GetHost(), ns, domain)
		e := drExport{}
		if dr.Spec.GetWorkloadSelector() != nil {
			e["."] = true
		} else {
			for _, x := range dr.Spec.GetExportTo() {
				e[x] = true
			}
		}
		if len(e) == 0 || e["*"] || e["."] || e[ns] {
			offer(lists.local, ns, dr, h, e)
		}
		privateOnly := (len(e) == 0 && defaultPrivate) || (len(e) == 1 && (e["."] || e[ns]))
		if !privateOnly {
			offer(lists.exported, ns, dr, h, e)
		} else if ns == rootNs {
			rootLocal[h] = mergeRule(rootLocal[h], dr, h, e)
		}
	}
	idx := &drIndexes{local: map[string]*drIndex{}, exported: map[string]*drIndex{}, rootNs: rootNs}
	for ns, m := range lists.local {
		idx.local[ns] = newDRIndex(m)
	}
	for ns, m := range lists.exported {
		idx.exported[ns] = newDRIndex(m)
	}
	idx.rootLocal = newDRIndex(rootLocal)
	return idx
}

func newDRIndex(m map[host.Name][]*Rule) *drIndex {
	keys := make([]host.Name, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return &drIndex{rules: m, keys: host.NewIndex(keys)}
}

// mergeRule offers dr to the list of rules for one host key (docs/semantics/destination-rules.md
// §5.3), reproducing istiod's loop, including that whether dr is also kept
// on its own is decided by the last entry examined (Q21).
func mergeRule(list []*Rule, dr *model.DestinationRule, h host.Name, e drExport) []*Rule {
	sel := dr.Spec.GetWorkloadSelector().GetMatchLabels()
	if dr.Spec.GetWorkloadSelector() == nil {
		sel = nil
	}
	if len(list) == 0 {
		return []*Rule{newRule(dr, h, e, sel)}
	}
	appendNew := true
	for _, r := range list {
		switch {
		case e.equal(r.exports):
			appendNew = false
		case len(r.exports) > 0 && e.superset(r.exports):
			appendNew = true
		default:
			appendNew = true
			continue
		}
		hasSel, rHasSel := dr.Spec.GetWorkloadSelector() != nil, r.Selector != nil
		if hasSel && rHasSel && !maps.Equal(sel, r.Selector) {
			appendNew = true
			continue
		}
		if (!hasSel && !rHasSel) || (hasSel && rHasSel) {
			appendNew = false
		}
		r.merge(dr)
	}
	if appendNew {
		list = append(list, newRule(dr, h, e, sel))
	}
	return list
}

func newRule(dr *model.DestinationRule, h host.Name, e drExport, sel map[string]string) *Rule {
	r := &Rule{Host: h, From: []*model.DestinationRule{dr}, Selector: sel, exports: e,
		Subsets: slices.Clone(dr.Spec.GetSubsets()), TrafficPolicy: dr.Spec.GetTrafficPolicy()}
	if r.TrafficPolicy != nil {
		r.PolicyFrom = dr
	}
	if dr.Spec.GetWorkloadSelector() != nil && sel == nil {
		r.Selector = map[string]string{} // an empty selector still selects
	}
	return r
}

func (r *Rule) merge(dr *model.DestinationRule) {
	r.From = append(r.From, dr)
	for _, s := range dr.Spec.GetSubsets() {
		if r.HasSubset(s.GetName()) {
			kept := r.subsetOwner(s.GetName())
			r.Dropped = append(r.Dropped, MergeLoss{From: dr, Subset: s.GetName(), Kept: kept})
			continue
		}
		r.Subsets = append(r.Subsets, s)
	}
	switch incoming := dr.Spec.GetTrafficPolicy(); {
	case incoming == nil:
	case backendPolicyRule(dr) != backendPolicyRule(r.From[0]):
		// A rule written by hand and one generated from a backend
		// policy: the written one's fields win, whichever came first.
		user, backend := r.TrafficPolicy, incoming
		if !backendPolicyRule(dr) {
			user, backend = incoming, r.TrafficPolicy
			r.PolicyFrom = dr
		} else if user == nil {
			r.PolicyFrom = dr
		}
		r.TrafficPolicy = underBackendPolicy(user, backend)
	case r.TrafficPolicy == nil:
		r.TrafficPolicy, r.PolicyFrom = incoming, dr
	default:
		r.Dropped = append(r.Dropped, MergeLoss{From: dr, Kept: r.PolicyFrom})
	}
}

// backendPolicyRule reports whether a DestinationRule is one istiod
// generates from Gateway API backend policies (BackendTLSPolicy), which
// carry the internal parents annotation users cannot set
// (docs/semantics/gateway-api.md §G8).
func backendPolicyRule(dr *model.DestinationRule) bool {
	_, ok := dr.Annotations[model.AnnotationParents]
	return ok
}

// underBackendPolicy is a written traffic policy with a generated one
// filling the fields it leaves unset, port by port too.
func underBackendPolicy(user, backend *networking.TrafficPolicy) *networking.TrafficPolicy {
	if user == nil {
		return backend
	}
	if backend == nil {
		return user
	}
	out := &networking.TrafficPolicy{
		ConnectionPool:   cmp.Or(user.GetConnectionPool(), backend.GetConnectionPool()),
		OutlierDetection: cmp.Or(user.GetOutlierDetection(), backend.GetOutlierDetection()),
		LoadBalancer:     cmp.Or(user.GetLoadBalancer(), backend.GetLoadBalancer()),
		Tls:              cmp.Or(user.GetTls(), backend.GetTls()),
		Tunnel:           cmp.Or(user.GetTunnel(), backend.GetTunnel()),
		ProxyProtocol:    cmp.Or(user.GetProxyProtocol(), backend.GetProxyProtocol()),
		RetryBudget:      cmp.Or(user.GetRetryBudget(), backend.GetRetryBudget()),
	}
	out.PortLevelSettings = slices.Clone(user.GetPortLevelSettings())
	for _, bp := range backend.GetPortLevelSettings() {
		i := slices.IndexFunc(out.PortLevelSettings, func(up *networking.TrafficPolicy_PortTrafficPolicy) bool {
			return up.GetPort().GetNumber() == bp.GetPort().GetNumber()
		})
		if i < 0 {
			out.PortLevelSettings = append(out.PortLevelSettings, bp)
			continue
		}
		up := proto.Clone(out.PortLevelSettings[i]).(*networking.TrafficPolicy_PortTrafficPolicy)
		up.LoadBalancer = cmp.Or(up.GetLoadBalancer(), bp.GetLoadBalancer())
		up.ConnectionPool = cmp.Or(up.GetConnectionPool(), bp.GetConnectionPool())
		up.OutlierDetection = cmp.Or(up.GetOutlierDetection(), bp.GetOutlierDetection())
		up.Tls = cmp.Or(up.GetTls(), bp.GetTls())
		out.PortLevelSettings[i] = up
	}
	return out
}

func (r *Rule) subsetOwner(name string) *model.DestinationRule {
	for _, dr := range r.From {
		for _, s := range dr.Spec.GetSubsets() {
			if s.GetName() == name {
				return dr
			}
		}
	}
	return r.From[0]
}

// LookupStep names the step of docs/semantics/destination-rules.md §5.4 that found a proxy's rules.
type LookupStep int

const (
	StepNone          LookupStep = iota
	StepProxyNs                  // 1: the client's own namespace
	StepRootPrivate              // 1 for root-namespace proxies: private root DRs
	StepServiceNs                // 3: exported from the service's namespace
	StepRootNamespace            // 4: exported from the root namespace
)

func (s LookupStep) String() string {
	return [...]string{"none", "proxy namespace", "root namespace (private)", "service namespace", "root namespace"}[s]
}

// DRLookup is the result of the namespace-level lookup for (proxy
// namespace, service): the rules returned and where they came from.
type DRLookup struct {
	Step LookupStep
	// Key is the host key matched (the DR host, maybe a wildcard).
	Key   host.Name
	Rules []*Rule
}

// lookup is docs/semantics/destination-rules.md §5.4 for proxies in proxyNs and service s.
func (idx *drIndexes) lookup(proxyNs string, h host.Name, svcNs string) DRLookup {
	if proxyNs != idx.rootNs {
		if k, rules, ok := idx.local[proxyNs].lookup(h); ok {
			return DRLookup{StepProxyNs, k, rules}
		}
	} else if k, rules, ok := idx.rootLocal.lookup(h); ok {
		return DRLookup{StepRootPrivate, k, rules}
	}
	for _, step := range []struct {
		ns   string
		step LookupStep
	}{{svcNs, StepServiceNs}, {idx.rootNs, StepRootNamespace}} {
		k, rules, ok := idx.exported[step.ns].lookup(h)
		if !ok {
			continue
		}
		var out []*Rule
		for _, r := range rules {
			if len(r.exports) == 0 || r.exports["*"] || r.exports[proxyNs] {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			return DRLookup{step.step, k, out}
		}
	}
	return DRLookup{}
}

// RuleFor chooses one rule for a proxy from a lookup (docs/semantics/destination-rules.md §5.5): the
// first selector rule in the proxy's namespace matching its labels, else
// the last selector-less rule.
func (l DRLookup) RuleFor(p *Proxy) *Rule {
	var catchAll *Rule
	for _, r := range l.Rules {
		if r.Selector == nil {
			catchAll = r
			continue
		}
		if r.Namespace() == p.Namespace && LabelsMatch(r.Selector, p.Labels) {
			return r
		}
	}
	return catchAll
}

// DRDecision is the DestinationRule outcome for one service as seen from
// one scope: the lookup, the rule selector-less proxies use, and the DRs
// for the host that lose (docs/semantics/destination-rules.md §5.7).
type DRDecision struct {
	Service *Service
	Lookup  DRLookup
	// Rule is what proxies matched by no selector rule use; nil for none.
	Rule *Rule
	// Shadowed are DRs that cover the host and would be consulted by the
	// lookup, but lose to Rule.
	Shadowed []*model.DestinationRule
}

// drsByHost finds the DRs whose host covers a hostname.
type drsByHost struct {
	exact     map[host.Name][]*model.DestinationRule
	wildcards []*model.DestinationRule
	hostOf    map[*model.DestinationRule]host.Name
}

func newDRsByHost(drs []*model.DestinationRule, domain string) *drsByHost {
	x := &drsByHost{exact: map[host.Name][]*model.DestinationRule{}, hostOf: map[*model.DestinationRule]host.Name{}}
	for _, dr := range drs {
		h := host.FQDN(dr.Spec.GetHost(), dr.Namespace, domain)
		x.hostOf[dr] = h
		if h.IsWildcard() {
			x.wildcards = append(x.wildcards, dr)
		} else {
			x.exact[h] = append(x.exact[h], dr)
		}
	}
	return x
}

// covering returns the DRs for h; the result may share memory with x and
// is read-only.
func (x *drsByHost) covering(h host.Name) []*model.DestinationRule {
	// Clipped, so that appending a wildcard DR copies.
	out := slices.Clip(x.exact[h])
	for _, dr := range x.wildcards {
		if h.SubsetOf(x.hostOf[dr]) {
			out = append(out, dr)
		}
	}
	return out
}

// decide computes the DRDecision of service s for proxies in proxyNs.
func (idx *drIndexes) decide(byHost *drsByHost, proxyNs string, s *Service, meshDefault []string) DRDecision {
	d := DRDecision{Service: s, Lookup: idx.lookup(proxyNs, s.Host, s.Namespace)}
	for _, r := range d.Lookup.Rules {
		if r.Selector == nil {
			d.Rule = r
		}
	}
	defaultPrivate := slices.Contains(meshDefault, ".")
	for _, dr := range byHost.covering(s.Host) {
		if d.uses(dr) || dr.Spec.GetWorkloadSelector() != nil {
			continue
		}
		e := dr.Spec.GetExportTo()
		privateOnly := (len(e) == 0 && defaultPrivate) || (len(e) == 1 && (e[0] == "." || e[0] == dr.Namespace))
		visible := len(e) == 0 || slices.Contains(e, "*") || slices.Contains(e, proxyNs) ||
			(dr.Namespace == proxyNs && slices.Contains(e, "."))
		consulted := false
		switch {
		case dr.Namespace == proxyNs && proxyNs != idx.rootNs:
			consulted = len(e) == 0 || slices.Contains(e, "*") || slices.Contains(e, ".") || slices.Contains(e, proxyNs)
		case dr.Namespace == idx.rootNs && proxyNs == idx.rootNs && privateOnly:
			consulted = true
		case dr.Namespace == s.Namespace || dr.Namespace == idx.rootNs:
			consulted = !privateOnly && visible
		}
		if consulted {
			d.Shadowed = append(d.Shadowed, dr)
		}
	}
	return d
}

// drDecider makes decide's decisions for many scopes, sharing work
// between them. decide reads the proxy namespace only where it is the
// root namespace, and where a DR covering the service's hostname names it,
// as its namespace or in its export set (the local and exported rules
// found are such DRs' rules). Every other proxy namespace gets the same
// decision for a (hostname, namespace) pair, so that one is computed once.
// It is safe for concurrent use.
type drDecider struct {
	idx         *drIndexes
	byHost      *drsByHost
	meshDefault []string
	// nsIDs numbers the namespaces some decision reads.
	nsIDs map[string]int32
	pairs []drPair // by Service.key
}

// drPair is the shared work for one (hostname, namespace) pair.
type drPair struct {
	// named are the IDs of the namespaces decide reads for the hostname;
	// they get decisions of their own.
	named []int32
	// first is the pair's first service.
	first   *Service
	shared  sync.Once
	generic *DRDecision
}

func newDRDecider(idx *drIndexes, byHost *drsByHost, meshDefault []string, reg *registry) *drDecider {
	x := &drDecider{idx: idx, byHost: byHost, meshDefault: meshDefault, nsIDs: map[string]int32{}, pairs: make([]drPair, reg.keys)}
	for _, s := range reg.all {
		if p := &x.pairs[s.key]; p.named == nil {
			p.named, p.first = x.named(s.Host), s
		}
	}
	return x
}

// sharedJobs are n jobs that make, between them, every pair's decision
// shared by the namespaces no decision reads, ahead of the scopes that
// take them; none when "" is a name some decision reads (baseDecisions).
func (x *drDecider) sharedJobs(n int) []func() {
	if _, ok := x.nsIDs[""]; ok {
		return nil
	}
	var jobs []func()
	for part := range slices.Chunk(x.pairs, max(1, (len(x.pairs)+n-1)/n)) {
		jobs = append(jobs, func() {
			for i := range part {
				if s := part[i].first; s != nil {
					x.decision("", 0, false, s)
				}
			}
		})
	}
	return jobs
}

// named lists the namespaces decisions for h read: the root, those of the
// DRs covering h and in their exportTo, and "." (a selector DR's export
// set, which the exported lookup also compares with the proxy namespace).
func (x *drDecider) named(h host.Name) []int32 {
	out := []int32{x.nsID(x.idx.rootNs), x.nsID(".")}
	for _, dr := range x.byHost.covering(h) {
		out = append(out, x.nsID(dr.Namespace))
		for _, e := range dr.Spec.GetExportTo() {
			out = append(out, x.nsID(e))
		}
	}
	return out
}

func (x *drDecider) nsID(ns string) int32 {
	id, ok := x.nsIDs[ns]
	if !ok {
		id = int32(len(x.nsIDs))
		x.nsIDs[ns] = id
	}
	return id
}

// decisions are idx.decide's decisions for services seen from proxyNs,
// except that a decision may be shared: its Service is any service of the
// (hostname, namespace) pair. base is the list services start with, or
// nil: its services' decisions are copied from those shared by every
// namespace no decision reads, and made for proxyNs only where it is
// read.
func (x *drDecider) decisions(proxyNs string, services []*Service, base *scopeBase) []*DRDecision {
	id, named := x.nsIDs[proxyNs]
	out := make([]*DRDecision, len(services))
	from := 0
	if bd := x.baseDecisions(base); bd != nil {
		from = copy(out, bd.shared)
		for i, s := range services[:from] {
			if s.key != base.services[i].key {
				// Inference put another pair's service in the place.
				out[i] = x.decision(proxyNs, id, named, s)
			}
		}
		if named {
			for _, i := range bd.named[id] {
				if s := services[i]; s.key == base.services[i].key {
					out[i] = x.decision(proxyNs, id, named, s)
				}
			}
		}
	}
	for i, s := range services[from:] {
		out[from+i] = x.decision(proxyNs, id, named, s)
	}
	return out
}

// decision is idx.decide's decision for s seen from proxyNs, numbered id
// when named, shared with the other namespaces unless the decision reads
// proxyNs.
func (x *drDecider) decision(proxyNs string, id int32, named bool, s *Service) *DRDecision {
	p := &x.pairs[s.key]
	if named && slices.Contains(p.named, id) {
		d := x.idx.decide(x.byHost, proxyNs, s, x.meshDefault)
		return &d
	}
	p.shared.Do(func() {
		d := x.idx.decide(x.byHost, proxyNs, s, x.meshDefault)
		p.generic = &d
	})
	return p.generic
}

// baseDecisions are the decisions for the services of a scopeBase seen
// from a namespace no decision reads, and, by namespace ID, the positions
// of those whose decision reads the namespace.
type baseDecisions struct {
	shared []*DRDecision
	named  map[int32][]int
}

// baseDecisions are base's, nil for a nil base, or when "" is a name
// some decision reads: no namespace is named "", so it stands for the
// namespaces no decision reads.
func (x *drDecider) baseDecisions(base *scopeBase) *baseDecisions {
	if base == nil {
		return nil
	}
	if _, ok := x.nsIDs[""]; ok {
		return nil
	}
	return base.decisions.get(func() *baseDecisions {
		bd := &baseDecisions{shared: make([]*DRDecision, len(base.services)), named: map[int32][]int{}}
		for i, s := range base.services {
			bd.shared[i] = x.decision("", 0, false, s)
			for _, id := range x.pairs[s.key].named {
				bd.named[id] = append(bd.named[id], i)
			}
		}
		return bd
	})
}

// uses reports whether dr is merged into the decision's rule or into a
// selector rule of its lookup.
func (d *DRDecision) uses(dr *model.DestinationRule) bool {
	for _, r := range d.Lookup.Rules {
		if (r == d.Rule || r.Selector != nil) && slices.Contains(r.From, dr) {
			return true
		}
	}
	return false
}

// Rules lists every consolidated rule of every index, once.
func (idx *drIndexes) allRules() []*Rule {
	seen := map[*Rule]bool{}
	var out []*Rule
	collect := func(x *drIndex) {
		if x == nil {
			return
		}
		keys := make([]host.Name, 0, len(x.rules))
		for k := range x.rules {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, r := range x.rules[k] {
				if !seen[r] {
					seen[r] = true
					out = append(out, r)
				}
			}
		}
	}
	for _, m := range []map[string]*drIndex{idx.local, idx.exported} {
		nss := make([]string, 0, len(m))
		for ns := range m {
			nss = append(nss, ns)
		}
		slices.Sort(nss)
		for _, ns := range nss {
			collect(m[ns])
		}
	}
	collect(idx.rootLocal)
	return out
}
