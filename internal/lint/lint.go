// Package lint holds meshc's analyzers: small values that read the resolved
// mesh and its provenance and report diagnostics. They never re-resolve.
package lint

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// Analyzer reports one catalog entry. Its code, name, severity and docs are
// the entry's, so the catalog, the docs and SARIF rules stay one table.
type Analyzer struct {
	Entry *diag.Entry
	Run   func(*Pass)
}

// Pass is what an analyzer reads and where it reports.
type Pass struct {
	Mesh *resolve.Mesh
	// Build is set for the build checks.
	Build *Build
	entry *diag.Entry
	diags []diag.Diagnostic
}

// Report adds a diagnostic of the running analyzer's code about obj (at
// the field at path, when given).
func (p *Pass) Report(obj *model.ObjectMeta, at model.Path, format string, args ...any) *diag.Diagnostic {
	ref := obj.Ref()
	if at != nil {
		ref = obj.RefAt(at)
	}
	p.diags = append(p.diags, p.entry.At(ref, format, args...))
	return &p.diags[len(p.diags)-1]
}

// Analyzers returns every analyzer, in code order.
func Analyzers() []*Analyzer {
	return []*Analyzer{
		ambiguousHost,
		shadowedDestinationRule,
		destinationRuleMergeConflict,
		unknownSubset,
		virtualServiceHostConflict,
		destinationHostNotFound,
		multipleDefaultSidecars,
		conflictingSidecarSelectors,
		noInjectedWorkloads,
	}
}

// Options configure a lint run.
type Options struct {
	// Suppress lists "CODE" or "CODE=namespace/name" (a path.Match glob on
	// the subject object) to leave out.
	Suppress []string
	// Build is the build the build checks read.
	Build *Build
}

// Run runs the analyzers over a resolved mesh, drops suppressed findings
// and returns the rest sorted.
func Run(m *resolve.Mesh, objs []model.Object, analyzers []*Analyzer, opts Options) []diag.Diagnostic {
	// Analyzers only read the mesh, so they run at the same time, each
	// with its own Pass; their findings are joined in analyzer order.
	passes := make([]*Pass, len(analyzers))
	var annotated map[string]map[string]bool
	var wg sync.WaitGroup
	for i, a := range analyzers {
		passes[i] = &Pass{Mesh: m, Build: opts.Build, entry: a.Entry}
		wg.Go(func() { a.Run(passes[i]) })
	}
	wg.Go(func() { annotated = suppressionAnnotations(objs) })
	wg.Wait()
	var out []diag.Diagnostic
	for _, p := range passes {
		out = append(out, p.diags...)
	}
	out = slices.DeleteFunc(out, func(d diag.Diagnostic) bool {
		return suppressed(d, opts.Suppress) || annotated[subjectKey(d.Object)][d.Code]
	})
	diag.Sort(out)
	return out
}

// SuppressAnnotation on an object lists codes not to report about it.
const SuppressAnnotation = "meshc.io/suppress"

// istioSuppressAnnotation is honoured for the codes that mirror Istio's
// analyzer messages.
const istioSuppressAnnotation = "galley.istio.io/analyze-suppress"

func subjectKey(o diag.ObjectRef) string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

func suppressionAnnotations(objs []model.Object) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, o := range objs {
		m := o.Meta()
		own, istio := m.Annotations[SuppressAnnotation], m.Annotations[istioSuppressAnnotation]
		if own == "" && istio == "" {
			continue // the common case: nothing to suppress
		}
		codes := map[string]bool{}
		for _, c := range strings.Split(own, ",") {
			if c = strings.TrimSpace(c); c != "" {
				codes[strings.ToUpper(c)] = true
			}
		}
		for _, c := range strings.Split(istio, ",") {
			for _, e := range diag.ByIstioCode(strings.TrimSpace(c)) {
				codes[e.Code] = true
			}
		}
		if len(codes) > 0 {
			out[subjectKey(m.Ref())] = codes
		}
	}
	return out
}

func suppressed(d diag.Diagnostic, rules []string) bool {
	for _, r := range rules {
		code, glob, scoped := strings.Cut(r, "=")
		if !strings.EqualFold(code, d.Code) && !strings.EqualFold(code, d.Name) {
			continue
		}
		if !scoped {
			return true
		}
		if ok, _ := path.Match(glob, d.Object.Namespace+"/"+d.Object.Name); ok {
			return true
		}
	}
	return false
}

// proxyIDs lists proxies as "namespace/name", sorted.
func proxyIDs(ps []*resolve.Proxy) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.ID())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// objName renders "namespace/name" of an object.
func objName(m *model.ObjectMeta) string { return m.Namespace + "/" + m.Name }

// related describes another object for a diagnostic.
func related(m *model.ObjectMeta, format string, args ...any) diag.Related {
	return diag.Related{ObjectRef: m.Ref(), Note: fmt.Sprintf(format, args...)}
}

// plural picks a word form.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// list joins at most max items, saying how many more there are.
func list(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
}
