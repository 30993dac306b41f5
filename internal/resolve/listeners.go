package resolve

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/protocol"
)

// Well-known ports of a sidecar (docs/semantics/envoy-output.md §7.1,
// §7.4): its own listeners hold them, so no HTTP service port on the
// wildcard may.
const (
	VirtualOutboundPort = 15001
	VirtualInboundPort  = 15006
	StatusPort          = 15021
	PrometheusPort      = 15090
)

// OutboundPort is one step of placing a sidecar's outbound listeners, in
// the order istiod takes them (docs/semantics/envoy-output.md §7.4): a
// service port on a listener key, a headless service's ports on its
// endpoints' addresses, or a portless egress listener's one HTTP listener.
// Emit builds the listeners from these steps and the listener analyzers
// judge the same steps, so the two cannot disagree on where a port goes.
type OutboundPort struct {
	// Egress is the egress listener that imports the service: its
	// VirtualServices route the port.
	Egress *EgressListener
	// Service is nil for a portless listener.
	Service *Service
	// ServicePort is the port whose cluster the chains use; Port is the
	// listener's.
	ServicePort, Port uint32
	Protocol          protocol.Protocol
	// Address is the listener's address: a VIP, the egress bind or
	// 0.0.0.0; empty for PerEndpoint. CIDR, when set, is the destination
	// range the port's TCP and TLS chains match.
	Address, CIDR string
	// CatchAll: placed by the egress listener without a port, the step
	// yields to every listener key placed before that listener began.
	CatchAll bool
	// BindToPort: the egress listener binds for real (captureMode NONE, a
	// unix socket), where nothing redirects traffic to it.
	BindToPort bool
	// PerEndpoint: an address-less passthrough service port, one listener
	// per endpoint address (other than the proxy's own, which only emit
	// knows per proxy).
	PerEndpoint bool
	// Portless: the one HTTP listener of a unix-socket or HTTP_PROXY egress
	// listener, whose route configuration covers all its services.
	Portless bool
}

// Key is the listener key of a step with an address, "<address>_<port>".
func (o OutboundPort) Key() string { return fmt.Sprintf("%s_%d", o.Address, o.Port) }

// OutboundPorts walks the scope's egress listeners as istiod places a
// sidecar's outbound listeners (docs/semantics/envoy-output.md §7.4) and
// yields the steps in order; routers have none. A scope that sees the whole
// mesh takes thousands of steps, so they are yielded, not collected.
func (sc *Scope) OutboundPorts() iter.Seq[OutboundPort] {
	return func(yield func(OutboundPort) bool) {
		if sc.Choice.Reason == "gateway" {
			return
		}
		for _, l := range sc.Listeners {
			if !outboundPorts(l, yield) {
				return
			}
		}
	}
}

// outboundPorts yields one egress listener's steps; false when yield
// asked to stop.
func outboundPorts(l *EgressListener, yield func(OutboundPort) bool) bool {
	// A listener nothing redirects to binds for real, by default on
	// localhost.
	bindToPort := l.CaptureNone || strings.HasPrefix(l.Bind, "unix://")
	bind := l.Bind
	if bind == "" && bindToPort {
		bind = Localhost
	}
	step := OutboundPort{Egress: l, BindToPort: bindToPort}
	switch {
	case l.IsPortless():
		if len(l.Services) == 0 {
			return true
		}
		step.Portless, step.Port, step.Protocol, step.Address = true, l.Port.GetNumber(), protocol.HTTP, cmp.Or(bind, WildcardAddress)
		return yield(step)
	case l.Port != nil:
		p, proto := l.Port.GetNumber(), protocol.Parse(l.Port.GetProtocol())
		for _, s := range l.Services {
			if s.Resolution == Alias {
				continue // an alias gets no listener of its own (docs/semantics/registry.md §1.1)
			}
			svcPort := p
			if len(s.Ports) == 1 {
				svcPort = s.Ports[0].Number
			}
			if st, ok := standardPort(step, s, svcPort, p, proto, bind); ok && !yield(st) {
				return false
			}
		}
		return true
	}
	step.CatchAll = true
	for _, s := range l.Services {
		if s.Resolution == Alias || s.Resolution == DynamicDNS {
			continue
		}
		for _, port := range s.Ports {
			if port.Protocol == protocol.UDP {
				continue
			}
			// Only an address-less passthrough service is reached by its
			// endpoints' addresses; one with an address (a wildcard-host
			// ServiceEntry's, a CIDR) takes the standard path.
			if s.Resolution != Passthrough || bind != "" || port.Protocol.IsHTTP() || HasAddress(s) {
				if st, ok := standardPort(step, s, port.Number, port.Number, port.Protocol, bind); ok && !yield(st) {
					return false
				}
				continue
			}
			st := step
			st.Service, st.ServicePort, st.Port, st.Protocol = s, port.Number, port.Number, port.Protocol
			// A ServiceEntry without endpoints or selector has no
			// addresses to listen on: the wildcard takes it.
			if len(s.Endpoints) == 0 && s.Registry != Kubernetes && len(s.Selector) == 0 {
				st.Address = WildcardAddress
			} else {
				st.PerEndpoint = true
			}
			if !yield(st) {
				return false
			}
		}
	}
	return true
}

