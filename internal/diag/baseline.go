package diag

import (
	"encoding/json"
	"fmt"
	"io"
)

// Baseline holds the keys of the findings of an earlier report, so a run
// can say which of its findings are new.
type Baseline struct {
	keys map[string]bool
}

// ReadBaseline reads a report `meshc lint -o json` wrote. Every finding in
// it must carry a key: a report of a meshc without keys cannot serve.
func ReadBaseline(r io.Reader) (Baseline, error) {
	var rep struct {
		Diagnostics *[]struct {
			Code string `json:"code"`
			Key  string `json:"key"`
		} `json:"diagnostics"`
	}
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return Baseline{}, fmt.Errorf("not a meshc lint JSON report: %w", err)
	}
	if rep.Diagnostics == nil {
		return Baseline{}, fmt.Errorf("not a meshc lint JSON report: no diagnostics")
	}
	b := Baseline{keys: make(map[string]bool, len(*rep.Diagnostics))}
	for i, d := range *rep.Diagnostics {
		if d.Key == "" {
			return Baseline{}, fmt.Errorf("finding %d (%s) has no key: write the report again with this meshc", i+1, d.Code)
		}
		b.keys[d.Key] = true
	}
	return b, nil
}

// New returns the findings of ds whose key the baseline does not hold, in
// their order, and how many it held.
func (b Baseline) New(ds []Diagnostic) (fresh []Diagnostic, known int) {
	for _, d := range sorted(ds) {
		if b.keys[d.Key] {
			known++
			continue
		}
		fresh = append(fresh, d)
	}
	return fresh, known
}
