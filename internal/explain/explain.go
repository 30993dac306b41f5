// Package explain turns resolve's provenance into a report on one proxy:
// which Sidecar shapes it, what it sees and why, which DestinationRule and
// VirtualService apply to each host, and the diagnostics that concern it.
package explain

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// Report is everything explain says about a proxy. The JSON form carries
// the same facts as the text.
type Report struct {
	Proxy   Proxy   `json:"proxy"`
	Sidecar Sidecar `json:"sidecar"`
	// MTLS is what the proxy's servers accept; gateways have none, their
	// servers' TLS comes from the Gateway.
	MTLS             *MTLS             `json:"mtls,omitempty"`
	Services         []Service         `json:"services"`
	Hidden           []Hidden          `json:"hidden,omitempty"`
	DestinationRules []DestinationRule `json:"destinationRules"`
	VirtualServices  []VirtualService  `json:"virtualServices"`
	Gateways         []GatewayServer   `json:"gateways,omitempty"`
	// Routes are the HTTP route tables, on request (AddRoutes).
	Routes      []RouteTable      `json:"routes,omitempty"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	// NotBuilt are the policies istiod would build into this proxy's
	// config and meshc does not (MC8003 in a build).
	NotBuilt []NotBuilt `json:"notBuilt,omitempty"`
}

// MTLS is the inbound mutual TLS mode and the PeerAuthentication behind it.
type MTLS struct {
	Mode string `json:"mode"`
	// Level is mesh, namespace or workload; "" for istiod's default.
	Level string          `json:"level,omitempty"`
	By    *diag.ObjectRef `json:"by,omitempty"`
	Ports []PortMTLS      `json:"ports,omitempty"`
	// PortsBy is the workload policy the port-level modes come from.
	PortsBy *diag.ObjectRef `json:"portsBy,omitempty"`
}

// PortMTLS is a port-level mode, by workload port.
type PortMTLS struct {
	Port uint32 `json:"port"`
	Mode string `json:"mode"`
}

// NotBuilt is a policy that applies to the proxy but is not in meshc's
// output.
type NotBuilt struct {
	Policy diag.ObjectRef `json:"policy"`
	Omits  string         `json:"omits"`
}

// Proxy describes the proxy itself.
type Proxy struct {
	Namespace      string            `json:"namespace"`
	Name           string            `json:"name"`
	Kind           string            `json:"kind"`
	Type           string            `json:"type"`
	Labels         map[string]string `json:"labels,omitempty"`
	ServiceAccount string            `json:"serviceAccount"`
	Injection      string            `json:"injection"`
	Source         diag.ObjectRef    `json:"source"`
	// Ancestry is the namespace's HNC ancestors, root first.
	Ancestry []string `json:"ancestry,omitempty"`
}

// Sidecar says which Sidecar resource applies and why.
type Sidecar struct {
	Name   string `json:"name"` // "namespace/name", or "" for none
	Reason string `json:"reason"`
	// InheritedFrom is the source of a Sidecar HNC propagated here.
	InheritedFrom *diag.ObjectRef  `json:"inheritedFrom,omitempty"`
	Source        *diag.ObjectRef  `json:"source,omitempty"`
	Egress        []Egress         `json:"egress"`
	Skipped       []SkippedSidecar `json:"skipped,omitempty"`
}

// Egress is one egress listener.
type Egress struct {
	Port  uint32   `json:"port,omitempty"`
	Hosts []string `json:"hosts"`
}

// SkippedSidecar is a Sidecar that did not apply.
type SkippedSidecar struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// Service is one service the proxy sees.
type Service struct {
	Host      string   `json:"host"`
	Namespace string   `json:"namespace"`
	Registry  string   `json:"registry"`
	Ports     []string `json:"ports"`
	VIP       string   `json:"vip,omitempty"`
	// PlaceholderVIP says meshc made the VIP up: the manifests have none
	// (a placeholder cluster IP, or a ServiceEntry address meshc allocated
	// as istiod's IP allocator would).
	PlaceholderVIP bool `json:"placeholderVIP,omitempty"`
	// Endpoints counts the service's endpoints (all ports).
	Endpoints int    `json:"endpoints"`
	Why       string `json:"why"`
}

// Hidden is a service the proxy does not see, and why.
type Hidden struct {
	Host      string `json:"host"`
	Namespace string `json:"namespace"`
	Why       string `json:"why"`
}

// DestinationRule is the rule chosen for a host.
type DestinationRule struct {
	Host string `json:"host"`
	Rule string `json:"rule"` // "namespace/name" of the rule's first DR
	// InheritedFrom names the source when the rule is an HNC copy.
	InheritedFrom string   `json:"inheritedFrom,omitempty"`
	Step          string   `json:"step"`
	Contributors  []string `json:"contributors,omitempty"`
	Subsets       []string `json:"subsets,omitempty"`
	Selector      bool     `json:"selector,omitempty"`
	Shadowed      []string `json:"shadowed,omitempty"`
}

// GatewayServer is a server of a Gateway selecting a router proxy and the
// VirtualServices it takes.
type GatewayServer struct {
	Gateway string   `json:"gateway"`
	Port    uint32   `json:"port"`
	Hosts   []string `json:"hosts"`
	// Bind is the address a bound server listens on; Listener and
	// RouteConfiguration, set for a bound server only, are its own
	// listener and route configuration (resolve.MergedGateway), which
	// the port's unbound servers do not share. Both are empty for a
	// server the merge of the gateway's servers leaves out.
	Bind               string         `json:"bind,omitempty"`
	Listener           string         `json:"listener,omitempty"`
	RouteConfiguration string         `json:"routeConfiguration,omitempty"`
	Routes             []GatewayRoute `json:"routes,omitempty"`
}

// GatewayRoute is a VirtualService bound to a gateway server.
type GatewayRoute struct {
	VirtualService string   `json:"virtualService"`
	Hosts          []string `json:"hosts"`
}

// VirtualService is the VirtualService in force for a host.
type VirtualService struct {
	Host           string   `json:"host"`
	VirtualService string   `json:"virtualService"`
	Reason         string   `json:"reason"`
	Losers         []string `json:"losers,omitempty"`
}

// ProxyReport assembles the report on a proxy from its view. ds are all diagnostics of the
// run; the ones that concern the proxy are kept.
func ProxyReport(m *resolve.Mesh, v *resolve.ProxyView, ds []diag.Diagnostic) Report {
	p := v.Proxy
	// Empty lists, not null, in JSON.
	r := Report{Services: []Service{}, DestinationRules: []DestinationRule{}, VirtualServices: []VirtualService{}, Proxy: Proxy{
		Namespace: p.Namespace, Name: p.Name, Kind: p.Kind, Type: string(p.Type),
		Labels: p.Labels, ServiceAccount: p.ServiceAccount, Injection: p.Injection, Source: p.Object.Ref(),
	}}
	if m.Hierarchy != nil {
		r.Proxy.Ancestry = m.Hierarchy.Ancestry(p.Namespace)
	}
	r.Sidecar = sidecar(v)
	if p.Type != resolve.RouterProxy {
		r.MTLS = mtls(m.ProxyMTLS(p))
	}
	for _, pol := range m.PoliciesFor(p) {
		r.NotBuilt = append(r.NotBuilt, NotBuilt{Policy: pol.Object.Ref(), Omits: pol.Omits})
	}
	sc := v.Scope
	for _, s := range sc.Services {
		imp, _ := sc.Import(s.Host)
		why := "via " + imp.Entry
		if imp.ViaVirtualService != nil {
			why = fmt.Sprintf("destination of VirtualService %s/%s (cluster only)", imp.ViaVirtualService.Namespace, imp.ViaVirtualService.Name)
		} else if imp.Port != 0 {
			why += fmt.Sprintf(" on port %d", imp.Port)
		}
		svc := Service{Host: string(s.Host), Namespace: s.Namespace, Registry: s.Registry.String(), Why: why, PlaceholderVIP: s.PlaceholderVIP || s.AllocatedByMeshc, Endpoints: len(s.Endpoints)}
		if len(s.Addresses) > 0 {
			svc.VIP = s.Addresses[0]
		}
		for _, port := range s.Ports {
			svc.Ports = append(svc.Ports, fmt.Sprintf("%d/%s", port.Number, port.Protocol))
		}
		r.Services = append(r.Services, svc)
	}
	slices.SortStableFunc(r.Services, func(a, b Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Host, b.Host))
	})
	for _, h := range m.Hidden(sc) {
		r.Hidden = append(r.Hidden, Hidden{Host: string(h.Service.Host), Namespace: h.Service.Namespace, Why: h.Why})
	}
	hosts := make([]host.Name, 0, len(sc.Services))
	for _, s := range sc.Services {
		hosts = append(hosts, s.Host)
	}
	slices.Sort(hosts)
	for _, h := range hosts {
		d, _ := sc.DestinationRule(h)
		rule := d.Lookup.RuleFor(p)
		if rule == nil {
			continue
		}
		dr := DestinationRule{Host: string(h), Rule: name(&rule.First().ObjectMeta), Step: d.Lookup.Step.String(), Selector: rule.Selector != nil}
		if src := rule.First().InheritedFrom; src != nil {
			line, _ := src.Source.Position(src.Source.Line)
			dr.InheritedFrom = name(src) + " (" + src.Source.File + ":" + strconv.Itoa(line) + ")"
		}
		if len(rule.From) > 1 {
			for _, f := range rule.From {
				dr.Contributors = append(dr.Contributors, name(&f.ObjectMeta))
			}
		}
		for _, s := range rule.Subsets {
			dr.Subsets = append(dr.Subsets, s.GetName())
		}
		for _, s := range d.Shadowed {
			dr.Shadowed = append(dr.Shadowed, name(&s.ObjectMeta))
		}
		r.DestinationRules = append(r.DestinationRules, dr)
	}
	for _, c := range sc.VirtualServices {
		vs := VirtualService{Host: string(c.Host), VirtualService: name(&c.Winner.Object.ObjectMeta), Reason: sc.VSReason(c.Winner)}
		for _, l := range c.Losers() {
			vs.Losers = append(vs.Losers, name(&l.Object.ObjectMeta))
		}
		r.VirtualServices = append(r.VirtualServices, vs)
	}
	var merged *resolve.MergedGateway
	if len(v.Gateways) > 0 {
		merged = m.MergeGateways(v)
	}
	for _, g := range v.Gateways {
		gs := GatewayServer{Gateway: name(&g.Gateway.ObjectMeta), Port: g.Port, Hosts: g.Hosts}
		if gs.Bind = g.Bind(); gs.Bind != "" {
			if at, ok := merged.Placed(g); ok {
				gs.Listener, gs.RouteConfiguration = at.Listener.Name(""), at.Route
			}
		}
		for _, rt := range g.Routes {
			var hs []string
			for _, h := range rt.Hosts {
				hs = append(hs, string(h))
			}
			gs.Routes = append(gs.Routes, GatewayRoute{VirtualService: name(&rt.VirtualService.Object.ObjectMeta), Hosts: hs})
		}
		r.Gateways = append(r.Gateways, gs)
	}
	r.Diagnostics = concerning(ds, v)
	return r
}

func name(m *model.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func mtls(t resolve.MTLS) *MTLS {
	out := &MTLS{Mode: t.Mode.String(), Level: string(t.Level), By: refOf(t.By), PortsBy: refOf(t.PortsBy)}
	for _, port := range slices.Sorted(maps.Keys(t.Ports)) {
		out.Ports = append(out.Ports, PortMTLS{Port: port, Mode: t.Ports[port].String()})
	}
	return out
}

// refOf is m's reference, nil for nil.
func refOf(m *model.ObjectMeta) *diag.ObjectRef {
	if m == nil {
		return nil
	}
	r := m.Ref()
	return &r
}

func sidecar(v *resolve.ProxyView) Sidecar {
	c := v.Choice
	s := Sidecar{Reason: c.Reason}
	if c.Sidecar != nil {
		s.Name = name(&c.Sidecar.ObjectMeta)
		s.Source, s.InheritedFrom = refOf(&c.Sidecar.ObjectMeta), refOf(c.Sidecar.InheritedFrom)
	}
	for _, l := range v.Scope.Listeners {
		s.Egress = append(s.Egress, Egress{Port: l.Port.GetNumber(), Hosts: l.Hosts})
	}
	for _, sk := range c.Skipped {
		s.Skipped = append(s.Skipped, SkippedSidecar{Name: name(&sk.Sidecar.ObjectMeta), Why: sk.Why})
	}
	return s
}

// concerning keeps the diagnostics that name the proxy, or whose subject
// is its Sidecar.
func concerning(ds []diag.Diagnostic, v *resolve.ProxyView) []diag.Diagnostic {
	id := v.Proxy.ID()
	out := []diag.Diagnostic{}
	for _, d := range ds {
		if slices.Contains(d.Proxies, id) {
			out = append(out, d)
			continue
		}
		if c := v.Choice.Sidecar; c != nil && d.Object.Kind == "Sidecar" && d.Object.Namespace == c.Namespace && d.Object.Name == c.Name {
			out = append(out, d)
		}
	}
	return out
}
