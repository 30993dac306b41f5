package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fatih/color"

	"github.com/meshc/meshc/internal/diag"
)

// TextOptions configure the text report.
type TextOptions struct {
	Color bool
	// Verbose adds egress listeners, hidden services and merge details.
	Verbose bool
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// hiddenShown bounds the hidden services listed in verbose mode.
const hiddenShown = 20

// WriteText writes the report for a person: one screen by default.
func WriteText(w io.Writer, r Report, opts TextOptions) error {
	head, dim, bold := paint(opts.Color, color.Bold, color.Underline), paint(opts.Color, color.Faint), paint(opts.Color, color.Bold)
	var b strings.Builder
	p := r.Proxy
	diag.Fprintf(&b, "%s %s/%s (%s, %s)  %s\n", bold("Proxy"), p.Namespace, p.Name, p.Kind, p.Type, dim(p.Source.Location()))
	if len(p.Labels) > 0 {
		diag.Fprintf(&b, "  labels: %s\n", labels(p.Labels))
	}
	diag.Fprintf(&b, "  service account: %s; sidecar injected: %s\n", p.ServiceAccount, p.Injection)
	if len(p.Ancestry) > 0 {
		diag.Fprintf(&b, "  namespace hierarchy: %s > %s\n", strings.Join(p.Ancestry, " > "), p.Namespace)
	}

	diag.Fprintf(&b, "\n%s\n", head("Sidecar"))
	switch s := r.Sidecar; {
	case s.Name == "" && s.Reason == "gateway":
		b.WriteString("  none: gateways ignore Sidecar resources and see every service visible to their namespace\n")
	case s.Name == "":
		b.WriteString("  built-in default: no Sidecar in the namespace or the root namespace, so every visible service is imported (egress */*)\n")
	default:
		diag.Fprintf(&b, "  %s (%s)  %s\n", s.Name, s.Reason, dim(s.Source.Location()))
		if s.InheritedFrom != nil {
			diag.Fprintf(&b, "  inherited from %s/%s through the namespace hierarchy  %s\n", s.InheritedFrom.Namespace, s.InheritedFrom.Name, dim(s.InheritedFrom.Location()))
		}
	}
	if opts.Verbose {
		for _, e := range r.Sidecar.Egress {
			port := "any port"
			if e.Port != 0 {
				port = fmt.Sprintf("port %d", e.Port)
			}
			diag.Fprintf(&b, "  egress on %s: %s\n", port, strings.Join(e.Hosts, ", "))
		}
	}
	for _, s := range r.Sidecar.Skipped {
		diag.Fprintf(&b, "  %s %s: %s\n", dim("not used:"), s.Name, s.Why)
	}

	if t := r.MTLS; t != nil {
		diag.Fprintf(&b, "\n%s\n", head("Inbound mutual TLS"))
		if t.By == nil {
			diag.Fprintf(&b, "  %s: no PeerAuthentication sets a mode, so istiod's default holds\n", t.Mode)
		} else {
			diag.Fprintf(&b, "  %s from the %s PeerAuthentication %s/%s  %s\n", t.Mode, t.Level, t.By.Namespace, t.By.Name, dim(t.By.Location()))
		}
		for _, p := range t.Ports {
			diag.Fprintf(&b, "  port %d: %s from %s/%s's port-level setting  %s\n", p.Port, p.Mode, t.PortsBy.Namespace, t.PortsBy.Name, dim(t.PortsBy.Location()))
		}
	}

	diag.Fprintf(&b, "\n%s (%d)\n", head("Services visible"), len(r.Services))
	ns := ""
	for _, s := range r.Services {
		if s.Namespace != ns {
			ns = s.Namespace
			diag.Fprintf(&b, "  %s\n", bold(ns))
		}
		vip := s.VIP
		if s.PlaceholderVIP {
			vip += " (placeholder)"
		}
		diag.Fprintf(&b, "    %s  %s  %s  %s  %s\n", s.Host, strings.Join(s.Ports, ","), vip, plural(s.Endpoints, "endpoint"), dim(s.Why))
	}
	if opts.Verbose && len(r.Hidden) > 0 {
		diag.Fprintf(&b, "\n%s (%d)\n", head("Services not visible"), len(r.Hidden))
		for _, h := range r.Hidden[:min(len(r.Hidden), hiddenShown)] {
			diag.Fprintf(&b, "    %s (%s): %s\n", h.Host, h.Namespace, h.Why)
		}
		if len(r.Hidden) > hiddenShown {
			diag.Fprintf(&b, "    and %d more (-o json lists all)\n", len(r.Hidden)-hiddenShown)
		}
	}

	diag.Fprintf(&b, "\n%s\n", head("DestinationRules"))
	if len(r.DestinationRules) == 0 {
		b.WriteString("  none apply\n")
	}
	for _, d := range r.DestinationRules {
		sel := ""
		if d.Selector {
			sel = ", workload selector"
		}
		subsets := "no subsets"
		if len(d.Subsets) > 0 {
			subsets = "subsets " + strings.Join(d.Subsets, ", ")
		}
		diag.Fprintf(&b, "  %s  %s (%s%s)  %s\n", d.Host, d.Rule, d.Step, sel, subsets)
		if d.InheritedFrom != "" {
			diag.Fprintf(&b, "    inherited from %s\n", d.InheritedFrom)
		}
		if opts.Verbose && len(d.Contributors) > 0 {
			diag.Fprintf(&b, "    merged from %s\n", strings.Join(d.Contributors, ", "))
		}
		if len(d.Shadowed) > 0 {
			diag.Fprintf(&b, "    %s %s\n", dim("shadows"), strings.Join(d.Shadowed, ", "))
		}
	}

	diag.Fprintf(&b, "\n%s\n", head("VirtualServices"))
	switch {
	case r.Proxy.Type == "router" && len(r.Gateways) == 0:
		b.WriteString("  no Gateway selects this gateway proxy\n")
	case r.Proxy.Type == "router":
		for _, g := range r.Gateways {
			diag.Fprintf(&b, "  %s port %d%s, hosts %s\n", g.Gateway, g.Port, boundAt(g), strings.Join(g.Hosts, ", "))
			if len(g.Routes) == 0 {
				b.WriteString("    no VirtualService binds to it (requests get 404)\n")
			}
			for _, rt := range g.Routes {
				diag.Fprintf(&b, "    %s for %s\n", rt.VirtualService, strings.Join(rt.Hosts, ", "))
			}
		}
	case len(r.VirtualServices) == 0:
		b.WriteString("  none apply\n")
	}
	for _, v := range r.VirtualServices {
		diag.Fprintf(&b, "  %s  %s  %s\n", v.Host, v.VirtualService, dim(v.Reason))
		if len(v.Losers) > 0 {
			diag.Fprintf(&b, "    ignored: %s\n", strings.Join(v.Losers, ", "))
		}
	}

	if len(r.NotBuilt) > 0 {
		diag.Fprintf(&b, "\n%s\n", head("Policies meshc does not build"))
		for _, nb := range r.NotBuilt {
			diag.Fprintf(&b, "  %s %s/%s: the config lacks %s  %s\n", nb.Policy.Kind, nb.Policy.Namespace, nb.Policy.Name, nb.Omits, dim(nb.Policy.Location()))
		}
	}

	if r.Routes != nil {
		writeRoutes(&b, r.Routes, head, dim)
	}
	if err := writeDiagnostics(&b, r.Diagnostics, opts.Color, head); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// paint returns a function that colours text from the input, escaped for
// a terminal first (diag.Printable), when colour is on.
func paint(on bool, attrs ...color.Attribute) func(string) diag.Styled {
	c := color.New(attrs...)
	if on {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return func(s string) diag.Styled { return diag.Styled(c.Sprint(diag.Printable(s))) }
}

func labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// writeDiagnostics writes a report's Diagnostics section.
func writeDiagnostics(b *strings.Builder, ds []diag.Diagnostic, colored bool, head func(string) diag.Styled) error {
	diag.Fprintf(b, "\n%s\n", head("Diagnostics"))
	if len(ds) == 0 {
		b.WriteString("  none\n")
		return nil
	}
	var sub strings.Builder
	rd, err := diag.NewRenderer("text", diag.Options{Color: colored})
	if err != nil {
		return err
	}
	if err := rd.Render(&sub, ds); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(sub.String(), "\n"), "\n")
	// The renderer's summary line counts a whole run; drop it here.
	for _, l := range lines[:max(0, len(lines)-1)] {
		if l != "" {
			b.WriteString("  " + l + "\n")
		}
	}
	return nil
}

// boundAt says where a bound gateway server listens: its address, and its
// own listener and route configuration, or that the merge left it out.
func boundAt(g GatewayServer) string {
	switch {
	case g.Bind == "":
		return ""
	case g.Listener == "":
		return " bind " + g.Bind + " (left out when the gateway's servers merge)"
	case g.RouteConfiguration == "":
		return fmt.Sprintf(" bind %s (listener %s)", g.Bind, g.Listener)
	}
	return fmt.Sprintf(" bind %s (listener %s, route %s)", g.Bind, g.Listener, g.RouteConfiguration)
}
