package resolve

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"iter"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// Registry says where a mesh service comes from.
type Registry int

const (
	Kubernetes Registry = iota + 1
	External            // ServiceEntry
)

func (r Registry) String() string {
	if r == Kubernetes {
		return "Kubernetes"
	}
	return "ServiceEntry"
}

// Resolution is how a service's endpoints are found (docs/semantics/registry.md §1.1, §1.3).
type Resolution int

const (
	ClientSideLB Resolution = iota + 1 // EDS
	DNSLB
	DNSRoundRobinLB
	Passthrough // headless, or ServiceEntry NONE
	Alias       // ExternalName
	DynamicDNS
)

// Port is one port of a mesh service.
type Port struct {
	Name       string
	Number     uint32
	Protocol   protocol.Protocol
	TargetPort uint32 // 0 when unset or named
	// TargetPortName is a named Kubernetes targetPort, resolved per pod.
	TargetPortName string
}

// Service is one mesh service: a Kubernetes Service, or one host of a
// ServiceEntry. Several may share a hostname (docs/semantics/registry.md §1.8).
type Service struct {
	Host      host.Name
	Namespace string
	// Name breaks creation-time ties: the Service name, or for a
	// ServiceEntry the host (docs/semantics/registry.md §1.3).
	Name         string
	Ports        []Port
	Resolution   Resolution
	MeshExternal bool
	// Addresses are the VIPs; "0.0.0.0" when the service has none.
	Addresses []string
	// PlaceholderVIP is set when the manifests gave no clusterIP and meshc
	// made one up (see Options.PlaceholderVIPs).
	PlaceholderVIP bool
	// Allocated is set when Addresses are those istiod's IP allocator
	// gives a ServiceEntry host without addresses, which proxies that
	// capture DNS use (allocateEntryAddresses); AllocatedByMeshc when the
	// object's status did not carry them and meshc chose them.
	Allocated, AllocatedByMeshc bool
	ExternalName                string
	// Aliases are the ExternalName services naming this one, as far as
	// the proxy's scope imports them.
	Aliases  []ServiceAlias
	Labels   map[string]string
	Selector map[string]string
	Registry Registry
	Created  time.Time
	// families are the IP families of a Kubernetes service's
	// EndpointSlices: those of its cluster IPs, else its ipFamilies;
	// both false when the manifest says neither.
	families [2]bool
	exportTo exportTo
	// Object is the manifest that defined the service.
	Object *model.ObjectMeta
	// Endpoints are the workloads behind the service (docs/semantics/registry.md §1.3, §1.5),
	// by address, port and workload (sortEndpoints), never in input order.
	Endpoints []Endpoint
	// entry is the ServiceEntry spec, for its endpoints.
	entry *model.ServiceEntry
	// hostID and key number the service's hostname and its (hostname,
	// namespace) pair in the registry that holds it (see newRegistry), so
	// scopes index services in slices instead of maps keyed by strings.
	// Copies made for one scope keep them.
	hostID, key int32
}

// Ref describes the service's defining object for diagnostics.
func (s *Service) String() string { return string(s.Host) + " (" + s.Namespace + ")" }

// olderThan is the creation order of services (docs/semantics/registry.md §0).
func (s *Service) compare(o *Service) int {
	return olderFirst(s.Created, s.Name, s.Namespace, o.Created, o.Name, o.Namespace)
}

// PortNumbered returns the first port with number n, whatever its
// protocol.
func (s *Service) PortNumbered(n uint32) (Port, bool) {
	for _, p := range s.Ports {
		if p.Number == n {
			return p, true
		}
	}
	return Port{}, false
}

// PortServing returns the port that serves number n to clients, as istiod
// looks a service port up by number (PortList.GetByPort): the first with
// that number that is not UDP. Routes, clusters and endpoints of port n
// follow it; a port declared for UDP and TCP (53) is its TCP one.
func (s *Service) PortServing(n uint32) (Port, bool) {
	for _, p := range s.Ports {
		if p.Number == n && p.Protocol != protocol.UDP {
			return p, true
		}
	}
	return Port{}, false
}

// PortsNumbered counts the service's ports with number n: more than one
// when a number is declared for two protocols (UDP and TCP 53).
func (s *Service) PortsNumbered(n uint32) int {
	c := 0
	for _, p := range s.Ports {
		if p.Number == n {
			c++
		}
	}
	return c
}

// VisibleIn reports whether proxies in ns can see the service (docs/semantics/exportto.md
// §2.2).
func (s *Service) VisibleIn(ns string) bool { return s.exportTo.visibleIn(ns) }

