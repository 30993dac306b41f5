package lint

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// servicePorts calls f for each port of each Kubernetes Service whose port
// names istioctl checks, with the protocol istiod infers for it
// (docs/semantics/registry.md §1.2). Like istioctl it skips system
// namespaces, the control plane's Services and those a Gateway controller
// manages; HNC copies are left to their source.
func servicePorts(p *Pass, f func(svc *model.Service, i int, proto protocol.Protocol)) {
	for _, o := range p.Mesh.Objects {
		svc, ok := o.(*model.Service)
		if !ok || svc.InheritedFrom != nil || resolve.SystemNamespace(svc.Namespace) {
			continue
		}
		if _, cp := svc.Labels["istio"]; cp || svc.Labels["release"] == "istio" {
			continue
		}
		switch svc.Labels["gateway.istio.io/managed"] {
		case "istio.io-gateway-controller", "istio.io-mesh-controller", "istio.io-eastwest-controller":
			continue
		}
		for i, port := range svc.Spec.Ports {
			app := ""
			if port.AppProtocol != nil {
				app = *port.AppProtocol
			}
			f(svc, i, protocol.FromServicePort(string(port.Protocol), port.Name, app, port.Port))
		}
	}
}

func portPath(i int) model.Path { return model.ParsePath("spec.ports").Index(i) }

// MC3006: a Service port whose name and appProtocol select no protocol.
var portNameWithoutProtocol = &Analyzer{Entry: diag.PortNameWithoutProtocol, Run: func(p *Pass) {
	servicePorts(p, func(svc *model.Service, i int, proto protocol.Protocol) {
		if svc.Spec.Type == corev1.ServiceTypeExternalName || !proto.IsUnsupported() {
			return // ExternalName ports are MC3007's
		}
		port := svc.Spec.Ports[i]
		p.Report(&svc.ObjectMeta, portPath(i).Key("name"), "port %d (name %q) of Service %s selects no protocol, so istiod sniffs it (HTTP if the first bytes look like it, else TCP); name it <protocol>[-<suffix>], e.g. http-%s or tcp-%s, or set appProtocol",
			port.Port, port.Name, objName(&svc.ObjectMeta), suffix(port.Name, port.Port), suffix(port.Name, port.Port))
	})
}}

// suffix proposes the part after "<protocol>-" in a port name.
func suffix(name string, port int32) string {
	if name != "" {
		return name
	}
	return strconv.Itoa(int(port))
}

// MC3007: an ExternalName Service's port named tcp or selecting nothing.
var externalNamePortName = &Analyzer{Entry: diag.ExternalNamePortName, Run: func(p *Pass) {
	servicePorts(p, func(svc *model.Service, i int, proto protocol.Protocol) {
		port := svc.Spec.Ports[i]
		if svc.Spec.Type != corev1.ServiceTypeExternalName || !(proto.IsUnsupported() || port.Name == "tcp") {
			return
		}
		why := "selects no protocol, so it is sniffed"
		if port.Name == "tcp" {
			why = "is plain tcp"
		}
		target := "its external name"
		if svc.Spec.ExternalName != "" {
			target = svc.Spec.ExternalName
		}
		p.Report(&svc.ObjectMeta, portPath(i).Key("name"), "port %d (name %q) of ExternalName Service %s %s; an ExternalName service has no cluster IP, so its TCP traffic may not be forwarded to %s correctly: name the port for the protocol it carries (http, https, tls-...) or set appProtocol",
			port.Port, port.Name, objName(&svc.ObjectMeta), why, target)
	})
}}

// servedPort is one port of a Service as one workload serves it: the
// service port and the workload port resolve found for it.
type servedPort struct {
	svc            *resolve.Service
	number, target uint32
}

