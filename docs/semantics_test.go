// Tests that the code's citations of the semantics reference resolve.
//
// Comments in internal/ and cmd/ cite docs/semantics/ as
// "docs/semantics/<file>.md §<id>" or "docs/semantics/<file>.md <ID>" (case
// and question ids such as C40 or Q8), optionally followed by more ids of the
// same file ("§1.4, §2.1", "§1–§2", "§6.3 / C40" only when both live in the
// same file). Every cited file must exist and must have a Markdown heading
// that starts with every cited id. Citations of the retired external specs
// (istio.md, hierarchy.md, envoy-output.md without the docs/semantics/
// prefix) are rejected. See docs/semantics/README.md.
package docs_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// semanticsDir is the reference, relative to this package's directory.
const semanticsDir = "semantics"

// sourceRoots are walked for .go files whose comments are checked.
var sourceRoots = []string{"../internal", "../cmd"}

const idPattern = `§[0-9A-Z][0-9A-Za-z]*(?:\.[0-9A-Za-z]+)*|[A-Z]{1,2}[0-9]+`

var (
	// pathRE finds a citation's file; the path may wrap after the slash.
	pathRE = regexp.MustCompile(`docs/semantics/\s*([A-Za-z0-9_-]+\.md)`)
	// firstIDRE is the id right after the file; nextIDRE one more id of it.
	firstIDRE = regexp.MustCompile(`^\s*(` + idPattern + `)\b`)
	nextIDRE  = regexp.MustCompile(`^\s*(?:,|/|–|\band\b)\s*(` + idPattern + `)\b`)
	// oldRE finds any mention of a spec file name, with whatever path
	// precedes it; the caller decides whether it is the new form.
	oldRE = regexp.MustCompile(`(?:^|[^\w-])((?:[\w.-]+/)*(?:istio|hierarchy|envoy-output)\.md)`)
	// headingRE is an ATX Markdown heading.
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// citation is one cited file with the ids cited in it.
type citation struct {
	file string
	ids  []string
	off  int // offset of the citation in the comment text
}

// oldCite is a mention of a retired spec file.
type oldCite struct {
	text string
	off  int
}

// parseComment returns the citations and the old-style mentions in the text
// of one comment block (comment markers already removed).
func parseComment(text string) ([]citation, []oldCite) {
	var cites []citation
	for _, m := range pathRE.FindAllStringSubmatchIndex(text, -1) {
		c := citation{file: text[m[2]:m[3]], off: m[0]}
		p := m[1]
		if id := firstIDRE.FindStringSubmatchIndex(text[p:]); id != nil {
			c.ids = append(c.ids, text[p+id[2]:p+id[3]])
			p += id[1]
			for {
				id := nextIDRE.FindStringSubmatchIndex(text[p:])
				if id == nil {
					break
				}
				c.ids = append(c.ids, text[p+id[2]:p+id[3]])
				p += id[1]
			}
		}
		cites = append(cites, c)
	}
	var olds []oldCite
	for _, m := range oldRE.FindAllStringSubmatchIndex(text, -1) {
		tok := text[m[2]:m[3]]
		if strings.HasPrefix(tok, "docs/semantics/") {
			continue
		}
		// "docs/semantics/" at the end of the previous line.
		before := strings.TrimRight(text[:m[2]], " \t\r\n")
		if strings.HasSuffix(before, "docs/semantics/") && !strings.Contains(tok, "/") {
			continue
		}
		olds = append(olds, oldCite{text: tok, off: m[2]})
	}
	return cites, olds
}

// block is the text of a comment or of a run of // comments on consecutive
// lines, with the file line of each text line.
type block struct {
	text   string
	starts []int // offset in text where each line starts
	lines  []int // file line of each of those lines
}

func (b *block) add(piece string, line int) {
	if len(b.starts) > 0 {
		b.text += "\n"
	}
	for i, l := range strings.Split(piece, "\n") {
		if i > 0 {
			b.text += "\n"
		}
		b.starts = append(b.starts, len(b.text))
		b.lines = append(b.lines, line+i)
		b.text += l
	}
}

// lineOf maps an offset in b.text to a file line.
func (b *block) lineOf(off int) int {
	i := sort.Search(len(b.starts), func(i int) bool { return b.starts[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return b.lines[i]
}

// commentBlocks scans Go source for comments; it needs no valid syntax, so a
// file being edited still gets checked.
func commentBlocks(name string, src []byte) []*block {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var blocks []*block
	var cur *block
	lastLine := -1
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // automatic semicolon: not code
		}
		if tok != token.COMMENT {
			cur = nil
			continue
		}
		line := fset.Position(pos).Line
		if strings.HasPrefix(lit, "//") {
			piece := strings.TrimPrefix(lit, "//")
			if cur != nil && line == lastLine+1 {
				cur.add(piece, line)
			} else {
				cur = &block{}
				cur.add(piece, line)
				blocks = append(blocks, cur)
			}
			lastLine = line
			continue
		}
		b := &block{}
		b.add(strings.TrimSuffix(strings.TrimPrefix(lit, "/*"), "*/"), line)
		blocks = append(blocks, b)
		cur = nil
	}
	return blocks
}

// headings returns the heading texts of a Markdown file, outside code fences.
func headings(src string) []string {
	var out []string
	fence := false
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// headingHasID reports whether a heading text starts with id: "§5.4" must be
// followed by a space or the end ("§5.4.1" does not start with "§5.4"), a
// case or question id by a space, a colon or the end.
func headingHasID(heading, id string) bool {
	if !strings.HasPrefix(heading, id) {
		return false
	}
	rest := heading[len(id):]
	if rest == "" || rest[0] == ' ' {
		return true
	}
	return !strings.HasPrefix(id, "§") && rest[0] == ':'
}

// headingID is the id a heading defines, or "".
var headingIDRE = regexp.MustCompile(`^(` + idPattern + `)(?:[ :]|$)`)

func headingID(h string) string {
	if m := headingIDRE.FindStringSubmatch(h); m != nil {
		return m[1]
	}
	return ""
}

// reference loads every Markdown file of the semantics directory.
func reference(t *testing.T) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(semanticsDir)
	if err != nil {
		t.Fatalf("reading %s: %v", semanticsDir, err)
	}
	ref := map[string][]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(semanticsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		ref[e.Name()] = headings(string(src))
	}
	if len(ref) == 0 {
		t.Fatalf("no Markdown files in %s", semanticsDir)
	}
	return ref
}

func TestParseComment(t *testing.T) {
	type cite struct {
		file string
		ids  string // space-separated
	}
	for _, tc := range []struct {
		name  string
		text  string
		cites []cite
		olds  []string
	}{
		{"section", " lookup is docs/semantics/destination-rules.md §5.4 for proxies.",
			[]cite{{"destination-rules.md", "§5.4"}}, nil},
		{"sentence end", " see docs/semantics/registry.md §1.2.",
			[]cite{{"registry.md", "§1.2"}}, nil},
		{"list", " (docs/semantics/hierarchy.md §1.4, §2.1)",
			[]cite{{"hierarchy.md", "§1.4 §2.1"}}, nil},
		{"range", " the labels it writes (docs/semantics/hierarchy.md §1–§2).",
			[]cite{{"hierarchy.md", "§1 §2"}}, nil},
		{"letter suffix", " (docs/semantics/hierarchy.md §1.1a [POLICY])",
			[]cite{{"hierarchy.md", "§1.1a"}}, nil},
		{"deep", " (docs/semantics/hierarchy.md §5.4.1)",
			[]cite{{"hierarchy.md", "§5.4.1"}}, nil},
		{"E section", " (docs/semantics/envoy-output.md §E2.3)",
			[]cite{{"envoy-output.md", "§E2.3"}}, nil},
		{"case id", " TestC44: docs/semantics/cases.md C44 (a) and (b).",
			[]cite{{"cases.md", "C44"}}, nil},
		{"possessive", " c40Mesh is docs/semantics/cases.md C40's world",
			[]cite{{"cases.md", "C40"}}, nil},
		{"question", " (docs/semantics/cases.md Q8)", []cite{{"cases.md", "Q8"}}, nil},
		{"two files", " (docs/semantics/virtual-services.md §6.3 / docs/semantics/cases.md C40 (c))",
			[]cite{{"virtual-services.md", "§6.3"}, {"cases.md", "C40"}}, nil},
		{"words after", " (docs/semantics/envoy-output.md §7.3, TLS)",
			[]cite{{"envoy-output.md", "§7.3"}}, nil},
		{"wrapped before id", " (docs/semantics/destination-rules.md\n §5.6, docs/semantics/sidecar-scope.md §4.10)",
			[]cite{{"destination-rules.md", "§5.6"}, {"sidecar-scope.md", "§4.10"}}, nil},
		{"wrapped path", " the server's (docs/semantics/\n envoy-output.md §7.9).",
			[]cite{{"envoy-output.md", "§7.9"}}, nil},
		{"file only", " see docs/semantics/README.md", []cite{{"README.md", ""}}, nil},
		{"old section", " (istio.md §5.4)", nil, []string{"istio.md"}},
		{"old bare", " everyPortCalls are istio.md's calls", nil, []string{"istio.md"}},
		{"old hierarchy", " (hierarchy.md trap 9, §5.1)", nil, []string{"hierarchy.md"}},
		{"old envoy", " (envoy-output.md §3)", nil, []string{"envoy-output.md"}},
		{"old with path", " see ../shared/spec/istio.md §1", nil, []string{"../shared/spec/istio.md"}},
		{"unrelated", " see README.md and design.md", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cites, olds := parseComment(tc.text)
			var got []cite
			for _, c := range cites {
				got = append(got, cite{c.file, strings.Join(c.ids, " ")})
			}
			if len(got) != len(tc.cites) {
				t.Fatalf("parseComment(%q) citations = %v, want %v", tc.text, got, tc.cites)
			}
			for i := range got {
				if got[i] != tc.cites[i] {
					t.Errorf("parseComment(%q) citation %d = %v, want %v", tc.text, i, got[i], tc.cites[i])
				}
			}
			var gotOld []string
			for _, o := range olds {
				gotOld = append(gotOld, o.text)
			}
			if strings.Join(gotOld, ",") != strings.Join(tc.olds, ",") {
				t.Errorf("parseComment(%q) old-style = %q, want %q", tc.text, gotOld, tc.olds)
			}
		})
	}
}

func TestHeadingHasID(t *testing.T) {
	for _, tc := range []struct {
		heading, id string
		want        bool
	}{
		{"§5.4 Lookup for service S", "§5.4", true},
		{"§5.4", "§5.4", true},
		{"§5.4.1 Per-namespace singletons", "§5.4", false},
		{"§5.41 Something", "§5.4", false},
		{"§1.1a Resolving HNCConfiguration entries", "§1.1a", true},
		{"§1.1a Resolving", "§1.1", false},
		{"§E3 Validation", "§E3", true},
		{"§E3 Validation", "§3", false},
		{"C40 Sidecar route precedence", "C40", true},
		{"C40: Sidecar route precedence", "C40", true},
		{"C40", "C40", true},
		{"C401 Another", "C40", false},
		{"§8:", "§8", false},
		{"Q8 Destination port inference", "Q8", true},
		{"Q80 Other", "Q8", false},
	} {
		if got := headingHasID(tc.heading, tc.id); got != tc.want {
			t.Errorf("headingHasID(%q, %q) = %v, want %v", tc.heading, tc.id, got, tc.want)
		}
	}
}

func TestCommentBlocks(t *testing.T) {
	src := "package p\n\n// a (docs/semantics/x.md\n// §1.2) b\nvar s = \"istio.md §1\" // c istio.md\n/* d\n e */\n"
	blocks := commentBlocks("p.go", []byte(src))
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.text)
	}
	want := []string{" a (docs/semantics/x.md\n §1.2) b", " c istio.md", " d\n e "}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("commentBlocks = %q, want %q", texts, want)
	}
	if got := blocks[0].lineOf(strings.Index(blocks[0].text, "§")); got != 4 {
		t.Errorf("line of §1.2 = %d, want 4", got)
	}
	if got := blocks[2].lineOf(strings.Index(blocks[2].text, "e")); got != 7 {
		t.Errorf("line of e = %d, want 7", got)
	}
}

