package resolve

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// SidecarChoice records which Sidecar resource shapes a proxy and why
// (docs/semantics/sidecar-scope.md §4.1).
type SidecarChoice struct {
	// Sidecar is nil for the built-in default (import everything).
	Sidecar *model.Sidecar
	// Reason is one of: "workload selector", "namespace default",
	// "root namespace default", "built-in default", "gateway".
	Reason string
	// Skipped lists the other Sidecars in the proxy's namespace that were
	// considered and why they lost.
	Skipped []SkippedSidecar
}

// SkippedSidecar is a Sidecar that did not apply to a proxy.
type SkippedSidecar struct {
	Sidecar *model.Sidecar
	Why     string
}

// sidecarIndex holds the Sidecars of each namespace in the order istiod
// tries them: with a selector first, then without, each oldest first.
type sidecarIndex map[string][]*model.Sidecar

func newSidecarIndex(sidecars []*model.Sidecar) sidecarIndex {
	idx := sidecarIndex{}
	for _, sc := range sidecars {
		idx[sc.Namespace] = append(idx[sc.Namespace], sc)
	}
	for _, list := range idx {
		slices.SortStableFunc(list, func(a, b *model.Sidecar) int {
			return selectorsFirst(a.Spec.GetWorkloadSelector() != nil, b.Spec.GetWorkloadSelector() != nil, &a.ObjectMeta, &b.ObjectMeta)
		})
	}
	return idx
}

// choose picks the Sidecar for a proxy.
func (idx sidecarIndex) choose(p *Proxy, rootNs string) SidecarChoice {
	if p.Type == RouterProxy {
		return SidecarChoice{Reason: "gateway"}
	}
	var c SidecarChoice
	for _, sc := range idx[p.Namespace] {
		sel := sc.Spec.GetWorkloadSelector()
		switch {
		case c.Sidecar != nil:
			c.Skipped = append(c.Skipped, SkippedSidecar{sc, "an earlier Sidecar already applies (" + c.Sidecar.Name + ")"})
		case sel != nil && !LabelsMatch(sel.GetLabels(), p.Labels):
			c.Skipped = append(c.Skipped, SkippedSidecar{sc, "its workloadSelector does not match the proxy's labels"})
		case sel != nil:
			c.Sidecar, c.Reason = sc, "workload selector"
		default:
			c.Sidecar, c.Reason = sc, "namespace default"
		}
	}
	if c.Sidecar != nil {
		return c
	}
	for _, sc := range idx[rootNs] {
		if sc.Spec.GetWorkloadSelector() == nil {
			c.Sidecar, c.Reason = sc, "root namespace default"
			return c
		}
	}
	c.Reason = "built-in default"
	return c
}

// hostClass is the egress hosts of one namespace key (docs/semantics/sidecar-scope.md §4.2).
type hostClass struct {
	exact    map[host.Name]string // host → the egress entry that named it
	all      []hostEntry
	excluded []hostEntry
}

type hostEntry struct {
	name  host.Name
	entry string // as written, e.g. "./*"
}

// matches reports whether h is imported, and by which entry.
func (c *hostClass) matches(h host.Name) (string, bool) {
	if c == nil {
		return "", false
	}
	if e, ok := c.exact[h]; ok {
		return e, true
	}
	for _, x := range c.all {
		if (h.IsWildcard() || x.name.IsWildcard()) && h.SubsetOf(x.name) {
			return x.entry, true
		}
	}
	return "", false
}

func (c *hostClass) excludes(h host.Name) (string, bool) {
	if c == nil {
		return "", false
	}
	for _, x := range c.excluded {
		if h.SubsetOf(x.name) {
			return x.entry, true
		}
	}
	return "", false
}

// vsMatches is the looser test for VirtualService hosts: overlap, not
// containment (docs/semantics/sidecar-scope.md §4.7).
func (c *hostClass) vsMatches(h host.Name) bool {
	if c == nil {
		return false
	}
	if _, ok := c.exact[h]; ok {
		return true
	}
	for _, x := range c.all {
		if (h.IsWildcard() || x.name.IsWildcard()) && h.Matches(x.name) {
			return true
		}
	}
	return false
}

