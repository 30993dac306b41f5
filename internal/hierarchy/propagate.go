package hierarchy

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Exception annotations on source objects (docs/semantics/hierarchy.md §3.4).
const (
	AnnotationSelect     = "propagate.hnc.x-k8s.io/select"
	AnnotationTreeSelect = "propagate.hnc.x-k8s.io/treeSelect"
	AnnotationNone       = "propagate.hnc.x-k8s.io/none"
	AnnotationAll        = "propagate.hnc.x-k8s.io/all"
	LabelInheritedFrom   = "hnc.x-k8s.io/inherited-from"
	labelManagedBy       = "app.kubernetes.io/managed-by"
)

// copyTime is the creation time of propagated copies: after every object
// in the files, since HNC creates them later (docs/semantics/hierarchy.md §3.7 [POLICY]).
func copyTime() time.Time { return time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) }

// PropagateOptions are HNC's propagation flags.
type PropagateOptions struct {
	// NoPropagationLabels are exact "key=value" pairs that block
	// propagation; nil means HNC's default, cattle.io/creator=norman.
	NoPropagationLabels []string
	// UnpropagatedLabels and UnpropagatedAnnotations are stripped from
	// copies.
	UnpropagatedLabels, UnpropagatedAnnotations []string
}

// Propagate computes the effective object set HNC converges to: sources,
// plus copies created or rewritten, minus stale copies removed, with
// halted subtrees frozen (docs/semantics/hierarchy.md §3.9).
func Propagate(f *Forest, objs []model.Object, opts PropagateOptions) ([]model.Object, []diag.Diagnostic) {
	var cfg *model.HNCConfiguration
	for _, o := range objs {
		if c, ok := o.(*model.HNCConfiguration); ok {
			cfg = c
		}
	}
	modes, diags := typeModes(cfg, crdKinds(objs))
	p := propagator{f: f, opts: opts, modes: modes}
	byType := map[GroupKind]map[string][]model.Object{}
	out := make([]model.Object, 0, len(objs))
	// Run passes objects by identity, a kind's together: a kind's mode is
	// looked up once per run of its objects, not once per object.
	var gk GroupKind
	var mode string
	var active, looked bool
	for _, o := range objs {
		m := o.Meta()
		if !looked || m.Kind != gk.Kind || m.Group() != gk.Group {
			gk, looked = GroupKind{m.Group(), m.Kind}, true
			mode, active = modes[gk]
		}
		if !active || mode == ModeIgnore || m.Namespace == "" {
			out = append(out, o)
			continue
		}
		if n := f.Namespaces[m.Namespace]; n == nil || !n.Managed {
			out = append(out, o)
			continue
		}
		if byType[gk] == nil {
			byType[gk] = map[string][]model.Object{}
		}
		byType[gk][m.Namespace] = append(byType[gk][m.Namespace], o)
	}
	order := p.topDown()
	p.frozen(byType)
	for _, gk := range slices.SortedFunc(maps.Keys(byType), func(a, b GroupKind) int { return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind)) }) {
		out = append(out, p.propagateType(gk, byType[gk], order)...)
	}
	return out, append(diags, p.diags...)
}

type propagator struct {
	f     *Forest
	opts  PropagateOptions
	modes map[GroupKind]string
	diags []diag.Diagnostic
	// reported avoids repeating a parse error per destination.
	reported map[*model.ObjectMeta]bool
}

// frozen warns once per halted root about what propagation leaves as it
// is below it: copies kept though they may be stale, and sources that would
// have been copied down (docs/semantics/hierarchy.md §3.8).
func (p *propagator) frozen(byType map[GroupKind]map[string][]model.Object) {
	for _, h := range p.f.Sorted() {
		if h.ownHalt == "" {
			continue
		}
		var kept, blocked []string
		for _, n := range p.f.Sorted() {
			if !p.below(n, h) {
				continue
			}
			for gk, byNs := range byType {
				for _, o := range byNs[n.Name] {
					m := o.Meta()
					switch {
					case isCopy(o):
						kept = append(kept, fmt.Sprintf("%s %s/%s", gk.Kind, m.Namespace, m.Name))
					case len(n.Children) > 0 && (p.modes[gk] == ModePropagate || p.modes[gk] == ModeAllowPropagate):
						blocked = append(blocked, fmt.Sprintf("%s %s/%s", gk.Kind, m.Namespace, m.Name))
					}
				}
			}
		}
		if len(kept)+len(blocked) == 0 {
			continue
		}
		slices.Sort(kept)
		slices.Sort(blocked)
		var parts []string
		if len(kept) > 0 {
			parts = append(parts, fmt.Sprintf("%d copies are kept as they are, perhaps stale (%s)", len(kept), strings.Join(kept[:min(len(kept), 5)], ", ")))
		}
		if len(blocked) > 0 {
			parts = append(parts, fmt.Sprintf("%d objects are not copied to the namespaces below (%s)", len(blocked), strings.Join(blocked[:min(len(blocked), 5)], ", ")))
		}
		p.diags = append(p.diags, diag.PropagationFrozen.At(h.ref(), h.Name, h.ownHalt, strings.Join(parts, "; ")))
	}
}

