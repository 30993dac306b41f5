package resolve

import (
	"strconv"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// ServerMerge replays istiod's merge of the Gateway servers on one gateway
// workload, fed one server at a time in merge order (oldest Gateway first,
// servers in spec order; docs/semantics/virtual-services.md §6.7). It
// says which servers istiod keeps and why it drops the others, and groups
// the kept ones as istiod does: by listening port, protocol and bind
// (server groups, in the order they appear), and by route configuration
// name. emit builds listeners and routes from the groups, lint reports
// the dropped servers, from this one account of the rules.
type ServerMerge struct {
	ports map[uint32]*mergedPort
	// order are the keys of the server groups, each time a group started
	// under one (as istiod lists them, a key started twice lists twice),
	// and byKey the group each key holds now.
	order []serverKey
	byKey map[serverKey]*ServerGroup
	// routes are the servers of each route configuration name, and
	// routeOrder the names in the order they were first given.
	routes     map[string][]ServerRef
	routeOrder []string
}

// serverKey is what istiod keeps one group of servers under.
type serverKey struct {
	port     uint32
	protocol string // as written
	bind     string
}

// ServerGroup is the kept servers of one listening port, protocol (as
// written by its first server) and bind. The groups of one port and bind
// make one listener: an HTTP group one chain to its route configuration,
// any other group chains per server.
type ServerGroup struct {
	Port     uint32
	Protocol string
	Bind     string
	// Route is an HTTP group's route configuration.
	Route   string
	Servers []ServerRef
}

// mergedPort is what the merge knows of one listening port.
type mergedPort struct {
	// plain is the group of the latest server without TLS (HTTP, TCP, or
	// HTTP with an HTTPS redirect) that took the port or a new bind on it,
	// and plainRef that server: later servers on its bind merge with it
	// or not.
	plain    *serverKey
	plainRef ServerRef
	// used says a server came to the port (even one then dropped).
	used bool
	// tlsHosts are the hosts TLS servers on the port serve, with their bind.
	tlsHosts map[string]tlsHost
}

type tlsHost struct {
	bind   string
	server ServerRef
}

// ServerRef names server Index of a Gateway.
type ServerRef struct {
	Gateway *model.Gateway
	Index   int
}

// Server is the server ServerRef names.
func (r ServerRef) Server() *networking.Server { return r.Gateway.Spec.GetServers()[r.Index] }

// MergeVerdict is what the merge does with one server.
type MergeVerdict struct {
	// Drop says why istiod leaves the server out; DropNone keeps it.
	Drop DropReason
	// Earlier is the server that keeps the port or the hosts.
	Earlier ServerRef
	// Hosts are the TLS hosts an earlier server already serves, for
	// DropDuplicateTLSHosts.
	Hosts []string
}

// DropReason is why istiod drops a Gateway server when it merges a
// workload's Gateways.
type DropReason int

const (
	DropNone DropReason = iota
	// DropDuplicateTLSHosts: a server with TLS settings names a host an
	// earlier TLS server on the port and bind names; Envoy would refuse
	// the repeated SNI match.
	DropDuplicateTLSHosts
	// DropProtocolConflict: an earlier server without TLS holds the port
	// and bind, and the two do not merge. Only HTTP servers join an HTTP
	// one; a TCP server takes its port whole, even when no route uses it.
	DropProtocolConflict
	// DropDuplicateHTTPSRoute: two HTTPS servers on the port would share
	// one route name (the same Gateway, port name and bind).
	DropDuplicateHTTPSRoute
)

// NewServerMerge starts the merge of one gateway workload's servers.
func NewServerMerge() *ServerMerge {
	return &ServerMerge{ports: map[uint32]*mergedPort{}, byKey: map[serverKey]*ServerGroup{}, routes: map[string][]ServerRef{}}
}

// Add merges server ref, listening on port (its target port on the
// workload), and says whether istiod keeps it.
func (m *ServerMerge) Add(ref ServerRef, port uint32) MergeVerdict {
	srv := ref.Server()
	mp := m.ports[port]
	if mp == nil {
		mp = &mergedPort{tlsHosts: map[string]tlsHost{}}
		m.ports[port] = mp
	}
	if srv.GetTls() != nil {
		// Hosts are recorded here, before the protocol checks below,
		// as istiod records them.
		if v := mp.claimTLSHosts(ref); v.Drop != DropNone {
			return v
		}
	}
	key := serverKey{port, srv.GetPort().GetProtocol(), srv.GetBind()}
	route := GatewayRouteName(ref.Gateway, srv, port)
	switch {
	case !mp.used:
		// The port's first server.
		mp.used = true
		m.newGroup(mp, ref, key, route)
	case mp.plain != nil:
		return m.meetPlain(mp, ref, key, route)
	case !isTLSServer(srv):
		// A plain server after TLS ones on the port: it takes its bind.
		m.newGroup(mp, ref, key, route)
	default:
		if route != "" {
			// An HTTPS server terminating TLS, after TLS servers on the
			// port: its route name must be new.
			if _, ok := m.routes[route]; ok {
				return MergeVerdict{Drop: DropDuplicateHTTPSRoute}
			}
			m.setRoute(route, ref)
		}
		m.join(key, "", ref)
	}
	return MergeVerdict{}
}

// claimTLSHosts records the hosts of a TLS server on the port, unless an
// earlier TLS server on the port and bind named one of them.
func (mp *mergedPort) claimTLSHosts(ref ServerRef) MergeVerdict {
	bind := ref.Server().GetBind()
	hosts := MergeHosts(ownNamespace(ref.Server().GetHosts(), ref.Gateway.Namespace))
	var dup []string
	var earlier ServerRef
	for _, h := range hosts {
		if k, ok := mp.tlsHosts[h]; ok && k.bind == bind {
			if dup == nil {
				earlier = k.server
			}
			dup = append(dup, h)
		}
	}
	if len(dup) > 0 {
		return MergeVerdict{Drop: DropDuplicateTLSHosts, Earlier: earlier, Hosts: dup}
	}
	for _, h := range hosts {
		mp.tlsHosts[h] = tlsHost{bind, ref}
	}
	return MergeVerdict{}
}

// meetPlain merges a server into a port a plain server holds: on the
// plain server's bind only HTTP joins HTTP, into its group; on another
// bind the server joins its own group, or starts one (and, when plain,
// becomes the server later ones meet), as in istiod.
func (m *ServerMerge) meetPlain(mp *mergedPort, ref ServerRef, key serverKey, route string) MergeVerdict {
	cur := *mp.plain
	if cur.bind == key.bind {
		if !protocol.Parse(cur.protocol).IsHTTP() || !protocol.Parse(key.protocol).IsHTTP() {
			return MergeVerdict{Drop: DropProtocolConflict, Earlier: mp.plainRef}
		}
		g := m.byKey[cur]
		g.Servers = append(g.Servers, ref)
		m.addRoute(route, ref)
		return MergeVerdict{}
	}
	if m.byKey[key] == nil {
		m.newGroup(mp, ref, key, route)
		return MergeVerdict{}
	}
	m.join(key, route, ref)
	m.addRoute(route, ref)
	return MergeVerdict{}
}

// newGroup starts the group of key with ref, istiod's start of a port or
// bind: a plain server becomes the one later servers on the port meet,
// and an HTTP one (or an HTTPS one terminating TLS) starts its route
// configuration afresh.
func (m *ServerMerge) newGroup(mp *mergedPort, ref ServerRef, key serverKey, route string) {
	if !isTLSServer(ref.Server()) {
		mp.plain, mp.plainRef = &key, ref
	}
	if route != "" {
		m.setRoute(route, ref)
	}
	m.replaceGroup(key, route, ref)
}

// replaceGroup puts a new group of ref under key, in place of any group
// the key had.
func (m *ServerMerge) replaceGroup(key serverKey, route string, ref ServerRef) {
	m.byKey[key] = &ServerGroup{Port: key.port, Protocol: key.protocol, Bind: key.bind, Route: route, Servers: []ServerRef{ref}}
	m.order = append(m.order, key)
}

// join adds ref to the group of key, starting it when there is none; a
// route name given becomes the group's.
func (m *ServerMerge) join(key serverKey, route string, ref ServerRef) {
	g := m.byKey[key]
	if g == nil {
		m.replaceGroup(key, route, ref)
		return
	}
	if route != "" {
		g.Route = route
	}
	g.Servers = append(g.Servers, ref)
}

// setRoute makes ref the only server of route; addRoute adds it.
func (m *ServerMerge) setRoute(route string, ref ServerRef) {
	if _, ok := m.routes[route]; !ok {
		m.routeOrder = append(m.routeOrder, route)
	}
	m.routes[route] = []ServerRef{ref}
}

func (m *ServerMerge) addRoute(route string, ref ServerRef) {
	if route == "" {
		return
	}
	if _, ok := m.routes[route]; !ok {
		m.routeOrder = append(m.routeOrder, route)
	}
	m.routes[route] = append(m.routes[route], ref)
}

// Groups are the kept servers by port, protocol and bind, in the order
// each group started.
func (m *ServerMerge) Groups() []*ServerGroup {
	out := make([]*ServerGroup, len(m.order))
	for i, k := range m.order {
		out[i] = m.byKey[k]
	}
	return out
}

// RouteServers are the servers whose hosts route configuration name
// serves, in merge order.
func (m *ServerMerge) RouteServers(name string) []ServerRef { return m.routes[name] }

// Routes are the route configuration names the kept servers have, in the
// order first given.
func (m *ServerMerge) Routes() []string { return m.routeOrder }

// isTLSServer says whether a server has TLS settings on a protocol other
// than HTTP: an HTTP server's TLS settings only redirect to HTTPS.
func isTLSServer(srv *networking.Server) bool {
	return srv.GetTls() != nil && !protocol.Parse(srv.GetPort().GetProtocol()).IsHTTP()
}

// passthroughServer says whether a server forwards TLS unopened.
func passthroughServer(srv *networking.Server) bool {
	mode := srv.GetTls().GetMode()
	return srv.GetTls() != nil && (mode == networking.ServerTLSSettings_PASSTHROUGH || mode == networking.ServerTLSSettings_AUTO_PASSTHROUGH)
}

// GatewayRouteName is the route configuration a server's HTTP traffic
// takes on the workload's port (its target port): http.<port> for every
// HTTP server there, HTTPSRouteName for an HTTPS server terminating TLS,
// and .<bind> after either when the server binds an address; "" for any
// other server.
func GatewayRouteName(gw *model.Gateway, srv *networking.Server, port uint32) string {
	p := protocol.Parse(srv.GetPort().GetProtocol())
	switch {
	case p.IsHTTP():
		return "http." + strconv.FormatUint(uint64(port), 10) + bindSuffix(srv)
	case p == protocol.HTTPS && !passthroughServer(srv):
		return HTTPSRouteName(gw, srv)
	}
	return ""
}

// HTTPSRouteName is the route configuration istiod names after an HTTPS
// server that terminates TLS: https.<port>.<port name>.<gateway>.<namespace>,
// and .<bind> when the server binds an address. The port is the server's
// own, not the workload's.
func HTTPSRouteName(gw *model.Gateway, srv *networking.Server) string {
	return "https." + strconv.FormatUint(uint64(srv.GetPort().GetNumber()), 10) + "." + srv.GetPort().GetName() + "." + gw.Name + "." + gw.Namespace + bindSuffix(srv)
}

func bindSuffix(srv *networking.Server) string {
	if b := srv.GetBind(); b != "" {
		return "." + b
	}
	return ""
}
