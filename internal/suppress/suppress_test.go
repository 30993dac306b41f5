package suppress

import (
	"strings"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load/loadtest"
)

// finding is an MC6001 (or other) diagnostic about the Sidecar web/name.
func finding(e *diag.Entry, name string) diag.Diagnostic {
	return e.At(diag.ObjectRef{Kind: "Sidecar", Namespace: "web", Name: name}, "x")
}

// TestFilter: rules by code, name, Istio code and object glob, and the
// subjects' annotations (meshc's and istioctl's), suppress exactly their
// findings, whatever pass reported them.
func TestFilter(t *testing.T) {
	objs := loadtest.Objects(t,
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: c, namespace: web, annotations: {meshc.io/suppress: 'MC6001'}}\nspec: {}",
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: d, namespace: web, annotations: {galley.istio.io/analyze-suppress: 'IST0111'}}\nspec: {}",
	)
	all := []diag.Diagnostic{finding(diag.MultipleDefaultSidecars, "a"), finding(diag.MultipleDefaultSidecars, "b"),
		finding(diag.MultipleDefaultSidecars, "c"), finding(diag.MultipleDefaultSidecars, "d"), finding(diag.InvalidYAML, "b")}
	for _, tc := range []struct {
		rules []string
		want  string // the subjects left, code:name
	}{
		{nil, "MC6001:a MC6001:b MC1001:b"},
		{[]string{"MC6001=web/b"}, "MC6001:a MC1001:b"},
		{[]string{"MultipleDefaultSidecars"}, "MC1001:b"},
		{[]string{"IST0111"}, "MC1001:b"},
		{[]string{"MC6001=other/*"}, "MC6001:a MC6001:b MC1001:b"},
		{[]string{"mc1001"}, "MC6001:a MC6001:b"},
	} {
		var rules []Rule
		for _, s := range tc.rules {
			r, err := Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r)
		}
		set, expired := New(rules, objs, time.Now())
		var got []string
		for _, d := range set.Filter(all) {
			got = append(got, d.Code+":"+d.Object.Name)
		}
		if strings.Join(got, " ") != tc.want || len(expired) > 0 {
			t.Errorf("%v: left %v, want %s", tc.rules, got, tc.want)
		}
	}
}

// TestParseRejects: a code no entry answers to, and a glob that is not
// namespace/name, are errors.
func TestParseRejects(t *testing.T) {
	for _, s := range []string{"MC9999", "IST0999", "Nonsense", "MC6001=web", "MC6001=[/x"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
	if _, err := Parse("MC9999"); err == nil || !strings.Contains(err.Error(), `unknown diagnostic code "MC9999"`) {
		t.Errorf("err = %v", err)
	}
}

// TestExpiry: a rule applies before its expiry day and not from it on,
// when it is reported at its line with its reason.
func TestExpiry(t *testing.T) {
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	r := Rule{Code: "MC6001", Reason: "migrating", Expires: day, Source: diag.ObjectRef{File: ".meshc.yaml", Line: 4}}
	all := []diag.Diagnostic{finding(diag.MultipleDefaultSidecars, "a")}
	set, expired := New([]Rule{r}, nil, day.Add(-time.Hour))
	if len(set.Filter(all)) != 0 || len(expired) != 0 {
		t.Error("the day before expiry, the rule must apply")
	}
	set, expired = New([]Rule{r}, nil, day.Add(9*time.Hour))
	if len(set.Filter(all)) != 1 || len(expired) != 1 || expired[0].Code != "MC1007" || expired[0].Object.Line != 4 ||
		!strings.Contains(expired[0].Message, "expired on 2026-11-24 (migrating)") {
		t.Errorf("on the expiry day: %v", expired)
	}
}