// egressHosts is a parsed egress `hosts` list.
type egressHosts struct {
	byNs map[string]*hostClass // "*" for any namespace
	// allExact: every inclusion names a namespace and an exact host, so
	// istiod looks services up directly instead of scanning.
	allExact bool
	// ignored entries (no single "/") are reported, never used.
	ignored []string
}

func parseEgressHosts(entries []string, proxyNs string) egressHosts {
	e := egressHosts{byNs: map[string]*hostClass{}, allExact: true}
	class := func(ns string) *hostClass {
		c := e.byNs[ns]
		if c == nil {
			c = &hostClass{exact: map[host.Name]string{}}
			e.byNs[ns] = c
		}
		return c
	}
	included := false
	for _, raw := range entries {
		ns, dns, ok := strings.Cut(raw, "/")
		if !ok || strings.Contains(dns, "/") {
			e.ignored = append(e.ignored, raw)
			continue
		}
		name := host.Name(dns)
		if strings.HasPrefix(ns, "~") {
			ns = strings.TrimPrefix(ns, "~")
			if ns == "" {
				ns = "*"
			} else if ns == "." {
				ns = proxyNs
			}
			class(ns).excluded = append(class(ns).excluded, hostEntry{name, raw})
			continue
		}
		if ns == "." {
			ns = proxyNs
		}
		included = true
		c := class(ns)
		c.all = append(c.all, hostEntry{name, raw})
		if name.IsWildcard() || ns == "*" {
			e.allExact = false
		}
		if !name.IsWildcard() {
			if _, dup := c.exact[name]; !dup {
				c.exact[name] = raw
			}
		}
	}
	if !included {
		e.allExact = false
	}
	return e
}

// Import says why a service is in a proxy's scope.
type Import struct {
	Service *Service
	// Entry is the egress host that imported it, or "" for services
	// imported because a VirtualService routes to them.
	Entry string
	// ViaVirtualService names the VirtualService whose destination
	// brought the service in (docs/semantics/sidecar-scope.md §4.6), when Entry is "".
	ViaVirtualService *model.VirtualService
	// Port is the egress listener port that trimmed the service, if any.
	Port uint32
}

// HostChoice records a hostname visible from several namespaces and which
// namespace won (docs/semantics/sidecar-scope.md §4.4).
type HostChoice struct {
	Host     host.Name
	Winner   *Service
	Losers   []*Service
	TieBreak string
}

// EgressListener is one egress section of a Sidecar (or the implicit
// "*/*" one).
type EgressListener struct {
	Port *networking.SidecarPort
	Bind string
	// CaptureNone is captureMode NONE: the application dials the listener
	// itself, so it binds for real.
	CaptureNone bool
	Hosts       []string
	hosts       egressHosts
	Services    []*Service
	entries     []string // the egress host that imported each of Services
	// VirtualServices imported by the listener, in the order istiod
	// uses them (docs/semantics/sidecar-scope.md §4.7).
	VirtualServices []*VirtualService
}

// Scope is what a set of proxies sharing one Sidecar (or none) in one
// namespace can see. Proxies with the same scope share one value.
type Scope struct {
	Namespace string
	Choice    SidecarChoice
	Listeners []*EgressListener
	// Services is the merged list clusters are built from (docs/semantics/sidecar-scope.md §4.5).
	Services []*Service
	// imports explains each service of Services, by index.
	imports []Import
	// Ambiguous lists hostnames picked from several namespaces.
	Ambiguous []HostChoice
	// IgnoredHosts are egress entries istiod ignores (no single "/").
	IgnoredHosts []string
	// VirtualServices says, per host, which VirtualService is in force.
	VirtualServices []VSChoice
	// winners are the distinct winners of VirtualServices.
	winners []*VirtualService
	// drs is the DestinationRule decision of each service, by index.
	// Scopes share decisions, so their Service is the scope's own only
	// once DestinationRule has set it.
	drs []*DRDecision
	// Proxies that have this scope, sorted.
	Proxies []*Proxy
	// reg is the registry the scope imports from. slot indexes Services
	// by the registry's host IDs: index+1, 0 for a hostname not held.
	// Every service of a scope comes from reg, so one slice replaces a
	// per-scope map.
	reg  *registry
	slot []int32
	// base is the registry's everyScope when the scope's Services started
	// as its services, nil otherwise; onBase says Services and slot are
	// still base's.
	base   *scopeBase
	onBase bool
}

