package routecheck

import (
	"errors"
	"strings"
	"testing"
)

// TestParseStrict: a test file is read strictly, each problem at its line.
func TestParseStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"unknown top-level field", "tests: []\nsuite: x\n", 2, "field suite not found"},
		{"unknown request field", "tests:\n- from: a/b\n  target: http://x/\n  verb: GET\n", 4, "field verb not found"},
		{"unknown expectation", "tests:\n- from: a/b\n  target: http://x/\n  expect:\n    clustr: x\n", 5, "field clustr not found"},
		{"wrong type", "tests:\n- from: a/b\n  target: http://x/\n  expect: {port: eighty}\n", 4, "cannot unmarshal"},
		{"no from", "tests:\n- target: http://x/\n", 2, "needs from"},
		{"no target", "tests:\n- name: a\n  from: a/b\n", 2, "needs target"},
		{"no tests", "tests: []\n", 0, "no tests"},
		{"empty file", "", 0, "no tests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.in))
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a FormatError", err)
			}
			if fe.Line != tc.line || !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("%v, want line %d and %q", err, tc.line, tc.msg)
			}
		})
	}
}

func TestParseLinesAndNames(t *testing.T) {
	f, err := Parse("t.yaml", []byte("# routing\ntests:\n- from: a/b\n  target: http://x/\n- name: second\n  from: a/b\n  target: x:1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{f.Tests[0].Line, f.Tests[1].Line}; got[0] != 3 || got[1] != 5 {
		t.Errorf("lines %v, want [3 5]", got)
	}
	if f.Tests[0].Name != "t.yaml:3" || f.Tests[1].Name != "second" {
		t.Errorf("names %q %q", f.Tests[0].Name, f.Tests[1].Name)
	}
}
