package diag

import (
	"fmt"
	"io"
	"strings"
)

// githubRenderer prints GitHub Actions workflow commands, which the runner
// turns into annotations on the pull request's files.
type githubRenderer struct{}

func (githubRenderer) Render(w io.Writer, ds []Diagnostic) error {
	var b strings.Builder
	for _, d := range sorted(ds) {
		level := "notice"
		switch d.Severity {
		case Error:
			level = "error"
		case Warning:
			level = "warning"
		}
		var props []string
		if d.Object.File != "" {
			props = append(props, "file="+escapeProperty(Printable(d.Object.File)))
			if d.Object.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", d.Object.Line))
			}
		}
		props = append(props, "title="+escapeProperty(Printable(d.Code+" "+d.Name)))
		// Line breaks are the message's own and the lines this adds; the
		// runner shows them, and a terminal reading the log gets none of
		// the input's control characters.
		msg := PrintableLines(d.Message)
		if s := d.Object.String(); d.Object.Name != "" {
			msg += " [" + Printable(s) + "]"
		}
		if d.Object.Origin != "" {
			msg += "\n(" + Printable(d.Object.Origin) + ")"
		}
		for _, rel := range d.Related {
			line := rel.Location() + " " + rel.ObjectRef.String()
			if rel.Note != "" {
				line += ": " + rel.Note
			}
			msg += "\n" + Printable(line)
		}
		if len(d.Proxies) > 0 {
			msg += "\nproxies: " + Printable(strings.Join(d.Proxies, ", "))
		}
		if len(d.Environments) > 0 {
			msg += "\nenvironments: " + Printable(strings.Join(d.Environments, ", "))
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(msg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData and escapeProperty follow the runner's workflow-command
// encoding: percent, CR and LF always; colon and comma inside properties.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
