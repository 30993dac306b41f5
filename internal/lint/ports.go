package lint

import (
	"cmp"
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
		if said, rest := impliedProtocol(port.Name); said != "" {
			p.Report(&svc.ObjectMeta, portPath(i).Key("name"), diag.PortSniffedNamed,
				port.Port, port.Name, objName(&svc.ObjectMeta), said, said+"-"+rest)
			return
		}
		p.Report(&svc.ObjectMeta, portPath(i).Key("name"), diag.PortSniffed,
			port.Port, port.Name, objName(&svc.ObjectMeta), suffix(port.Name, port.Port))
	})
}}

// impliedProtocol finds a protocol a port name spells out past its first
// word ("jaeger-collector-grpc"), where istiod does not look for it, and
// the rest of the name; "" when there is none. UDP is left out: a TCP
// port named udp-* is dropped (protocol.FromServicePort).
func impliedProtocol(name string) (said, rest string) {
	words := strings.Split(strings.ToLower(name), "-")
	for i := 1; i < len(words); i++ {
		n := 1
		if words[i] == "grpc" && i+1 < len(words) && words[i+1] == "web" {
			n = 2 // grpc-web is one protocol
		}
		w := strings.Join(words[i:i+n], "-")
		if proto := protocol.Parse(w); proto.IsUnsupported() || proto == protocol.UDP {
			continue
		}
		return w, strings.Join(slices.Concat(words[:i], words[i+n:]), "-")
	}
	return "", ""
}

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
		p.Report(&svc.ObjectMeta, portPath(i).Key("name"), diag.ExternalNamePortUnnamed,
			port.Port, port.Name, objName(&svc.ObjectMeta), why, target)
	})
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
			// sees together is named, oldest first; the subject is the
			// newest ServiceEntry among them.
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
			slices.SortStableFunc(conflicting, func(a, b decl) int { return slices.Index(group, a.svc) - slices.Index(group, b.svc) })
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
			d := p.Report(subject.svc.Object, path, diag.HostPortProtocols,
				h, n, detail)
			for _, c := range conflicting {
				if c != subject {
					d.Related = append(d.Related, related(c.svc.Object, "declares port %d as %s", n, protocolName(c.proto)))
				}
			}
		}
	}
}}

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

// serviceNames renders "ns/name" of services.
func serviceNames(svcs []*resolve.Service) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, objName(s.Object))
	}
	return out
}
