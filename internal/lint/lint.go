// Package lint holds meshc's analyzers: small values that read the resolved
// mesh and its provenance and report diagnostics. They never re-resolve.
package lint

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/parallel"
	"github.com/meshc/meshc/internal/resolve"
)

// Analyzer reports one catalog entry. Its code, name, severity and docs are
// the entry's, so the catalog, the docs and SARIF rules stay one table.
type Analyzer struct {
	Entry *diag.Entry
	// Requires are the shared facts Run reads.
	Requires []*fact
	Run      func(*Pass)
}

// Pass is what an analyzer reads and where it reports.
type Pass struct {
	Mesh *resolve.Mesh
	// Build is set for the build checks.
	Build *BuildOutput
	entry *diag.Entry
	// shared is what several analyzers derive from the mesh, computed
	// once per Run by the first that asks.
	shared *shared
	// declared are the facts the analyzer may read: its Requires and
	// theirs; undeclared hears of any other it reads (Options.undeclared).
	declared   []*fact
	undeclared func(code, fact string)
	diags      []diag.Diagnostic
	// fields are the field paths of diags still to be turned into lines.
	fields []field
}

// field is a finding's field, located after the analyzers ran: finding a
// line parses the object's document, which is done once per object for
// all the findings about it.
type field struct {
	diag int
	obj  *model.ObjectMeta
	path model.Path
}

// Report adds a finding of msg, a message of the running analyzer's
// entry, about obj (at the field at path, when given). Its key holds the
// message's identifying arguments and, when they do not tell its findings
// apart, the field's path.
func (p *Pass) Report(obj *model.ObjectMeta, at model.Path, msg *diag.Message, args ...any) *diag.Diagnostic {
	d := msg.At(obj.Ref(), args...)
	if msg.Entry != p.entry {
		d.Message += "%!(WRONGENTRY " + msg.Entry.Code + ")"
	}
	if msg.KeysByField() {
		d = d.Keyed(fieldPart(at))
	}
	if at != nil {
		p.fields = append(p.fields, field{len(p.diags), obj, at})
	}
	p.diags = append(p.diags, d)
	return &p.diags[len(p.diags)-1]
}

// fieldPart is the key part naming a finding's field, or "" for none.
func fieldPart(at model.Path) string {
	if len(at) == 0 {
		return ""
	}
	return diag.Part("field", at.String())
}

// locate sets the line of every finding about a field.
func locate(passes []*Pass) {
	type at struct {
		pass  *Pass
		field field
	}
	byObj := map[*model.ObjectMeta][]at{}
	var objs []*model.ObjectMeta
	for _, p := range passes {
		for _, f := range p.fields {
			if byObj[f.obj] == nil {
				objs = append(objs, f.obj)
			}
			byObj[f.obj] = append(byObj[f.obj], at{p, f})
		}
	}
	for _, o := range objs {
		fs := byObj[o]
		if o.Derived != nil {
			// Generated: the line is in the object it was made of.
			for _, f := range fs {
				f.pass.diags[f.field.diag].Object.Line = o.RefAt(f.field.path).Line
			}
			continue
		}
		paths := make([]model.Path, len(fs))
		for i, f := range fs {
			paths[i] = f.field.path
		}
		for i, line := range o.Source.FieldLines(paths) {
			obj := &fs[i].pass.diags[fs[i].field.diag].Object
			obj.Line, obj.Origin = o.Source.Position(line)
		}
	}
}

// Analyzers returns every analyzer, in code order. Each family's file
// lists its own analyzers, so families grow without touching one another.
func Analyzers() []*Analyzer {
	out := slices.Concat([]*Analyzer{
		ambiguousHost,
		shadowedDestinationRule,
		destinationRuleMergeConflict,
		unknownSubset,
		virtualServiceHostConflict,
		destinationHostNotFound,
		multipleDefaultSidecars,
		conflictingSidecarSelectors,
		noInjectedWorkloads,
	}, registryAnalyzers, destinationRuleAnalyzers, routeAnalyzers, gatewayAnalyzers, policyAnalyzers)
	slices.SortStableFunc(out, func(a, b *Analyzer) int { return strings.Compare(a.Entry.Code, b.Entry.Code) })
	return out
}

