package explain

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fatih/color"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/gatewayapi"
	"github.com/meshc/meshc/internal/resolve"
)

// GatewayReport explains a Gateway API Gateway as istiod compiles it: its
// gateway proxies, each listener with the routes attached and the
// conditions istiod would set (docs/semantics/gateway-api.md).
type GatewayReport struct {
	Gateway    diag.ObjectRef `json:"gateway"`
	Class      string         `json:"class"`
	Managed    bool           `json:"managed"`
	Services   []string       `json:"services"`
	Deployment string         `json:"deployment,omitempty"`
	Service    string         `json:"service,omitempty"`
	// Proxies are the gateway proxies of the input that serve it.
	Proxies    []string               `json:"proxies"`
	Conditions []gatewayapi.Condition `json:"conditions"`
	Listeners  []ListenerReport       `json:"listeners"`
	Rejected   []RejectedRoute        `json:"rejected,omitempty"`
	// Policies are the backend policies (BackendTLSPolicy,
	// XBackendTrafficPolicy) of the hosts its routes send to.
	Policies []PolicyReport `json:"policies,omitempty"`
	// Ambient is "waypoint" or "east-west" for an ambient Gateway, whose
	// proxy meshc does not compile; UsedBy and MeshRoutes are a
	// waypoint's Services and their mesh routes.
	Ambient    string           `json:"ambient,omitempty"`
	UsedBy     []string         `json:"usedBy,omitempty"`
	MeshRoutes []diag.ObjectRef `json:"meshRoutes,omitempty"`
	// Ignored are the routes whose parentRef names the waypoint itself.
	Ignored []diag.ObjectRef `json:"ignored,omitempty"`
	// Diagnostics are the findings about the Gateway and its routes.
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
}

// PolicyReport is a backend policy's targetRef naming a host the
// Gateway's routes send to, with the status istiod would give it.
type PolicyReport struct {
	Policy     diag.ObjectRef         `json:"policy"`
	Target     string                 `json:"target"`
	Host       string                 `json:"host"`
	Conditions []gatewayapi.Condition `json:"conditions"`
	// Shadowed says why istiod, accepting it, does not apply it.
	Shadowed string `json:"shadowed,omitempty"`
}

// ListenerReport is one listener of a Gateway.
type ListenerReport struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"`
	Hostname string `json:"hostname,omitempty"`
	// ListenerSet is the "namespace/name" of the ListenerSet that adds
	// the listener, empty for the Gateway's own.
	ListenerSet string `json:"listenerSet,omitempty"`
	// IstioGateway is the Istio Gateway istiod makes of the listener,
	// empty when it makes none.
	IstioGateway string                 `json:"istioGateway,omitempty"`
	Conditions   []gatewayapi.Condition `json:"conditions"`
	Routes       []diag.ObjectRef       `json:"routes"`
}

// RejectedRoute is a route's parentRef no listener accepts.
type RejectedRoute struct {
	Route   diag.ObjectRef `json:"route"`
	Reason  string         `json:"reason"`
	Message string         `json:"message"`
}

