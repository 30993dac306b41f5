package diag

import (
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
)

// textRenderer prints one line per diagnostic, grouped by file, then the
// related objects and proxies indented below it, then a summary line.
type textRenderer struct {
	opts                            Options
	err, warn, info, dim, bold, loc *color.Color
}

func newText(opts Options) *textRenderer {
	r := &textRenderer{
		opts: opts,
		err:  color.New(color.FgRed, color.Bold),
		warn: color.New(color.FgYellow, color.Bold),
		info: color.New(color.FgCyan),
		dim:  color.New(color.Faint),
		bold: color.New(color.Bold),
		loc:  color.New(color.Bold),
	}
	// Colors are decided per renderer, never through fatih/color's global
	// switch, so two renderers in one process cannot disagree.
	for _, c := range []*color.Color{r.err, r.warn, r.info, r.dim, r.bold, r.loc} {
		if opts.Color {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return r
}

func (r *textRenderer) severity(s Severity) string {
	switch s {
	case Error:
		return r.err.Sprint("error")
	case Warning:
		return r.warn.Sprint("warning")
	}
	return r.info.Sprint(s.String())
}

func (r *textRenderer) Render(w io.Writer, ds []Diagnostic) error {
	var b strings.Builder
	prevFile := ""
	for i, d := range sorted(ds) {
		if i > 0 && d.Object.File != prevFile {
			b.WriteByte('\n')
		}
		prevFile = d.Object.File
		where := Printable(d.Object.Location())
		if where == "" {
			where = "meshc"
		}
		if d.Object.Origin != "" {
			where += " (" + Printable(d.Object.Origin) + ")"
		}
		// Continuation lines of a long message stay indented under it.
		msg := strings.ReplaceAll(PrintableLines(d.Message), "\n", "\n    ")
		fmt.Fprintf(&b, "%s: %s %s %s: %s", r.loc.Sprint(where), r.severity(d.Severity), r.bold.Sprint(d.Code), d.Name, msg)
		if subject := d.Object.String(); subject != "" && d.Object.Name != "" {
			b.WriteString(r.dim.Sprintf(" [%s]", Printable(subject)))
		}
		b.WriteByte('\n')
		for _, rel := range d.Related {
			line := "    " + rel.Location()
			if s := rel.ObjectRef.String(); s != "" {
				line += " " + s
			}
			if rel.Note != "" {
				line += ": " + rel.Note
			}
			b.WriteString(r.dim.Sprint(Printable(line)) + "\n")
		}
		if len(d.Proxies) > 0 {
			b.WriteString(r.dim.Sprintf("    proxies: %s", Printable(strings.Join(d.Proxies, ", "))) + "\n")
		}
		if len(d.Environments) > 0 {
			b.WriteString(r.dim.Sprintf("    environments: %s", Printable(strings.Join(d.Environments, ", "))) + "\n")
		}
	}
	if r.opts.OmitSummary {
		_, err := io.WriteString(w, b.String())
		return err
	}
	s := Summarize(ds)
	if len(ds) > 0 {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s, %s, %s in %s from %s\n",
		r.colorCount(s.Error, "error", r.err), r.colorCount(s.Warning, "warning", r.warn),
		fmt.Sprintf("%d info", s.Info),
		plural(r.opts.Input.Objects, "object"), plural(r.opts.Input.Files, "file"))
	b.WriteString(r.opts.Input.skippedSummary())
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *textRenderer) colorCount(n int, word string, c *color.Color) string {
	if n == 0 {
		return plural(n, word)
	}
	return c.Sprint(plural(n, word))
}
