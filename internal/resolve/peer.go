package resolve

import (
	"cmp"
	"slices"

	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/model"
)

// MTLSMode is a PeerAuthentication mutual TLS mode.
type MTLSMode = security.PeerAuthentication_MutualTLS_Mode

// MTLS is the mutual TLS a proxy's servers accept, as istiod composes
// PeerAuthentications, and the policies that decided it.
type MTLS struct {
	Mode MTLSMode
	// By is the PeerAuthentication that set Mode, at Level; nil when none
	// did and the default PERMISSIVE holds.
	By    *model.ObjectMeta
	Level MTLSLevel
	// Ports are the port-level modes of the workload policy, by workload
	// port (a port-level UNSET takes the workload's Mode); Port reads them.
	Ports map[uint32]MTLSMode
	// PortsBy is the workload policy the port-level modes come from.
	PortsBy *model.ObjectMeta
}

// MTLSLevel says which PeerAuthentication scope decided a mode.
type MTLSLevel string

// The scopes, narrowest last; MTLSDefault when no policy set a mode.
const (
	MTLSDefault   MTLSLevel = ""
	MTLSMesh      MTLSLevel = "mesh"
	MTLSNamespace MTLSLevel = "namespace"
	MTLSWorkload  MTLSLevel = "workload"
)

// Port is the mode on one workload port.
func (t MTLS) Port(p uint32) MTLSMode {
	if mode, ok := t.Ports[p]; ok {
		return mode
	}
	return t.Mode
}

// peerIndex holds the PeerAuthentications by scope: for each namespace
// (the root namespace standing for the mesh) the oldest selector-less
// one, and the workload ones (with a selector, outside the root
// namespace), oldest first; istiod ignores the rest.
type peerIndex struct {
	root      string
	namespace map[string]*model.PeerAuthentication
	workload  map[string][]*model.PeerAuthentication
}

func newPeerIndex(objs []model.Object, root string) *peerIndex {
	var pas []*model.PeerAuthentication
	for _, o := range objs {
		if pa, ok := o.(*model.PeerAuthentication); ok {
			pas = append(pas, pa)
		}
	}
	slices.SortStableFunc(pas, func(a, b *model.PeerAuthentication) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name))
	})
	pi := &peerIndex{root: root, namespace: map[string]*model.PeerAuthentication{}, workload: map[string][]*model.PeerAuthentication{}}
	for _, pa := range pas {
		switch {
		case len(pa.Spec.GetSelector().GetMatchLabels()) == 0:
			if _, seen := pi.namespace[pa.Namespace]; !seen {
				pi.namespace[pa.Namespace] = pa
			}
		case pa.Namespace != root:
			pi.workload[pa.Namespace] = append(pi.workload[pa.Namespace], pa)
		}
	}
	return pi
}

// NamespaceMTLS is the mode servers in namespace ns accept as far as the
// namespace and mesh policies say: what clients infer for auto mutual TLS,
// which never consults workload policies. UNSET inherits; PERMISSIVE when
// nothing is set.
func (m *Mesh) NamespaceMTLS(ns string) MTLS {
	for _, scope := range []string{ns, m.peers.root} {
		if pa := m.peers.namespace[scope]; pa != nil {
			if mode := pa.Spec.GetMtls().GetMode(); mode != security.PeerAuthentication_MutualTLS_UNSET {
				level := MTLSNamespace
				if scope == m.peers.root {
					level = MTLSMesh
				}
				return MTLS{Mode: mode, By: &pa.ObjectMeta, Level: level}
			}
		}
	}
	return MTLS{Mode: security.PeerAuthentication_MutualTLS_PERMISSIVE}
}

// ProxyMTLS is p's own mutual TLS: its namespace's, then the oldest
// workload policy selecting it, with that policy's port-level modes.
func (m *Mesh) ProxyMTLS(p *Proxy) MTLS {
	out := m.NamespaceMTLS(p.Namespace)
	for _, pa := range m.peers.workload[p.Namespace] {
		if !LabelsMatch(pa.Spec.GetSelector().GetMatchLabels(), p.Labels) {
			continue
		}
		if mode := pa.Spec.GetMtls().GetMode(); mode != security.PeerAuthentication_MutualTLS_UNSET {
			out.Mode, out.By, out.Level = mode, &pa.ObjectMeta, MTLSWorkload
		}
		for port, pm := range pa.Spec.GetPortLevelMtls() {
			if out.Ports == nil {
				out.Ports = map[uint32]MTLSMode{}
				out.PortsBy = &pa.ObjectMeta
			}
			out.Ports[port] = cmp.Or(pm.GetMode(), out.Mode)
		}
		break
	}
	return out
}
