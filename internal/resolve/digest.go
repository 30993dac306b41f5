package resolve

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/deephash"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// Digester digests what a proxy's Envoy configuration is made of, so that
// two compiles can tell a proxy's configuration unchanged without building
// it: emit reads a proxy's view (everything its fields reach) and, of the
// mesh, only what the methods below name. A view's digest covers both, so
// equal digests mean emit reads equal data and, being a function of what
// it reads and its options, builds equal configurations.
//
// The mesh-wide reads, by Mesh method emit calls:
//   - Config (mesh config) and DualStack, in every digest;
//   - VIPsFor: the view's service and proxy, and DualStack;
//   - ProxyMTLS, NamespaceMTLS: the PeerAuthentication index, in every digest;
//   - OutboundRoutes, EgressRoutes: the view and every service hostname
//     (isHost), in every digest;
//   - ServedPorts: the proxy's workload's served ports, in its digest;
//   - ServerNames, DestinationCluster: the view and Config;
//   - MergeGateways: the view and the proxy's served ports (through
//     GatewayTargetPort), in routers' digests;
//   - GatewayRouteConfig: the view and, through GatewayHTTPRoutes, the
//     whole registry (gatewayService), in routers' digests.
//
// Emit's test TestMeshReadsAreDigested fails when emit calls a Mesh method
// this list does not name.
//
// Cut from a view: a scope's registry and its slot index, which map a
// hostname to the scope's own service (whose hostname and host ID are
// digested), its base, the registry's list its own services started
// from, a destination's host number, which its hostname gives, and
// the scope's proxies, which emit does not read. Cut from
// every object: where it is written and its input order, which serve
// reports only (model.ObjectMeta): a file moved or renamed changes no
// configuration.
type Digester struct {
	m      *Mesh
	h      *deephash.Hasher
	global deephash.Sum
	// registry is the whole registry's digest, for routers; made on first
	// use.
	registry *deephash.Sum
	// scopes are the digests of scopes' cluster inputs (Clusters), by
	// scope; egress those of their listener inputs (Listeners).
	scopes map[*Scope]deephash.Sum
	egress map[*Scope]deephash.Sum
	// clusters are views' Clusters digests; l4 what Listeners reads of
	// each VirtualService, once, so that the Hasher digests it once.
	clusters map[*ProxyView]deephash.Sum
	l4       map[*VirtualService]*l4Inputs
}

// DigestedMeshReads are the Mesh methods whose reads Digester covers.
func DigestedMeshReads() []string {
	return []string{"Config", "DualStack", "VIPsFor", "ProxyMTLS", "NamespaceMTLS", "OutboundRoutes", "EgressRoutes", "ServedPorts", "ServerNames", "DestinationCluster", "GatewayRouteConfig", "MergeGateways"}
}

// NewDigester digests the mesh-wide reads of m.
func (m *Mesh) NewDigester() (*Digester, error) {
	h := deephash.New(deephash.Cuts{
		reflect.TypeFor[Scope]():            {"reg", "slot", "Proxies", "base", "onBase"},
		reflect.TypeFor[Destination]():      {"hostID"},
		reflect.TypeFor[model.ObjectMeta](): {"Source", "Seq"},
	})
	hosts := slices.Sorted(maps.Keys(m.reg.byHostNs))
	g, err := h.Sum(struct {
		Config    any
		DualStack bool
		Peers     *peerIndex
		Hosts     []host.Name
	}{m.Config, m.DualStack, m.peers, hosts})
	if err != nil {
		return nil, fmt.Errorf("digest mesh: %w", err)
	}
	return &Digester{m: m, h: h, global: g, scopes: map[*Scope]deephash.Sum{}, egress: map[*Scope]deephash.Sum{},
		clusters: map[*ProxyView]deephash.Sum{}, l4: map[*VirtualService]*l4Inputs{}}, nil
}

// View digests what v's configuration is built from. It is not safe for
// concurrent use.
func (d *Digester) View(v *ProxyView) (deephash.Sum, error) {
	parts := struct {
		Global deephash.Sum
		View   *ProxyView
		Served []ServedPort
		Reg    deephash.Sum
	}{Global: d.global, View: v, Served: d.m.ServedPorts(v.Proxy.Object)}
	if v.Proxy.Type == RouterProxy {
		if d.registry == nil {
			s, err := d.h.Sum(d.m.reg)
			if err != nil {
				return deephash.Sum{}, fmt.Errorf("digest registry: %w", err)
			}
			d.registry = &s
		}
		parts.Reg = *d.registry
	}
	s, err := d.h.Sum(parts)
	if err != nil {
		return deephash.Sum{}, fmt.Errorf("digest proxy %s: %w", v.Proxy.ID(), err)
	}
	return s, nil
}

