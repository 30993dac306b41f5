// Package envdiff compares Envoy configurations in memory, field by
// field. A resource is identified by its type and name; within it, a
// change is a field path and its old and new values. Repeated fields keep
// their order: elements with unique names are paired by name, and a
// different order of the same names is a change of its own; other
// elements are paired by position. Maps are compared by key, so their
// order never matters, and an Any is compared as the message it packs.
// Group gathers the proxies whose configurations changed the same way.
package envdiff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshc/meshc/internal/envoycfg"
)

// Kind is what happened to a resource, a field or a list.
type Kind int

const (
	// Changed is a value that differs on both sides.
	Changed Kind = iota
	// Added is present only on the new side.
	Added
	// Removed is present only on the old side.
	Removed
	// Reordered is a list holding the same named elements in another
	// order; Old and New list the names.
	Reordered
)

func (k Kind) String() string {
	return [...]string{"changed", "added", "removed", "reordered"}[k]
}

// Step is one step of a path into a resource: a field (Field), an element
// of a list (Index, and Name when elements are paired by name) or a map
// entry (Key).
type Step struct {
	Field string
	// Index is the element's position, on the new side unless it was
	// removed; -1 when the step is not a list element.
	Index int
	Name  string
	Key   string
}

// Path is a field's place in a resource, outermost step first.
type Path []Step

// Change is one difference between two configurations.
type Change struct {
	Resource envoycfg.Key
	// Path is empty when the whole resource was added or removed.
	Path Path
	Kind Kind
	// Old and New are the values, rendered: a scalar as is, a message as
	// compact JSON, a list of scalars in brackets; empty on the side
	// without one.
	Old, New string
}

// MarshalText makes kinds print as words in JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// String renders a change on one line, e.g.
// "route 9080 › reviews.default.svc.cluster.local:9080 › route[1] ›
// route.weighted_clusters.clusters[0].weight: 50 → 20".
func (c Change) String() string {
	where := c.Resource.String()
	if p := c.Path.String(); p != "" {
		where += " › " + p
	}
	return Line(c.Kind, where, c.Old, c.New)
}

// Line renders a change of kind at where (a resource, a field) on one
// line, its sign first.
func Line(kind Kind, where, old, new string) string {
	switch kind {
	case Added:
		return "+ " + where + valueSuffix(new)
	case Removed:
		return "- " + where + valueSuffix(old)
	case Reordered:
		return "~ " + where + " order: " + old + " → " + new
	}
	return "~ " + where + ": " + old + " → " + new
}

func valueSuffix(v string) string {
	if v == "" {
		return ""
	}
	return ": " + v
}

// String renders a path: the elements a person navigates by (virtual
// hosts, routes, filter chains, filters) as their own segments joined by
// " › ", the fields in between dotted.
func (p Path) String() string {
	var b strings.Builder
	dot := false
	segment := func(s string) {
		if b.Len() > 0 {
			b.WriteString(" › ")
		}
		b.WriteString(s)
		dot = false
	}
	for i := 0; i < len(p); i++ {
		s := p[i]
		if s.Field != "" && i+1 < len(p) && p[i+1].Index >= 0 && p[i+1].Field == "" {
			if seg := namedSegment(s.Field, p[i+1]); seg != "" {
				segment(seg)
				i++
				continue
			}
		}
		switch {
		case s.Field != "":
			if dot {
				b.WriteByte('.')
			} else if b.Len() > 0 {
				b.WriteString(" › ")
			}
			b.WriteString(s.Field)
			dot = true
		case s.Index >= 0:
			fmt.Fprintf(&b, "[%d]", s.Index)
		default:
			b.WriteString("[" + s.Key + "]")
		}
	}
	return b.String()
}

// namedSegment is how a list element a person navigates by is shown, or
// "" for a plain element.
func namedSegment(field string, elem Step) string {
	switch field {
	case "virtual_hosts":
		if elem.Name != "" {
			return elem.Name
		}
	case "routes":
		return fmt.Sprintf("route[%d]", elem.Index)
	case "filter_chains":
		if elem.Name != "" {
			return "chain " + elem.Name
		}
		return fmt.Sprintf("filter_chains[%d]", elem.Index)
	case "filters", "http_filters", "listener_filters":
		if elem.Name != "" {
			return elem.Name
		}
	}
	return ""
}