// below reports whether n is h or one of its descendants.
func (p *propagator) below(n, h *Namespace) bool {
	seen := map[string]bool{}
	for cur := n; cur != nil && !seen[cur.Name]; cur = p.f.Namespaces[cur.Parent] {
		if cur == h {
			return true
		}
		seen[cur.Name] = true
		if cur.Parent == "" {
			return false
		}
	}
	return false
}

// topDown orders managed namespaces roots first, then by depth, then by
// name; cycle members and their subtrees last.
func (p *propagator) topDown() []*Namespace {
	depth := map[string]int{}
	var order []*Namespace
	for _, n := range p.f.Sorted() {
		if !n.Exists || !n.Managed {
			continue
		}
		d, seen := 0, map[string]bool{}
		for cur := n; cur.Parent != "" && !seen[cur.Name]; d++ {
			seen[cur.Name] = true
			next := p.f.Namespaces[cur.Parent]
			if next == nil {
				break
			}
			cur = next
		}
		if n.Halted() {
			d += 1 << 20 // frozen subtrees last; they only keep what they have
		}
		depth[n.Name] = d
		order = append(order, n)
	}
	slices.SortStableFunc(order, func(a, b *Namespace) int {
		return cmp.Or(cmp.Compare(depth[a.Name], depth[b.Name]), cmp.Compare(a.Name, b.Name))
	})
	return order
}

// ancestry lists n's real, managed ancestors, root first.
func (p *propagator) ancestry(n *Namespace) []*Namespace {
	var up []*Namespace
	for _, name := range p.f.Ancestry(n.Name) {
		a := p.f.Namespaces[name]
		if !a.Managed {
			break
		}
		up = append(up, a)
	}
	return up
}

func isCopy(o model.Object) bool { _, ok := o.Meta().Labels[LabelInheritedFrom]; return ok }

func (p *propagator) propagateType(gk GroupKind, byNs map[string][]model.Object, order []*Namespace) []model.Object {
	mode := p.modes[gk]
	survivors := map[string]map[string]model.Object{} // namespace → name → source
	var out []model.Object
	for _, n := range order {
		objs := map[string]model.Object{}
		for _, o := range byNs[n.Name] {
			objs[o.Meta().Name] = o
		}
		if n.Halted() {
			// Frozen: keep everything as it is.
			sources := map[string]model.Object{}
			for name, o := range objs {
				out = append(out, o)
				if !isCopy(o) {
					sources[name] = o
				}
			}
			survivors[n.Name] = sources
			continue
		}
		ancestors := p.ancestry(n)
		names := map[string]bool{}
		for name := range objs {
			names[name] = true
		}
		for _, a := range ancestors {
			for name := range survivors[a.Name] {
				names[name] = true
			}
		}
		sources := map[string]model.Object{}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			own := objs[name]
			var src model.Object
			if mode != ModeRemove {
				for _, a := range ancestors {
					if s := survivors[a.Name][name]; s != nil && p.eligible(s, n, mode) {
						src = s
						break
					}
				}
			}
			switch {
			case mode == ModeRemove && own != nil && isCopy(own):
				// deleted
			case src != nil:
				if own != nil && !isCopy(own) {
					d := diag.CopyOverwrites.At(own.Meta().Ref(), gk.Kind, n.Name, name, src.Meta().Namespace)
					d.Related = []diag.Related{{ObjectRef: src.Meta().Ref(), Note: "the source that wins"}}
					p.diags = append(p.diags, d)
				}
				out = append(out, p.copyOf(src, n.Name))
			case own != nil && isCopy(own):
				// A copy whose source is gone, moved or excluded: deleted.
			case own != nil:
				out = append(out, own)
				sources[name] = own
			}
		}
		survivors[n.Name] = sources
	}
	return out
}

