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
// says which servers istiod keeps and why it drops the others. emit builds
// only the kept servers and lint reports the dropped ones, from this one
// account of the rules.
type ServerMerge struct {
	ports map[uint32]*mergedPort
}

// mergedPort is what the merge knows of one listening port.
type mergedPort struct {
	// plain is the first server on the port without TLS (HTTP, TCP, or
	// HTTP with an HTTPS redirect): later servers merge with it or not.
	plain *ServerRef
	// tlsHosts are the hosts TLS servers on the port serve, with their bind.
	tlsHosts map[string]tlsHost
	// httpsRoutes are the route names of HTTPS servers that terminate TLS.
	httpsRoutes map[string]bool
	// keys are the protocols and binds (as written) servers on the port
	// have: istiod keeps one merged server per key.
	keys map[[2]string]bool
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
func NewServerMerge() *ServerMerge { return &ServerMerge{ports: map[uint32]*mergedPort{}} }

// Add merges server ref, listening on port (its target port on the
// workload), and says whether istiod keeps it.
func (m *ServerMerge) Add(ref ServerRef, port uint32) MergeVerdict {
	srv := ref.Server()
	mp := m.ports[port]
	if mp == nil {
		mp = &mergedPort{tlsHosts: map[string]tlsHost{}, httpsRoutes: map[string]bool{}, keys: map[[2]string]bool{}}
		m.ports[port] = mp
	}
	bind := srv.GetBind()
	if srv.GetTls() != nil {
		// Hosts are recorded here, before the protocol checks below,
		// as istiod records them.
		hosts := MergeHosts(ownNamespace(srv.GetHosts(), ref.Gateway.Namespace))
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
	}
	p := protocol.Parse(srv.GetPort().GetProtocol())
	tlsServer := srv.GetTls() != nil && !p.IsHTTP()
	key := [2]string{srv.GetPort().GetProtocol(), bind}
	first := !mp.keys[key]
	v := mp.mergeProtocol(ref, srv, p, tlsServer, first)
	if v.Drop == DropNone {
		mp.keys[key] = true
	}
	return v
}

// mergeProtocol applies the rules of a port's plain server and HTTPS
// route names to a server whose TLS hosts passed.
func (mp *mergedPort) mergeProtocol(ref ServerRef, srv *networking.Server, p protocol.Protocol, tlsServer, first bool) MergeVerdict {
	bind := srv.GetBind()
	if plain := mp.plain; plain != nil {
		plainSrv := plain.Server()
		if plainSrv.GetBind() != bind {
			// Another listener. A new plain server takes over as the one
			// later servers meet, as in istiod.
			if first && !tlsServer {
				mp.plain = &ref
			}
			return MergeVerdict{}
		}
		current := protocol.Parse(plainSrv.GetPort().GetProtocol())
		if !current.IsHTTP() || !p.IsHTTP() {
			return MergeVerdict{Drop: DropProtocolConflict, Earlier: *plain}
		}
		return MergeVerdict{}
	}
	if !tlsServer {
		mp.plain = &ref
		return MergeVerdict{}
	}
	if p == protocol.HTTPS && srv.GetTls().GetMode() != networking.ServerTLSSettings_PASSTHROUGH && srv.GetTls().GetMode() != networking.ServerTLSSettings_AUTO_PASSTHROUGH {
		route := HTTPSRouteName(ref.Gateway, srv)
		if mp.httpsRoutes[route] {
			return MergeVerdict{Drop: DropDuplicateHTTPSRoute}
		}
		mp.httpsRoutes[route] = true
	}
	return MergeVerdict{}
}

// HTTPSRouteName is the route configuration istiod names after an HTTPS
// server that terminates TLS: https.<port>.<port name>.<gateway>.<namespace>,
// and .<bind> when the server binds an address.
func HTTPSRouteName(gw *model.Gateway, srv *networking.Server) string {
	name := "https." + strconv.FormatUint(uint64(srv.GetPort().GetNumber()), 10) + "." + srv.GetPort().GetName() + "." + gw.Name + "." + gw.Namespace
	if b := srv.GetBind(); b != "" {
		name += "." + b
	}
	return name
}
