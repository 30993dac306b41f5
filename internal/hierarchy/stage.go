package hierarchy

import (
	"context"

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
// input order.
func byID(objs []model.Object) []model.Object {
	order, _ := model.OrderByID(objs)
	out := make([]model.Object, len(objs))
	for i, pos := range order {
		out[i] = objs[pos]
	}
	return out
}