// Configs compares two proxies' configurations. Changes come by resource
// type (listeners, clusters, routes, endpoints), then name, then in field
// order.
func Configs(old, new *envoycfg.Config) []Change {
	return NewComparer().Configs(old, new)
}

// Comparer compares many pairs of configurations, remembering each pair
// of resources it compared, and each pair of the shared configurations
// proxies extend (envoycfg.Config.Extend): proxies share most of their
// resources, so comparing every proxy of two builds walks each shared
// pair once, and the resources a scope's proxies share are compared once
// per scope, not once per proxy. It is safe for concurrent use.
type Comparer struct {
	mu    sync.Mutex
	seen  map[[2]proto.Message]seenPair
	bases map[[2]*envoycfg.Config]*baseEntry
}

// baseEntry is the comparison of a pair of bases, made once.
type baseEntry struct {
	once    sync.Once
	changes []Change
}

// seenPair is a compared pair's changes and its resource type.
type seenPair struct {
	t       envoycfg.Type
	changes []Change
}

// NewComparer returns an empty Comparer.
func NewComparer() *Comparer {
	return &Comparer{seen: map[[2]proto.Message]seenPair{}, bases: map[[2]*envoycfg.Config]*baseEntry{}}
}

// Forget drops what the Comparer remembers but the pairs of resources of
// the types kept, so that configurations compared earlier can be freed:
// a caller comparing batch after batch keeps the types its batches share.
func (cp *Comparer) Forget(keep ...envoycfg.Type) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	clear(cp.bases)
	maps.DeleteFunc(cp.seen, func(_ [2]proto.Message, p seenPair) bool { return !slices.Contains(keep, p.t) })
}

// Configs is the package's Configs, remembering resource pairs. The
// changes may be those of other calls too: read, never modify.
func (cp *Comparer) Configs(old, new *envoycfg.Config) []Change {
	if old == new {
		// One config on both sides: a base both sides took from one
		// build (compile.Pair), or no config at all.
		return nil
	}
	if old == nil || new == nil {
		return cp.compare(resourcesOf(old), resourcesOf(new), true)
	}
	ob, oown := old.Split()
	nb, nown := new.Split()
	if ob == nil || nb == nil || !disjoint(oown, nb) || !disjoint(nown, ob) {
		return cp.compare(old.Resources(), new.Resources(), true)
	}
	// Each side is its base and its own resources, apart: the changes
	// are the bases' and the own resources'.
	pair := [2]*envoycfg.Config{ob, nb}
	cp.mu.Lock()
	e := cp.bases[pair]
	if e == nil {
		e = &baseEntry{}
		cp.bases[pair] = e
	}
	cp.mu.Unlock()
	// Proxies of one scope compared at once wait for one comparison of
	// their bases, the largest part of their configurations.
	e.once.Do(func() { e.changes = cp.Configs(ob, nb) })
	// A proxy's own resources are its alone: remembering their pairs
	// would only keep every proxy's resources alive until Forget.
	own := cp.compare(oown, nown, false)
	if len(own) == 0 {
		// The bases' changes, sorted, are the proxy's: one list for the
		// proxies of a scope, not a copy in each.
		return e.changes
	}
	out := slices.Concat(e.changes, own)
	slices.SortStableFunc(out, func(a, b Change) int { return compareKeys(a.Resource, b.Resource) })
	return out
}

func resourcesOf(c *envoycfg.Config) []proto.Message {
	if c == nil {
		return nil
	}
	return c.Resources()
}

// disjoint reports whether none of ms is in c.
func disjoint(ms []proto.Message, c *envoycfg.Config) bool {
	for _, m := range ms {
		k, _ := envoycfg.KeyOf(m)
		if _, ok := c.Get(k); ok {
			return false
		}
	}
	return true
}

func compareKeys(a, b envoycfg.Key) int {
	return cmp.Or(cmp.Compare(typeOrder(a.Type), typeOrder(b.Type)), cmp.Compare(a.Name, b.Name))
}

