package meshdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/envdiff"
)

// Formats are the output formats Write accepts.
func Formats() []string { return []string{"text", "json", "markdown", "sarif"} }

// WriteOptions shape a written report.
type WriteOptions struct {
	// Format is "text" (default), "json", "markdown" (a pull-request
	// comment) or "sarif" (the new findings only).
	Format string
	// Color colors the text format as lint's.
	Color bool
	// ToolVersion is written into SARIF's driver.
	ToolVersion string
}

// Write renders the report.
func (r *Report) Write(w io.Writer, opts WriteOptions) error {
	switch opts.Format {
	case "", "text":
		return r.writeText(w, opts.Color)
	case "json":
		rep := *r
		if rep.Proxies == nil {
			rep.Proxies = []ProxyGroup{}
		}
		if rep.Objects == nil {
			rep.Objects = []Object{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "markdown":
		return r.writeMarkdown(w, CommentLimit)
	case "sarif":
		sr, err := diag.NewRenderer("sarif", diag.Options{ToolVersion: opts.ToolVersion})
		if err != nil {
			return err
		}
		return sr.Render(w, r.Diagnostics.New)
	}
	return fmt.Errorf("unknown output format %q (want %s)", opts.Format, strings.Join(Formats(), ", "))
}

// text colors: added green, removed red, changed yellow, as diff tools
// and lint's severities do.
type palette struct{ add, del, mod, bold, dim *color.Color }

func newPalette(on bool) palette {
	p := palette{color.New(color.FgGreen), color.New(color.FgRed), color.New(color.FgYellow), color.New(color.Bold), color.New(color.Faint)}
	// Per renderer, never fatih/color's global switch.
	for _, c := range []*color.Color{p.add, p.del, p.mod, p.bold, p.dim} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// mark is a status's sign, colored.
func (p palette) mark(status string) string {
	switch status {
	case StatusAdded:
		return p.add.Sprint("+")
	case StatusRemoved:
		return p.del.Sprint("-")
	}
	return p.mod.Sprint("~")
}

func (r *Report) writeText(w io.Writer, colored bool) error {
	p := newPalette(colored)
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "%s %d compared, %d changed, %d added, %d removed\n", p.bold.Sprint("proxies:"), s.Proxies.Compared, s.Proxies.Changed, s.Proxies.Added, s.Proxies.Removed)
	fmt.Fprintf(&b, "%s %d added, %d removed, %d modified\n", p.bold.Sprint("objects:"), s.Objects.Added, s.Objects.Removed, s.Objects.Modified)
	fmt.Fprintf(&b, "%s %d new, %d fixed, %d unchanged\n", p.bold.Sprint("findings:"), s.Findings.New, s.Findings.Fixed, s.Findings.Unchanged)
	if len(r.Proxies) > 0 {
		b.WriteString("\n" + p.bold.Sprint("Proxies") + "\n")
	}
	for _, g := range r.Proxies {
		fmt.Fprintf(&b, "%s %s %s: %s\n", p.mark(g.Status), g.Summary, g.Status, p.dim.Sprint(diag.Printable(listIDs(g.Proxies))))
		for _, c := range g.Changes {
			b.WriteString("    " + colorChange(p, c) + "\n")
		}
		for i, c := range g.Causes {
			lead := "  because"
			if i > 0 {
				lead = "         "
			}
			fmt.Fprintf(&b, "%s %s %s\n", p.dim.Sprint(lead), p.mark(c.Status), diag.Printable(c.String()))
		}
	}
	if len(r.Objects) > 0 {
		b.WriteString("\n" + p.bold.Sprint("Objects") + "\n")
	}
	for _, o := range r.Objects {
		fmt.Fprintf(&b, "%s %s %s (%s)\n", p.mark(o.Status), o.Status, diag.Printable(o.Ref().String()), p.dim.Sprint(diag.Printable(o.Where())))
		for _, f := range o.Fields {
			b.WriteString("    " + diag.Printable(envdiff.Line(f.Kind, f.Path, cut(f.Old), cut(f.New))) + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	for _, part := range r.Diagnostics.parts() {
		if _, err := fmt.Fprintf(w, "\n%s\n", p.bold.Sprint(part.title)); err != nil {
			return err
		}
		tr, err := diag.NewRenderer("text", diag.Options{Color: colored, OmitSummary: true})
		if err != nil {
			return err
		}
		if err := tr.Render(w, part.ds); err != nil {
			return err
		}
	}
	return nil
}

// listIDs shows up to ten proxies.
func listIDs(ids []string) string {
	const shown = 10
	if len(ids) <= shown {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:shown], ", ") + fmt.Sprintf(" and %d more", len(ids)-shown)
}

// colorChange is a change on one line, long values cut (the JSON report
// has them whole).
func colorChange(p palette, c Change) string {
	where := c.Type + " " + c.Resource
	if c.Path != "" {
		where += " › " + c.Path
	}
	text := diag.Printable(envdiff.Line(c.Kind, where, cut(c.Old), cut(c.New)))
	switch c.Kind {
	case envdiff.Added:
		return p.add.Sprint(text)
	case envdiff.Removed:
		return p.del.Sprint(text)
	}
	return p.mod.Sprint(text)
}

// cut shortens a value to about 100 characters.
func cut(v string) string {
	const limit = 100
	if len(v) <= limit {
		return v
	}
	i := limit
	for i > 0 && !utf8.RuneStart(v[i]) {
		i--
	}
	return v[:i] + "…"
}
