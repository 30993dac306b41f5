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
	// Diagnostics are the findings about the Gateway and its routes.
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
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

// Gateway builds the report of gw; ds are the compile's diagnostics.
func Gateway(m *resolve.Mesh, gw *gatewayapi.Gateway, ds []diag.Diagnostic) GatewayReport {
	kgw := gw.Object
	r := GatewayReport{Gateway: kgw.Ref(), Class: string(kgw.Spec.GatewayClassName), Managed: gw.Managed, Services: gw.Services,
		Conditions: gw.Conditions, Proxies: []string{}, Listeners: []ListenerReport{}, Diagnostics: []diag.Diagnostic{}}
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
		if l.IstioGateway != "" {
			diag.Fprintf(&b, "    Istio Gateway %s\n", l.IstioGateway)
		} else {
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
