package hierarchy

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
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
// input order. Each identity is computed once, and the input position
// breaks ties, so the quicker unstable sort gives the stable order: this
// runs on every compile, over every object, before anything else can. As
// nothing else runs meanwhile, the two halves are sorted at the same time
// and then merged; the order is total, so the result is the same.
func byID(objs []model.Object) []model.Object {
	keys := make([]keyedObject, len(objs))
	for i, o := range objs {
		keys[i] = keyedObject{o.Meta().ID(), i}
	}
	half := len(keys) / 2
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(keys[:half], keyedObject.compare) })
	slices.SortFunc(keys[half:], keyedObject.compare)
	wg.Wait()
	out := make([]model.Object, 0, len(objs))
	a, b := keys[:half], keys[half:]
	for len(a) > 0 && len(b) > 0 {
		if a[0].compare(b[0]) < 0 {
			out, a = append(out, objs[a[0].pos]), a[1:]
		} else {
			out, b = append(out, objs[b[0].pos]), b[1:]
		}
	}
	for _, k := range a {
		out = append(out, objs[k.pos])
	}
	for _, k := range b {
		out = append(out, objs[k.pos])
	}
	return out
}

// keyedObject is an object's identity and its position in the input.
type keyedObject struct {
	id  model.ID
	pos int
}

func (k keyedObject) compare(o keyedObject) int {
	if c := k.id.Compare(o.id); c != 0 {
		return c
	}
	return cmp.Compare(k.pos, o.pos)
}
