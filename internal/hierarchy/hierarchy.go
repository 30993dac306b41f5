// Package hierarchy computes, from manifests alone, the namespace forest
// the Hierarchical Namespace Controller (HNC) converges to: parents from
// HierarchyConfigurations and subnamespace anchors, the conditions HNC
// sets, and the labels it writes (docs/semantics/hierarchy.md §1–§2). Resolution runs it
// first and reads the final namespace labels.
package hierarchy

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// HNC's label and annotation keys.
const (
	LabelIncluded      = "hnc.x-k8s.io/included-namespace"
	TreeLabelSuffix    = ".tree.hnc.x-k8s.io/depth"
	AnnotationSubOf    = "hnc.x-k8s.io/subnamespace-of"
	AnnotationManageBy = "hnc.x-k8s.io/managed-by"
	hncManager         = "hnc.x-k8s.io"
)

// Condition types and reasons, as HNC names them.
const (
	ActivitiesHalted = "ActivitiesHalted"
	BadConfiguration = "BadConfiguration"

	ReasonIllegalParent        = "IllegalParent"
	ReasonParentMissing        = "ParentMissing"
	ReasonInCycle              = "InCycle"
	ReasonAncestorHalt         = "AncestorHaltActivities"
	ReasonAnchorMissing        = "SubnamespaceAnchorMissing"
	ReasonIllegalManagedLabel  = "IllegalManagedLabel"
	ReasonIllegalManagedAnnote = "IllegalManagedAnnotation"
)

// Anchor states.
const (
	AnchorOk        = "Ok"
	AnchorConflict  = "Conflict"
	AnchorForbidden = "Forbidden"
)

// Options are HNC's operator flags (docs/semantics/hierarchy.md §1.2).
type Options struct {
	// ExcludedNamespaces are unmanaged; nil means HNC's shipped default.
	ExcludedNamespaces []string
	// IncludedNamespaceRegex must match (anchored) for a namespace to be
	// managed; "" means ".*".
	IncludedNamespaceRegex string
	// ManagedLabels and ManagedAnnotations are anchored regexes of keys
	// HNC owns on namespaces.
	ManagedLabels, ManagedAnnotations []string
	// TKEProjects treats namespaces labelled tkestack.io/projectName as
	// children of an abstract project node (docs/semantics/hierarchy.md §5.2).
	TKEProjects bool
	// TKEProjectHomes maps a project to a real namespace that becomes the
	// parent of the project's namespaces, so objects can propagate.
	TKEProjectHomes map[string]string
}

// LabelTKEProject names the TKE business project of a namespace.
const LabelTKEProject = "tkestack.io/projectName"

func (o Options) excluded() []string {
	if o.ExcludedNamespaces == nil {
		return []string{"kube-system", "kube-public", "kube-node-lease", "hnc-system"}
	}
	return o.ExcludedNamespaces
}

// Condition is a namespace condition as HNC writes it.
type Condition struct {
	Type, Reason, Message string
}

func (c Condition) String() string { return fmt.Sprintf("%s (%s): %s", c.Type, c.Reason, c.Message) }

// Namespace is one namespace of the computed forest.
type Namespace struct {
	Name string
	// Exists: declared, created by an anchor, or implied by objects in it.
	Exists bool
	// Implied: exists only because objects live in it.
	Implied bool
	// Mentioned: the input names it (a Namespace, an object in it, an HC,
	// an anchor); namespaces every cluster has are not drawn otherwise.
	Mentioned bool
	// Synthesized: created by a subnamespace anchor.
	Synthesized bool
	Managed     bool
	External    bool
	// Parent is "" for a root; a parent that does not exist or is not
	// managed is kept (a phantom) and the namespace is halted.
	Parent string
	// IsSub: a subnamespace (has the subnamespace-of annotation).
	IsSub    bool
	Children []string
	// Conditions hold at most one per type, as HNC keeps them.
	Conditions  []Condition
	Labels      map[string]string
	Annotations map[string]string
	// Object is the Namespace manifest, HC its HierarchyConfiguration.
	Object *model.Namespace
	HC     *model.HierarchyConfiguration
	// Anchor is the anchor that made this a subnamespace, if any.
	Anchor *model.SubnamespaceAnchor
	// Project is the abstract TKE project above a root namespace, with
	// --tke-projects.
	Project string
	// ownHalt is the namespace's own ActivitiesHalted reason, if any.
	ownHalt string
}

// Halted reports whether propagation is frozen here (own or inherited).
func (n *Namespace) Halted() bool {
	return slices.ContainsFunc(n.Conditions, func(c Condition) bool { return c.Type == ActivitiesHalted })
}

