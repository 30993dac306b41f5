package emit

import (
	"cmp"
	"slices"

	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

type mtlsMode = security.PeerAuthentication_MutualTLS_Mode

const (
	mtlsUnset      = security.PeerAuthentication_MutualTLS_UNSET
	mtlsPermissive = security.PeerAuthentication_MutualTLS_PERMISSIVE
	mtlsStrict     = security.PeerAuthentication_MutualTLS_STRICT
	mtlsDisable    = security.PeerAuthentication_MutualTLS_DISABLE
)

// peerPolicies are the PeerAuthentications by scope: the mesh's and each
// namespace's (the oldest selector-less one of the root namespace or the
// namespace), and the workload ones (with a selector, outside the root
// namespace), oldest first, as istiod composes them.
type peerPolicies struct {
	root      string
	namespace map[string]mtlsMode
	workload  map[string][]*model.PeerAuthentication
}

func newPeerPolicies(objs []model.Object, root string) *peerPolicies {
	var pas []*model.PeerAuthentication
	for _, o := range objs {
		if pa, ok := o.(*model.PeerAuthentication); ok {
			pas = append(pas, pa)
		}
	}
	slices.SortStableFunc(pas, func(a, b *model.PeerAuthentication) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Name, b.Name))
	})
	pp := &peerPolicies{root: root, namespace: map[string]mtlsMode{}, workload: map[string][]*model.PeerAuthentication{}}
	for _, pa := range pas {
		switch {
		case len(pa.Spec.GetSelector().GetMatchLabels()) == 0:
			if _, seen := pp.namespace[pa.Namespace]; !seen {
				pp.namespace[pa.Namespace] = pa.Spec.GetMtls().GetMode()
			}
		case pa.Namespace != root:
			pp.workload[pa.Namespace] = append(pp.workload[pa.Namespace], pa)
		}
	}
	return pp
}

// namespaceMode is the mode servers in a namespace accept as far as
// namespace and mesh policies say: what clients infer for auto mutual TLS
// (workload policies are not consulted). UNSET inherits; PERMISSIVE when
// nothing is set.
func (pp *peerPolicies) namespaceMode(ns string) mtlsMode {
	return cmp.Or(pp.namespace[ns], pp.namespace[pp.root], mtlsPermissive)
}

// serverMTLS is a proxy's own mutual TLS policy: the namespace mode, then
// the oldest workload policy selecting it, then that policy's port-level
// modes (UNSET taking the workload's mode), by workload port.
type serverMTLS struct {
	mode    mtlsMode
	perPort map[uint32]mtlsMode
}

func (pp *peerPolicies) forProxy(p *resolve.Proxy) serverMTLS {
	out := serverMTLS{mode: pp.namespaceMode(p.Namespace)}
	for _, pa := range pp.workload[p.Namespace] {
		if !resolve.LabelsMatch(pa.Spec.GetSelector().GetMatchLabels(), p.Labels) {
			continue
		}
		out.mode = cmp.Or(pa.Spec.GetMtls().GetMode(), out.mode)
		for port, m := range pa.Spec.GetPortLevelMtls() {
			if out.perPort == nil {
				out.perPort = map[uint32]mtlsMode{}
			}
			out.perPort[port] = cmp.Or(m.GetMode(), out.mode)
		}
		break
	}
	return out
}

// port is the mode on one workload port.
func (m serverMTLS) port(p uint32) mtlsMode {
	if mode, ok := m.perPort[p]; ok {
		return mode
	}
	return m.mode
}