// workloadPorts lists, for each proxy with a sidecar in the input, the
// ports of the Kubernetes Services of its namespace that select it, from
// resolve's endpoints (a named targetPort is resolved per workload there);
// proxies in Mesh.Proxies order, services oldest first. Stand-in proxies
// have no endpoints, so without workloads this is empty.
func workloadPorts(m *resolve.Mesh) ([]*resolve.Proxy, map[*resolve.Proxy][]servedPort) {
	byObject := make(map[*model.ObjectMeta]*resolve.Proxy, len(m.Proxies))
	for _, px := range m.Proxies {
		byObject[px.Object] = px
	}
	out := map[*resolve.Proxy][]servedPort{}
	for _, s := range m.Services {
		if s.Registry != resolve.Kubernetes {
			continue
		}
		for _, ep := range s.Endpoints {
			sp := servedPort{s, ep.ServicePort, ep.Port}
			if px := byObject[ep.Workload]; px != nil && !slices.Contains(out[px], sp) {
				out[px] = append(out[px], sp)
			}
		}
	}
	var pxs []*resolve.Proxy
	for _, px := range m.Proxies {
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

// conflicts groups per-workload conflicts by key, in first-seen order.
type conflicts struct {
	byKey map[string]*workloadConflict
	order []string
}

func (c *conflicts) add(px *resolve.Proxy, svcs []*resolve.Service, port uint32, detail string) {
	key := fmt.Sprintf("%s|%d|%s", strings.Join(serviceNames(svcs), ","), port, detail)
	if c.byKey == nil {
		c.byKey = map[string]*workloadConflict{}
	}
	w := c.byKey[key]
	if w == nil {
		w = &workloadConflict{services: svcs, port: port, detail: detail}
		c.byKey[key] = w
		c.order = append(c.order, key)
	}
	w.proxies = append(w.proxies, px)
}

// split describes Services that disagree on a value ("HTTP in a/x; TCP
// in a/y") and lists them all, by name, once each.
func split[K cmp.Ordered](by map[K][]*resolve.Service, label func(K) string) (string, []*resolve.Service) {
	var parts []string
	var all []*resolve.Service
	for _, k := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, label(k)+" in "+strings.Join(serviceNames(by[k]), ", "))
		all = append(all, by[k]...)
	}
	slices.SortFunc(all, func(a, b *resolve.Service) int { return cmp.Compare(objName(a.Object), objName(b.Object)) })
	return strings.Join(parts, "; "), slices.Compact(all)
}

// protocolName names a protocol for a message; an unknown one is sniffed.
func protocolName(pr protocol.Protocol) string {
	if pr.IsUnsupported() {
		return "none (sniffed)"
	}
	return string(pr)
}

// workloadIDs names proxies for a message: "workload ns/name" or
// "workloads ns/a, ns/b".
func workloadIDs(ps []*resolve.Proxy) string {
	ids := proxyIDs(ps)
	return plural(len(ids), "workload", "workloads") + " " + list(ids, 5)
}

// serviceNames renders "ns/name" of services.
func serviceNames(svcs []*resolve.Service) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, objName(s.Object))
	}
	return out
}