// Forest is the computed hierarchy.
type Forest struct {
	Namespaces map[string]*Namespace
	// Anchors and their states.
	AnchorStates map[*model.SubnamespaceAnchor]string
}

// Sorted lists namespaces by name.
func (f *Forest) Sorted() []*Namespace {
	out := slices.Collect(maps.Values(f.Namespaces))
	slices.SortFunc(out, func(a, b *Namespace) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Ancestry lists a namespace's real ancestors, root first (it stops at a
// missing parent and does not loop through a cycle).
func (f *Forest) Ancestry(ns string) []string {
	var up []string
	seen := map[string]bool{ns: true}
	for cur := f.Namespaces[ns]; cur != nil && cur.Parent != ""; {
		next := f.Namespaces[cur.Parent]
		if next == nil || !next.Exists || seen[next.Name] {
			break
		}
		seen[next.Name] = true
		up = append(up, next.Name)
		cur = next
	}
	slices.Reverse(up)
	return up
}

// Labels returns a namespace's final labels (nil when it does not exist).
func (f *Forest) Labels(ns string) map[string]string {
	if n := f.Namespaces[ns]; n != nil {
		return n.Labels
	}
	return nil
}

// ExistingLabels are the labels of every namespace that exists, by name:
// what a namespace selector is matched against.
func (f *Forest) ExistingLabels() map[string]map[string]string {
	out := make(map[string]map[string]string, len(f.Namespaces))
	for name, ns := range f.Namespaces {
		if ns.Exists {
			out[name] = ns.Labels
		}
	}
	return out
}

// alwaysExist are namespaces every cluster has.
func alwaysExist() []string {
	return []string{"default", "kube-system", "kube-public", "kube-node-lease"}
}

type builder struct {
	opts     Options
	included *regexp.Regexp
	labelRE  []*regexp.Regexp
	annoRE   []*regexp.Regexp
	f        *Forest
	diags    []diag.Diagnostic
}

// NewForest computes the forest from the loaded objects.
func NewForest(objs []model.Object, opts Options) (*Forest, []diag.Diagnostic) {
	b := &builder{opts: opts, f: &Forest{Namespaces: map[string]*Namespace{}, AnchorStates: map[*model.SubnamespaceAnchor]string{}}}
	b.compile()
	var hcs []*model.HierarchyConfiguration
	var anchors []*model.SubnamespaceAnchor
	for _, ns := range alwaysExist() {
		b.ns(ns).Exists = true
	}
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Namespace:
			n := b.ns(x.Name)
			n.Exists, n.Object, n.Mentioned = true, x, true
		case *model.HierarchyConfiguration:
			hcs = append(hcs, x)
		case *model.SubnamespaceAnchor:
			anchors = append(anchors, x)
		}
		if m := o.Meta(); m.Namespace != "" {
			n := b.ns(m.Namespace)
			n.Mentioned = true
			if !n.Exists {
				n.Exists, n.Implied = true, true
			}
		}
	}
	for _, hc := range hcs {
		b.ns(hc.Namespace).HC = hc
	}
	for _, n := range b.f.Namespaces {
		n.Managed = b.managed(n.Name)
		if n.Object != nil {
			mb := n.Object.Annotations[AnnotationManageBy]
			n.External = mb != "" && mb != hncManager
		}
	}
	b.anchors(anchors)
	b.parents()
	b.cycles()
	b.children()
	b.halts()
	b.metadata()
	return b.f, b.diags
}

func (b *builder) compile() {
	re := cmp.Or(b.opts.IncludedNamespaceRegex, ".*")
	b.included = regexp.MustCompile("^(?:" + re + ")$")
	for _, r := range b.opts.ManagedLabels {
		b.labelRE = append(b.labelRE, regexp.MustCompile("^(?:"+r+")$"))
	}
	for _, r := range b.opts.ManagedAnnotations {
		b.annoRE = append(b.annoRE, regexp.MustCompile("^(?:"+r+")$"))
	}
}

// ValidateOptions reports option regexes that do not compile.
func ValidateOptions(o Options) error {
	for _, r := range append(append([]string{cmp.Or(o.IncludedNamespaceRegex, ".*")}, o.ManagedLabels...), o.ManagedAnnotations...) {
		if _, err := regexp.Compile("^(?:" + r + ")$"); err != nil {
			return fmt.Errorf("hierarchy option %q: %w", r, err)
		}
	}
	return nil
}

func (b *builder) ns(name string) *Namespace {
	n := b.f.Namespaces[name]
	if n == nil {
		n = &Namespace{Name: name}
		b.f.Namespaces[name] = n
	}
	return n
}