// Clusters digests what a sidecar's outbound clusters are built from: of
// the view, the proxy (its type, IP families and labels, which pick
// DestinationRule rules), the Sidecar in force, and of the scope its
// services and their DestinationRule decisions, not its listeners or
// VirtualServices; of the mesh, the mesh-wide reads every digest holds
// (mesh config, DualStack, PeerAuthentication for auto mTLS). A
// VirtualService edit leaves it unchanged, so the next compile may take
// the clusters from the one before. Emit's part reuse test fails when a
// cluster input is missing here. It is not safe for concurrent use.
func (d *Digester) Clusters(v *ProxyView) (deephash.Sum, error) {
	if s, ok := d.clusters[v]; ok {
		return s, nil
	}
	sc, ok := d.scopes[v.Scope]
	if !ok {
		var err error
		sc, err = d.h.Sum(struct {
			Namespace string
			Choice    SidecarChoice
			Services  []*Service
			DRs       []*DRDecision
		}{v.Scope.Namespace, v.Scope.Choice, v.Scope.Services, v.Scope.drs})
		if err != nil {
			return deephash.Sum{}, fmt.Errorf("digest scope %s: %w", v.Scope.Name(), err)
		}
		d.scopes[v.Scope] = sc
	}
	s, err := d.h.Sum(struct {
		Global deephash.Sum
		Scope  deephash.Sum
		Proxy  *Proxy
		Choice SidecarChoice
	}{d.global, sc, v.Proxy, v.Choice})
	if err != nil {
		return deephash.Sum{}, fmt.Errorf("digest proxy %s clusters: %w", v.Proxy.ID(), err)
	}
	d.clusters[v] = s
	return s, nil
}

// Listeners digests what a sidecar's outbound listeners are built from:
// what its clusters are (Clusters), and of the scope's egress listeners
// their ports, binds, hosts and services and, of their VirtualServices,
// the hosts and the TCP and TLS routes, which make filter chains, not the
// HTTP routes, which reach only route configurations (a listener names
// its port's route configuration whatever it holds). A VirtualService
// edit to HTTP routes leaves it unchanged. It covers listeners that name
// their route configurations (xDS), not those holding them inline. It is
// not safe for concurrent use.
func (d *Digester) Listeners(v *ProxyView) (deephash.Sum, error) {
	c, err := d.Clusters(v)
	if err != nil {
		return deephash.Sum{}, err
	}
	eg, ok := d.egress[v.Scope]
	if !ok {
		if eg, err = d.h.Sum(d.egressInputs(v.Scope)); err != nil {
			return deephash.Sum{}, fmt.Errorf("digest scope %s listeners: %w", v.Scope.Name(), err)
		}
		d.egress[v.Scope] = eg
	}
	s, err := d.h.Sum(struct{ Clusters, Egress deephash.Sum }{c, eg})
	if err != nil {
		return deephash.Sum{}, fmt.Errorf("digest proxy %s listeners: %w", v.Proxy.ID(), err)
	}
	return s, nil
}

// egressListenerInputs is what outbound listeners read of an egress
// listener.
type egressListenerInputs struct {
	Port            *networking.SidecarPort
	Bind            string
	CaptureNone     bool
	Hosts           []string
	Services        []*Service
	VirtualServices []*l4Inputs
}

// l4Inputs is what outbound listeners read of a VirtualService: which
// hosts it routes and its TCP and TLS routes, with where it was written
// (chain metadata, destinations' namespace).
type l4Inputs struct {
	Namespace, Name      string
	Hosts                []host.Name
	Gateways             []string
	Delegate, GatewayAPI bool
	TCP                  []*networking.TCPRoute
	TLS                  []*networking.TLSRoute
}

func (d *Digester) egressInputs(sc *Scope) []egressListenerInputs {
	out := make([]egressListenerInputs, len(sc.Listeners))
	for i, l := range sc.Listeners {
		in := egressListenerInputs{Port: l.Port, Bind: l.Bind, CaptureNone: l.CaptureNone, Hosts: l.Hosts, Services: l.Services}
		for _, vs := range l.VirtualServices {
			l4 := d.l4[vs]
			if l4 == nil {
				l4 = &l4Inputs{
					Namespace: vs.Object.Namespace, Name: vs.Object.Name, Hosts: vs.Hosts, Gateways: vs.Gateways,
					Delegate: vs.Delegate, GatewayAPI: vs.GatewayAPI, TCP: vs.Object.Spec.GetTcp(), TLS: vs.Object.Spec.GetTls(),
				}
				d.l4[vs] = l4
			}
			in.VirtualServices = append(in.VirtualServices, l4)
		}
		out[i] = in
	}
	return out
}

// Own digests what a sidecar's own resources, its inbound clusters and
// listeners, are built from: what its clusters are (Clusters: the proxy,
// its Sidecar, the scope's DestinationRule decisions, the mesh-wide
// reads) and the ports its workload serves with their services
// (ServedPorts), not the scope's listeners or VirtualServices. It is not
// safe for concurrent use.
func (d *Digester) Own(v *ProxyView) (deephash.Sum, error) {
	c, err := d.Clusters(v)
	if err != nil {
		return deephash.Sum{}, err
	}
	s, err := d.h.Sum(struct {
		Clusters deephash.Sum
		Served   []ServedPort
	}{c, d.m.ServedPorts(v.Proxy.Object)})
	if err != nil {
		return deephash.Sum{}, fmt.Errorf("digest proxy %s own resources: %w", v.Proxy.ID(), err)
	}
	return s, nil
}