// compare compares two sets of resources by key, remembering the pairs
// it compares when remember is set.
func (cp *Comparer) compare(old, new []proto.Message, remember bool) []Change {
	type pair struct {
		k        envoycfg.Key
		old, new proto.Message
	}
	// The sides mostly hold the same values in the same places (a
	// sidecar's shared part is thousands of resources, built once for
	// both sides by a shared Store): a value in the same place on both
	// sides is no change, and, keys being unique on each side, its key is
	// nowhere else, so only the others are paired and sorted.
	sides := [2][]proto.Message{old, new}
	at := make(map[envoycfg.Key]int)
	var pairs []pair
	for i, side := range sides {
		other := sides[1-i]
		for p, m := range side {
			if p < len(other) && other[p] == m {
				continue
			}
			k, _ := envoycfg.KeyOf(m)
			j, ok := at[k]
			if !ok {
				j = len(pairs)
				at[k] = j
				pairs = append(pairs, pair{k: k})
			}
			if i == 0 {
				pairs[j].old = m
			} else {
				pairs[j].new = m
			}
		}
	}
	pairs = slices.DeleteFunc(pairs, func(p pair) bool { return p.old == p.new })
	slices.SortFunc(pairs, func(a, b pair) int { return compareKeys(a.k, b.k) })
	var out []Change
	for _, p := range pairs {
		if remember {
			out = append(out, cp.resources(p.k, p.old, p.new)...)
		} else {
			out = append(out, Resources(p.k, p.old, p.new)...)
		}
	}
	return out
}

func (cp *Comparer) resources(k envoycfg.Key, old, new proto.Message) []Change {
	if old == nil || new == nil || old == new {
		return Resources(k, old, new)
	}
	pair := [2]proto.Message{old, new}
	cp.mu.Lock()
	p, ok := cp.seen[pair]
	cp.mu.Unlock()
	cs := p.changes
	if !ok {
		cs = Resources(k, old, new)
		cp.mu.Lock()
		cp.seen[pair] = seenPair{k.Type, cs}
		cp.mu.Unlock()
	}
	return cs
}

// typeOrder is the place of t among listeners, clusters, routes and
// endpoints.
func typeOrder(t envoycfg.Type) int {
	switch t {
	case envoycfg.Listener:
		return 0
	case envoycfg.Cluster:
		return 1
	case envoycfg.Route:
		return 2
	case envoycfg.Endpoints:
		return 3
	}
	return -1
}

// Resources compares one resource on both sides; either may be nil.
func Resources(k envoycfg.Key, old, new proto.Message) []Change {
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil:
		return []Change{{Resource: k, Kind: Added}}
	case new == nil:
		return []Change{{Resource: k, Kind: Removed}}
	case old == new:
		// Shared between the two builds: most resources are.
		return nil
	case k.Type != envoycfg.Route && proto.Equal(old, new):
		// Equal: proto.Equal is far cheaper than a walk. A route
		// configuration is walked at once: its virtual hosts are most of
		// it, and those the builds share are passed over by pointer.
		return nil
	}
	d := &differ{key: k}
	d.message(nil, old.ProtoReflect(), new.ProtoReflect())
	return d.out
}

type differ struct {
	key envoycfg.Key
	out []Change
}

func (d *differ) add(p Path, kind Kind, old, new string) {
	d.out = append(d.out, Change{Resource: d.key, Path: slices.Clone(p), Kind: kind, Old: old, New: new})
}

func field(name string) Step       { return Step{Field: name, Index: -1} }
func elem(i int, name string) Step { return Step{Index: i, Name: name} }
func key(k string) Step            { return Step{Key: k, Index: -1} }

// message compares two messages of one type field by field.
func (d *differ) message(p Path, old, new protoreflect.Message) {
	desc := old.Descriptor()
	switch desc.FullName() {
	case "google.protobuf.Any":
		d.any(p, old, new)
		return
	case "google.protobuf.Struct":
		d.structs(p, old.Interface().(*structpb.Struct), new.Interface().(*structpb.Struct))
		return
	}
	if leaf(desc) {
		// Rendering is costly and most leaves are equal.
		if proto.Equal(old.Interface(), new.Interface()) {
			return
		}
		if o, n := render(old), render(new); o != n {
			d.add(p, Changed, o, n)
		}
		return
	}
	fields := desc.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		fp := append(p, field(string(fd.Name())))
		switch {
		case fd.IsList():
			d.list(fp, fd, old.Get(fd).List(), new.Get(fd).List())
		case fd.IsMap():
			d.mapField(fp, fd, old.Get(fd).Map(), new.Get(fd).Map())
		case fd.Message() != nil:
			oh, nh := old.Has(fd), new.Has(fd)
			switch {
			case oh && nh:
				d.message(fp, old.Get(fd).Message(), new.Get(fd).Message())
			case oh:
				d.add(fp, Removed, render(old.Get(fd).Message()), "")
			case nh:
				d.add(fp, Added, "", render(new.Get(fd).Message()))
			}
		case fd.HasPresence() && old.Has(fd) != new.Has(fd):
			// A oneof member or an optional scalar set on one side only.
			if old.Has(fd) {
				d.add(fp, Removed, scalar(fd, old.Get(fd)), "")
			} else {
				d.add(fp, Added, "", scalar(fd, new.Get(fd)))
			}
		default:
			if o, n := scalar(fd, old.Get(fd)), scalar(fd, new.Get(fd)); o != n {
				d.add(fp, Changed, o, n)
			}
		}
	}
}

