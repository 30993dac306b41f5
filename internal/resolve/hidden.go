package resolve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/host"
)

// Hidden is a mesh service a scope does not hold, and the rule that keeps
// it out.
type Hidden struct {
	Service *Service
	Why     string
}

// Hidden lists the services of the mesh a scope does not hold, with the
// reason: exportTo, losing the same-host choice to another namespace, or
// the Sidecar's egress hosts. It is derived on demand from the scope's
// records, since only explain asks for it.
func (m *Mesh) Hidden(sc *Scope) []Hidden {
	lost := map[host.Name]HostChoice{}
	for _, a := range sc.Ambiguous {
		lost[a.Host] = a
	}
	var out []Hidden
	seen := map[[2]string]bool{}
	for _, s := range m.Services {
		if got, ok := sc.Service(s.Host); ok && got.Namespace == s.Namespace {
			continue
		}
		key := [2]string{string(s.Host), s.Namespace}
		if seen[key] {
			continue
		}
		seen[key] = true
		var why string
		switch a, ok := lost[s.Host]; {
		case !s.VisibleIn(sc.Namespace) && s.exportTo.nowhere:
			why = `exportTo "~" hides it from every namespace`
		case !s.VisibleIn(sc.Namespace):
			why = "exportTo limits it to " + strings.Join(s.exportTo.names(), ", ")
		case ok:
			why = fmt.Sprintf("the same host from %s is used instead (%s)", a.Winner.Namespace, a.TieBreak)
		default:
			why = "the Sidecar's egress hosts do not import it"
		}
		out = append(out, Hidden{Service: s, Why: why})
	}
	slices.SortFunc(out, func(a, b Hidden) int {
		return cmp.Or(cmp.Compare(a.Service.Namespace, b.Service.Namespace), cmp.Compare(a.Service.Host, b.Service.Host))
	})
	return out
}
