package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// noInjectedWorkloads (MC6006) explains an empty result: workloads in the
// input, and not one with a sidecar (gateways, which inject themselves,
// do not count). It names the namespaces of the workloads without one and
// what would inject them.
var noInjectedWorkloads = &Analyzer{Entry: diag.NoInjectedWorkloads, Run: func(p *Pass) {
	proxied := map[*model.ObjectMeta]bool{}
	for _, px := range p.Mesh.Proxies {
		if px.Type == resolve.SidecarProxy {
			return
		}
		proxied[px.Object] = true
	}
	var first *model.ObjectMeta
	count := map[string]int{}
	for _, o := range p.Mesh.Objects {
		switch o.(type) {
		case *model.Pod, *model.Workload:
			m := o.Meta()
			if m.InheritedFrom != nil || proxied[m] {
				continue
			}
			if first == nil {
				first = m // objects come by identity: the report's place does not move with the input's order
			}
			count[m.Namespace]++
		}
	}
	if first == nil {
		return
	}
	var parts, plain []string
	revisions := map[string]bool{}
	for _, ns := range slices.Sorted(maps.Keys(count)) {
		labels := p.Mesh.Hierarchy.Labels(ns)
		switch rev := labels["istio.io/rev"]; {
		case rev != "":
			revisions[rev] = true
			parts = append(parts, fmt.Sprintf("%s (%s) is labelled istio.io/rev=%s, a revision not installed", ns, workloads(count[ns]), rev))
		case labels["istio-injection"] == "enabled":
			parts = append(parts, fmt.Sprintf("%s (%s) is labelled istio-injection=enabled, which only the %q revision honours", ns, workloads(count[ns]), resolve.DefaultRevision))
		default:
			plain = append(plain, ns)
			parts = append(parts, fmt.Sprintf("%s (%s) has no injection label", ns, workloads(count[ns])))
		}
	}
	var fixes []string
	if len(plain) > 0 {
		fixes = append(fixes, "label "+plural(len(plain), "it", "them")+" istio-injection=enabled, or pass --inject-namespace "+strings.Join(plain, " --inject-namespace "))
	}
	for _, rev := range slices.Sorted(maps.Keys(revisions)) {
		fixes = append(fixes, "pass --revision "+rev+" if that revision is installed")
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "pass --revision "+resolve.DefaultRevision+" if the default revision is installed")
	}
	p.Report(first, nil, diag.NoWorkloadInjected,
		strings.Join(parts, "; "), strings.Join(fixes, "; "))
}}

func workloads(n int) string {
	if n == 1 {
		return "1 workload"
	}
	return fmt.Sprintf("%d workloads", n)
}
