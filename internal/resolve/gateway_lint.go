package resolve

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// OlderFirst orders objects as istiod merges Gateways and picks the
// oldest of anything: creation time, then name, then namespace.
func OlderFirst(a, b *model.ObjectMeta) int {
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}

// MergedServerHosts are the hosts of server i of a Gateway as istiod compares
// them when it merges Gateways (docs/semantics/virtual-services.md §6.7):
// "./h" is "<gwNs>/h", "*/h" is "h", and "*/*" alone stands for all.
func MergedServerHosts(gw *model.Gateway, i int) []string {
	return MergeHosts(ownNamespace(gw.Spec.GetServers()[i].GetHosts(), gw.Namespace))
}

// MergeHosts are server hosts, "./" already spelt as the namespace, as
// istiod compares them when merging Gateways: "*/host" is "host", and
// "*/*" alone stands for all.
func MergeHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if name, ok := strings.CutPrefix(h, "*/"); ok {
			if name == "*" {
				return []string{"*"}
			}
			h = name
		}
		out = append(out, h)
	}
	return out
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

// WildcardAddress is the unspecified address listeners default to.
const WildcardAddress = "0.0.0.0"

// HasAddress says whether a service has an address of its own: a VIP or
// a CIDR, not the unspecified 0.0.0.0.
func HasAddress(s *Service) bool {
	return len(s.Addresses) > 0 && s.Addresses[0] != WildcardAddress
}

// CIDRAddress is a service's address when it is a range, not one IP.
func CIDRAddress(s *Service) string {
	if len(s.Addresses) > 0 && strings.Contains(s.Addresses[0], "/") {
		return s.Addresses[0]
	}
	return ""
}

// ListenerAddress is the outbound listener address a service port takes
// on the standard path (docs/semantics/envoy-output.md §7.4): the egress
// bind when set; else HTTP on the wildcard, anything else on the
// service's VIP when it has one. A CIDR address is no socket address: its
// service goes on the wildcard, and cidr is the range its TCP and TLS
// chains match.
func ListenerAddress(s *Service, proto protocol.Protocol, bind string) (addr, cidr string) {
	if bind != "" {
		return bind, ""
	}
	if proto.IsHTTP() || len(s.Addresses) == 0 {
		return WildcardAddress, ""
	}
	if cidr = CIDRAddress(s); cidr != "" {
		return WildcardAddress, cidr
	}
	return s.Addresses[0], ""
}

// ListenerClaim is a service port placed on an outbound listener of a
// sidecar, as emit places it (docs/semantics/envoy-output.md §7.4).
type ListenerClaim struct {
	Service *Service
	Port    uint32
	// Protocol is the port's, or the egress listener's when it has a port.
	Protocol protocol.Protocol
	// Address is the listener's address: a VIP, the egress bind or 0.0.0.0.
	Address string
	// Match is what the claim's TCP chain matches on its listener: "" for
	// every connection, else the SNI host or destination range; none
	// (an HTTP port) is "-".
	Match string
}

// Listener names the claim's listener, "<address>_<port>".
func (c ListenerClaim) Listener() string { return fmt.Sprintf("%s_%d", c.Address, c.Port) }

// ListenerDrop is a claim emit discards: the listener key holds a chain
// with the same match from an earlier claim (Winner), or the two claim
// Mongo or MySQL and another protocol.
type ListenerDrop struct {
	Loser, Winner ListenerClaim
	// Protocol: dropped for a Mongo or MySQL mismatch, not a repeated match.
	Protocol bool
}

// OutboundListeners walks the scope's egress listeners as emit builds a
// sidecar's outbound listeners and returns, per listener key, the claim
// whose TCP chain matches every connection (a catch-all on the wildcard
// address is the concern of a TCP service without a VIP) and the claims
// discarded in key collisions. Only address-less passthrough services, one
// listener per endpoint, are left out: their keys are endpoint addresses,
// which no other service shares. Routers have no outbound listeners.
func (sc *Scope) OutboundListeners() (catchAll []ListenerClaim, drops []ListenerDrop) {
	if sc.Choice.Reason == "gateway" {
		return nil, nil
	}
	type listener struct {
		first   ListenerClaim
		locked  bool
		matches map[string]ListenerClaim // TCP chain match → claim that placed it
	}
	type key struct {
		addr string
		port uint32
	}
	keys := map[key]*listener{}
	var order []key
	place := func(c ListenerClaim, fromCatchAll bool) {
		k := key{c.Address, c.Port}
		l := keys[k]
		if l == nil {
			l = &listener{first: c, matches: map[string]ListenerClaim{}}
			keys[k] = l
			order = append(order, k)
		} else {
			if l.locked && fromCatchAll {
				return // a port-specific egress listener took the key, as meant
			}
			if l.first.Protocol != c.Protocol && (isMongoOrMySQL(l.first.Protocol) || isMongoOrMySQL(c.Protocol)) {
				drops = append(drops, ListenerDrop{Loser: c, Winner: l.first, Protocol: true})
				return
			}
		}
		if c.Match == "-" {
			return
		}
		if w, ok := l.matches[c.Match]; ok {
			drops = append(drops, ListenerDrop{Loser: c, Winner: w})
			return
		}
		l.matches[c.Match] = c
	}
	for _, el := range sc.Listeners {
		bind := el.Bind
		if bind == "" && el.CaptureNone { // a unix socket has its bind
			bind = "127.0.0.1"
		}
		if el.IsPortless() {
			continue // one HTTP listener, no TCP chains
		}
		if el.Port != nil {
			proto := protocol.Parse(el.Port.GetProtocol())
			for _, s := range el.Services {
				if s.Resolution != Alias {
					place(claim(s, el.Port.GetNumber(), proto, bind), false)
				}
			}
			continue
		}
		for _, k := range order {
			keys[k].locked = true
		}
		for _, s := range el.Services {
			if s.Resolution == Alias || s.Resolution == DynamicDNS {
				continue
			}
			for _, p := range s.Ports {
				if p.Protocol == protocol.UDP {
					continue
				}
				if s.Resolution == Passthrough && bind == "" && !p.Protocol.IsHTTP() && !HasAddress(s) {
					if len(s.Endpoints) == 0 && s.Registry != Kubernetes && len(s.Selector) == 0 {
						c := claim(s, p.Number, p.Protocol, "")
						c.Address = WildcardAddress
						place(c, true)
					}
					continue
				}
				place(claim(s, p.Number, p.Protocol, bind), true)
			}
		}
	}
	for _, k := range order {
		if c, ok := keys[k].matches[""]; ok && c.Address == WildcardAddress {
			catchAll = append(catchAll, c)
		}
	}
	return catchAll, drops
}

// claim places a service port per ListenerAddress and says what its TCP
// chain matches: TLS on the wildcard (no VIP, or a range) matches the
// host by SNI, a range matches its destinations, anything else on a TCP
// or sniffed port every connection.
func claim(s *Service, port uint32, proto protocol.Protocol, bind string) ListenerClaim {
	addr, cidr := ListenerAddress(s, proto, bind)
	c := ListenerClaim{Service: s, Port: port, Protocol: proto, Address: addr}
	tls := proto == protocol.TLS || proto == protocol.HTTPS
	switch {
	case proto.IsHTTP():
		c.Match = "-"
	case tls && addr == WildcardAddress && (!HasAddress(s) || cidr != ""):
		c.Match = "sni " + string(s.Host)
	case cidr != "":
		c.Match = "range " + cidr
	}
	return c
}

func isMongoOrMySQL(p protocol.Protocol) bool { return p == protocol.Mongo || p == protocol.MySQL }
