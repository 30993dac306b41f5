package resolve

import (
	"cmp"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/model"
)

// ServedPort is a service port as one workload serves it: the port and
// the workload port the service's endpoint on the workload targets (0 when
// a named targetPort found no container port).
type ServedPort struct {
	Service *Service
	Port    Port
	Target  uint32
}

// ServedPorts are the service ports workload serves (see workloadPorts).
func (m *Mesh) ServedPorts(workload *model.ObjectMeta) []ServedPort { return m.served[workload] }

// workloadPorts maps each workload (Pod, workload template, WorkloadEntry)
// to the service ports it serves, from the endpoints: every (service,
// port, target) once, services in the order istiod keeps a proxy's
// service targets — oldest first, then by host name, so that "web-v2"
// comes before "web" (docs/semantics/envoy-output.md §7.7) — each
// service's ports in endpoint order. Emit's inbound listeners and the
// port-conflict analyzers both read it, so they cannot disagree on what a
// workload serves, nor on which service comes first on a port.
func workloadPorts(services []*Service) map[*model.ObjectMeta][]ServedPort {
	services = slices.Clone(services)
	slices.SortStableFunc(services, func(a, b *Service) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(string(a.Host), string(b.Host)))
	})
	out := map[*model.ObjectMeta][]ServedPort{}
	for _, s := range services {
		for _, e := range s.Endpoints {
			if e.Workload == nil {
				continue
			}
			// The endpoint's own port: one number declared for UDP and
			// TCP may target two workload ports.
			for _, p := range s.Ports {
				if p.Number != e.ServicePort || p.Name != e.PortName {
					continue
				}
				sp := ServedPort{Service: s, Port: p, Target: e.Port}
				if !slices.Contains(out[e.Workload], sp) {
					out[e.Workload] = append(out[e.Workload], sp)
				}
				break
			}
		}
	}
	return out
}