// Select returns the analyzers reporting the codes given (a code, a name,
// or an istioctl analyze code), in code order.
func Select(codes []string) ([]*Analyzer, error) {
	all := Analyzers()
	var out []*Analyzer
	for _, c := range codes {
		entries := diag.ByIstioCode(c)
		if e, ok := diag.Lookup(c); ok {
			entries = []*diag.Entry{e}
		}
		if len(entries) == 0 {
			return nil, fmt.Errorf("no diagnostic %q", c)
		}
		for _, e := range entries {
			i := slices.IndexFunc(all, func(a *Analyzer) bool { return a.Entry == e })
			if i < 0 {
				return nil, fmt.Errorf("%s %s is not an analyzer's: the passes report it on every run, or meshc build does", e.Code, e.Name)
			}
			if !slices.Contains(out, all[i]) {
				out = append(out, all[i])
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *Analyzer) int { return strings.Compare(a.Entry.Code, b.Entry.Code) })
	return out, nil
}

// Options configure a lint run.
type Options struct {
	// Build is the build the build checks read.
	Build *BuildOutput
	// Timing, when set, hears how long each fact and each analyzer took.
	// The facts are then computed first and everything runs one at a
	// time, so each time is its own and not its neighbours'.
	Timing func(what string, d time.Duration)
	// undeclared hears of an analyzer reading a fact it does not require
	// (tests set it).
	undeclared func(code, fact string)
}

// Run runs the analyzers over a resolved mesh and returns their findings
// sorted; suppression is the caller's (internal/suppress), as it applies
// to every pass's findings. Analyzers only read the mesh, so they run at
// the same time, each with its own Pass; their findings are joined in
// analyzer order. When ctx ends no further analyzer starts and Run returns
// ctx's error once the running ones are done.
func Run(ctx context.Context, m *resolve.Mesh, analyzers []*Analyzer, opts Options) ([]diag.Diagnostic, error) {
	passes := make([]*Pass, len(analyzers))
	sh := newShared(m)
	for i, a := range analyzers {
		passes[i] = &Pass{Mesh: m, Build: opts.Build, entry: a.Entry, shared: sh, declared: requiredFacts([]*Analyzer{a}), undeclared: opts.undeclared}
	}
	if opts.Timing != nil {
		timeOneByOne(ctx, sh, analyzers, passes, opts.Timing)
	} else {
		// The facts are started first, each after those it reads: an
		// analyzer that asks for a fact another is computing waits for
		// it, a core left idle, and analyzers sharing a fact sit side by
		// side in code order (MC9001 to MC9005 read the annotations).
		facts := requiredFacts(analyzers)
		parallel.For(ctx, len(facts)+len(analyzers), func(i int) {
			if i < len(facts) {
				facts[i].compute(sh)
				return
			}
			analyzers[i-len(facts)].Run(passes[i-len(facts)])
		})
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	locate(passes)
	var out []diag.Diagnostic
	for _, p := range passes {
		out = append(out, p.diags...)
	}
	diag.Sort(out)
	return out, nil
}

// timeOneByOne computes the facts analyzers require, then runs each
// analyzer, one at a time, telling timing how long each took. It stops
// when ctx ends.
func timeOneByOne(ctx context.Context, sh *shared, analyzers []*Analyzer, passes []*Pass, timing func(string, time.Duration)) {
	for _, f := range requiredFacts(analyzers) {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		f.compute(sh)
		timing("fact "+f.name, time.Since(start))
	}
	for i, a := range analyzers {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		a.Run(passes[i])
		timing(a.Entry.Code+" "+a.Entry.Name, time.Since(start))
	}
}

// shared memoises facts several analyzers read; each is computed at most
// once per Run, whichever analyzer asks first, and read-only after.
type shared struct {
	workloads     func() map[string][]inputWorkload
	gateways      func() *gatewayInput
	inWorkloads   func() *inputWorkloads
	listeners     func() map[*resolve.Scope]outboundListeners
	annotations   func() []istioAnnotation
	gatewayGroups func() []*gatewayGroup
	configHosts   func() []configHost
	selectors     func() []selector
	workloadPorts func() workloadPortIndex
}

// workloadPortIndex is workloadPorts' result: the proxies and the service
// ports each serves.
type workloadPortIndex struct {
	proxies []*resolve.Proxy
	ports   map[*resolve.Proxy][]servedPort
}

// outboundListeners is a scope's Scope.OutboundListeners.
type outboundListeners struct {
	catchAll []resolve.ListenerClaim
	drops    []resolve.ListenerDrop
}

func newShared(m *resolve.Mesh) *shared {
	sh := &shared{}
	sh.workloads = sync.OnceValue(func() map[string][]inputWorkload { return workloadsByNamespace(m.Objects) })
	sh.gateways = sync.OnceValue(func() *gatewayInput { return newGatewayInput(m.Objects, m.Services, sh.workloads()) })
	sh.inWorkloads = sync.OnceValue(func() *inputWorkloads { return newInputWorkloads(m, sh.workloads()) })
	sh.annotations = sync.OnceValue(func() []istioAnnotation { return istioAnnotations(m.Objects) })
	sh.gatewayGroups = sync.OnceValue(func() []*gatewayGroup { return gatewayGroups(sh.gateways()) })
	sh.configHosts = sync.OnceValue(func() []configHost { return configHosts(m) })
	sh.selectors = sync.OnceValue(func() []selector { return selectors(m.Objects, m.Config.GetRootNamespace()) })
	sh.workloadPorts = sync.OnceValue(func() workloadPortIndex {
		pxs, ports := workloadPorts(m)
		return workloadPortIndex{pxs, ports}
	})
	sh.listeners = sync.OnceValue(func() map[*resolve.Scope]outboundListeners { return scopeListeners(m.Scopes) })
	return sh
}

// scopeListeners computes each scope's OutboundListeners. Scopes that
// place the same ports (most namespaces of a mesh without Sidecars) share
// one result, computed once; the distinct ones are independent, so they
// are spread over the cores, each worker writing its own slots.
func scopeListeners(scopes []*resolve.Scope) map[*resolve.Scope]outboundListeners {
	// same[i] is the first scope placing what scope i places.
	same := make([]int, len(scopes))
	var distinct []int
	type key struct {
		listeners int
		first     *resolve.Service
	}
	byKey := map[key][]int{}
	for i, sc := range scopes {
		k := key{listeners: len(sc.Listeners)}
		if k.listeners > 0 && len(sc.Listeners[0].Services) > 0 {
			k.first = sc.Listeners[0].Services[0]
		}
		j := slices.IndexFunc(byKey[k], func(j int) bool { return scopes[j].SameOutboundPorts(sc) })
		if j >= 0 {
			same[i] = byKey[k][j]
			continue
		}
		same[i] = i
		byKey[k] = append(byKey[k], i)
		distinct = append(distinct, i)
	}
	all := make([]outboundListeners, len(scopes))
	parallel.For(context.Background(), len(distinct), func(n int) {
		i := distinct[n]
		all[i].catchAll, all[i].drops = scopes[i].OutboundListeners()
	})
	out := make(map[*resolve.Scope]outboundListeners, len(scopes))
	for i, sc := range scopes {
		out[sc] = all[same[i]]
	}
	return out
}

// own lists the input's own objects of type T, in input order: HNC copies
// are reported at their source.
func own[T model.Object](objs []model.Object) []T {
	var out []T
	for _, o := range objs {
		if x, ok := o.(T); ok && o.Meta().InheritedFrom == nil {
			out = append(out, x)
		}
	}
	return out
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

// groups gathers findings by key in the order keys are first seen, so
// output never depends on map order.
type groups[K comparable, V any] struct {
	byKey map[K]*V
	order []K
}

// add returns k's group, made by first when k is new.
func (g *groups[K, V]) add(k K, first func() V) *V {
	if v, ok := g.byKey[k]; ok {
		return v
	}
	if g.byKey == nil {
		g.byKey = map[K]*V{}
	}
	v := new(V)
	*v = first()
	g.byKey[k] = v
	g.order = append(g.order, k)
	return v
}