// MC3008: Services selecting one workload give one port number different
// protocols.
var workloadPortProtocolConflict = &Analyzer{Entry: diag.WorkloadPortProtocolConflict, Run: func(p *Pass) {
	pxs, portsOf := workloadPorts(p.Mesh)
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
		d := p.Report(subject.Object, portPath(portIndex(subject, c.port)),
			"Services %s select %s and declare port %d with different protocols (%s); the workload's inbound port gets one protocol, so traffic through the other Service is handled wrongly: make the protocols agree or use different port numbers",
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
var workloadTargetPortConflict = &Analyzer{Entry: diag.WorkloadTargetPortConflict, Run: func(p *Pass) {
	pxs, portsOf := workloadPorts(p.Mesh)
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
		d := p.Report(subject.Object, portPath(i).Key("targetPort"),
			"%s %s %s and %s different service ports to workload port %d (%s); istiod builds one inbound chain for that workload port from one of them: use the same service port for it everywhere",
			plural(len(c.services), "Service", "Services"), list(serviceNames(c.services), 5), plural(len(c.services), "selects", "select")+" "+workloadIDs(c.proxies),
			plural(len(c.services), "sends", "send"), c.port, c.detail)
		for _, s := range c.services[:len(c.services)-1] {
			d.Related = append(d.Related, related(s.Object, "also sends a port to workload port %d of these workloads", c.port))
		}
		d.Proxies = proxyIDs(c.proxies)
	}
}}

// MC3010: ServiceEntries, or a ServiceEntry and a Service, give one host
// and port different protocols where some namespace sees both.
var serviceEntryProtocolConflict = &Analyzer{Entry: diag.ServiceEntryProtocolConflict, Run: func(p *Pass) {
	// Services is oldest first; group by host keeping that order, one
	// service per defining object (a ServiceEntry with several addresses
	// yields several).
	byHost := map[host.Name][]*resolve.Service{}
	var hosts []host.Name
	for _, s := range p.Mesh.Services {
		group := byHost[s.Host]
		if slices.ContainsFunc(group, func(o *resolve.Service) bool { return o.Object == s.Object }) {
			continue
		}
		if group == nil {
			hosts = append(hosts, s.Host)
		}
		byHost[s.Host] = append(group, s)
	}
	for _, h := range hosts {
		group := byHost[h]
		if len(group) < 2 || !slices.ContainsFunc(group, func(s *resolve.Service) bool { return s.Registry == resolve.External }) {
			continue
		}
		type decl struct {
			svc   *resolve.Service
			index int
			proto protocol.Protocol
		}
		byPort := map[uint32][]decl{}
		for _, s := range group {
			for i, port := range s.Ports {
				// A Kubernetes Service's UDP port shares its number with
				// the TCP one clients use (PortServing); only that counts.
				if port.Protocol != protocol.UDP || s.Registry == resolve.External {
					byPort[port.Number] = append(byPort[port.Number], decl{s, i, port.Protocol})
				}
			}
		}
		for _, n := range slices.Sorted(maps.Keys(byPort)) {
			decls := byPort[n]
			// Every declaration of a disagreeing pair that some namespace
			// sees together is named; the subject is the last
			// ServiceEntry among them in input order.
			var conflicting []decl
			for i, a := range decls {
				for _, b := range decls[:i] {
					if a.svc != b.svc && a.proto != b.proto && a.svc.SharesNamespaceWith(b.svc) {
						for _, x := range []decl{b, a} {
							if !slices.ContainsFunc(conflicting, func(y decl) bool { return y.svc == x.svc }) {
								conflicting = append(conflicting, x)
							}
						}
					}
				}
			}
			if len(conflicting) == 0 {
				continue
			}
			slices.SortStableFunc(conflicting, func(a, b decl) int { return a.svc.Object.Seq - b.svc.Object.Seq })
			subject := conflicting[len(conflicting)-1]
			for i := len(conflicting) - 1; i >= 0; i-- {
				if conflicting[i].svc.Registry == resolve.External {
					subject = conflicting[i]
					break
				}
			}
			byProto := map[protocol.Protocol][]*resolve.Service{}
			for _, c := range conflicting {
				byProto[c.proto] = append(byProto[c.proto], c.svc)
			}
			detail, _ := split(byProto, protocolName)
			path := portPath(subject.index).Key("protocol")
			if subject.svc.Registry == resolve.Kubernetes {
				path = portPath(subject.index)
			}
			d := p.Report(subject.svc.Object, path,
				"host %s port %d is declared with different protocols (%s); proxies that see these declarations use one of them for the host and build the port with its protocol, ignoring the others': declare the same protocol, or keep them apart with exportTo",
				h, n, detail)
			for _, c := range conflicting {
				if c != subject {
					d.Related = append(d.Related, related(c.svc.Object, "declares port %d as %s", n, protocolName(c.proto)))
				}
			}
		}
	}
}}
