package explain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// RouteTable is one HTTP route configuration of the proxy as resolve's
// route model has it, the table emit renders.
type RouteTable struct {
	Name         string       `json:"name"`
	VirtualHosts []RouteGroup `json:"virtualHosts"`
}

// RouteGroup is a virtual host, or on a gateway a server's VirtualService:
// its routes in the order they are tried.
type RouteGroup struct {
	Name    string      `json:"name"`
	Domains []string    `json:"domains,omitempty"`
	Routes  []RouteLine `json:"routes"`
}

// RouteLine is one route: what it matches, where it sends traffic, and the
// VirtualService rule that wrote it (a delegate's, when delegated).
type RouteLine struct {
	Name     string          `json:"name,omitempty"`
	Match    string          `json:"match"`
	Clusters []string        `json:"clusters,omitempty"`
	From     string          `json:"from,omitempty"`
	Source   *diag.ObjectRef `json:"source,omitempty"`
}

// AddRoutes adds the proxy's HTTP route tables to r: a sidecar's outbound
// route configurations, a gateway's routes per server and VirtualService.
func (r *Report) AddRoutes(m *resolve.Mesh, v *resolve.ProxyView) {
	r.Routes = []RouteTable{}
	if v.Proxy.Type == resolve.RouterProxy {
		for _, gs := range v.Gateways {
			gw := gs.Gateway.Namespace + "/" + gs.Gateway.Name
			t := RouteTable{Name: fmt.Sprintf("%s port %d", gw, gs.Port)}
			if bind := gs.Bind(); bind != "" {
				t.Name += " bind " + bind
			}
			for _, gr := range gs.Routes {
				g := RouteGroup{Name: name(gr.VirtualService.Object.Meta())}
				for _, h := range gr.Hosts {
					g.Domains = append(g.Domains, string(h))
				}
				g.Routes = routeLines(m.GatewayHTTPRoutes(gr.VirtualService, gw, v, gs.Port))
				t.VirtualHosts = append(t.VirtualHosts, g)
			}
			r.Routes = append(r.Routes, t)
		}
		return
	}
	for _, rc := range append(m.OutboundRoutes(v), m.EgressRoutes(v)...) {
		t := RouteTable{Name: rc.Name}
		for _, vh := range rc.VirtualHosts {
			t.VirtualHosts = append(t.VirtualHosts, RouteGroup{Name: vh.Name, Domains: vh.Domains, Routes: routeLines(vh.Routes)})
		}
		r.Routes = append(r.Routes, t)
	}
}

func routeLines(routes []*resolve.HTTPRoute) []RouteLine {
	out := []RouteLine{}
	for _, hr := range routes {
		l := RouteLine{Name: hr.Name, Match: describeMatch(hr.Match)}
		for _, c := range hr.Clusters {
			if len(hr.Clusters) == 1 {
				l.Clusters = append(l.Clusters, c.Name())
				continue
			}
			l.Clusters = append(l.Clusters, fmt.Sprintf("%s (weight %d)", c.Name(), c.Weight))
		}
		if s := hr.Source; s != nil {
			l.From = fmt.Sprintf("%s http[%d]", name(s.From.Object.Meta()), s.Index)
			at := model.Path{}.Key("spec").Key("http").Index(s.Index)
			ref := s.From.Object.RefAt(at)
			if from, p := s.From.Object.Written(at); from != s.From.Object.Meta() {
				// istiod made the VirtualService of a Gateway API route:
				// name the route and its rule.
				l.From = fmt.Sprintf("%s %s %s", from.Kind, name(from), p)
				ref = from.RefAt(p)
			}
			l.Source = &ref
		}
		out = append(out, l)
	}
	return out
}

// describeMatch summarises an HTTP match in one line.
func describeMatch(m *networking.HTTPMatchRequest) string {
	if m == nil {
		return "everything"
	}
	var parts []string
	if u := m.GetUri(); u != nil {
		parts = append(parts, "uri "+stringMatch(u))
	}
	if m.GetMethod() != nil {
		parts = append(parts, "method "+stringMatch(m.GetMethod()))
	}
	for _, k := range slices.Sorted(maps.Keys(m.GetHeaders())) {
		parts = append(parts, "header "+k+" "+stringMatch(m.GetHeaders()[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(m.GetQueryParams())) {
		parts = append(parts, "query "+k+" "+stringMatch(m.GetQueryParams()[k]))
	}
	if m.GetPort() != 0 {
		parts = append(parts, fmt.Sprintf("port %d", m.GetPort()))
	}
	if len(parts) == 0 {
		return "everything"
	}
	return strings.Join(parts, ", ")
}

func stringMatch(s *networking.StringMatch) string {
	switch {
	case s.GetExact() != "":
		return "= " + s.GetExact()
	case s.GetPrefix() != "":
		return "prefix " + s.GetPrefix()
	case s.GetRegex() != "":
		return "~ " + s.GetRegex()
	}
	return "present"
}

// writeRoutes writes the route tables section of the text report.
func writeRoutes(b *strings.Builder, routes []RouteTable, head, dim func(string) diag.Styled) {
	diag.Fprintf(b, "\n%s\n", head("Routes"))
	if len(routes) == 0 {
		b.WriteString("  no HTTP route configuration\n")
	}
	for _, t := range routes {
		diag.Fprintf(b, "  %s\n", t.Name)
		for _, g := range t.VirtualHosts {
			diag.Fprintf(b, "    %s", g.Name)
			if len(g.Domains) > 0 {
				diag.Fprintf(b, "  %s", dim(strings.Join(g.Domains, ", ")))
			}
			b.WriteString("\n")
			for i, l := range g.Routes {
				diag.Fprintf(b, "      %d. %s", i+1, l.Match)
				if len(l.Clusters) > 0 {
					diag.Fprintf(b, " -> %s", strings.Join(l.Clusters, ", "))
				}
				if l.From != "" {
					diag.Fprintf(b, "  %s", dim(l.From+" "+l.Source.Location()))
				}
				b.WriteString("\n")
			}
		}
	}
}
