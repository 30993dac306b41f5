package routecheck

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/request"
)

// WriteText writes one line per case, each failure's expectations and
// trace under it, and a summary.
func WriteText(w io.Writer, results []Result) error {
	var b strings.Builder
	failed := 0
	for _, r := range results {
		if r.Passed() {
			diag.Fprintf(&b, "PASS  %s\n", r.Case.Name)
			continue
		}
		failed++
		diag.Fprintf(&b, "FAIL  %s  (%s:%d)\n", r.Case.Name, r.File, r.Case.Line)
		for _, f := range r.Failures {
			diag.Fprintf(&b, "      %s\n", f)
		}
		b.WriteString(indent(trace(r.Report), "      | "))
	}
	diag.Fprintf(&b, "\n%d tests, %d passed, %d failed\n", len(results), len(results)-failed, failed)
	_, err := io.WriteString(w, b.String())
	return err
}

func trace(rep *request.Report) string {
	var b strings.Builder
	_ = request.WriteText(&b, rep) // a strings.Builder does not fail
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// JUnit XML, as CI systems read it: a suite per file, a case per test.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Line      int           `xml:"line,attr"`
	Failure   *junitFailure `xml:"failure"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",cdata"`
}

// WriteJUnit writes the results as JUnit XML. Times are left out, so the
// output depends on the inputs alone.
func WriteJUnit(w io.Writer, results []Result) error {
	out := junitSuites{}
	for _, r := range results {
		if n := len(out.Suites); n == 0 || out.Suites[n-1].Name != r.File {
			out.Suites = append(out.Suites, junitSuite{Name: r.File})
		}
		s := &out.Suites[len(out.Suites)-1]
		c := junitCase{Name: r.Case.Name, Classname: r.File, File: r.File, Line: r.Case.Line}
		if !r.Passed() {
			c.Failure = &junitFailure{Message: strings.Join(r.Failures, "; "),
				Text: strings.Join(r.Failures, "\n") + "\n\n" + trace(r.Report)}
			s.Failures++
			out.Failures++
		}
		s.Tests++
		out.Tests++
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
