package diag

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want, lines string }{
		{"plain name-1.yaml", "plain name-1.yaml", "plain name-1.yaml"},
		{"ünïcode ✓ 名前", "ünïcode ✓ 名前", "ünïcode ✓ 名前"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"a\nb\r\nc\td", `a\nb\r\nc\td`, "a\nb\\r\nc\\td"},
		{"title\x1b]0;owned\a", `title\x1b]0;owned\a`, `title\x1b]0;owned\a`},
		{"del\x7f c1\u009b[2J", `del\x7f c1\u009b[2J`, `del\x7f c1\u009b[2J`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`, `bidi \u202egnp.exe`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"nul\x00", `nul\x00`, `nul\x00`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := PrintableLines(tt.in); got != tt.lines {
			t.Errorf("PrintableLines(%q) = %q, want %q", tt.in, got, tt.lines)
		}
	}
}

type condition struct{ reason string }

func (c condition) String() string { return "halted: " + c.reason }

// TestFprintf: text arguments are escaped whatever their type, Styled
// text and numbers are not.
func TestFprintf(t *testing.T) {
	type name string
	var b strings.Builder
	_, err := Fprintf(&b, "%s|%s|%v|%s|%v|%s|%d|%s\n", "a\x1b", name("n\n"), []string{"x\a", "y"}, errors.New("e\x1b"),
		condition{"p\x1b"}, &condition{"q\r"}, Error, Styled("\x1b[1mbold\x1b[0m"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `a\x1b|n\n|[x\a y]|e\x1b|halted: p\x1b|halted: q\r|3|` + "\x1b[1mbold\x1b[0m\n"; b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

// hostile is a diagnostic whose every piece of input text carries
// terminal controls and line breaks.
func hostile(file, name, message string) []Diagnostic {
	ref := ObjectRef{Kind: "Virtual\x1bService", Namespace: "ns\n", Name: name, File: file, Line: 3}
	return []Diagnostic{{
		Code: "MC1003", Name: "SchemaViolation", Severity: Error, Message: message, Object: ref,
		Related: []Related{{ObjectRef: ref, Note: "note " + name}},
		Proxies: []string{name + "/p", "ok/p"},
	}}
}

var (
	sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// renderedControl is any control character a text renderer may not
	// print: all but its own line feeds.
	renderedControl = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
)

// checkRenderers renders ds in every format and fails on raw control
// characters in text and GitHub output (colour codes aside), forged
// lines, or JSON and SARIF that do not parse, or, given a schema, SARIF
// that does not fit it.
func checkRenderers(t testing.TB, ds []Diagnostic, schema *jsonschema.Schema) {
	t.Helper()
	input := Input{Files: 1, Objects: 1, Skipped: []Skipped{{File: ds[0].Object.File, Reason: NotKubernetes}}}
	plain := render(t, "text", Options{Input: input}, ds)
	colored := render(t, "text", Options{Color: true, Input: input}, ds)
	if !bytes.Equal(sgr.ReplaceAll(colored, nil), plain) {
		t.Errorf("coloured text is more than the plain text and colour codes:\n%q\n%q", colored, plain)
	}
	if loc := renderedControl.FindIndex(plain); loc != nil || !utf8.Valid(plain) {
		t.Errorf("text output has a raw control character or invalid UTF-8 (at %v):\n%q", loc, plain)
	}
	// The finding, its related object and proxies, a blank line, the
	// summary and the skipped line: only a line feed in the message adds
	// one, indented below the finding.
	lines := strings.Split(string(plain), "\n")
	if want := 7 + strings.Count(ds[0].Message, "\n"); len(lines) != want {
		t.Errorf("%d lines, want %d: input started a line of its own:\n%s", len(lines), want, plain)
	}
	for i, line := range lines[1 : 3+strings.Count(ds[0].Message, "\n")] {
		if !strings.HasPrefix(line, "    ") {
			t.Errorf("line %d is not indented below the finding: %q", i+2, line)
		}
	}
	gh := render(t, "github", Options{}, ds)
	if lines := bytes.Count(gh, []byte("\n")); lines != len(ds) || !bytes.HasPrefix(gh, []byte("::error ")) {
		t.Errorf("GitHub output is %d lines for %d findings:\n%q", lines, len(ds), gh)
	}
	if loc := renderedControl.FindIndex(gh); loc != nil || !utf8.Valid(gh) {
		t.Errorf("GitHub output has a raw control character or invalid UTF-8 (at %v):\n%q", loc, gh)
	}
	var doc struct{ Diagnostics []Diagnostic }
	if out := render(t, "json", Options{Input: input}, ds); json.Unmarshal(out, &doc) != nil || len(doc.Diagnostics) != len(ds) {
		t.Errorf("JSON output does not parse or lost findings:\n%s", out)
	}
	sarif := render(t, "sarif", Options{ToolVersion: "v0"}, ds)
	var log struct {
		Runs []struct {
			Results []struct{ Message struct{ Text string } }
		}
	}
	if err := json.Unmarshal(sarif, &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != len(ds) {
		t.Errorf("SARIF output does not parse or lost findings (%v):\n%s", err, sarif)
	}
	if schema == nil {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarif))
	if err == nil {
		err = schema.Validate(inst)
	}
	if err != nil {
		t.Errorf("SARIF output: %v", err)
	}
}

// TestRenderersEscapeHostileInput: names, files and messages holding
// terminal escapes and line breaks reach no terminal raw.
func TestRenderersEscapeHostileInput(t *testing.T) {
	schema := sarifSchema(t)
	for _, tt := range []struct{ file, name, message string }{
		{"d/f\x1b[31mRED\x1b[0m\nx.yaml", "web", "plain"},
		{"a.yaml", "bad\x1b[31mname\nnext", "the parent p\x1b[2Jq does not exist"},
		{"a.yaml", "vs", "title\x1b]0;owned\a and \u009b[2J and \u202eevil\nsecond line\r\nthird"},
		{"a\xff.yaml", "x\x7f", "bad \xfe utf8\x00"},
	} {
		checkRenderers(t, hostile(tt.file, tt.name, tt.message), schema)
	}
	out := string(render(t, "text", Options{}, hostile("f\x1b.yaml", "n\x1b", "m\x1b[31m\nnext")))
	for _, want := range []string{`f\x1b.yaml:3: error MC1003 SchemaViolation: m\x1b[31m` + "\n    next [Virtual\\x1bService ns\\n/n\\x1b]",
		`    f\x1b.yaml:3 Virtual\x1bService ns\n/n\x1b: note n\x1b`, `    proxies: n\x1b/p, ok/p`} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

// FuzzRenderers: whatever the input's names and messages, text and GitHub
// output carry no raw control characters and forge no lines, and JSON and
// SARIF stay valid JSON with every finding. The schema, which costs more
// than the rest together, is checked on the seeds and on every tenth
// input.
func FuzzRenderers(f *testing.F) {
	f.Add("d/f\x1b[31mRED\x1b[0m\nx.yaml", "bad\x1b[31mname\nnext", "title\x1b]0;owned\a \u009b[2J \u202eevil\nsecond\r\n100%,:")
	f.Add("a.yaml", "web", "plain")
	f.Add("a\xff.yaml", "x\x7f", "bad \xfe utf8\x00")
	schema := sarifSchema(f)
	f.Fuzz(func(t *testing.T, file, name, message string) {
		s := schema
		if len(file+name+message)%10 != 0 {
			s = nil
		}
		checkRenderers(t, hostile(file, name, message), s)
	})
}