// leaf says a message is one value to a person: a duration, a wrapped
// scalar, a timestamp.
func leaf(desc protoreflect.MessageDescriptor) bool {
	return desc.ParentFile().Package() == "google.protobuf" && desc.Name() != "Any" && desc.Name() != "Struct"
}

// any compares packed messages as themselves when both sides pack the
// same known type.
func (d *differ) any(p Path, old, new protoreflect.Message) {
	oa, na := old.Interface().(*anypb.Any), new.Interface().(*anypb.Any)
	if oa.GetTypeUrl() != na.GetTypeUrl() {
		d.add(p, Changed, oa.GetTypeUrl(), na.GetTypeUrl())
		return
	}
	om, oerr := oa.UnmarshalNew()
	nm, nerr := na.UnmarshalNew()
	if oerr != nil || nerr != nil {
		if !bytes.Equal(oa.GetValue(), na.GetValue()) {
			d.add(p, Changed, fmt.Sprintf("%d bytes of %s", len(oa.GetValue()), oa.GetTypeUrl()), fmt.Sprintf("%d bytes", len(na.GetValue())))
		}
		return
	}
	d.message(p, om.ProtoReflect(), nm.ProtoReflect())
}

// structs compares metadata-like structs by key, values as JSON.
func (d *differ) structs(p Path, old, new *structpb.Struct) {
	for _, k := range unionKeys(old.GetFields(), new.GetFields()) {
		o, ok1 := old.GetFields()[k]
		n, ok2 := new.GetFields()[k]
		kp := append(p, key(k))
		switch {
		case !ok1:
			d.add(kp, Added, "", render(n.ProtoReflect()))
		case !ok2:
			d.add(kp, Removed, render(o.ProtoReflect()), "")
		case o.GetStructValue() != nil && n.GetStructValue() != nil:
			d.structs(kp, o.GetStructValue(), n.GetStructValue())
		default:
			if os, ns := render(o.ProtoReflect()), render(n.ProtoReflect()); os != ns {
				d.add(kp, Changed, os, ns)
			}
		}
	}
}

func unionKeys[V any](a, b map[string]V) []string {
	var ks []string
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// list compares a repeated field in order: scalars as one value,
// messages element by element, paired by name when every element has a
// unique one.
func (d *differ) list(p Path, fd protoreflect.FieldDescriptor, old, new protoreflect.List) {
	if fd.Message() == nil {
		if o, n := scalarList(fd, old), scalarList(fd, new); o != n {
			d.add(p, Changed, o, n)
		}
		return
	}
	on, ok1 := names(old)
	nn, ok2 := names(new)
	if !ok1 || !ok2 {
		for i := range max(old.Len(), new.Len()) {
			ep := append(p, elem(i, ""))
			switch {
			case i >= new.Len():
				d.add(ep, Removed, render(old.Get(i).Message()), "")
			case i >= old.Len():
				d.add(ep, Added, "", render(new.Get(i).Message()))
			default:
				d.element(ep, old.Get(i).Message(), new.Get(i).Message())
			}
		}
		return
	}
	oldAt := make(map[string]int, len(on))
	for i, n := range on {
		oldAt[n] = i
	}
	newAt := make(map[string]bool, len(nn))
	for _, n := range nn {
		newAt[n] = true
	}
	var oldOrder, newOrder []string
	for _, n := range on {
		if newAt[n] {
			oldOrder = append(oldOrder, n)
		}
	}
	for j, n := range nn {
		i, ok := oldAt[n]
		if !ok {
			d.add(append(p, elem(j, n)), Added, "", render(new.Get(j).Message()))
			continue
		}
		newOrder = append(newOrder, n)
		d.element(append(p, elem(j, n)), old.Get(i).Message(), new.Get(j).Message())
	}
	for i, n := range on {
		if !newAt[n] {
			d.add(append(p, elem(i, n)), Removed, render(old.Get(i).Message()), "")
		}
	}
	if !slices.Equal(oldOrder, newOrder) {
		d.add(p, Reordered, strings.Join(oldOrder, ", "), strings.Join(newOrder, ", "))
	}
}

// element compares two elements of a list. Most elements of a changed
// list are equal (one virtual host of thousands), and proto.Equal tells
// that far faster than a field-by-field walk.
func (d *differ) element(p Path, old, new protoreflect.Message) {
	if o, n := old.Interface(), new.Interface(); o != n && !proto.Equal(o, n) {
		d.message(p, old, new)
	}
}

// names are the elements' names when each has a unique, non-empty one
// (a "name" field, or an endpoint assignment's cluster).
func names(l protoreflect.List) ([]string, bool) {
	if l.Len() == 0 {
		return nil, true
	}
	fd := l.Get(0).Message().Descriptor().Fields().ByName("name")
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return nil, false
	}
	out := make([]string, l.Len())
	seen := map[string]bool{}
	for i := range l.Len() {
		n := l.Get(i).Message().Get(fd).String()
		if n == "" || seen[n] {
			return nil, false
		}
		seen[n], out[i] = true, n
	}
	return out, true
}