func (b *builder) managed(name string) bool {
	return !slices.Contains(b.opts.excluded(), name) && b.included.MatchString(name)
}

func (b *builder) report(m *diag.Message, obj diag.ObjectRef, args ...any) *diag.Diagnostic {
	b.diags = append(b.diags, m.At(obj, args...))
	return &b.diags[len(b.diags)-1]
}

// nsRef names a namespace in a diagnostic: its HC, else its manifest.
func (n *Namespace) ref() diag.ObjectRef {
	switch {
	case n.HC != nil:
		return n.HC.Ref()
	case n.Object != nil:
		return n.Object.Ref()
	case n.Anchor != nil:
		return n.Anchor.Ref()
	}
	return diag.ObjectRef{Kind: "Namespace", Name: n.Name}
}

// anchors applies subnamespace anchors (docs/semantics/hierarchy.md §1.5).
func (b *builder) anchors(anchors []*model.SubnamespaceAnchor) {
	byChild := map[string][]*model.SubnamespaceAnchor{}
	for _, a := range anchors {
		if !b.managed(a.Namespace) {
			continue // an anchor in an unmanaged namespace has no state
		}
		byChild[a.Name] = append(byChild[a.Name], a)
	}
	for _, child := range slices.Sorted(maps.Keys(byChild)) {
		as := byChild[child]
		slices.SortFunc(as, func(x, y *model.SubnamespaceAnchor) int { return cmp.Compare(x.Namespace, y.Namespace) })
		c := b.ns(child)
		if !b.managed(child) {
			for _, a := range as {
				b.f.AnchorStates[a] = AnchorForbidden
				b.report(diag.AnchorForbidden, a.Ref(), a.Namespace, a.Name, child)
			}
			continue
		}
		declared := c.Object != nil
		winner := ""
		switch {
		case declared && c.Object.Annotations[AnnotationSubOf] != "":
			winner = c.Object.Annotations[AnnotationSubOf]
		case !declared:
			winner = as[0].Namespace // [POLICY] smallest parent name wins
			c.Exists, c.Implied, c.Synthesized, c.Managed, c.Mentioned = true, false, true, true, true
			if len(as) > 1 {
				d := b.report(diag.AnchorsCompete, as[0].Ref(), len(as), child, winner)
				for _, a := range as[1:] {
					d.Related = append(d.Related, diag.Related{ObjectRef: a.Ref(), Note: "Conflict"})
				}
			}
		}
		for _, a := range as {
			if a.Namespace == winner {
				b.f.AnchorStates[a] = AnchorOk
				c.Anchor = a
				continue
			}
			b.f.AnchorStates[a] = AnchorConflict
			b.report(diag.AnchorInConflict, a.Ref(), a.Namespace, a.Name, child)
		}
	}
}

// parents resolves each managed namespace's parent (docs/semantics/hierarchy.md §1.4).
func (b *builder) parents() {
	for _, n := range b.f.Sorted() {
		if !n.Exists || !n.Managed || n.External {
			if n.External && n.HC != nil && n.HC.Spec.Parent != "" {
				d := b.report(diag.ParentIgnored, n.HC.Ref(), n.Name, n.Object.Annotations[AnnotationManageBy], n.HC.Spec.Parent)
				d.Severity = diag.Warning
			}
			continue
		}
		subOf := ""
		if n.Object != nil {
			subOf = n.Object.Annotations[AnnotationSubOf]
		}
		if n.Synthesized && n.Anchor != nil {
			subOf = n.Anchor.Namespace
		}
		switch {
		case subOf != "":
			n.IsSub, n.Parent = true, subOf
			if n.Anchor == nil {
				n.setCondition(BadConfiguration, ReasonAnchorMissing, "The anchor is missing in the parent namespace")
				b.report(diag.AnchorMissing, n.ref(), n.Name, subOf)
			}
		case n.HC != nil:
			n.Parent = n.HC.Spec.Parent
		}
		b.tkeProject(n)
		if n.Parent == "" {
			continue
		}
		p := b.f.Namespaces[n.Parent]
		switch {
		case !b.managed(n.Parent):
			n.ownHalt = ReasonIllegalParent
			n.setCondition(ActivitiesHalted, ReasonIllegalParent, fmt.Sprintf("Parent %q is an unmanaged namespace", n.Parent))
			b.report(diag.ParentUnmanaged, n.ref(), n.Name, n.Parent)
		case p == nil || !p.Exists:
			n.ownHalt = ReasonParentMissing
			n.setCondition(ActivitiesHalted, ReasonParentMissing, fmt.Sprintf("Parent %q does not exist", n.Parent))
			b.report(diag.ParentAbsent, n.ref(), n.Name, n.Parent)
		}
	}
}

