package resolve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// SidecarChoice records which Sidecar resource shapes a proxy and why
// (istio.md §4.1).
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
		case sel != nil && !labelsMatch(sel.GetLabels(), p.Labels):
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

// hostClass is the egress hosts of one namespace key (istio.md §4.2).
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
// containment (istio.md §4.7).
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
	// brought the service in (istio.md §4.6), when Entry is "".
	ViaVirtualService *model.VirtualService
	// Port is the egress listener port that trimmed the service, if any.
	Port uint32
}

// HostChoice records a hostname visible from several namespaces and which
// namespace won (istio.md §4.4).
type HostChoice struct {
	Host     host.Name
	Winner   *Service
	Losers   []*Service
	TieBreak string
}

// EgressListener is one egress section of a Sidecar (or the implicit
// "*/*" one).
type EgressListener struct {
	Port     *networking.SidecarPort
	Bind     string
	Hosts    []string
	hosts    egressHosts
	Services []*Service
	entries  []string // the egress host that imported each of Services
	// VirtualServices imported by the listener, in the order istiod
	// uses them (istio.md §4.7).
	VirtualServices []*VirtualService
}

// Scope is what a set of proxies sharing one Sidecar (or none) in one
// namespace can see. Proxies with the same scope share one value.
type Scope struct {
	Namespace string
	Choice    SidecarChoice
	Listeners []*EgressListener
	// Services is the merged list clusters are built from (istio.md §4.5).
	Services []*Service
	// imports explains each service of Services, by index.
	imports []Import
	// Ambiguous lists hostnames picked from several namespaces.
	Ambiguous []HostChoice
	// IgnoredHosts are egress entries istiod ignores (no single "/").
	IgnoredHosts []string
	// VirtualServices says, per host, which VirtualService is in force.
	VirtualServices []VSChoice
	// drs is the DestinationRule decision of each service, by index.
	drs []DRDecision
	// Proxies that have this scope, sorted.
	Proxies []*Proxy
	// byHost indexes Services.
	byHost map[host.Name]int
}

// Import says why the scope holds the service of a hostname.
func (sc *Scope) Import(h host.Name) (Import, bool) {
	i, ok := sc.byHost[h]
	if !ok {
		return Import{}, false
	}
	return sc.imports[i], true
}

// DestinationRule returns the DestinationRule decision for a hostname.
func (sc *Scope) DestinationRule(h host.Name) (DRDecision, bool) {
	i, ok := sc.byHost[h]
	if !ok || i >= len(sc.drs) {
		return DRDecision{}, false
	}
	return sc.drs[i], true
}

// Service returns the scope's service for a hostname.
func (sc *Scope) Service(h host.Name) (*Service, bool) {
	i, ok := sc.byHost[h]
	if !ok {
		return nil, false
	}
	return sc.Services[i], true
}

// buildScope computes the services and VirtualServices of each egress
// listener and the merged service list. vss may be nil (no
// VirtualServices).
func buildScope(reg *registry, vss *vsIndex, domain string, choice SidecarChoice, proxyNs string) *Scope {
	n := len(reg.all)
	sc := &Scope{Namespace: proxyNs, Choice: choice, byHost: make(map[host.Name]int, n)}
	var egress []*networking.IstioEgressListener
	if choice.Sidecar != nil {
		egress = choice.Sidecar.Spec.GetEgress()
	}
	if len(egress) == 0 {
		egress = []*networking.IstioEgressListener{{Hosts: []string{"*/*"}}}
	}
	ambiguous := map[host.Name]bool{}
	for _, eg := range egress {
		l := &EgressListener{Port: eg.GetPort(), Bind: eg.GetBind(), Hosts: eg.GetHosts(), hosts: parseEgressHosts(eg.GetHosts(), proxyNs)}
		sc.IgnoredHosts = append(sc.IgnoredHosts, l.hosts.ignored...)
		picked := pickServices(reg, l, proxyNs)
		kept, choices := dedupHosts(reg, picked, proxyNs)
		for _, hc := range choices {
			if !ambiguous[hc.Host] {
				ambiguous[hc.Host] = true
				sc.Ambiguous = append(sc.Ambiguous, hc)
			}
		}
		for _, ps := range kept {
			l.Services = append(l.Services, ps.Service)
			l.entries = append(l.entries, ps.entry)
		}
		sc.Listeners = append(sc.Listeners, l)
	}
	for _, l := range sc.Listeners {
		for i, s := range l.Services {
			sc.add(s, Import{Service: s, Entry: l.entries[i], Port: l.Port.GetNumber()})
		}
		if vss != nil && choice.Reason != "gateway" {
			l.VirtualServices = selectVirtualServices(vss, l, proxyNs)
			sc.inferServices(reg, l, l.VirtualServices, domain)
		}
	}
	// An egress host is the reason to report even when a VirtualService
	// destination of an earlier listener brought the service in first.
	for _, l := range sc.Listeners {
		for i, s := range l.Services {
			if j := sc.byHost[s.Host]; sc.imports[j].Entry == "" {
				sc.imports[j] = Import{Service: s, Entry: l.entries[i], Port: l.Port.GetNumber()}
			}
		}
	}
	sc.bindVirtualServices()
	slices.SortFunc(sc.Ambiguous, func(a, b HostChoice) int { return cmp.Compare(a.Host, b.Host) })
	return sc
}