// Name names the scope for people: its Sidecar, or its namespace when no
// Sidecar applies.
func (sc *Scope) Name() string {
	if s := sc.Choice.Sidecar; s != nil {
		return "Sidecar " + s.Namespace + "/" + s.Name
	}
	return "namespace " + sc.Namespace + " (no Sidecar)"
}

// index returns the position in Services of the service for h.
func (sc *Scope) index(h host.Name) (int, bool) {
	id, ok := sc.reg.hostIDs[h]
	return sc.slotOf(id, ok)
}

// slotOf is index for the registry's host number id (ok false: a host no
// service has).
func (sc *Scope) slotOf(id int32, ok bool) (int, bool) {
	if !ok || sc.slot[id] == 0 {
		return 0, false
	}
	return int(sc.slot[id]) - 1, true
}

// Import says why the scope holds the service of a hostname.
func (sc *Scope) Import(h host.Name) (Import, bool) {
	i, ok := sc.index(h)
	if !ok {
		return Import{}, false
	}
	return sc.imports[i], true
}

// DestinationRule returns the DestinationRule decision for a hostname.
func (sc *Scope) DestinationRule(h host.Name) (DRDecision, bool) {
	return sc.decision(sc.index(h))
}

// DestinationRuleOf is DestinationRule for a VirtualService destination's
// host, which resolve has numbered: no hashing of the hostname.
func (sc *Scope) DestinationRuleOf(d *Destination) (DRDecision, bool) {
	return sc.decision(sc.slotOf(d.regID(sc.reg)))
}

// ServiceOf is Service for a VirtualService destination's host, which
// resolve has numbered: no hashing of the hostname.
func (sc *Scope) ServiceOf(d *Destination) (*Service, bool) {
	i, ok := sc.slotOf(d.regID(sc.reg))
	if !ok {
		return nil, false
	}
	return sc.Services[i], true
}

// decision is the DestinationRule decision for Services[i], if ok.
func (sc *Scope) decision(i int, ok bool) (DRDecision, bool) {
	if !ok || i >= len(sc.drs) {
		return DRDecision{}, false
	}
	d := *sc.drs[i]
	d.Service = sc.Services[i]
	return d, true
}

// DestinationRules yields each service of Services with its
// DestinationRule decision, in order: what DestinationRule returns for
// each, without looking hostnames up.
func (sc *Scope) DestinationRules() iter.Seq2[*Service, DRDecision] {
	return func(yield func(*Service, DRDecision) bool) {
		for i, s := range sc.Services {
			var d DRDecision
			if i < len(sc.drs) {
				d = *sc.drs[i]
				d.Service = s
			}
			if !yield(s, d) {
				return
			}
		}
	}
}

// Service returns the scope's service for a hostname.
func (sc *Scope) Service(h host.Name) (*Service, bool) {
	i, ok := sc.index(h)
	if !ok {
		return nil, false
	}
	return sc.Services[i], true
}

