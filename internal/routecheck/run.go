package routecheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/parallel"
	"github.com/meshc/meshc/internal/request"
	"github.com/meshc/meshc/internal/resolve"
)

// Result is one case's outcome.
type Result struct {
	File string
	Case *Case
	// Failures say, one per expectation, what was expected and what
	// happened; none is a pass.
	Failures []string
	Report   *request.Report
}

// Passed reports whether every expectation held.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Run runs every case of files against the compiled mesh: each proxy a
// case names is built once, the cases run in parallel. A case whose
// request cannot be made (a FROM naming no proxy, a bad target) is a
// *FormatError at its line. Results are in file and case order.
func Run(ctx context.Context, run *compile.Result, files []*File) ([]Result, error) {
	type prepared struct {
		view *resolve.ProxyView
		req  *request.Resolved
	}
	var results []Result
	var preps []prepared
	index := map[*resolve.ProxyView]int{}
	var views []*resolve.ProxyView
	for _, f := range files {
		for i := range f.Tests {
			c := &f.Tests[i]
			v, r, err := request.Prepare(run, c.Call)
			if err != nil {
				return nil, &FormatError{Path: f.Path, Line: c.Line, Msg: err.Error()}
			}
			if _, ok := index[v]; !ok {
				index[v] = len(views)
				views = append(views, v)
			}
			results = append(results, Result{File: f.Path, Case: c})
			preps = append(preps, prepared{v, r})
		}
	}
	cfgs, err := run.Configs(ctx, views, request.BuildOptions())
	if err != nil {
		return nil, fmt.Errorf("build the proxies the tests name: %w", err)
	}
	parallel.For(ctx, len(results), func(i int) {
		p := preps[i]
		res := &results[i]
		res.Report = request.Explain(run.Mesh, p.view, cfgs[index[p.view]], res.Case.From, p.req)
		res.Failures = check(res.Case.Expect, res.Report)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// check compares a report with what a case expects.
func check(e Expect, rep *request.Report) []string {
	var out []string
	str := func(what string, want *string, got string) {
		if want != nil && *want != got {
			out = append(out, fmt.Sprintf("%s: want %q, got %q", what, *want, got))
		}
	}
	num := func(what string, want *uint32, got uint32) {
		if want != nil && *want != got {
			out = append(out, fmt.Sprintf("%s: want %d, got %d", what, *want, got))
		}
	}
	str("listener", e.Listener, rep.Listener)
	str("filterChain", e.FilterChain, rep.FilterChain)
	str("routeConfiguration", e.RouteConfiguration, rep.RouteConfiguration)
	str("virtualHost", e.VirtualHost, rep.VirtualHost)
	str("route", e.Route, rep.Route)
	vs, rule := "", ""
	if o := rep.RouteRule; o != nil && o.Kind == "VirtualService" {
		vs, rule = o.Namespace+"/"+o.Name, strings.TrimPrefix(o.Rule, "spec.")
	}
	str("virtualService", e.VirtualService, vs)
	if e.Rule != nil {
		want := strings.TrimPrefix(*e.Rule, "spec.")
		str("rule", &want, rule)
	}
	str("cluster", e.Cluster, rep.Cluster)
	id, _ := resolve.ParseClusterID(rep.Cluster)
	port, subset, h := id.Port, id.Subset, string(id.Host)
	str("host", e.Host, h)
	str("subset", e.Subset, subset)
	num("port", e.Port, port)
	if e.Weighted != nil {
		if got := weightedString(rep); !weightedEqual(e.Weighted, rep.WeightedClusters) {
			var want []string
			for _, w := range e.Weighted {
				name := w.Cluster
				if name == "" {
					name = w.Host + " " + w.Subset
				}
				want = append(want, fmt.Sprintf("%s %d", name, w.Weight))
			}
			out = append(out, fmt.Sprintf("weighted: want [%s], got [%s]", strings.Join(want, ", "), got))
		}
	}
	kind, status := "", uint32(0)
	if a := rep.Action; a != nil {
		kind, status = a.Kind, a.Status
	}
	if e.Redirect != nil && (kind != "redirect" || status != *e.Redirect) {
		out = append(out, fmt.Sprintf("redirect: want %d, got %s", *e.Redirect, describe(kind, status)))
	}
	if e.DirectResponse != nil && (kind != "directResponse" || status != *e.DirectResponse) {
		out = append(out, fmt.Sprintf("directResponse: want %d, got %s", *e.DirectResponse, describe(kind, status)))
	}
	path, authority := "", ""
	var added []string
	if a := rep.Action; a != nil {
		path, authority, added = a.Path, a.Authority, a.HeadersToAdd
	}
	str("path", e.Path, path)
	str("authority", e.Authority, authority)
	for k, v := range e.HeadersAdded {
		if !slices.Contains(added, k+": "+v) {
			out = append(out, fmt.Sprintf("headersAdded: want %q, got [%s]", k+": "+v, strings.Join(added, ", ")))
		}
	}
	if e.NoRoute != nil && *e.NoRoute != (rep.StoppedAt != "") {
		if *e.NoRoute {
			out = append(out, "noRoute: want no route, got "+describe(kind, status)+" to "+rep.Cluster+weightedString(rep))
		} else {
			out = append(out, "noRoute: want a route, got none: stopped at "+rep.StoppedAt+": "+rep.Reason)
		}
	}
	str("stoppedAt", e.StoppedAt, rep.StoppedAt)
	slices.Sort(out)
	return out
}

func describe(kind string, status uint32) string {
	switch {
	case kind == "":
		return "no action"
	case status != 0:
		return fmt.Sprintf("%s %d", kind, status)
	}
	return kind
}

func weightedEqual(want []WeightedExpect, got []request.WeightedTarget) bool {
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		g := got[i]
		id, _ := resolve.ParseClusterID(g.Name)
		subset, h := id.Subset, string(id.Host)
		if w.Weight != g.Weight || (w.Cluster != "" && w.Cluster != g.Name) || (w.Host != "" && w.Host != h) || (w.Cluster == "" && w.Subset != subset) {
			return false
		}
	}
	return true
}

func weightedString(rep *request.Report) string {
	var parts []string
	for _, w := range rep.WeightedClusters {
		parts = append(parts, fmt.Sprintf("%s %d", w.Name, w.Weight))
	}
	return strings.Join(parts, ", ")
}
