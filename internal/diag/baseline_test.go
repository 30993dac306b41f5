package diag

import (
	"bytes"
	"strings"
	"testing"
)

// TestBaselineRoundTrip: a JSON report read back as a baseline holds
// exactly its findings, so a second run reports only what is new.
func TestBaselineRoundTrip(t *testing.T) {
	old := sample()
	var report bytes.Buffer
	if err := (jsonRenderer{}).Render(&report, old[:3]); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBaseline(&report)
	if err != nil {
		t.Fatal(err)
	}
	moved := old[0]
	moved.Object.File, moved.Object.Line = "elsewhere.yaml", 99
	now := append([]Diagnostic{moved}, old[1:]...)
	fresh, known := b.New(now)
	if known != 3 || len(fresh) != len(now)-3 {
		t.Fatalf("known %d, fresh %v", known, fresh)
	}
	for _, d := range fresh {
		for _, o := range old[:3] {
			if d.Code == o.Code && d.Object.Name == o.Object.Name {
				t.Errorf("%s %s is in the baseline but reported", d.Code, d.Object)
			}
		}
	}
}

func TestReadBaselineRejects(t *testing.T) {
	for _, tt := range []struct{ name, in, err string }{
		{"not JSON", "nope", "not a meshc lint JSON report"},
		{"another document", `{"runs": []}`, "no diagnostics"},
		{"no keys", `{"diagnostics": [{"code": "MC1001"}]}`, "finding 1 (MC1001) has no key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ReadBaseline(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
	if b, err := ReadBaseline(strings.NewReader(`{"diagnostics": []}`)); err != nil || len(b.keys) != 0 {
		t.Errorf("an empty report: %v %v", b, err)
	}
}