// buildScope computes the services and VirtualServices of each egress
// listener and the merged service list. vss may be nil (no
// VirtualServices).
func buildScope(reg *registry, vss *vsIndex, domain string, choice SidecarChoice, proxyNs string) *Scope {
	sc := &Scope{Namespace: proxyNs, Choice: choice, reg: reg}
	var egress []*networking.IstioEgressListener
	if choice.Sidecar != nil {
		egress = choice.Sidecar.Spec.GetEgress()
	}
	if len(egress) == 0 {
		egress = []*networking.IstioEgressListener{{Hosts: []string{"*/*"}}}
	}
	ambiguous := map[host.Name]bool{}
	imported := 0
	everything := false // a listener took reg.everything
	for _, eg := range egress {
		l := &EgressListener{Port: eg.GetPort(), Bind: eg.GetBind(), CaptureNone: eg.GetCaptureMode() == networking.CaptureMode_NONE,
			Hosts: eg.GetHosts(), hosts: parseEgressHosts(eg.GetHosts(), proxyNs)}
		sc.IgnoredHosts = append(sc.IgnoredHosts, l.hosts.ignored...)
		pick := func() listenerPick { return pickListener(reg, l, proxyNs) }
		var p listenerPick
		if _, all := l.hosts.importsAll(); all && l.Port == nil && reg.sharesEverything(proxyNs) {
			p, everything = reg.everything.get(pick), true
		} else {
			p = pick()
		}
		l.Services, l.entries = p.services, p.entries
		for _, hc := range p.choices {
			if !ambiguous[hc.Host] {
				ambiguous[hc.Host] = true
				sc.Ambiguous = append(sc.Ambiguous, hc)
			}
		}
		imported += len(l.Services)
		sc.Listeners = append(sc.Listeners, l)
	}
	// A scope of that one listener starts from the same merged list as
	// every other: made once, copied.
	based := everything && len(sc.Listeners) == 1
	if based {
		b := reg.everyScope.get(func() *scopeBase {
			s := newScopeBase(len(reg.hostIDs), imported)
			s.addListener(sc.Listeners[0])
			return &scopeBase{services: s.Services, imports: s.imports, slot: s.slot}
		})
		// The scope shares the list until it adds to it (add); imports
		// only grow, so at capacity they are shared until they do.
		sc.base, sc.onBase = b, true
		sc.Services, sc.imports, sc.slot = slices.Clip(b.services), slices.Clip(b.imports), b.slot
	} else {
		sc.slot = make([]int32, len(reg.hostIDs))
		sc.Services = make([]*Service, 0, imported)
		sc.imports = make([]Import, 0, imported)
	}
	sharedVS := false
	for _, l := range sc.Listeners {
		if !based {
			sc.addListener(l)
		}
		if vss != nil && choice.Reason != "gateway" {
			l.VirtualServices, sharedVS = selectVirtualServices(vss, l, proxyNs)
			sc.inferServices(reg, l, l.VirtualServices, vss.all)
		}
	}
	// An egress host is the reason to report even when a VirtualService
	// destination of an earlier listener brought the service in first.
	// (With one listener, every service it imports has its entry.)
	if len(sc.Listeners) > 1 {
		for _, l := range sc.Listeners {
			for i, s := range l.Services {
				if j := sc.slot[s.hostID] - 1; sc.imports[j].Entry == "" {
					sc.imports[j] = Import{Service: s, Entry: l.entries[i], Port: l.Port.GetNumber()}
				}
			}
		}
	}
	sc.bindVirtualServices(vss, sharedVS)
	slices.SortFunc(sc.Ambiguous, func(a, b HostChoice) int { return cmp.Compare(a.Host, b.Host) })
	return sc
}

// pickListener is the services a listener imports, de-duplicated.
func pickListener(reg *registry, l *EgressListener, proxyNs string) listenerPick {
	var p listenerPick
	p.services, p.entries, p.choices = dedupHosts(reg, pickServices(reg, l, proxyNs), proxyNs)
	return p
}

// scopeBase is the merged list of a scope of one listener that picked
// registry.everything, before VirtualServices add to it.
type scopeBase struct {
	services []*Service
	imports  []Import
	slot     []int32
	// decisions are the DestinationRule decisions for services shared
	// by the namespaces no DestinationRule names (drDecider.decisions).
	decisions memo[*baseDecisions]
	// quiet marks the VirtualServices that infer nothing in a scope
	// built on the base (quietVirtualServices), by ID.
	quiet memo[[]bool]
}

// newScopeBase is a scope with room for imported services of a registry
// of hosts hostnames, for the merge alone.
func newScopeBase(hosts, imported int) *Scope {
	return &Scope{slot: make([]int32, hosts), Services: make([]*Service, 0, imported), imports: make([]Import, 0, imported)}
}

// addListener merges a listener's services into the scope's list.
func (sc *Scope) addListener(l *EgressListener) {
	for i, s := range l.Services {
		sc.add(s, Import{Service: s, Entry: l.entries[i], Port: l.Port.GetNumber()})
	}
}

// picked are the services an egress listener picked, with the egress
// entry that let each in.
type picked struct {
	services []*Service
	entries  []string
}

