package crdschema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiserver/pkg/cel/environment"
)

// TestReadsOfRules: what a rule reads of self, written {field...} for an
// object's fields read, # for a list's length, [...] for its elements
// and * for a value read whole.
func TestReadsOfRules(t *testing.T) {
	var props apiextv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(`{"type": "object", "properties": {
		"a": {"type": "string"},
		"namespace": {"type": "string"},
		"l": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}}}},
		"m": {"type": "object", "additionalProperties": {"type": "string"}},
		"o": {"type": "object", "properties": {"p": {"type": "integer"}}}}}`), &props); err != nil {
		t.Fatal(err)
	}
	s := structural(t, apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"spec": props}})
	spec := s.Properties["spec"]
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv()
	for _, c := range []struct{ rule, want string }{
		{`self.a == 'x'`, `{a*}`},
		{`has(self.o)`, `{o}`},
		{`self.o.p > 1 ? true : has(self.a)`, `{a,o{p*}}`},
		{`self.__namespace__ == ''`, `{namespace*}`},
		{`size(self.l) > 1 && self.l.size() < 3`, `{l#}`},
		{`self.l.all(e, e.x == 'a')`, `{l#[{x*}]}`},
		{`self.l[0].y == 'b'`, `{l#[{y*}]}`},
		{`self.l.filter(e, e.x == 'a').size() <= 1`, `{l#[*]}`},
		{`self.l.exists(e, self.a == e.x)`, `{a*,l#[{x*}]}`},
		{`self.l.all(self, self.x == '')`, `{l#[{x*}]}`},
		{`self.m.all(k, k != '')`, `{m*}`},
		{`self.m.key == 'v'`, `{m{key*}}`},
		{`'x' in self.l.map(e, e.y)`, `{l#[{y*}]}`},
		{`[self.o].size() == 1`, `{o*}`},
		{`size(self.a) < 3`, `{a*}`},
		{`self == self`, `*`},
		{`self.l.all(i, e, e.x == '')`, `{l*}`},
		{`self.missing == 1`, `*`},
	} {
		r := newReads(env, c.rule, &spec)
		if r == nil {
			t.Errorf("%s: does not parse", c.rule)
			continue
		}
		if got := renderReads(r); got != c.want {
			t.Errorf("%s: reads %s, want %s", c.rule, got, c.want)
		}
	}
	if newReads(env, "self.a ==", &spec) != nil {
		t.Error("a rule that does not parse has reads")
	}
}

func renderReads(r *reads) string {
	if r.all {
		return "*"
	}
	var b strings.Builder
	if r.fields != nil {
		var parts []string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range r.fields {
				if !yield(k) {
					return
				}
			}
		}) {
			parts = append(parts, k+renderReads(r.fields[k]))
		}
		b.WriteString("{" + strings.Join(parts, ",") + "}")
	}
	if r.size {
		b.WriteString("#")
	}
	if r.elem != nil {
		b.WriteString("[" + renderReads(r.elem) + "]")
	}
	return b.String()
}