// EntrySubjectAltNames are the identities a ServiceEntry says its
// endpoints present; none for other services.
func (s *Service) EntrySubjectAltNames() []string {
	if s.entry == nil {
		return nil
	}
	return s.entry.Spec.GetSubjectAltNames()
}

// servicesFromKube converts a Kubernetes Service (docs/semantics/registry.md §1.1).
func serviceFromKube(svc *model.Service, domain string, defaults []string) *Service {
	spec := svc.Spec
	s := &Service{
		Host:       host.FQDN(svc.Name, svc.Namespace, domain),
		Namespace:  svc.Namespace,
		Name:       svc.Name,
		Resolution: ClientSideLB,
		Labels:     svc.Labels,
		Selector:   spec.Selector,
		Registry:   Kubernetes,
		Created:    svc.Created,
		Object:     &svc.ObjectMeta,
	}
	switch {
	case spec.ClusterIP == corev1.ClusterIPNone:
		s.Resolution = Passthrough
	case spec.Type == corev1.ServiceTypeExternalName && spec.ExternalName != "":
		s.Resolution = Alias
	}
	if spec.ExternalName != "" {
		s.MeshExternal = true
		s.ExternalName = spec.ExternalName
	}
	switch {
	case len(spec.ClusterIPs) > 1:
		s.Addresses = slices.Clone(spec.ClusterIPs)
	case spec.ClusterIP != "" && spec.ClusterIP != corev1.ClusterIPNone:
		s.Addresses = []string{spec.ClusterIP}
	}
	for _, ip := range s.Addresses {
		if a, err := netip.ParseAddr(ip); err == nil {
			s.families[familyIndex(a)] = true
		}
	}
	if s.families == [2]bool{} {
		for _, f := range spec.IPFamilies {
			switch f {
			case corev1.IPv4Protocol:
				s.families[0] = true
			case corev1.IPv6Protocol:
				s.families[1] = true
			}
		}
	}
	for _, p := range spec.Ports {
		app := ""
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		port := Port{Name: p.Name, Number: uint32(p.Port), Protocol: protocol.FromServicePort(string(p.Protocol), p.Name, app, p.Port)}
		if p.TargetPort.IntVal > 0 {
			port.TargetPort = uint32(p.TargetPort.IntVal)
		}
		port.TargetPortName = p.TargetPort.StrVal
		s.Ports = append(s.Ports, port)
	}
	var exports []string
	if a := svc.Annotations["networking.istio.io/exportTo"]; a != "" {
		for _, x := range strings.Split(a, ",") {
			if x = strings.TrimSpace(x); x != "" {
				exports = append(exports, x)
			}
		}
	}
	s.exportTo = newExportTo(exports, defaults, svc.Namespace)
	return s
}

// servicesFromEntry converts a ServiceEntry: one service per host and
// address (docs/semantics/registry.md §1.3).
func servicesFromEntry(se *model.ServiceEntry, defaults []string) []*Service {
	spec := se.Spec
	res := map[networking.ServiceEntry_Resolution]Resolution{
		networking.ServiceEntry_NONE:            Passthrough,
		networking.ServiceEntry_STATIC:          ClientSideLB,
		networking.ServiceEntry_DNS:             DNSLB,
		networking.ServiceEntry_DNS_ROUND_ROBIN: DNSRoundRobinLB,
		networking.ServiceEntry_DYNAMIC_DNS:     DynamicDNS,
	}[spec.Resolution]
	var ports []Port
	for _, p := range spec.Ports {
		ports = append(ports, Port{Name: p.Name, Number: p.Number, Protocol: protocol.Parse(p.Protocol), TargetPort: p.TargetPort})
	}
	var addrs []string
	for _, a := range spec.Addresses {
		if ip, err := netip.ParseAddr(a); err == nil {
			addrs = append(addrs, ip.String())
		} else if pfx, err := netip.ParsePrefix(a); err == nil {
			if pfx.IsSingleIP() {
				addrs = append(addrs, pfx.Addr().String())
			} else {
				addrs = append(addrs, pfx.String())
			}
		}
	}
	exports := newExportTo(spec.ExportTo, defaults, se.Namespace)
	var out []*Service
	for _, h := range spec.Hosts {
		base := Service{
			Host:         host.Name(h),
			Namespace:    se.Namespace,
			Name:         h,
			Ports:        ports,
			Resolution:   res,
			MeshExternal: spec.Location != networking.ServiceEntry_MESH_INTERNAL,
			Labels:       se.Labels,
			Selector:     spec.GetWorkloadSelector().GetLabels(),
			Registry:     External,
			Created:      se.Created,
			exportTo:     exports,
			Object:       &se.ObjectMeta,
			entry:        se,
		}
		if len(addrs) == 0 {
			s := base
			out = append(out, &s)
			continue
		}
		for _, a := range addrs {
			s := base
			s.Addresses = []string{a}
			out = append(out, &s)
		}
	}
	return out
}