// eligible is docs/semantics/hierarchy.md §3.3: may src be copied into dst?
func (p *propagator) eligible(src model.Object, dst *Namespace, mode string) bool {
	m := src.Meta()
	if mode != ModePropagate && mode != ModeAllowPropagate {
		return false
	}
	def := mode == ModePropagate
	for _, sel := range []struct {
		key   string
		parse func(string) (labels.Selector, error)
	}{{AnnotationSelect, func(v string) (labels.Selector, error) { return labels.Parse(v) }}, {AnnotationTreeSelect, treeSelector}} {
		v := m.Annotations[sel.key]
		if v == "" {
			continue
		}
		s, err := sel.parse(v)
		if err != nil {
			p.parseError(m, sel.key, err)
			return false
		}
		def = true
		if !s.Matches(labels.Set(dst.Labels)) {
			return false
		}
	}
	for _, key := range []string{AnnotationNone, AnnotationAll} {
		v := m.Annotations[key]
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			p.parseError(m, key, err)
			return false
		}
		switch {
		case b && key == AnnotationNone:
			return false
		case b:
			def = true
		}
	}
	if p.excluded(src) || len(m.Finalizers) > 0 {
		return false
	}
	return def
}

// treeSelector rewrites a treeSelect value into a label selector on tree
// labels: "x" selects x's subtree, "!x" excludes it; at most one un-negated
// name.
func treeSelector(v string) (labels.Selector, error) {
	var parts []string
	positive := 0
	for _, seg := range strings.Split(v, ",") {
		seg = strings.TrimSpace(seg)
		neg := strings.HasPrefix(seg, "!")
		name := strings.TrimPrefix(seg, "!")
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("%q is not a namespace name", seg)
		}
		if neg {
			parts = append(parts, "!"+name+TreeLabelSuffix)
		} else {
			positive++
			parts = append(parts, name+TreeLabelSuffix)
		}
	}
	if positive > 1 {
		return nil, fmt.Errorf("at most one namespace may be selected without '!'")
	}
	return labels.Parse(strings.Join(parts, ","))
}

func (p *propagator) parseError(m *model.ObjectMeta, key string, err error) {
	if p.reported == nil {
		p.reported = map[*model.ObjectMeta]bool{}
	}
	if p.reported[m] {
		return
	}
	p.reported[m] = true
	p.diags = append(p.diags, diag.ExceptionUnparsable.At(m.RefAt(model.Path{}.Key("metadata").Key("annotations").Key(key)),
		key, err.Error(), m.Namespace, m.Name))
}

// excluded are HNC's built-in exclusions (docs/semantics/hierarchy.md §3.4b).
func (p *propagator) excluded(o model.Object) bool {
	m := o.Meta()
	if m.Group() == "" {
		switch m.Kind {
		case "ConfigMap":
			if m.Name == "istio-ca-root-cert" || m.Name == "kube-root-ca.crt" {
				return true
			}
		case "Secret":
			if s, ok := o.(*model.Secret); ok && (s.Type == "kubernetes.io/service-account-token" || s.Type == "helm.sh/release.v1") {
				return true
			}
		}
	}
	if _, ok := m.Annotations["openshift.io/description"]; ok {
		return true
	}
	pairs := p.opts.NoPropagationLabels
	if pairs == nil {
		pairs = []string{"cattle.io/creator=norman"}
	}
	for _, kv := range pairs {
		k, v, _ := strings.Cut(kv, "=")
		if lv, ok := m.Labels[k]; ok && lv == v {
			return true
		}
	}
	return false
}

// hncKey reports keys whose prefix ends with hnc.x-k8s.io; copies drop them.
func hncKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	return ok && strings.HasSuffix(prefix, "hnc.x-k8s.io")
}

// copyOf is the canonical copy of src in namespace ns (docs/semantics/hierarchy.md §3.7):
// the same object, with HNC's labels, in ns, created after every user
// object, remembering its source.
func (p *propagator) copyOf(src model.Object, ns string) model.Object {
	sm := src.Meta()
	v := reflect.New(reflect.TypeOf(src).Elem())
	v.Elem().Set(reflect.ValueOf(src).Elem())
	c := v.Interface().(model.Object)
	m := c.Meta()
	m.Namespace = ns
	m.Created = copyTime()
	m.Finalizers = nil
	m.InheritedFrom = sm
	m.Labels = map[string]string{}
	for k, val := range sm.Labels {
		if !hncKey(k) && !slices.Contains(p.opts.UnpropagatedLabels, k) {
			m.Labels[k] = val
		}
	}
	m.Labels[labelManagedBy] = hncManager
	m.Labels[LabelInheritedFrom] = sm.Namespace
	m.Annotations = nil
	for k, val := range sm.Annotations {
		if !hncKey(k) && !slices.Contains(p.opts.UnpropagatedAnnotations, k) {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[k] = val
		}
	}
	return c
}
