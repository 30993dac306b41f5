package diag

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Renderer prints a set of diagnostics in one output format.
type Renderer interface {
	Render(w io.Writer, ds []Diagnostic) error
}

// Input describes what was read, for the summaries renderers print.
type Input struct {
	Files   int `json:"files"`
	Objects int `json:"objects"`
}

// Options configure renderers.
type Options struct {
	// Color enables ANSI colors in the text format.
	Color bool
	// Input is reported in the text summary and the JSON "input" field.
	Input Input
	// ToolVersion is written into SARIF's driver.
	ToolVersion string
}

// Formats lists the names NewRenderer accepts, for flag help and completion.
func Formats() []string { return []string{"text", "json", "sarif", "github"} }

// NewRenderer returns the renderer for a format name.
func NewRenderer(format string, opts Options) (Renderer, error) {
	switch format {
	case "text":
		return newText(opts), nil
	case "json":
		return jsonRenderer{opts}, nil
	case "sarif":
		return sarifRenderer{opts}, nil
	case "github":
		return githubRenderer{}, nil
	}
	return nil, fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// sorted returns a sorted copy, so renderers never reorder the caller's slice.
func sorted(ds []Diagnostic) []Diagnostic {
	out := slices.Clone(ds)
	Sort(out)
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