// registry is the set of mesh services with the indexes istiod keeps.
type registry struct {
	// all services, oldest first (docs/semantics/registry.md §1.8).
	all []*Service
	// byHostNs keeps one service per (host, namespace): the first seen,
	// except that a Kubernetes service replaces a ServiceEntry one.
	byHostNs map[host.Name]map[string]*Service
	// public are services visible everywhere; byNs the ones exported to a
	// namespace by name (or private to it), each oldest first.
	public []*Service
	byNs   map[string][]*Service
	// publicIn are the positions in public of each namespace's services.
	publicIn map[string][]int32
	// wildcards are the services with wildcard hosts.
	wildcards []*Service
	// multiNs marks, by host ID, the hostnames defined in more than one
	// namespace, the only ones de-duplication has to look at; multiNsIn
	// are the namespaces that define one of them.
	multiNs   []bool
	multiNsIn map[string]bool
	// hostIDs numbers the distinct hostnames from 0; keys counts the
	// distinct (hostname, namespace) pairs.
	hostIDs map[host.Name]int32
	keys    int
	// byHostPreferred lists byHostNs's services of each hostname, by host
	// ID, in the order inferredService prefers them. soleVisible holds, by
	// host ID, the hostname's one service when it is the only one and
	// public: what inferredService finds for every namespace.
	byHostPreferred [][]*Service
	soleVisible     []*Service
	// byHostOldest holds the same lists oldest first, for ServicesNamed
	// (many analyzer calls per host; sorted once here, not per call).
	byHostOldest [][]*Service
	// everything is what a portless egress listener importing every
	// service ("*/*") picks for the namespaces where that list is the same
	// (sharesEverything); computed once, by the first scope that asks,
	// and shared read-only.
	everything memo[listenerPick]
	// everyScope is the merged list of a scope whose one listener picked
	// everything (scopeBase), made once and copied by each such scope.
	everyScope memo[*scopeBase]
}

// memo holds a value computed once, by the first caller, for callers that
// would all compute it alike; it is safe for concurrent use.
type memo[T any] struct {
	once sync.Once
	v    T
}

// get returns the value, calling f to make it on the first call.
func (m *memo[T]) get(f func() T) T {
	m.once.Do(func() { m.v = f() })
	return m.v
}

// listenerPick is a listener's services after de-duplication, with their
// entries and the hostnames picked from several namespaces.
type listenerPick struct {
	services []*Service
	entries  []string
	choices  []HostChoice
}

// sharesEverything reports whether a portless "*/*" listener of proxyNs
// picks registry.everything: nothing is exported to proxyNs by name, so
// it picks the public services, and proxyNs defines no hostname of
// several namespaces, the only place de-duplication reads it.
func (r *registry) sharesEverything(proxyNs string) bool {
	return len(r.byNs[proxyNs]) == 0 && !r.multiNsIn[proxyNs]
}

