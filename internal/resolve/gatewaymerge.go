package resolve

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/meshc/meshc/internal/protocol"
)

// MergedGateway is a router proxy's Gateway servers as istiod merges them
// (ServerMerge): which it keeps and drops, the listeners the kept ones
// make, one per workload port and bind address, and the servers each
// route configuration serves (docs/semantics/virtual-services.md §6.7).
// emit builds from it; explain and lint describe it.
type MergedGateway struct {
	// Servers are the kept servers, in merge order.
	Servers []GatewayServer
	// Dropped are the servers istiod leaves out, in merge order.
	Dropped []DroppedServer
	// Listeners are by port, then in the order their first server came.
	Listeners []*GatewayListener
	// Routes are the route configurations of the kept servers, in the
	// order first named.
	Routes []GatewayRoutes
	// placed is each kept server's listener and route configuration.
	placed map[ServerRef]Placement
}

// DroppedServer is a server the merge leaves out, and why.
type DroppedServer struct {
	Server  GatewayServer
	Verdict MergeVerdict
}

// GatewayListener is one listener of a router: the server groups on one
// workload port and bind address, in merge order.
type GatewayListener struct {
	// Bind is the servers' bind address; "" listens on the wildcard.
	Bind   string
	Port   uint32
	Groups []GatewayGroup
}

// Name is the listener's name, <address>_<port>, with wildcard standing
// for an unbound listener's address.
func (l *GatewayListener) Name(wildcard string) string {
	return cmp.Or(l.Bind, wildcard) + "_" + strconv.FormatUint(uint64(l.Port), 10)
}

// GatewayGroup is the servers of one protocol (as the group's first
// server writes it) on a listener: an HTTP group shares one filter chain
// to Route, any other group has chains per server.
type GatewayGroup struct {
	Protocol protocol.Protocol
	Route    string
	Servers  []GatewayServer
}

// GatewayRoutes is a route configuration's name and the servers whose
// hosts it serves.
type GatewayRoutes struct {
	Name    string
	Servers []GatewayServer
}

// Placement is where a kept server is served: its listener and its route
// configuration ("" for a server without HTTP routes).
type Placement struct {
	Listener *GatewayListener
	Route    string
}

// Placed is where kept server gs is served; ok is false for a server the
// merge dropped.
func (mg *MergedGateway) Placed(gs GatewayServer) (Placement, bool) {
	p, ok := mg.placed[ServerRef{gs.Gateway, gs.Index}]
	return p, ok
}

// MergeGateways merges the Gateway servers of router view v, each on the
// workload port its Gateway port reaches (GatewayTargetPort).
func (m *Mesh) MergeGateways(v *ProxyView) *MergedGateway {
	merge := NewServerMerge()
	mg := &MergedGateway{placed: map[ServerRef]Placement{}}
	byRef := map[ServerRef]GatewayServer{}
	for _, gs := range v.Gateways {
		ref := ServerRef{gs.Gateway, gs.Index}
		if vd := merge.Add(ref, m.GatewayTargetPort(v.Proxy, gs.Port)); vd.Drop != DropNone {
			mg.Dropped = append(mg.Dropped, DroppedServer{gs, vd})
			continue
		}
		byRef[ref] = gs
		mg.Servers = append(mg.Servers, gs)
	}
	servers := func(refs []ServerRef) []GatewayServer {
		out := make([]GatewayServer, len(refs))
		for i, r := range refs {
			out[i] = byRef[r]
		}
		return out
	}
	type lkey struct {
		port uint32
		bind string
	}
	listeners := map[lkey]*GatewayListener{}
	for _, g := range merge.Groups() {
		k := lkey{g.Port, g.Bind}
		l := listeners[k]
		if l == nil {
			l = &GatewayListener{Bind: g.Bind, Port: g.Port}
			listeners[k] = l
			mg.Listeners = append(mg.Listeners, l)
		}
		l.Groups = append(l.Groups, GatewayGroup{Protocol: protocol.Parse(g.Protocol), Route: g.Route, Servers: servers(g.Servers)})
		for _, r := range g.Servers {
			mg.placed[r] = Placement{Listener: l, Route: GatewayRouteName(r.Gateway, r.Server(), g.Port)}
		}
	}
	slices.SortStableFunc(mg.Listeners, func(a, b *GatewayListener) int { return cmp.Compare(a.Port, b.Port) })
	for _, name := range merge.Routes() {
		mg.Routes = append(mg.Routes, GatewayRoutes{name, servers(merge.RouteServers(name))})
	}
	return mg
}

// GatewayTargetPort is the workload port a router listens on for a
// Gateway port: the target port of the first of the services it serves
// (in ServedPorts' order) with that port; the port itself when none has
// it, as istiod resolves a Gateway that selects its workloads by labels.
func (m *Mesh) GatewayTargetPort(p *Proxy, port uint32) uint32 {
	if p.Object == nil {
		return port
	}
	for _, sp := range m.ServedPorts(p.Object) {
		if sp.Port.Number == port && sp.Target != 0 {
			return sp.Target
		}
	}
	return port
}
