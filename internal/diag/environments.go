package diag

import (
	"encoding/json"
	"slices"
)

// MergeEnvironments reports the findings of several environments' runs
// (runs[i] is the run of names[i]) each once, with the environments where
// it occurs in the order given. Findings are the same when everything but
// their environments is: a finding whose message or line differs between
// two environments is two findings.
func MergeEnvironments(names []string, runs [][]Diagnostic) []Diagnostic {
	var out []Diagnostic
	at := map[string]int{}
	for i, ds := range runs {
		for _, d := range ds {
			d.Environments = nil
			id, err := json.Marshal(d)
			if err != nil {
				continue // a Diagnostic always encodes
			}
			j, seen := at[string(id)]
			if !seen {
				j = len(out)
				at[string(id)] = j
				out = append(out, d)
			}
			if !slices.Contains(out[j].Environments, names[i]) {
				out[j].Environments = append(out[j].Environments, names[i])
			}
		}
	}
	return out
}
