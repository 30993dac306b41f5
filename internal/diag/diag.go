// Package diag holds meshc's diagnostics: the Diagnostic value every pass
// reports, the catalog of stable codes, and the renderers that print them.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity orders diagnostics by how much they matter; a larger value is
// more severe, so thresholds compare with >=.
type Severity int

const (
	Info Severity = iota + 1
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText makes severities print as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText accepts the words MarshalText writes.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity reads "error", "warning" or "info".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "info":
		return Info, nil
	case "warning":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// ObjectRef names an input object and where it was written. Kind and Name
// are empty when a diagnostic is about a file or a document rather than an
// object (an unreadable path, a YAML syntax error).
type ObjectRef struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	// Origin says what File and Line are when they are not where the
	// object was written: a line of a rendered Helm template, the
	// kustomization that patched the object.
	Origin string `json:"origin,omitempty"`
}

// String renders "Kind namespace/name" (or the parts that are set).
func (r ObjectRef) String() string {
	var b strings.Builder
	b.WriteString(r.Kind)
	if r.Name != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if r.Namespace != "" {
			b.WriteString(r.Namespace)
			b.WriteByte('/')
		}
		b.WriteString(r.Name)
	}
	return b.String()
}

// Location renders "file:line", "file" or "" depending on what is known.
func (r ObjectRef) Location() string {
	switch {
	case r.File == "":
		return ""
	case r.Line > 0:
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	return r.File
}

// Related is another object a diagnostic points at, with why it matters.
type Related struct {
	ObjectRef
	Note string `json:"note,omitempty"`
}

// Diagnostic is one finding. The JSON form is part of meshc's contract.
type Diagnostic struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Key identifies the finding across runs: code, subject and the
	// finding's own discriminator, never a line (see key.go).
	Key     string    `json:"key"`
	Object  ObjectRef `json:"object"`
	Related []Related `json:"related,omitempty"`
	// Proxies lists "namespace/name" of the proxies a per-proxy finding
	// concerns, sorted.
	Proxies []string `json:"proxies,omitempty"`
	// Environments lists, when one run checked several environments
	// (overlays, helm entries), those where the finding occurs.
	Environments []string `json:"environments,omitempty"`
}

// WithSeverity returns d with another severity, for the few places where a
// code's usual consequence does not hold (see the catalog docs).
func (d Diagnostic) WithSeverity(s Severity) Diagnostic {
	d.Severity = s
	return d
}

// Sort orders diagnostics for output: by file, line, code, then the rest of
// the subject and the message, so the order never depends on how passes
// happened to run.
func Sort(ds []Diagnostic) {
	slices.SortStableFunc(ds, Compare)
}

// Compare is the order Sort uses.
func Compare(a, b Diagnostic) int {
	return cmp.Or(
		cmp.Compare(a.Object.File, b.Object.File),
		cmp.Compare(a.Object.Line, b.Object.Line),
		cmp.Compare(a.Code, b.Code),
		cmp.Compare(a.Object.Kind, b.Object.Kind),
		cmp.Compare(a.Object.Namespace, b.Object.Namespace),
		cmp.Compare(a.Object.Name, b.Object.Name),
		cmp.Compare(a.Message, b.Message),
	)
}

// Summary counts diagnostics by severity.
type Summary struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// Summarize counts ds.
func Summarize(ds []Diagnostic) Summary {
	var s Summary
	for _, d := range ds {
		switch d.Severity {
		case Error:
			s.Error++
		case Warning:
			s.Warning++
		case Info:
			s.Info++
		}
	}
	return s
}

// AtLeast reports whether any diagnostic is at or above min.
func AtLeast(ds []Diagnostic, min Severity) bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity >= min })
}
