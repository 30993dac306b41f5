package meshdiff

import (
	"github.com/meshc/meshc/internal/diag"
)

// Findings are the diagnostics of the two sides matched by key: New only
// in HEAD, Fixed only in BASE, and how many both hold.
type Findings struct {
	New       []diag.Diagnostic `json:"new"`
	Fixed     []diag.Diagnostic `json:"fixed"`
	Unchanged int               `json:"unchanged"`
}

// findingKey is a finding's identity across two compiles: its stable key
// (code, subject and the finding's own discriminator, never a file or a
// line), so moving an object or reformatting its file keeps it.
func findingKey(d diag.Diagnostic) string { return d.Key }

// compareFindings matches findings by key, counting repeats: a key twice
// in HEAD and once in BASE is one new finding.
func compareFindings(base, head []diag.Diagnostic) Findings {
	left := map[string]int{}
	for _, d := range base {
		left[findingKey(d)]++
	}
	f := Findings{New: []diag.Diagnostic{}, Fixed: []diag.Diagnostic{}}
	for _, d := range head {
		k := findingKey(d)
		if left[k] > 0 {
			left[k]--
			f.Unchanged++
			continue
		}
		f.New = append(f.New, d)
	}
	// What BASE holds beyond the matches, its last ones in its order.
	for i := len(base) - 1; i >= 0; i-- {
		if k := findingKey(base[i]); left[k] > 0 {
			left[k]--
			f.Fixed = append(f.Fixed, base[i])
		}
	}
	diag.Sort(f.Fixed)
	return f
}

// findingsPart is a titled list of findings in a report.
type findingsPart struct {
	title string
	ds    []diag.Diagnostic
}

// parts are the new and the fixed findings, those that are not empty.
func (f Findings) parts() []findingsPart {
	var out []findingsPart
	for _, p := range []findingsPart{{"New findings", f.New}, {"Fixed findings", f.Fixed}} {
		if len(p.ds) > 0 {
			out = append(out, p)
		}
	}
	return out
}
