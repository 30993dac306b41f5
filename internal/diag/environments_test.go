package diag

import (
	"slices"
	"testing"
)

// TestMergeEnvironments: a finding of several environments' runs is
// reported once with the environments where it occurs; one that differs
// in anything but its environments (here, its line) is another finding.
func TestMergeEnvironments(t *testing.T) {
	at := func(line int) Diagnostic {
		return UnknownSubset.At(ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: "reviews", File: "vs.yaml", Line: line}, "subset v2")
	}
	dup := DuplicateObject.At(ObjectRef{File: "a.yaml", Line: 1}, "twice")
	got := MergeEnvironments([]string{"prod", "staging", "dev"}, [][]Diagnostic{
		{at(18), dup},
		{at(18), at(23)},
		{dup, at(18)},
	})
	type placed struct {
		code string
		line int
		envs []string
	}
	want := []placed{{"MC4003", 18, []string{"prod", "staging", "dev"}}, {"MC1004", 1, []string{"prod", "dev"}}, {"MC4003", 23, []string{"staging"}}}
	if len(got) != len(want) {
		t.Fatalf("got %d findings, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if g := got[i]; g.Code != w.code || g.Object.Line != w.line || !slices.Equal(g.Environments, w.envs) {
			t.Errorf("finding %d: %s:%d %v, want %s:%d %v", i, g.Code, g.Object.Line, g.Environments, w.code, w.line, w.envs)
		}
	}
}