// pickedService is a service an egress listener picked, with the egress
// entry that let it in.
type pickedService struct {
	*Service
	entry string
}

// pickServices is istio.md §4.3 for one listener, before de-duplication.
func pickServices(reg *registry, l *EgressListener, proxyNs string) []pickedService {
	var cands []*Service
	if l.hosts.allExact {
		for ns, c := range l.hosts.byNs {
			for h := range c.exact {
				// The direct lookup checks exportTo but, unlike the
				// scan, not "~" mixed with names (istio.md Q1).
				if s := reg.byHostNs[h][ns]; s != nil && (s.exportTo.public || s.exportTo.ns[proxyNs]) {
					cands = append(cands, s)
				}
			}
		}
		slices.SortStableFunc(cands, (*Service).compare)
	} else {
		cands = reg.visibleTo(proxyNs)
	}
	picked := make([]pickedService, 0, len(cands))
	star := l.hosts.byNs["*"]
	for _, s := range cands {
		own := l.hosts.byNs[s.Namespace]
		if _, ex := own.excludes(s.Host); ex {
			continue
		}
		if _, ex := star.excludes(s.Host); ex {
			continue
		}
		entry, ok := own.matches(s.Host)
		if !ok {
			entry, ok = star.matches(s.Host)
		}
		if !ok {
			continue
		}
		if t := trimToPort(s, l.Port); t != nil {
			picked = append(picked, pickedService{t, entry})
		}
	}
	return picked
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

// dedupHosts is istio.md §4.4: for a hostname picked from several
// namespaces one namespace wins: the proxy's own, else a Kubernetes
// service over a ServiceEntry, else the first in candidate order. Only
// hosts the registry has in several namespaces need the bookkeeping.
func dedupHosts(reg *registry, picked []pickedService, proxyNs string) ([]pickedService, []HostChoice) {
	winner := map[host.Name]*Service{}
	why := map[host.Name]string{}
	for _, t := range picked {
		if !reg.multiNs[t.Host] {
			continue
		}
		w := winner[t.Host]
		switch {
		case w == nil:
			winner[t.Host], why[t.Host] = t.Service, "first in import order: exported to the proxy's namespace by name before public, oldest first"
		case w.Namespace == t.Namespace:
		case t.Namespace == proxyNs:
			winner[t.Host], why[t.Host] = t.Service, "the proxy's own namespace wins"
		case w.Registry != Kubernetes && t.Registry == Kubernetes && w.Namespace != proxyNs:
			winner[t.Host], why[t.Host] = t.Service, "a Kubernetes Service wins over a ServiceEntry"
		}
	}
	if len(winner) == 0 {
		return picked, nil
	}
	kept := picked[:0:0]
	losers := map[host.Name][]*Service{}
	for _, s := range picked {
		if w, ok := winner[s.Host]; ok && s.Namespace != w.Namespace {
			losers[s.Host] = append(losers[s.Host], s.Service)
			continue
		}
		kept = append(kept, s)
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
	return kept, choices
}

// add merges a service into the scope's list (istio.md §4.5).
func (sc *Scope) add(s *Service, why Import) {
	i, ok := sc.byHost[s.Host]
	if !ok {
		sc.byHost[s.Host] = len(sc.Services)
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
		m := *e
		m.Ports = slices.Clone(e.Ports)
		for _, p := range s.Ports {
			if _, ok := e.PortNumbered(p.Number); !ok {
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
