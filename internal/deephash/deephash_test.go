package deephash

import (
	"reflect"
	"slices"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type leaf struct {
	Name string
	N    int
}

type tree struct {
	Leaf   *leaf
	Leaves []*leaf
	Labels map[string]string
	Msg    *wrapperspb.StringValue
	// hidden is unexported and still digested.
	hidden *leaf
	Skip   string
	Back   *tree
	Any    any
	// Nested holds pointers inside a map, digested while the map's
	// entries are.
	Nested map[string]*leaf
}

func sum(t *testing.T, cuts Cuts, v any) Sum {
	t.Helper()
	s, err := New(cuts).Sum(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSum(t *testing.T) {
	base := func() *tree {
		return &tree{Leaf: &leaf{"a", 1}, Leaves: []*leaf{{"b", 2}}, Labels: map[string]string{"x": "1", "y": "2"},
			Msg: wrapperspb.String("m"), hidden: &leaf{"h", 3}, Skip: "s", Any: 7, Nested: map[string]*leaf{"p": {"p", 1}, "q": {"q", 2}}}
	}
	cuts := Cuts{reflect.TypeFor[tree](): {"Skip"}}
	tests := []struct {
		name  string
		edit  func(*tree)
		equal bool
	}{
		{"another copy", func(*tree) {}, true},
		{"shared pointers", func(x *tree) { x.Leaves[0] = x.Leaf; x.Leaf.Name, x.Leaf.N = "b", 2 }, false},
		{"map built in another order", func(x *tree) { x.Labels = map[string]string{"y": "2", "x": "1"} }, true},
		{"a map value", func(x *tree) { x.Labels["y"] = "3" }, false},
		{"a field behind a pointer", func(x *tree) { x.Leaf.N = 2 }, false},
		{"an unexported field", func(x *tree) { x.hidden.Name = "i" }, false},
		{"a cut field", func(x *tree) { x.Skip = "t" }, true},
		{"a message's content", func(x *tree) { x.Msg = wrapperspb.String("n") }, false},
		{"an equal message elsewhere", func(x *tree) { x.Msg = wrapperspb.String("m") }, true},
		{"nil against empty", func(x *tree) { x.Leaves = []*leaf{} }, false},
		{"an element more", func(x *tree) { x.Leaves = append(x.Leaves, nil) }, false},
		{"an interface's type", func(x *tree) { x.Any = int64(7) }, false},
		{"a cycle", func(x *tree) { x.Back = x }, false},
		{"a field behind a map's pointer", func(x *tree) { x.Nested["q"].N = 3 }, false},
		{"map entries swapped", func(x *tree) { x.Nested["p"], x.Nested["q"] = x.Nested["q"], x.Nested["p"] }, false},
	}
	want := sum(t, cuts, base())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := base()
			tt.edit(x)
			if got := sum(t, cuts, x); (got == want) != tt.equal {
				t.Errorf("equal digests %v, want %v", got == want, tt.equal)
			}
		})
	}
}

// TestReuse: a Hasher digesting value after value, from memory it
// reuses, digests each as a fresh Hasher does.
func TestReuse(t *testing.T) {
	values := []*tree{
		{Leaf: &leaf{"a", 1}, Labels: map[string]string{"x": "1"}, Nested: map[string]*leaf{"p": {"p", 1}}},
		{Leaf: &leaf{"b", 2}, Leaves: []*leaf{{"c", 3}}, Nested: map[string]*leaf{"q": {"q", 2}, "r": {"r", 3}}},
	}
	h := New(nil)
	for i, v := range append(values, values...) {
		got, err := h.Sum(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := sum(t, nil, v); got != want {
			t.Errorf("value %d: digest %x, a fresh Hasher's %x", i, got, want)
		}
	}
}

// TestCycles: a value reaching itself digests as its unfolding, so two
// cycles of equal content agree and a change anywhere on one shows, and a
// node first met inside a cycle is digested again for itself.
func TestCycles(t *testing.T) {
	ring := func(names ...string) *tree {
		first := &tree{Leaf: &leaf{Name: names[0]}}
		at := first
		for _, n := range names[1:] {
			at.Back = &tree{Leaf: &leaf{Name: n}}
			at = at.Back
		}
		at.Back = first
		return first
	}
	a, b, c := ring("p", "q"), ring("p", "q"), ring("p", "r")
	if sum(t, nil, a) != sum(t, nil, b) {
		t.Error("equal rings digest apart")
	}
	if sum(t, nil, a) == sum(t, nil, c) {
		t.Error("rings of other content digest alike")
	}
	// a.Back was met inside a's cycle, at a depth below a: its digest
	// there pointed up the path, so it must not be reused for the ring
	// started at q.
	h := New(nil)
	ra, err := h.Sum(a)
	if err != nil {
		t.Fatal(err)
	}
	rq, err := h.Sum(a.Back)
	if err != nil {
		t.Fatal(err)
	}
	if rq == ra {
		t.Error("the ring from q digests as the ring from p")
	}
}

func TestUndigestable(t *testing.T) {
	type withFunc struct{ F func() }
	if _, err := New(nil).Sum(withFunc{F: func() {}}); err == nil {
		t.Error("a function digested")
	}
	if _, err := New(nil).Sum(withFunc{}); err != nil {
		t.Errorf("a nil function: %v", err)
	}
	s, err := structpb.NewStruct(map[string]any{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil).Sum(struct{ S *structpb.Struct }{s}); err != nil {
		t.Errorf("a message with a map: %v", err)
	}
}

func TestCutsNameFields(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a cut of a missing field was accepted")
		}
	}()
	New(Cuts{reflect.TypeFor[leaf](): {"Nope"}})
}

// TestLongSlices: a long slice is digested once per Hasher, and still by
// content: a copy, a slice sharing its array and one of another length or
// element over the same array each digest as their content says.
func TestLongSlices(t *testing.T) {
	type pair struct{ A, B []int }
	long := make([]int, 2*sharedSliceLen)
	for i := range long {
		long[i] = i
	}
	short := long[:sharedSliceLen-1]
	h := New(nil)
	digest := func(v any) Sum {
		t.Helper()
		s, err := h.Sum(v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := digest(pair{long, long})
	if got := digest(pair{long, slices.Clone(long)}); got != same {
		t.Error("a copy of a long slice digests apart from the slice")
	}
	if got := digest(pair{long, long[:len(long)-1]}); got == same {
		t.Error("a long slice's prefix over the same array digests as the slice")
	}
	if got := digest(pair{long, long[1:]}); got == same {
		t.Error("a long slice from its second element digests as the slice")
	}
	if got := digest(pair{short, short}); got != digest(pair{slices.Clone(short), slices.Clone(short)}) {
		t.Error("a short slice digests apart from its copy")
	}
	edited := slices.Clone(long)
	edited[sharedSliceLen] = -1
	if digest(pair{long, edited}) == same {
		t.Error("an element of a long slice does not count")
	}
}