// tkeProject applies the TKE mapping: a namespace of project P without a
// written parent gets P's home namespace as parent, or P as an abstract
// root; a written parent wins, with a warning.
func (b *builder) tkeProject(n *Namespace) {
	if !b.opts.TKEProjects || n.Object == nil {
		return
	}
	p := n.Object.Labels[LabelTKEProject]
	switch {
	case p == "":
	case n.Parent != "":
		d := b.report(diag.ParentOverridesProject, n.ref(), n.Name, p, n.Parent)
		d.Severity = diag.Warning
	case b.opts.TKEProjectHomes[p] != "" && b.opts.TKEProjectHomes[p] != n.Name:
		n.Parent = b.opts.TKEProjectHomes[p]
	case b.opts.TKEProjectHomes[p] == "":
		n.Project = p
	}
}

// cycles marks every member of a parent cycle (docs/semantics/hierarchy.md §1.4, §2.1).
func (b *builder) cycles() {
	done := map[string]bool{}
	for _, n := range b.f.Sorted() {
		if done[n.Name] || n.Parent == "" {
			continue
		}
		var path []string
		seen := map[string]int{}
		cur := n
		for cur != nil && cur.Parent != "" && !done[cur.Name] {
			if i, ok := seen[cur.Name]; ok {
				b.cycle(path[i:])
				break
			}
			seen[cur.Name] = len(path)
			path = append(path, cur.Name)
			cur = b.f.Namespaces[cur.Parent]
			if cur != nil && (!cur.Exists || !cur.Managed || cur.External) {
				break
			}
		}
		for _, x := range path {
			done[x] = true
		}
	}
}

// cycle records a cycle given in child-to-parent order.
func (b *builder) cycle(members []string) {
	// Ancestry order: each is the parent of the next.
	order := slices.Clone(members)
	slices.Reverse(order)
	start := 0
	for i, m := range order {
		if m < order[start] {
			start = i
		}
	}
	order = append(order[start:], order[:start]...)
	msg := "Namespace is a member of the cycle: " + strings.Join(append(order, order[0]), " <- ")
	sorted := slices.Sorted(slices.Values(members))
	for _, m := range sorted {
		n := b.f.Namespaces[m]
		n.ownHalt = ReasonInCycle
		n.setCondition(ActivitiesHalted, ReasonInCycle, msg)
	}
	first := b.f.Namespaces[sorted[0]]
	d := b.report(diag.HierarchyCycleFound, first.ref(), strings.Join(sorted, ", "), strings.Join(append(order, order[0]), " <- "))
	for _, m := range sorted[1:] {
		d.Related = append(d.Related, diag.Related{ObjectRef: b.f.Namespaces[m].ref(), Note: "in the cycle"})
	}
}

func (b *builder) children() {
	for _, n := range b.f.Sorted() {
		if n.Parent != "" {
			if p := b.f.Namespaces[n.Parent]; p != nil {
				p.Children = append(p.Children, n.Name)
			}
		}
	}
}

// haltedRoot is the first namespace up from n, n included, with its own
// ActivitiesHalted reason.
func (b *builder) haltedRoot(n *Namespace) *Namespace {
	seen := map[string]bool{}
	for cur := n; cur != nil && !seen[cur.Name]; cur = b.f.Namespaces[cur.Parent] {
		seen[cur.Name] = true
		if cur.ownHalt != "" {
			return cur
		}
		if cur.Parent == "" {
			break
		}
	}
	return nil
}

// halts gives strict descendants of a halted namespace the derived
// AncestorHaltActivities condition (docs/semantics/hierarchy.md §2.1).
func (b *builder) halts() {
	for _, n := range b.f.Sorted() {
		if n.ownHalt != "" || !n.Managed {
			continue
		}
		root := b.haltedRoot(n)
		if root == nil {
			continue
		}
		msg := fmt.Sprintf("Propagation paused in %q and its descendants due to ActivitiesHalted condition on ancestor %q", n.Name, root.Name)
		// The derived condition is listed first.
		n.Conditions = append([]Condition{{ActivitiesHalted, ReasonAncestorHalt, msg}}, n.Conditions...)
		d := b.report(diag.AncestorHalted, n.ref(), n.Name, root.Name, root.ownHalt)
		d.Related = append(d.Related, diag.Related{ObjectRef: root.ref(), Note: "halted here"})
	}
}