// mapField compares a map by key.
func (d *differ) mapField(p Path, fd protoreflect.FieldDescriptor, old, new protoreflect.Map) {
	ks := map[string]protoreflect.MapKey{}
	collect := func(m protoreflect.Map) {
		m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			ks[k.String()] = k
			return true
		})
	}
	collect(old)
	collect(new)
	sorted := make([]string, 0, len(ks))
	for k := range ks {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	vd := fd.MapValue()
	for _, s := range sorted {
		k := ks[s]
		kp := append(p, key(s))
		oh, nh := old.Has(k), new.Has(k)
		switch {
		case oh && nh && vd.Message() != nil:
			d.message(kp, old.Get(k).Message(), new.Get(k).Message())
		case oh && nh:
			if o, n := scalar(vd, old.Get(k)), scalar(vd, new.Get(k)); o != n {
				d.add(kp, Changed, o, n)
			}
		case oh:
			d.add(kp, Removed, value(vd, old.Get(k)), "")
		default:
			d.add(kp, Added, "", value(vd, new.Get(k)))
		}
	}
}

func value(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if fd.Message() != nil {
		return render(v.Message())
	}
	return scalar(fd, v)
}

// scalar renders a scalar: an enum by its name, bytes in hex.
func scalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.BytesKind:
		return fmt.Sprintf("%x", v.Bytes())
	}
	return v.String()
}

func scalarList(fd protoreflect.FieldDescriptor, l protoreflect.List) string {
	items := make([]string, l.Len())
	for i := range l.Len() {
		items[i] = scalar(fd, l.Get(i))
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// render is a message as compact JSON with Envoy's field names; protojson
// varies its whitespace on purpose, so it is compacted to fixed bytes.
func render(m protoreflect.Message) string {
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m.Interface())
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return strings.Trim(b.String(), `"`)
}

// Group is proxies whose configurations changed the same way.
type Group struct {
	Proxies []string
	Changes []Change
}

// GroupChanges gathers proxies with equal change lists, largest group
// first; proxies without changes are left out.
func GroupChanges(byProxy map[string][]Change) []Group {
	bySig := map[string]*Group{}
	// Proxies often share one list of changes (Comparer.Configs): its
	// signature is made once.
	type list struct {
		first *Change
		n     int
	}
	sigOf := map[list]string{}
	var groups []*Group
	for _, id := range slices.Sorted(maps.Keys(byProxy)) {
		cs := byProxy[id]
		if len(cs) == 0 {
			continue
		}
		l := list{&cs[0], len(cs)}
		sig, ok := sigOf[l]
		if !ok {
			sig = signature(cs)
			sigOf[l] = sig
		}
		g := bySig[sig]
		if g == nil {
			g = &Group{Changes: cs}
			bySig[sig] = g
			groups = append(groups, g)
		}
		g.Proxies = append(g.Proxies, id)
	}
	slices.SortStableFunc(groups, func(a, b *Group) int { return len(b.Proxies) - len(a.Proxies) })
	out := make([]Group, len(groups))
	for i, g := range groups {
		out[i] = *g
	}
	return out
}

func signature(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}