// Gateway builds the report of gw; policies are the conversion's backend
// policies, ds the compile's diagnostics.
func Gateway(m *resolve.Mesh, gw *gatewayapi.Gateway, policies []*gatewayapi.Policy, ds []diag.Diagnostic) GatewayReport {
	kgw := gw.Object
	r := GatewayReport{Gateway: kgw.Ref(), Class: string(kgw.Spec.GatewayClassName), Managed: gw.Managed, Services: gw.Services,
		Conditions: gw.Conditions, Proxies: []string{}, Listeners: []ListenerReport{}, Diagnostics: []diag.Diagnostic{},
		Ambient: gatewayapi.AmbientKind(gw.Controller), UsedBy: gw.Users}
	if gw.Deployment != nil {
		r.Deployment = name(&gw.Deployment.ObjectMeta)
	}
	if gw.Service != nil {
		r.Service = name(&gw.Service.ObjectMeta)
	}
	istio := map[string]bool{}
	subjects := map[diag.ObjectRef]bool{kgw.Ref(): true}
	for _, l := range gw.Listeners {
		lr := ListenerReport{Name: l.Name, Port: l.Port, Protocol: l.Protocol, Hostname: l.Hostname, ListenerSet: l.ListenerSet,
			Conditions: l.Conditions, Routes: []diag.ObjectRef{}}
		if l.Istio != nil {
			lr.IstioGateway = name(&l.Istio.ObjectMeta)
			istio[lr.IstioGateway] = true
		}
		for _, a := range l.Routes {
			lr.Routes = append(lr.Routes, a.Object.Ref())
			subjects[a.Object.Ref()] = true
		}
		r.Listeners = append(r.Listeners, lr)
	}
	for _, x := range gw.Rejected {
		r.Rejected = append(r.Rejected, RejectedRoute{Route: x.Object.Ref(), Reason: x.Reason, Message: x.Message})
		subjects[x.Object.Ref()] = true
	}
	for _, a := range gw.MeshRoutes {
		r.MeshRoutes = append(r.MeshRoutes, a.Object.Ref())
		subjects[a.Object.Ref()] = true
	}
	for _, a := range gw.Ignored {
		r.Ignored = append(r.Ignored, a.Object.Ref())
	}
	for _, p := range policies {
		for _, t := range p.Targets {
			for _, h := range t.Hosts {
				if _, ok := slices.BinarySearch(gw.Backends, h); !ok {
					continue
				}
				target := t.Kind + " " + t.Name
				if t.Section != "" {
					target += " section " + t.Section
				}
				r.Policies = append(r.Policies, PolicyReport{Policy: p.Object.Ref(), Target: target, Host: h, Conditions: t.Conditions, Shadowed: t.Shadowed})
				subjects[p.Object.Ref()] = true
			}
		}
	}
	for _, v := range m.Views {
		if slices.ContainsFunc(v.Gateways, func(s resolve.GatewayServer) bool { return istio[name(&s.Gateway.ObjectMeta)] }) {
			r.Proxies = append(r.Proxies, v.Proxy.ID())
		}
	}
	for _, d := range ds {
		o := d.Object
		o.Line, o.Origin = 0, ""
		for s := range subjects {
			s.Line, s.Origin = 0, ""
			if s == o {
				r.Diagnostics = append(r.Diagnostics, d)
				break
			}
		}
	}
	return r
}