// setCondition keeps one condition per type, the later replacing the
// earlier, as HNC does.
func (n *Namespace) setCondition(typ, reason, msg string) {
	for i, c := range n.Conditions {
		if c.Type == typ {
			n.Conditions[i] = Condition{typ, reason, msg}
			return
		}
	}
	n.Conditions = append(n.Conditions, Condition{typ, reason, msg})
}

// metadata computes each namespace's final labels and annotations
// (docs/semantics/hierarchy.md §1.7).
func (b *builder) metadata() {
	for _, n := range b.f.Sorted() {
		labels := map[string]string{}
		annos := map[string]string{}
		if n.Object != nil {
			maps.Copy(labels, n.Object.Labels)
			maps.Copy(annos, n.Object.Annotations)
		}
		if n.Synthesized && n.Anchor != nil {
			annos[AnnotationSubOf] = n.Anchor.Namespace
		}
		if !n.Exists {
			continue
		}
		if !n.Managed {
			delete(labels, LabelIncluded)
			n.Labels, n.Annotations = labels, annos
			continue
		}
		labels[LabelIncluded] = "true"
		if !n.External {
			for k := range labels {
				if strings.HasSuffix(k, TreeLabelSuffix) || b.isManaged(k, b.labelRE) {
					delete(labels, k)
				}
			}
			for k := range annos {
				if b.isManaged(k, b.annoRE) {
					delete(annos, k)
				}
			}
		}
		b.walk(n, labels, annos)
		n.Labels, n.Annotations = labels, annos
	}
}

// managedEntries copies the entries whose keys are managed into out, and
// reports the others once (what is "label" or "annotation").
func (b *builder) managedEntries(n *Namespace, kvs []model.MetaKVP, out map[string]string, res []*regexp.Regexp, report bool, what, reason string) {
	for _, kv := range kvs {
		switch {
		case b.isManaged(kv.Key, res):
			out[kv.Key] = kv.Value
		case report:
			flag := "--managed-namespace-" + what
			n.setCondition(BadConfiguration, reason, fmt.Sprintf("Not a legal managed %s (set via %s): %s", what, flag, kv.Key))
			b.report(diag.MetadataNotManaged, n.ref(), kv.Key, what, flag, n.Name)
		}
	}
}

func (b *builder) isManaged(key string, res []*regexp.Regexp) bool {
	return slices.ContainsFunc(res, func(r *regexp.Regexp) bool { return r.MatchString(key) })
}

// walk writes tree labels and managed metadata from n up to the first
// halted namespace; later (root-most) values win.
func (b *builder) walk(n *Namespace, labels, annos map[string]string) {
	seen := map[string]bool{}
	d := 0
	for cur := n; cur != nil && !seen[cur.Name]; d++ {
		seen[cur.Name] = true
		labels[cur.Name+TreeLabelSuffix] = strconv.Itoa(d)
		ownLabels, ownAnnos := b.own(cur, cur == n)
		maps.Copy(labels, ownLabels)
		if !n.External {
			maps.Copy(annos, ownAnnos)
		}
		if cur.External {
			if cur.Object != nil {
				for k, v := range cur.Object.Labels {
					if x, err := strconv.Atoi(v); err == nil && strings.HasSuffix(k, TreeLabelSuffix) && k != cur.Name+TreeLabelSuffix {
						labels[k] = strconv.Itoa(d + x)
					}
				}
			}
			return
		}
		if cur.Project != "" && cur.Parent == "" {
			labels[cur.Project+TreeLabelSuffix] = strconv.Itoa(d + 1)
		}
		if cur.ownHalt != "" || cur.Parent == "" {
			return
		}
		cur = b.f.Namespaces[cur.Parent]
	}
}

// own is a namespace's managed metadata: its HC's (or anchor's) entries
// whose keys are managed; report says whether to report illegal keys (once,
// for the namespace itself).
func (b *builder) own(n *Namespace, report bool) (map[string]string, map[string]string) {
	labels, annos := map[string]string{}, map[string]string{}
	var kl, ka []model.MetaKVP
	switch {
	case n.IsSub && n.Anchor != nil:
		kl, ka = n.Anchor.Spec.Labels, n.Anchor.Spec.Annotations
	case n.HC != nil:
		kl, ka = n.HC.Spec.Labels, n.HC.Spec.Annotations
	}
	b.managedEntries(n, kl, labels, b.labelRE, report, "label", ReasonIllegalManagedLabel)
	b.managedEntries(n, ka, annos, b.annoRE, report, "annotation", ReasonIllegalManagedAnnote)
	if n.External && n.Object != nil {
		for k, v := range n.Object.Labels {
			if b.isManaged(k, b.labelRE) {
				labels[k] = v
			}
		}
	}
	return labels, annos
}
