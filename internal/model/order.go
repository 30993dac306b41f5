package model

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/parallel"
)

// OrderByID returns the positions of objs in the order of their
// identities (ID.Compare), equal ones (nameless objects, or one object
// defined twice) in input order, and each object's identity. Every compile
// orders its objects so (load finds the objects defined twice, the
// hierarchy stage takes them by identity), over every object, before
// anything else can, so this does the least work it can: objects are
// first dealt by group and kind (in their order, keeping input order),
// which leaves the namespaces and names to compare; input usually lists a
// kind's objects by namespace and name already (a file per namespace, or
// the API's own order), and a kind whose objects are in order is not
// sorted again. The kinds out of order are sorted at the same time, the
// input position breaking ties, so the quicker unstable sort gives the
// stable order.
func OrderByID(objs []Object) (order []int, ids []ID) {
	type groupKind struct{ group, kind string }
	kindOf := map[groupKind]int{}
	var kinds []groupKind
	ids = make([]ID, len(objs))
	rank := make([]int, len(objs))
	last := -1
	for i, o := range objs {
		id := o.Meta().ID()
		ids[i] = id
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
	// Deal the positions into one run per kind, the kinds in order.
	count := make([]int, len(kinds))
	for _, r := range rank {
		count[r]++
	}
	byKind := make([]int, len(kinds))
	for i := range byKind {
		byKind[i] = i
	}
	slices.SortFunc(byKind, func(a, b int) int {
		return cmp.Or(strings.Compare(kinds[a].group, kinds[b].group), strings.Compare(kinds[a].kind, kinds[b].kind))
	})
	next := make([]int, len(kinds)) // where a kind's next position goes
	runs := make([][]int, len(kinds))
	order = make([]int, len(objs))
	at := 0
	for _, r := range byKind {
		next[r], runs[r] = at, order[at:at+count[r]]
		at += count[r]
	}
	for i, r := range rank {
		order[next[r]] = i
		next[r]++
	}
	inKind := func(a, b int) int {
		if c := strings.Compare(ids[a].Namespace, ids[b].Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(ids[a].Name, ids[b].Name); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	var unsorted [][]int
	for _, run := range runs {
		if !slices.IsSortedFunc(run, inKind) {
			unsorted = append(unsorted, run)
		}
	}
	// The largest first, so that two cores share the sorting.
	slices.SortStableFunc(unsorted, func(a, b []int) int { return cmp.Compare(len(b), len(a)) })
	parallel.For(context.Background(), len(unsorted), func(i int) { slices.SortFunc(unsorted[i], inKind) })
	return order, ids
}
