package diag

import (
	"encoding/json"
	"io"
)

type jsonRenderer struct{ opts Options }

// jsonReport is the document `meshc lint -o json` prints.
type jsonReport struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	Summary     Summary      `json:"summary"`
	Input       Input        `json:"input"`
}

func (r jsonRenderer) Render(w io.Writer, ds []Diagnostic) error {
	rep := jsonReport{Diagnostics: sorted(ds), Summary: Summarize(ds), Input: r.opts.Input}
	if rep.Diagnostics == nil {
		rep.Diagnostics = []Diagnostic{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
