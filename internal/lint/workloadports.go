package lint

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// servedPort is one port of a Service as one workload serves it: the
// service port and the workload port resolve found for it.
type servedPort struct {
	svc            *resolve.Service
	number, target uint32
}

// workloadPorts lists, for each proxy with a sidecar in the input, the
// ports of the Kubernetes Services that select it, as resolve found them
// from the endpoints (a named targetPort is resolved per workload there);
// proxies in Mesh.Proxies order, services oldest first. Stand-in proxies
// have no endpoints, so without workloads this is empty.
func workloadPorts(m *resolve.Mesh) ([]*resolve.Proxy, map[*resolve.Proxy][]servedPort) {
	out := map[*resolve.Proxy][]servedPort{}
	var pxs []*resolve.Proxy
	for _, px := range m.Proxies {
		for _, served := range m.ServedPorts(px.Object) {
			sp := servedPort{served.Service, served.Port.Number, served.Target}
			if served.Service.Registry == resolve.Kubernetes && !slices.Contains(out[px], sp) {
				out[px] = append(out[px], sp)
			}
		}
		if len(out[px]) > 0 {
			pxs = append(pxs, px)
		}
	}
	return pxs, out
}

// workloadConflict is one conflict between the Services of some
// workloads, reported once for all the workloads that share it.
type workloadConflict struct {
	services []*resolve.Service
	port     uint32
	detail   string
	proxies  []*resolve.Proxy
}

// conflicts groups per-workload conflicts by the services, port and
// detail they share, in first-seen order.
type conflicts struct {
	groups[string, workloadConflict]
}

func (c *conflicts) add(px *resolve.Proxy, svcs []*resolve.Service, port uint32, detail string) {
	key := fmt.Sprintf("%s|%d|%s", strings.Join(serviceNames(svcs), ","), port, detail)
	w := c.groups.add(key, func() workloadConflict { return workloadConflict{services: svcs, port: port, detail: detail} })
	w.proxies = append(w.proxies, px)
}

// workloadIDs names proxies for a message: "workload ns/name" or
// "workloads ns/a, ns/b".
func workloadIDs(ps []*resolve.Proxy) string {
	ids := proxyIDs(ps)
	return plural(len(ids), "workload", "workloads") + " " + list(ids, 5)
}

// MC3008: Services selecting one workload give one port number different
// protocols.
var workloadPortProtocolConflict = &Analyzer{Entry: diag.WorkloadPortProtocolConflict, Requires: []*fact{factWorkloadPorts}, Run: func(p *Pass) {
	idx := p.workloadPorts()
	pxs, portsOf := idx.proxies, idx.ports
	var found conflicts
	for _, px := range pxs {
		var svcs []*resolve.Service
		for _, sp := range portsOf[px] {
			if !slices.Contains(svcs, sp.svc) {
				svcs = append(svcs, sp.svc)
			}
		}
		protos := map[uint32]map[protocol.Protocol][]*resolve.Service{}
		for _, s := range svcs {
			for _, port := range s.Ports {
				// One protocol per Service and number: the one serving
				// it, so a Service's own UDP and TCP 53 do not conflict.
				pr := port.Protocol
				if serving, ok := s.PortServing(port.Number); ok {
					pr = serving.Protocol
				}
				if protos[port.Number] == nil {
					protos[port.Number] = map[protocol.Protocol][]*resolve.Service{}
				}
				if !slices.Contains(protos[port.Number][pr], s) {
					protos[port.Number][pr] = append(protos[port.Number][pr], s)
				}
			}
		}
		for _, n := range slices.Sorted(maps.Keys(protos)) {
			byProto := protos[n]
			if len(byProto) < 2 {
				continue
			}
			detail, involved := split(byProto, protocolName)
			found.add(px, involved, n, detail)
		}
	}
	for _, k := range found.order {
		c := found.byKey[k]
		subject := c.services[len(c.services)-1]
		d := p.Report(subject.Object, portPath(portIndex(subject, c.port)), diag.WorkloadPortProtocols,
			list(serviceNames(c.services), 5), workloadIDs(c.proxies), c.port, c.detail)
		for _, s := range c.services[:len(c.services)-1] {
			d.Related = append(d.Related, related(s.Object, "also selects these workloads on port %d", c.port))
		}
		d.Proxies = proxyIDs(c.proxies)
	}
}}

// portIndex is the position in the Service's spec of its first port
// numbered n (resolve keeps the spec's order).
func portIndex(s *resolve.Service, n uint32) int {
	return max(0, slices.IndexFunc(s.Ports, func(p resolve.Port) bool { return p.Number == n }))
}

// MC3009: Services selecting one workload map different service ports to
// one workload port.
var workloadTargetPortConflict = &Analyzer{Entry: diag.WorkloadTargetPortConflict, Requires: []*fact{factWorkloadPorts}, Run: func(p *Pass) {
	idx := p.workloadPorts()
	pxs, portsOf := idx.proxies, idx.ports
	var found conflicts
	for _, px := range pxs {
		targets := map[uint32]map[uint32][]*resolve.Service{}
		for _, sp := range portsOf[px] {
			if targets[sp.target] == nil {
				targets[sp.target] = map[uint32][]*resolve.Service{}
			}
			if !slices.Contains(targets[sp.target][sp.number], sp.svc) {
				targets[sp.target][sp.number] = append(targets[sp.target][sp.number], sp.svc)
			}
		}
		for _, tp := range slices.Sorted(maps.Keys(targets)) {
			byPort := targets[tp]
			if len(byPort) < 2 {
				continue
			}
			detail, involved := split(byPort, func(n uint32) string { return strconv.Itoa(int(n)) })
			found.add(px, involved, tp, detail)
		}
	}
	for _, k := range found.order {
		c := found.byKey[k]
		subject := c.services[len(c.services)-1]
		// Point at the subject's port that targets the workload port.
		i := 0
		for _, sp := range portsOf[c.proxies[0]] {
			if sp.svc == subject && sp.target == c.port {
				i = portIndex(subject, sp.number)
			}
		}
		d := p.Report(subject.Object, portPath(i).Key("targetPort"), diag.WorkloadTargetPorts,
			plural(len(c.services), "Service ", "Services ")+list(serviceNames(c.services), 5), plural(len(c.services), "selects", "select")+" "+workloadIDs(c.proxies),
			plural(len(c.services), "sends", "send"), c.port, c.detail)
		for _, s := range c.services[:len(c.services)-1] {
			d.Related = append(d.Related, related(s.Object, "also sends a port to workload port %d of these workloads", c.port))
		}
		d.Proxies = proxyIDs(c.proxies)
	}
}}
