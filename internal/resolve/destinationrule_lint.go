package resolve

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/host"
)

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
	out := m.ServicesNamed(h)
	for _, s := range m.reg.wildcards {
		if h.SubsetOf(s.Host) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, (*Service).compare)
	return out
}

// ProxyPort is the workload port on which proxy px serves service port p,
// as its endpoint would have it; ok is false when p names a target port
// px's containers do not declare.
func ProxyPort(p Port, px *Proxy) (uint32, bool) {
	return targetPort(p, workload{spec: &corev1.PodSpec{Containers: []corev1.Container{{Ports: px.ContainerPorts}}}})
}