// WriteGatewayText writes a Gateway report for a person.
func WriteGatewayText(w io.Writer, r GatewayReport, opts TextOptions) error {
	head, dim, bold := paint(opts.Color, color.Bold, color.Underline), paint(opts.Color, color.Faint), paint(opts.Color, color.Bold)
	var b strings.Builder
	g := r.Gateway
	diag.Fprintf(&b, "%s %s/%s (class %s)  %s\n", bold("Gateway"), g.Namespace, g.Name, r.Class, dim(g.Location()))
	if r.Ambient != "" {
		diag.Fprintf(&b, "  ambient %s: meshc checks it but compiles no configuration for its proxy\n", r.Ambient)
	}
	if r.Managed {
		diag.Fprintf(&b, "  deployed by istiod: Deployment %s, Service %s\n", orInput(r.Deployment), orInput(r.Service))
	} else {
		b.WriteString("  deployed by hand: istiod binds it to the Services its addresses name\n")
	}
	diag.Fprintf(&b, "  services: %s\n", strings.Join(r.Services, ", "))
	proxies := "none in the input"
	if len(r.Proxies) > 0 {
		proxies = strings.Join(r.Proxies, ", ")
	}
	diag.Fprintf(&b, "  gateway proxies: %s\n", proxies)
	diag.Fprintf(&b, "  conditions: %s\n", conditions(r.Conditions))
	diag.Fprintf(&b, "\n%s\n", head("Listeners"))
	for _, l := range r.Listeners {
		host := l.Hostname
		if host == "" {
			host = "any host"
		}
		from := ""
		if l.ListenerSet != "" {
			from = "  from ListenerSet " + l.ListenerSet
		}
		diag.Fprintf(&b, "  %s  %s %s, %s%s\n", bold(l.Name), l.Protocol, strconv.Itoa(int(l.Port)), host, from)
		switch {
		case l.IstioGateway != "":
			diag.Fprintf(&b, "    Istio Gateway %s\n", l.IstioGateway)
		case r.Ambient == "waypoint" || r.Ambient != "" && l.Port == 15008:
			b.WriteString("    no Istio Gateway: istiod makes none of a waypoint's listeners or an east-west gateway's HBONE listener; routes do not attach\n")
		default:
			b.WriteString("    no Istio Gateway: istiod does not program this listener\n")
		}
		diag.Fprintf(&b, "    conditions: %s\n", conditions(l.Conditions))
		if len(l.Routes) == 0 {
			b.WriteString("    no route attached\n")
		}
		for _, rt := range l.Routes {
			diag.Fprintf(&b, "    %s %s/%s  %s\n", rt.Kind, rt.Namespace, rt.Name, dim(rt.Location()))
		}
	}
	if len(r.Rejected) > 0 {
		diag.Fprintf(&b, "\n%s\n", head("Routes not accepted"))
		for _, x := range r.Rejected {
			diag.Fprintf(&b, "  %s %s/%s (%s): %s  %s\n", x.Route.Kind, x.Route.Namespace, x.Route.Name, x.Reason, x.Message, dim(x.Route.Location()))
		}
	}
	if r.Ambient == "waypoint" {
		diag.Fprintf(&b, "\n%s\n", head("Waypoint users"))
		if len(r.UsedBy) == 0 {
			b.WriteString("  no Service or ServiceEntry of the input names it with istio.io/use-waypoint\n")
		}
		for _, u := range r.UsedBy {
			diag.Fprintf(&b, "  %s\n", u)
		}
		for _, rt := range r.MeshRoutes {
			diag.Fprintf(&b, "  mesh route %s %s/%s (applied to sidecars; the waypoint's use of it is not compiled)  %s\n", rt.Kind, rt.Namespace, rt.Name, dim(rt.Location()))
		}
		for _, rt := range r.Ignored {
			diag.Fprintf(&b, "  %s %s/%s names the waypoint as its parent: istiod gives it no status and makes nothing of it  %s\n", rt.Kind, rt.Namespace, rt.Name, dim(rt.Location()))
		}
	}
	if len(r.Policies) > 0 {
		diag.Fprintf(&b, "\n%s\n", head("Backend policies"))
		for _, p := range r.Policies {
			diag.Fprintf(&b, "  %s %s/%s  %s -> %s  %s\n", p.Policy.Kind, p.Policy.Namespace, p.Policy.Name, p.Target, p.Host, dim(p.Policy.Location()))
			diag.Fprintf(&b, "    conditions: %s\n", conditions(p.Conditions))
			if p.Shadowed != "" {
				diag.Fprintf(&b, "    not applied: %s\n", p.Shadowed)
			}
		}
	}
	if err := writeDiagnostics(&b, r.Diagnostics, opts.Color, head); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orInput(s string) string {
	if s == "" {
		return "(in the input)"
	}
	return s
}

// conditions lists conditions as Type=Status (Reason), false ones with
// their message.
func conditions(cs []gatewayapi.Condition) string {
	var parts []string
	for _, c := range cs {
		st := "True"
		if !c.Status {
			st = "False"
		}
		p := c.Type + "=" + st + " (" + c.Reason + ")"
		if !c.Status && c.Message != "" && c.Type != "Conflicted" {
			p += ": " + c.Message
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