// newRegistry indexes services and numbers their hostnames and (hostname,
// namespace) pairs (Service.hostID, Service.key), so a service belongs to
// one registry.
func newRegistry(services []*Service) *registry {
	r := &registry{all: slices.Clone(services), byHostNs: map[host.Name]map[string]*Service{}, byNs: map[string][]*Service{}, multiNsIn: map[string]bool{},
		hostIDs: map[host.Name]int32{}, publicIn: map[string][]int32{}}
	slices.SortStableFunc(r.all, (*Service).compare)
	for _, s := range r.all {
		m := r.byHostNs[s.Host]
		if m == nil {
			m = map[string]*Service{}
			r.byHostNs[s.Host] = m
			r.hostIDs[s.Host] = int32(len(r.hostIDs))
			r.multiNs = append(r.multiNs, false)
			r.byHostPreferred = append(r.byHostPreferred, nil)
		}
		s.hostID = r.hostIDs[s.Host]
		// byHostPreferred[s.hostID] holds m's services too, in the order
		// they came, until sorted below.
		prev, ok := m[s.Namespace]
		if ok {
			s.key = prev.key
		} else {
			s.key = int32(r.keys)
			r.keys++
			r.byHostPreferred[s.hostID] = append(r.byHostPreferred[s.hostID], s)
		}
		if ok && prev.Registry != Kubernetes && s.Registry == Kubernetes {
			m[s.Namespace] = s
			list := r.byHostPreferred[s.hostID]
			list[slices.Index(list, prev)] = s
		} else if !ok {
			m[s.Namespace] = s
		}
		if len(m) > 1 {
			r.multiNs[s.hostID] = true
		}
		if s.Host.IsWildcard() {
			r.wildcards = append(r.wildcards, s)
		}
		switch {
		case s.exportTo.public:
			r.publicIn[s.Namespace] = append(r.publicIn[s.Namespace], int32(len(r.public)))
			r.public = append(r.public, s)
		case s.exportTo.nowhere:
		default:
			for _, ns := range s.exportTo.names() {
				r.byNs[ns] = append(r.byNs[ns], s)
			}
		}
	}
	for _, s := range r.all {
		if r.multiNs[s.hostID] {
			r.multiNsIn[s.Namespace] = true
		}
	}
	r.soleVisible = make([]*Service, len(r.hostIDs))
	r.byHostOldest = make([][]*Service, len(r.hostIDs))
	for id, list := range r.byHostPreferred {
		oldest := list
		if len(list) > 1 {
			oldest = slices.SortedFunc(slices.Values(list), (*Service).compare)
		}
		r.byHostOldest[id] = slices.Clip(oldest)
		slices.SortFunc(list, preferInferred)
		if len(list) == 1 && list[0].exportTo.public {
			r.soleVisible[id] = list[0]
		}
	}
	return r
}

// preferInferred orders services of one hostname for VirtualService
// destinations: Kubernetes services first, then oldest first.
func preferInferred(a, b *Service) int {
	if ak, bk := a.Registry == Kubernetes, b.Registry == Kubernetes; ak != bk {
		if ak {
			return -1
		}
		return 1
	}
	return a.compare(b)
}

// inNamespaces are the elements of list in the namespaces nss, in list's
// order, given the positions in list of each namespace's (positions).
func inNamespaces[T any](list []T, positions map[string][]int32, nss iter.Seq[string]) []T {
	var at []int32
	for ns := range nss {
		at = append(at, positions[ns]...)
	}
	slices.Sort(at)
	out := make([]T, len(at))
	for i, p := range at {
		out[i] = list[p]
	}
	return out
}

// visibleTo lists the services proxies in ns see: those exported to ns by
// name (or private to it) first, then public ones, each oldest first. The
// order matters for de-duplication (docs/semantics/sidecar-scope.md §4.4).
func (r *registry) visibleTo(ns string) []*Service {
	return slices.Concat(r.byNs[ns], r.public)
}

// assignPlaceholderVIPs gives every Kubernetes service without a cluster
// IP (and not headless or ExternalName) a made-up VIP from prefix, so
// listeners and routes can be named as istiod would name them. The address
// comes from a hash of the hostname, probing on collision in host order,
// so adding a service moves no other service's address.
func assignPlaceholderVIPs(services []*Service, prefix netip.Prefix) {
	taken := map[netip.Addr]bool{}
	for _, s := range services {
		for _, a := range s.Addresses {
			if ip, err := netip.ParseAddr(a); err == nil {
				taken[ip] = true
			}
		}
	}
	need := slices.Clone(services)
	slices.SortFunc(need, func(a, b *Service) int { return cmp.Compare(a.Host, b.Host) })
	bits := prefix.Addr().BitLen() - prefix.Bits()
	if bits <= 1 || bits > 32 || !prefix.Addr().Is4() {
		return
	}
	size := uint32(1) << bits
	base := binary.BigEndian.Uint32(prefix.Masked().Addr().AsSlice())
	for _, s := range need {
		if len(s.Addresses) > 0 || s.Registry != Kubernetes || s.Resolution != ClientSideLB {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(s.Host))
		off := h.Sum32() % size
		for range size {
			if off != 0 && off != size-1 { // skip network and broadcast
				var b [4]byte
				binary.BigEndian.PutUint32(b[:], base+off)
				ip := netip.AddrFrom4(b)
				if !taken[ip] {
					taken[ip] = true
					s.Addresses = []string{ip.String()}
					s.PlaceholderVIP = true
					break
				}
			}
			off = (off + 1) % size
		}
	}
}

// withCapture is the registry as proxies that do (capture) or do not
// capture DNS see it: copies of r's services, with or without the
// addresses allocated to ServiceEntry hosts, numbered as in r.
func (r *registry) withCapture(capture bool) *registry {
	copies := make([]*Service, len(r.all))
	for i, s := range r.all {
		c := *s
		if c.Allocated {
			c.Addresses, c.Allocated, c.AllocatedByMeshc = nil, false, false
		}
		copies[i] = &c
	}
	if capture {
		allocateEntryAddresses(copies)
	}
	return newRegistry(copies)
}

