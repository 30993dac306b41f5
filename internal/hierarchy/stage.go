package hierarchy

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/parallel"
)

// Result is the hierarchy stage's value: the forest HNC would converge to
// and the objects as it would leave them, its copies included.
type Result struct {
	Forest *Forest
	// Objects are the input objects plus HNC's copies, minus the stale
	// copies it would remove; every later stage reads these.
	Objects     []model.Object
	Diagnostics []diag.Diagnostic
}

// Run is the stage: the forest, propagation and the one-per-namespace slots
// propagation can fill twice. It stops between its steps when ctx ends.
//
// The input's order decides nothing from here on: Run takes objects by
// identity (model.ID's order) and adds its copies in that order, so any
// order of one input resolves, builds and reports alike.
func Run(ctx context.Context, objs []model.Object, opts Options, prop PropagateOptions) (Result, error) {
	objs = byID(objs)
	forest, ds := NewForest(objs, opts)
	if err := context.Cause(ctx); err != nil {
		return Result{}, err
	}
	// Copies HNC would create are ordinary objects of their namespace from
	// here on: every namespace-relative rule applies to them there.
	objs, pds := Propagate(forest, objs, prop)
	ds = append(ds, pds...)
	if err := context.Cause(ctx); err != nil {
		return Result{}, err
	}
	ds = append(ds, SlotConflicts(objs)...)
	return Result{Forest: forest, Objects: objs, Diagnostics: ds}, nil
}

// byID returns objs sorted by identity, equal ones (nameless objects) in
// input order. This runs on every compile, over every object, before
// anything else can, so it does the least work it can: objects are first
// dealt by group and kind (in their order, keeping input order), which
// leaves the namespaces and names to compare; input usually lists a
// kind's objects by namespace and name already (a file per namespace, or
// the API's own order), and a kind whose objects are in order is not
// sorted again. The kinds out of order are sorted at the same time, each
// identity computed once and the input position breaking ties, so the
// quicker unstable sort gives the stable order.
func byID(objs []model.Object) []model.Object {
	type groupKind struct{ group, kind string }
	kindOf := map[groupKind]int{}
	var kinds []groupKind
	keys := make([]keyedObject, len(objs))
	rank := make([]int, len(objs))
	last := -1
	for i, o := range objs {
		id := o.Meta().ID()
		keys[i] = keyedObject{id, i}
		// Neighbours are mostly of one kind: one comparison instead of a
		// lookup.
		if last >= 0 && kinds[last].kind == id.Kind && kinds[last].group == id.Group {
			rank[i] = last
			continue
		}
		gk := groupKind{id.Group, id.Kind}
		r, ok := kindOf[gk]
		if !ok {
			r = len(kinds)
			kindOf[gk] = r
			kinds = append(kinds, gk)
		}
		rank[i], last = r, r
	}
	// Deal the keys into one run per kind, the kinds in order.
	count := make([]int, len(kinds))
	for _, r := range rank {
		count[r]++
	}
	order := make([]int, len(kinds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(kinds[a].group, kinds[b].group), strings.Compare(kinds[a].kind, kinds[b].kind))
	})
	next := make([]int, len(kinds)) // where a kind's next key goes
	runs := make([][]keyedObject, len(kinds))
	dealt := make([]keyedObject, len(keys))
	at := 0
	for _, r := range order {
		next[r], runs[r] = at, dealt[at:at+count[r]]
		at += count[r]
	}
	for i, k := range keys {
		dealt[next[rank[i]]] = k
		next[rank[i]]++
	}
	var unsorted [][]keyedObject
	for _, run := range runs {
		if !slices.IsSortedFunc(run, keyedObject.compareInKind) {
			unsorted = append(unsorted, run)
		}
	}
	// The largest first, so that two cores share the sorting.
	slices.SortStableFunc(unsorted, func(a, b []keyedObject) int { return cmp.Compare(len(b), len(a)) })
	parallel.For(context.Background(), len(unsorted), func(i int) { slices.SortFunc(unsorted[i], keyedObject.compareInKind) })
	out := make([]model.Object, len(objs))
	for i, k := range dealt {
		out[i] = objs[k.pos]
	}
	return out
}

// keyedObject is an object's identity and its position in the input.
type keyedObject struct {
	id  model.ID
	pos int
}

// compareInKind orders the keys of objects of one group and kind.
func (k keyedObject) compareInKind(o keyedObject) int {
	if c := strings.Compare(k.id.Namespace, o.id.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(k.id.Name, o.id.Name); c != 0 {
		return c
	}
	return cmp.Compare(k.pos, o.pos)
}
