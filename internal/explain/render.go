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
	head, dim, bold := color.New(color.Bold, color.Underline), color.New(color.Faint), color.New(color.Bold)
	for _, c := range []*color.Color{head, dim, bold} {
		if opts.Color {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	var b strings.Builder
	p := r.Proxy
	fmt.Fprintf(&b, "%s %s/%s (%s, %s)  %s\n", bold.Sprint("Proxy"), p.Namespace, p.Name, p.Kind, p.Type, dim.Sprint(p.Source.Location()))
	if len(p.Labels) > 0 {
		fmt.Fprintf(&b, "  labels: %s\n", labels(p.Labels))
	}
	fmt.Fprintf(&b, "  service account: %s; sidecar injected: %s\n", p.ServiceAccount, p.Injection)
	if len(p.Ancestry) > 0 {
		fmt.Fprintf(&b, "  namespace hierarchy: %s > %s\n", strings.Join(p.Ancestry, " > "), p.Namespace)
	}

	fmt.Fprintf(&b, "\n%s\n", head.Sprint("Sidecar"))
	switch s := r.Sidecar; {
	case s.Name == "" && s.Reason == "gateway":
		b.WriteString("  none: gateways ignore Sidecar resources and see every service visible to their namespace\n")
	case s.Name == "":
		b.WriteString("  built-in default: no Sidecar in the namespace or the root namespace, so every visible service is imported (egress */*)\n")
	default:
		fmt.Fprintf(&b, "  %s (%s)  %s\n", s.Name, s.Reason, dim.Sprint(s.Source.Location()))
		if s.InheritedFrom != nil {
			fmt.Fprintf(&b, "  inherited from %s/%s through the namespace hierarchy  %s\n", s.InheritedFrom.Namespace, s.InheritedFrom.Name, dim.Sprint(s.InheritedFrom.Location()))
		}
	}
	if opts.Verbose {
		for _, e := range r.Sidecar.Egress {
			port := "any port"
			if e.Port != 0 {
				port = fmt.Sprintf("port %d", e.Port)
			}
			fmt.Fprintf(&b, "  egress on %s: %s\n", port, strings.Join(e.Hosts, ", "))
		}
	}
	for _, s := range r.Sidecar.Skipped {
		fmt.Fprintf(&b, "  %s %s: %s\n", dim.Sprint("not used:"), s.Name, s.Why)
	}

	if t := r.MTLS; t != nil {
		fmt.Fprintf(&b, "\n%s\n", head.Sprint("Inbound mutual TLS"))
		if t.By == nil {
			fmt.Fprintf(&b, "  %s: no PeerAuthentication sets a mode, so istiod's default holds\n", t.Mode)
		} else {
			fmt.Fprintf(&b, "  %s from the %s PeerAuthentication %s/%s  %s\n", t.Mode, t.Level, t.By.Namespace, t.By.Name, dim.Sprint(t.By.Location()))
		}
		for _, p := range t.Ports {
			fmt.Fprintf(&b, "  port %d: %s from %s/%s's port-level setting  %s\n", p.Port, p.Mode, t.PortsBy.Namespace, t.PortsBy.Name, dim.Sprint(t.PortsBy.Location()))
		}
	}

	fmt.Fprintf(&b, "\n%s (%d)\n", head.Sprint("Services visible"), len(r.Services))
	ns := ""
	for _, s := range r.Services {
		if s.Namespace != ns {
			ns = s.Namespace
			fmt.Fprintf(&b, "  %s\n", bold.Sprint(ns))
		}
		vip := s.VIP
		if s.PlaceholderVIP {
			vip += " (placeholder)"
		}
		fmt.Fprintf(&b, "    %s  %s  %s  %s  %s\n", s.Host, strings.Join(s.Ports, ","), vip, plural(s.Endpoints, "endpoint"), dim.Sprint(s.Why))
	}
	if opts.Verbose && len(r.Hidden) > 0 {
		fmt.Fprintf(&b, "\n%s (%d)\n", head.Sprint("Services not visible"), len(r.Hidden))
		for _, h := range r.Hidden[:min(len(r.Hidden), hiddenShown)] {
			fmt.Fprintf(&b, "    %s (%s): %s\n", h.Host, h.Namespace, h.Why)
		}
		if len(r.Hidden) > hiddenShown {
			fmt.Fprintf(&b, "    and %d more (-o json lists all)\n", len(r.Hidden)-hiddenShown)
		}
	}

	fmt.Fprintf(&b, "\n%s\n", head.Sprint("DestinationRules"))
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
		fmt.Fprintf(&b, "  %s  %s (%s%s)  %s\n", d.Host, d.Rule, d.Step, sel, subsets)
		if d.InheritedFrom != "" {
			fmt.Fprintf(&b, "    inherited from %s\n", d.InheritedFrom)
		}
		if opts.Verbose && len(d.Contributors) > 0 {
			fmt.Fprintf(&b, "    merged from %s\n", strings.Join(d.Contributors, ", "))
		}
		if len(d.Shadowed) > 0 {
			fmt.Fprintf(&b, "    %s %s\n", dim.Sprint("shadows"), strings.Join(d.Shadowed, ", "))
		}
	}

	fmt.Fprintf(&b, "\n%s\n", head.Sprint("VirtualServices"))
	switch {
	case r.Proxy.Type == "router" && len(r.Gateways) == 0:
		b.WriteString("  no Gateway selects this gateway proxy\n")
	case r.Proxy.Type == "router":
		for _, g := range r.Gateways {
			fmt.Fprintf(&b, "  %s port %d, hosts %s\n", g.Gateway, g.Port, strings.Join(g.Hosts, ", "))
			if len(g.Routes) == 0 {
				b.WriteString("    no VirtualService binds to it (requests get 404)\n")
			}
			for _, rt := range g.Routes {
				fmt.Fprintf(&b, "    %s for %s\n", rt.VirtualService, strings.Join(rt.Hosts, ", "))
			}
		}
	case len(r.VirtualServices) == 0:
		b.WriteString("  none apply\n")
	}
	for _, v := range r.VirtualServices {
		fmt.Fprintf(&b, "  %s  %s  %s\n", v.Host, v.VirtualService, dim.Sprint(v.Reason))
		if len(v.Losers) > 0 {
			fmt.Fprintf(&b, "    ignored: %s\n", strings.Join(v.Losers, ", "))
		}
	}

	if len(r.NotBuilt) > 0 {
		fmt.Fprintf(&b, "\n%s\n", head.Sprint("Policies meshc does not build"))
		for _, nb := range r.NotBuilt {
			fmt.Fprintf(&b, "  %s %s/%s: the config lacks %s  %s\n", nb.Policy.Kind, nb.Policy.Namespace, nb.Policy.Name, nb.Omits, dim.Sprint(nb.Policy.Location()))
		}
	}

	if r.Routes != nil {
		writeRoutes(&b, r.Routes, head.Sprint, dim.Sprint)
	}
	fmt.Fprintf(&b, "\n%s\n", head.Sprint("Diagnostics"))
	if len(r.Diagnostics) == 0 {
		b.WriteString("  none\n")
	} else {
		var sub strings.Builder
		rd, err := diag.NewRenderer("text", diag.Options{Color: opts.Color})
		if err != nil {
			return err
		}
		if err := rd.Render(&sub, r.Diagnostics); err != nil {
			return err
		}
		lines := strings.Split(strings.TrimRight(sub.String(), "\n"), "\n")
		// The renderer's summary line counts a whole run; drop it here.
		for _, l := range lines[:max(0, len(lines)-1)] {
			if l != "" {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