// Where istiod's IP allocator takes addresses from (its defaults).
var (
	allocatedV4 = netip.MustParsePrefix("240.240.0.0/16")
	allocatedV6 = netip.MustParsePrefix("2001:2::/48")
)

// allocateEntryAddresses gives each ServiceEntry host istiod allocates
// addresses to (model.AutoAllocatesAddress; a wildcard host only under
// DYNAMIC_DNS) its IPv4 and IPv6 address, as proxies that capture DNS see
// them (docs/semantics/registry.md §1.3): those of the object's
// status.addresses when it lists the host, else the next free pair of
// the allocator's ranges, taken as a starting istiod would: entries in
// (namespace, name) order, hosts in spec order.
func allocateEntryAddresses(services []*Service) {
	taken := map[netip.Addr]bool{}
	for _, s := range services {
		for _, a := range s.Addresses {
			if ip, err := netip.ParseAddr(a); err == nil {
				taken[ip] = true // the allocator never hands out an address a spec names
			}
		}
	}
	var need []*Service
	for _, s := range services {
		if s.entry == nil || len(s.Addresses) > 0 || !model.AutoAllocatesAddress(s.entry.Spec, s.entry.Labels) {
			continue
		}
		var v4, v6 netip.Addr
		for _, a := range s.entry.StatusAddresses {
			ip, err := netip.ParseAddr(a.Value)
			if err != nil {
				continue
			}
			taken[ip] = true // the allocator holds every address a status lists
			switch {
			case a.Host != string(s.Host):
			case ip.Is4():
				v4 = ip
			default:
				v6 = ip
			}
		}
		if v4.IsValid() || v6.IsValid() {
			s.Addresses, s.Allocated = validAddrs(v4, v6), true
			continue
		}
		if !s.Host.IsWildcard() || s.Resolution == DynamicDNS {
			need = append(need, s)
		}
	}
	slices.SortStableFunc(need, func(a, b *Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Object.Name, b.Object.Name))
	})
	next4, next6 := allocatedV4.Addr().Next(), allocatedV6.Addr().Next()
	byHost := map[string][]string{}
	for _, s := range need {
		key := s.Namespace + "/" + s.Object.Name + "/" + string(s.Host)
		if byHost[key] == nil {
			byHost[key] = validAddrs(nextFree(&next4, allocatedV4, taken), nextFree(&next6, allocatedV6, taken))
		}
		s.Addresses, s.Allocated, s.AllocatedByMeshc = byHost[key], true, true
	}
}

// validAddrs lists the valid ones of an IPv4 and an IPv6 address.
func validAddrs(v4, v6 netip.Addr) []string {
	var out []string
	for _, a := range []netip.Addr{v4, v6} {
		if a.IsValid() {
			out = append(out, a.String())
		}
	}
	return out
}

// nextFree takes the first address from *next on that is in prefix and
// not taken; none when the range is used up.
func nextFree(next *netip.Addr, prefix netip.Prefix, taken map[netip.Addr]bool) netip.Addr {
	for a := *next; prefix.Contains(a); a = a.Next() {
		if !taken[a] {
			taken[a] = true
			*next = a.Next()
			return a
		}
	}
	return netip.Addr{}
}

// familyIndex is 0 for an IPv4 address, 1 for an IPv6 one.
func familyIndex(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

// listsFamilyOf says whether the service's EndpointSlices list an address
// of a's family: the EndpointSlice controller writes a slice per family of
// the service. Anything but an IP, and any address of a service whose
// families are unknown, is listed.
func (s *Service) listsFamilyOf(a string) bool {
	ip, err := netip.ParseAddr(a)
	return err != nil || s.families == [2]bool{} || s.families[familyIndex(ip)]
}

// ServicesCovering returns the mesh services a DestinationRule host h
// (already expanded) applies to, in every namespace, oldest first: for an
// exact h the services named h and the wildcard ServiceEntry hosts that
// cover it; for a wildcard h every service whose hostname falls under it.
func (m *Mesh) ServicesCovering(h host.Name) []*Service {
	if h.IsWildcard() {
		var out []*Service
		for _, s := range m.reg.all {
			if s.Host.SubsetOf(h) {
				out = append(out, s)
			}
		}
		return out
	}
	out := slices.Clone(m.ServicesNamed(h))
	for _, s := range m.reg.wildcards {
		if h.SubsetOf(s.Host) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, (*Service).compare)
	return out
}