// pickServices is docs/semantics/sidecar-scope.md §4.3 for one listener, before de-duplication.
func pickServices(reg *registry, l *EgressListener, proxyNs string) picked {
	return pickAmong(l, candidateServices(reg, l, proxyNs))
}

// candidateServices are the lists of services pickServices looks at, in
// import order: the direct lookups sorted, or the services exported to
// proxyNs by name and then the public ones; of those, only the ones of
// namespaces the listener names when it names no "*/" host.
func candidateServices(reg *registry, l *EgressListener, proxyNs string) [][]*Service {
	var lists [][]*Service
	if l.hosts.allExact {
		var cands []*Service
		for ns, c := range l.hosts.byNs {
			for h := range c.exact {
				// The direct lookup checks exportTo but, unlike the
				// scan, not "~" mixed with names (docs/semantics/cases.md Q1).
				if s := reg.byHostNs[h][ns]; s != nil && (s.exportTo.public || s.exportTo.ns[proxyNs]) {
					cands = append(cands, s)
				}
			}
		}
		slices.SortStableFunc(cands, (*Service).compare)
		lists = [][]*Service{cands}
	} else if star := l.hosts.byNs["*"]; star == nil {
		// Only a namespace's own entries can import its services.
		lists = [][]*Service{reg.byNs[proxyNs], inNamespaces(reg.public, reg.publicIn, maps.Keys(l.hosts.byNs))}
	} else {
		lists = [][]*Service{reg.byNs[proxyNs], reg.public}
	}
	return lists
}

// pickAmong is pickServices over candidate lists.
func pickAmong(l *EgressListener, lists [][]*Service) picked {
	n := 0
	for _, list := range lists {
		n += len(list)
	}
	if n == 0 {
		return picked{}
	}
	star := l.hosts.byNs["*"]
	all, importsAll := l.hosts.importsAll()
	var p picked
	if importsAll {
		p = picked{make([]*Service, 0, n), make([]string, 0, n)}
	}
	for _, list := range lists {
		for _, s := range list {
			entry, ok := all, importsAll
			if !importsAll {
				var by *hostClass
				if entry, by, ok = l.hosts.imports(s, star); ok {
					s = aliasesImported(s, by)
				}
			}
			if ok {
				if t := trimToPort(s, l.Port); t != nil {
					p.services = append(p.services, t)
					p.entries = append(p.entries, entry)
				}
			}
		}
	}
	if len(p.services) == 0 {
		return picked{}
	}
	return p
}

// importsAll reports whether the hosts import every service, by one
// entry, as the default "*/*" does: when the only entries are for any
// namespace, exclude nothing, name no exact host, and the first is "*",
// imports would always answer that entry.
func (e egressHosts) importsAll() (string, bool) {
	star := e.byNs["*"]
	if len(e.byNs) != 1 || star == nil || len(star.excluded) > 0 || len(star.exact) > 0 || len(star.all) == 0 || star.all[0].name != "*" {
		return "", false
	}
	return star.all[0].entry, true
}

// imports reports whether the hosts import s, by which entry of which
// class: s's own namespace's entries first, then "*/"'s (star),
// exclusions first.
func (e egressHosts) imports(s *Service, star *hostClass) (string, *hostClass, bool) {
	own := e.byNs[s.Namespace]
	if _, ex := own.excludes(s.Host); ex {
		return "", nil, false
	}
	if _, ex := star.excludes(s.Host); ex {
		return "", nil, false
	}
	if entry, ok := own.matches(s.Host); ok {
		return entry, own, true
	}
	entry, ok := star.matches(s.Host)
	return entry, star, ok
}

// trimToPort keeps only the listener's port of a service, unless the
// listener has no port (or port 0, as a unix-socket bind may) or is an
// HTTP proxy port; nil when the service lacks the port.
func trimToPort(s *Service, port *networking.SidecarPort) *Service {
	if port == nil || port.GetNumber() == 0 || protocol.Parse(port.GetProtocol()) == protocol.HTTPProxy {
		return s
	}
	p, ok := s.PortNumbered(port.GetNumber())
	if !ok {
		return nil
	}
	if len(s.Ports) == 1 {
		return s
	}
	t := *s
	t.Ports = []Port{p}
	return &t
}

