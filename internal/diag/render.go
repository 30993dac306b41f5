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
	// Skipped are files read but passed over, with why, and directories
	// holding an earlier build.
	Skipped []Skipped `json:"skipped,omitempty"`
	// ProjectConfig is the .meshc.yaml in effect, if any.
	ProjectConfig string `json:"projectConfig,omitempty"`
}

// Skipped is a file that holds no Kubernetes objects, an unrendered Helm
// template, or a directory holding an earlier build.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Reasons files are skipped for.
const (
	NotKubernetes = "no Kubernetes objects"
	HelmTemplate  = "unrendered Helm template"
	EarlierBuild  = "earlier meshc build"
)

// skippedSummary is one line about the skipped files, or "".
func (in Input) skippedSummary() string {
	var parts []string
	for _, reason := range []string{NotKubernetes, HelmTemplate, EarlierBuild} {
		var files []string
		for _, s := range in.Skipped {
			if s.Reason == reason {
				files = append(files, Printable(s.File))
			}
		}
		if len(files) == 0 {
			continue
		}
		shown := strings.Join(files[:min(len(files), 3)], ", ")
		if len(files) > 3 {
			shown += fmt.Sprintf(" and %d more", len(files)-3)
		}
		switch reason {
		case EarlierBuild:
			// Every one is named: a directory passed over hides all
			// its files.
			parts = append(parts, fmt.Sprintf("%s (%s)", plural(len(files), "earlier meshc build"), strings.Join(files, ", ")))
		case NotKubernetes:
			parts = append(parts, fmt.Sprintf("%s without Kubernetes objects (%s)", plural(len(files), "file"), shown))
		default:
			parts = append(parts, fmt.Sprintf("%s (%s): render them with `helm template CHART | meshc lint -`", plural(len(files), "unrendered Helm template"), shown))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "skipped " + strings.Join(parts, "; ") + "\n"
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

// sorted returns a sorted copy, so renderers never reorder the caller's
// slice. A diagnostic built without a constructor gets the key of its code
// and subject, so every rendered finding has one.
func sorted(ds []Diagnostic) []Diagnostic {
	out := slices.Clone(ds)
	for i, d := range out {
		if d.Key == "" {
			out[i].Key = keyFor(d.Code, d.Object, nil)
		}
	}
	Sort(out)
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