// SameOutboundPorts reports whether o's OutboundPorts are sc's step for
// step: both scopes route, or neither does, and their egress listeners
// have the same port, bind, capture mode and services, in order. The
// steps read nothing else of a scope, and every namespace without a
// Sidecar in a mesh of public services imports the same ones, so callers
// judging placements judge one scope of such a group for all of it.
func (sc *Scope) SameOutboundPorts(o *Scope) bool {
	if (sc.Choice.Reason == "gateway") != (o.Choice.Reason == "gateway") || len(sc.Listeners) != len(o.Listeners) {
		return false
	}
	for i, l := range sc.Listeners {
		m := o.Listeners[i]
		if l.Bind != m.Bind || l.CaptureNone != m.CaptureNone || (l.Port == nil) != (m.Port == nil) ||
			l.Port.GetNumber() != m.Port.GetNumber() || l.Port.GetProtocol() != m.Port.GetProtocol() || !slices.Equal(l.Services, m.Services) {
			return false
		}
	}
	return true
}

// standardPort places a service port on the standard path: HTTP on the
// wildcard, anything else on the service's VIP when it has one, a CIDR
// service on the wildcard matching its range. An HTTP port on the wildcard
// that a sidecar's own listener holds is not placed (false).
func standardPort(step OutboundPort, s *Service, svcPort, port uint32, proto protocol.Protocol, bind string) (OutboundPort, bool) {
	addr, cidr := ListenerAddress(s, proto, bind)
	if addr == WildcardAddress && proto.IsHTTP() {
		switch port {
		case VirtualOutboundPort, VirtualInboundPort, StatusPort, PrometheusPort:
			return OutboundPort{}, false
		}
	}
	step.Service, step.ServicePort, step.Port, step.Protocol, step.Address, step.CIDR = s, svcPort, port, proto, addr, cidr
	return step, true
}

// WildcardAddress is the unspecified address listeners default to.
const WildcardAddress = "0.0.0.0"

// Localhost is where a listener that binds for real defaults to.
const Localhost = "127.0.0.1"

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

// OutboundListeners follows the scope's OutboundPorts, the steps emit
// builds a sidecar's outbound listeners from, and returns, per listener
// key, the claim whose TCP chain matches every connection (a catch-all on
// the wildcard address is the concern of a TCP service without a VIP) and
// the claims discarded in key collisions. Per-endpoint and portless steps
// are left out: endpoint addresses are keys no other service shares, and a
// portless listener has no TCP chains.
func (sc *Scope) OutboundListeners() (catchAll []ListenerClaim, drops []ListenerDrop) {
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
	var lockedBy *EgressListener
	for st := range sc.OutboundPorts() {
		if st.Portless || st.PerEndpoint {
			continue
		}
		if st.CatchAll && st.Egress != lockedBy {
			for _, k := range order {
				keys[k].locked = true
			}
			lockedBy = st.Egress
		}
		place(claim(st), st.CatchAll)
	}
	for _, k := range order {
		if c, ok := keys[k].matches[""]; ok && c.Address == WildcardAddress {
			catchAll = append(catchAll, c)
		}
	}
	return catchAll, drops
}

// claim is a placed service port and what its TCP chain matches: TLS on
// the wildcard (no VIP, or a range) matches the host by SNI, a range
// matches its destinations, anything else on a TCP or sniffed port every
// connection.
func claim(st OutboundPort) ListenerClaim {
	s, proto := st.Service, st.Protocol
	c := ListenerClaim{Service: s, Port: st.Port, Protocol: proto, Address: st.Address}
	tls := proto == protocol.TLS || proto == protocol.HTTPS
	switch {
	case proto.IsHTTP():
		c.Match = "-"
	case tls && st.Address == WildcardAddress && (!HasAddress(s) || st.CIDR != ""):
		c.Match = "sni " + string(s.Host)
	case st.CIDR != "":
		c.Match = "range " + st.CIDR
	}
	return c
}

func isMongoOrMySQL(p protocol.Protocol) bool { return p == protocol.Mongo || p == protocol.MySQL }