// dedupHosts is docs/semantics/sidecar-scope.md §4.4: for a hostname picked from several
// namespaces one namespace wins: the proxy's own, else a Kubernetes
// service over a ServiceEntry, else the first in candidate order. Only
// hosts the registry has in several namespaces need the bookkeeping. It
// returns the services kept, in order, with their entries, reusing p's
// memory.
func dedupHosts(reg *registry, p picked, proxyNs string) ([]*Service, []string, []HostChoice) {
	winner := map[host.Name]*Service{}
	why := map[host.Name]string{}
	for _, t := range p.services {
		if !reg.multiNs[t.hostID] {
			continue
		}
		w := winner[t.Host]
		switch {
		case w == nil:
			winner[t.Host], why[t.Host] = t, "first in import order: exported to the proxy's namespace by name before public, oldest first"
		case w.Namespace == t.Namespace:
		case t.Namespace == proxyNs:
			winner[t.Host], why[t.Host] = t, "the proxy's own namespace wins"
		case w.Registry != Kubernetes && t.Registry == Kubernetes && w.Namespace != proxyNs:
			winner[t.Host], why[t.Host] = t, "a Kubernetes Service wins over a ServiceEntry"
		}
	}
	if len(winner) == 0 {
		return p.services, p.entries, nil
	}
	kept := 0
	losers := map[host.Name][]*Service{}
	for i, s := range p.services {
		if w, ok := winner[s.Host]; ok && s.Namespace != w.Namespace {
			losers[s.Host] = append(losers[s.Host], s)
			continue
		}
		p.services[kept], p.entries[kept] = s, p.entries[i]
		kept++
	}
	var choices []HostChoice
	for h, ls := range losers {
		w := winner[h]
		if w.Namespace == proxyNs {
			// However it came first, the own namespace would have won.
			why[h] = "the proxy's own namespace wins"
		}
		choices = append(choices, HostChoice{Host: h, Winner: w, Losers: ls, TieBreak: why[h]})
	}
	if kept == 0 {
		return nil, nil, choices
	}
	return p.services[:kept], p.entries[:kept], choices
}

// holds reports whether the scope's list has s itself.
func (sc *Scope) holds(s *Service) bool {
	i := int(sc.slot[s.hostID]) - 1
	return i >= 0 && sc.Services[i] == s
}

// add merges a service into the scope's list (docs/semantics/sidecar-scope.md §4.5).
func (sc *Scope) add(s *Service, why Import) {
	if sc.onBase {
		sc.Services, sc.slot, sc.onBase = slices.Clone(sc.Services), slices.Clone(sc.slot), false
	}
	i := int(sc.slot[s.hostID]) - 1
	if i < 0 {
		sc.slot[s.hostID] = int32(len(sc.Services) + 1)
		sc.Services = append(sc.Services, s)
		sc.imports = append(sc.imports, why)
		return
	}
	switch e := sc.Services[i]; {
	case e == s:
	case e.Registry == Kubernetes && s.Registry != Kubernetes:
	case e.Registry != Kubernetes && s.Registry == Kubernetes:
		sc.Services[i] = s
	case portsEqual(e.Ports, s.Ports):
	case mergeable(e, s):
		if !slices.ContainsFunc(s.Ports, func(p Port) bool { _, ok := e.PortNumbered(p.Number); return !ok }) {
			// Nothing to add: a mesh route's destination names one
			// port of a service the scope already has whole.
			return
		}
		m := *e
		m.Ports = slices.Clone(e.Ports)
		// A number already there, the new ones included, is kept: of
		// UDP and TCP 53 only the first (docs/semantics/sidecar-scope.md §4.5).
		for _, p := range s.Ports {
			if _, ok := m.PortNumbered(p.Number); !ok {
				m.Ports = append(m.Ports, p)
			}
		}
		sc.Services[i] = &m
	}
}

func portsEqual(a, b []Port) bool {
	return slices.Equal(a, b)
}