// TestSemanticsCitations is the check itself: every citation in internal/
// and cmd/ resolves, and nothing cites the retired spec files.
func TestSemanticsCitations(t *testing.T) {
	ref := reference(t)
	total := 0
	for _, root := range sourceRoots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(filepath.ToSlash(path), "../")
			for _, b := range commentBlocks(path, src) {
				cites, olds := parseComment(b.text)
				for _, o := range olds {
					t.Errorf("%s:%d: cites %q, a retired spec outside the repository; cite docs/semantics/<file>.md §<id> instead (see docs/semantics/README.md)",
						rel, b.lineOf(o.off), o.text)
				}
				for _, c := range cites {
					total++
					hs, ok := ref[c.file]
					if !ok {
						t.Errorf("%s:%d: cites docs/semantics/%s, which does not exist", rel, b.lineOf(c.off), c.file)
						continue
					}
					for _, id := range c.ids {
						found := false
						for _, h := range hs {
							if headingHasID(h, id) {
								found = true
								break
							}
						}
						if !found {
							t.Errorf("%s:%d: cites docs/semantics/%s %s, but %s has no heading starting with %q",
								rel, b.lineOf(c.off), c.file, id, c.file, id)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", root, err)
		}
	}
	if total == 0 {
		t.Fatalf("no docs/semantics citations found under %v; is the test running in docs/?", sourceRoots)
	}
	t.Logf("%d citations checked", total)
}

// TestHeadingIDsUnique: an id is defined once per file, and once across the
// Istio files (hierarchy.md numbers its own sections, README.md defines none).
func TestHeadingIDsUnique(t *testing.T) {
	ref := reference(t)
	var files []string
	for f := range ref {
		files = append(files, f)
	}
	sort.Strings(files)
	istio := map[string]string{}
	for _, f := range files {
		seen := map[string]bool{}
		for _, h := range ref[f] {
			id := headingID(h)
			if id == "" {
				continue
			}
			if seen[id] {
				t.Errorf("%s: heading id %s defined twice", f, id)
			}
			seen[id] = true
			if f == "hierarchy.md" || f == "README.md" {
				continue
			}
			if other, ok := istio[id]; ok && other != f {
				t.Errorf("heading id %s defined in both %s and %s", id, other, f)
			}
			istio[id] = f
		}
	}
}

// TestReadmeListsEveryFile keeps the directory's index complete.
func TestReadmeListsEveryFile(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(semanticsDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for f := range reference(t) {
		if f != "README.md" && !strings.Contains(string(readme), "("+f+")") {
			t.Errorf("docs/semantics/README.md does not link %s", f)
		}
	}
}
