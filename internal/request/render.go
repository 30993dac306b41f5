package request

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/simulate"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// stageNames are the stages as the text report calls them.
var stageNames = map[simulate.Stage]string{
	simulate.Listener: "listener", simulate.FilterChain: "filter chain", simulate.NetworkFilter: "network filter",
	simulate.RouteConfiguration: "route configuration", simulate.VirtualHost: "virtual host", simulate.Route: "route",
	simulate.Cluster: "cluster",
}

// WriteText writes the report for a person: the request, one line per
// step with the resource's name and why it matched, the action, the
// clusters and endpoints, where the walk stopped, and the Istio objects
// behind it.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	rq := rep.Request
	diag.Fprintf(&b, "Request from %s (%s)\n", rep.From, rq.Mode)
	diag.Fprintf(&b, "  %s\n", describeRequest(rq))
	b.WriteByte('\n')
	actionShown := false
	showAction := func() {
		if a := rep.Action; a != nil && !actionShown {
			diag.Fprintf(&b, "  %-20s %s\n", "action", describeAction(a))
			actionShown = true
		}
	}
	for _, s := range rep.Steps {
		if s.Stage == simulate.Cluster {
			showAction()
		}
		name := s.Name
		if name == "" {
			name = "(unnamed)"
		}
		if s.Index >= 0 {
			name = fmt.Sprintf("%s [%d]", name, s.Index)
		}
		line := fmt.Sprintf("  %-20s %s", stageNames[s.Stage], name)
		if s.Detail != "" {
			line += "  (" + s.Detail + ")"
		}
		diag.Fprintf(&b, "%s\n", line)
		switch {
		case s.Stage == simulate.Route && rep.RouteRule != nil:
			diag.Fprintf(&b, "  %-20s by %s\n", "", rep.RouteRule)
		case s.Stage == simulate.Cluster && len(rep.Clusters) == 1:
			if p := describePolicy(rep.Clusters[0]); p != "" {
				diag.Fprintf(&b, "  %-20s %s\n", "", p)
			}
		}
	}
	showAction()
	if len(rep.Clusters) > 1 || (len(rep.Clusters) == 1 && rep.Cluster == "") {
		for _, c := range rep.Clusters {
			diag.Fprintf(&b, "  %-20s %s  (weight %d, %s)\n", "cluster", c.Name, c.Weight, cmp.Or(c.Type, "not in the configuration"))
			if p := describePolicy(c); p != "" {
				diag.Fprintf(&b, "  %-20s %s\n", "", p)
			}
		}
	}
	for _, e := range rep.Endpoints {
		diag.Fprintf(&b, "  %-20s %s\n", "endpoint", describeEndpoint(e, len(rep.Clusters) > 1))
	}
	switch {
	case rep.StoppedAt != "":
		diag.Fprintf(&b, "\nStopped at %s: %s\n", rep.StoppedAt, rep.Reason)
	case rep.Reason != "":
		diag.Fprintf(&b, "\nNote: %s\n", rep.Reason)
	}
	if len(rep.Objects) > 0 {
		b.WriteString("\nIstio objects\n")
		for _, o := range rep.Objects {
			diag.Fprintf(&b, "  %s: %s\n", o.Why, o)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func describeRequest(rq RequestInfo) string {
	var parts []string
	if rq.Method != "" {
		parts = append(parts, fmt.Sprintf("%s %s %s", rq.Method, rq.Host, rq.Path))
	}
	to := fmt.Sprintf("to %s:%d", rq.Address, rq.Port)
	if rq.Resolved != "" {
		to += " (" + rq.Resolved + ")"
	}
	parts = append(parts, to, rq.Protocol, rq.TLS)
	if rq.SNI != "" {
		parts = append(parts, "SNI "+rq.SNI)
	}
	if len(rq.ALPN) > 0 {
		parts = append(parts, "ALPN "+strings.Join(rq.ALPN, ","))
	}
	for _, k := range slices.Sorted(maps.Keys(rq.Headers)) {
		parts = append(parts, k+": "+rq.Headers[k])
	}
	return strings.Join(parts, ", ")
}

func describeAction(a *Action) string {
	var parts []string
	switch a.Kind {
	case string(simulate.Redirect):
		parts = append(parts, fmt.Sprintf("redirect %d", a.Status))
		if a.RedirectScheme != "" {
			parts = append(parts, "scheme "+a.RedirectScheme)
		}
		if a.RedirectPort != 0 {
			parts = append(parts, fmt.Sprintf("port %d", a.RedirectPort))
		}
	case string(simulate.DirectResponse):
		parts = append(parts, fmt.Sprintf("direct response %d", a.Status))
		if a.Body != "" {
			parts = append(parts, fmt.Sprintf("body %q", a.Body))
		}
	default:
		parts = append(parts, "forward")
	}
	add := func(label, v string) {
		if v != "" {
			parts = append(parts, label+" "+v)
		}
	}
	add("prefix rewrite", a.PrefixRewrite)
	add("regex rewrite", a.RegexRewrite)
	add("host rewrite", a.HostRewrite)
	if a.PrefixRewrite != "" || a.RegexRewrite != "" || a.HostRewrite != "" || a.Kind == string(simulate.Redirect) {
		add("to", a.Authority+a.Path)
	}
	add("timeout", a.Timeout)
	add("retries", a.Retries)
	add("mirrors", strings.Join(a.Mirrors, ","))
	if a.Fault {
		parts = append(parts, "fault injection")
	}
	add("adds", strings.Join(a.HeadersToAdd, ", "))
	add("removes", strings.Join(a.HeadersRemoved, ", "))
	return strings.Join(parts, "; ")
}

func describeEndpoint(e Endpoint, withCluster bool) string {
	s := e.Address
	if e.Port != 0 {
		s = fmt.Sprintf("%s:%d", e.Address, e.Port)
	}
	var attrs []string
	if withCluster {
		attrs = append(attrs, e.Cluster)
	}
	if e.Locality != "" {
		attrs = append(attrs, "locality "+e.Locality)
	}
	if e.TLSMode != "" {
		attrs = append(attrs, "tlsMode "+e.TLSMode)
	}
	if len(attrs) > 0 {
		s += "  (" + strings.Join(attrs, ", ") + ")"
	}
	return s
}

// describePolicy is a cluster's connection policy on one line: load
// balancer, TLS and SNI, connection limits, outlier detection.
func describePolicy(c Cluster) string {
	var parts []string
	if c.LoadBalancer != "" {
		parts = append(parts, "load balancer "+c.LoadBalancer)
	}
	if c.TLS != "" {
		tls := c.TLS
		if c.SNI != "" {
			tls += ", SNI " + c.SNI
		}
		parts = append(parts, tls)
	}
	if len(c.Pool) > 0 {
		parts = append(parts, strings.Join(c.Pool, ", "))
	}
	if len(c.OutlierDetection) > 0 {
		parts = append(parts, "outlier detection: "+strings.Join(c.OutlierDetection, ", "))
	}
	return strings.Join(parts, "; ")
}