// mergeable: same namespace, resolution, registry, labels, selector and
// export, so two service objects describe one service.
func mergeable(a, b *Service) bool {
	return a.Namespace == b.Namespace && a.Resolution == b.Resolution && a.Registry == b.Registry &&
		mapsEqual(a.Labels, b.Labels) && mapsEqual(a.Selector, b.Selector) && sameExport(a.exportTo, b.exportTo)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func sameExport(a, b exportTo) bool {
	return a.public == b.public && a.nowhere == b.nowhere && slices.Equal(a.names(), b.names())
}

// describeChoice renders a SidecarChoice for reports.
func (c SidecarChoice) String() string {
	if c.Sidecar == nil {
		return c.Reason
	}
	return fmt.Sprintf("%s/%s (%s)", c.Sidecar.Namespace, c.Sidecar.Name, c.Reason)
}

// EgressHost is one `hosts` entry of a Sidecar egress listener and the
// services it names (docs/semantics/sidecar-scope.md §4.2, §4.3).
type EgressHost struct {
	Sidecar *model.Sidecar
	// Listener and Index place the entry: spec.egress[Listener].hosts[Index].
	Listener, Index int
	// Namespace is the namespace the entry means ("./" spelt out), "*"
	// for any.
	Namespace string
	Host      host.Name
	// Judged: the registry holds services of Namespace (of any namespace
	// for "*"), so an entry naming none of them is a mistake rather than
	// a namespace the input does not describe.
	Judged bool
	// Imported counts the services the entry imports: named by it,
	// visible to the Sidecar's namespace and carrying the listener's port.
	Imported int
	// Hidden are services the entry names that exportTo hides from the
	// Sidecar's namespace; OffPort those that lack the listener's port.
	Hidden, OffPort []*Service
}

// EgressHosts lists, for every Sidecar, in namespace order, each egress
// host that names services, with what it names. Entries that exclude
// ("~"), that istiod ignores (no single "/"), that name no host, and
// "*/*" are left out. Cost: entries × services of the namespace meant (of the registry,
// for a "*/" wildcard).
func (m *Mesh) EgressHosts() []EgressHost {
	byNs := map[string][]*Service{}
	for _, s := range m.reg.all {
		byNs[s.Namespace] = append(byNs[s.Namespace], s)
	}
	var out []EgressHost
	for _, ns := range slices.Sorted(maps.Keys(m.Sidecars)) {
		for _, sc := range m.Sidecars[ns] {
			for li, eg := range sc.Spec.GetEgress() {
				for i, raw := range eg.GetHosts() {
					nsPart, dns, ok := strings.Cut(raw, "/")
					if !ok || dns == "" || strings.Contains(dns, "/") || strings.HasPrefix(nsPart, "~") || (nsPart == "*" && dns == "*") {
						continue
					}
					if nsPart == "." {
						nsPart = sc.Namespace
					}
					e := EgressHost{Sidecar: sc, Listener: li, Index: i, Namespace: nsPart, Host: host.Name(dns)}
					var cands []*Service
					switch {
					case nsPart != "*":
						cands = byNs[nsPart]
						e.Judged = len(cands) > 0
					case e.Host.IsWildcard():
						cands = m.reg.all
						e.Judged = len(cands) > 0
					default:
						cands = m.ServicesNamed(e.Host)
						e.Judged = len(m.reg.all) > 0
					}
					for _, s := range cands {
						if s.Host != e.Host && !((s.Host.IsWildcard() || e.Host.IsWildcard()) && s.Host.SubsetOf(e.Host)) {
							continue
						}
						switch {
						case !s.VisibleIn(sc.Namespace):
							e.Hidden = append(e.Hidden, s)
						case trimToPort(s, eg.GetPort()) == nil:
							e.OffPort = append(e.OffPort, s)
						default:
							e.Imported++
						}
					}
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// ImportsVSHost reports whether the listener's egress hosts import host h
// of vs, by the test that imports VirtualServices
// (docs/semantics/sidecar-scope.md §4.7): not excluded, and overlapping an
// entry of vs's namespace or of "*/".
func (l *EgressListener) ImportsVSHost(vs *VirtualService, h host.Name) bool {
	if _, all := l.hosts.importsAll(); all {
		return true
	}
	own, star := l.hosts.byNs[vs.Namespace()], l.hosts.byNs["*"]
	if _, ex := own.excludes(h); ex {
		return false
	}
	if _, ex := star.excludes(h); ex {
		return false
	}
	return own.vsImports(vs, h) || star.vsImports(vs, h)
}
