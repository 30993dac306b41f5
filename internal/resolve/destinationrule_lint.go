package resolve

import (
	"slices"

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
