package yamlfast

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Fragments the generator builds documents from, chosen near the edges of
// the subset and of yaml.v3's rules; each list starts with ten in the
// subset.
var (
	genKeys = []string{
		"a", "key", "a b", "a#b", "a:b", "-a", ":a", "?a", "ä", "1", "true", "~", "null", "<<", "0x10",
		`"q"`, `'s'`, `'it''s'`, `"x\ty"`, `""`, `''`, "- a", "#c", "[]", "{}", "a ", "",
	}
	genValues = []string{
		"1", "x", "y z", "a  b  ", "a#b", "a #b", "é", "-x", ":x", "[a, b]", "-", ":", "?", "?x", "a,b", "x]",
		"true", "yes", "y", "~", "NULL", "nULL", "FALSE", "<<",
		"-1", "+1", "0o17", "-0o7", "017", "0b11", "-0b11", "0b2", "0o8", "1_0", "1__0", "0x", "0x1F",
		"1e3", "1e", "1.", ".5", "._1", ".inf", "-.Inf", "+.inf",
		"9223372036854775808", "-9223372036854775809", "18446744073709551616",
		"2001-12-14", "2001-12-14 1:2:3", "2001-12-14t21:59:43.10-05:00",
		`""`, `''`, `"a\nb"`, `'a''b'`, `"é\u00e9\x41\U0001F600"`, `"\x"`, `"\/"`, `"\ud800"`, "'x'y", `"x"#c`, "'x' #c",
		"a\tb", "!x", "&a x", "*a", "%", "@", "`", "...", "---", "- x", "a: b",
		"[]", "{}", "[ ]", "{ }", "[a,]", "[a b, 'c']", "[ a , b ]", "[-]", "[- a]", "[:a]", "[a:b]",
		"[a?b]", "[a]#c", "[a] #c", "[a]]", "[1,2", "[[]]", "[&x a]", "[*a]", "[!t a]", "[a\tb]", "[é, ü]",
		`[1, 0x1, .5, ~, null, true, 2001-01-01]`, `["a\"", 'b''c']`,
		"{a: b}", `{"a":1}`, "{a:b}", "{a : b}", `{"a" :b}`, "{'a':b}", "{a: b, }", "{,}", "{a: [b]}", "{a: {}}",
		"{a: b}x", "{? a}", "{a: 1, a: 2}", "{-a: -b}", "{é: ü}",
		"|", "|-", "|+", ">", ">-", "| # c", "|2", "|#c",
	}
	genComments = []string{" # c", "#c", "  ", "\t", " \t# c"}
	genInserts  = []string{" ", "\n", "#", "-", ":", "'", "\"", "  ", "\t", "\r\n", "\r", "|", "[", "\ufeff"}
)

// generator writes random documents that are mostly, but not always, in
// the subset.
type generator struct {
	r *rand.Rand
	b strings.Builder
}

// pick returns a fragment of s, three times in four one of its first ten,
// which are all in the subset, so that many documents stay in it.
func (g *generator) pick(s []string) string {
	if g.r.IntN(4) > 0 {
		return s[g.r.IntN(min(10, len(s)))]
	}
	return s[g.r.IntN(len(s))]
}

// node writes a mapping, sequence or scalar at indent; inline means the
// line is already started (after "- ").
func (g *generator) node(indent, depth int, inline bool) {
	kind := g.r.IntN(3)
	if depth > 3 {
		kind = 2
	}
	switch {
	case kind == 0:
		g.mapping(indent, depth, inline)
	case kind == 1 && inline:
		g.b.WriteString("- ")
		g.entries(indent+2, depth)
	case kind == 1:
		g.b.WriteString(strings.Repeat(" ", indent) + "-")
		g.entries(indent, depth)
	default:
		if !inline {
			g.b.WriteString(strings.Repeat(" ", indent))
		}
		g.b.WriteString(g.pick(genValues) + "\n")
	}
}

func (g *generator) mapping(indent, depth int, inline bool) {
	for i := range 1 + g.r.IntN(3) {
		if !inline || i > 0 {
			g.b.WriteString(strings.Repeat(" ", indent))
		}
		g.b.WriteString(g.pick(genKeys) + ":")
		switch g.r.IntN(5) {
		case 0:
			g.b.WriteString("\n")
			g.node(indent+1+g.r.IntN(3), depth+1, false)
		case 1:
			g.b.WriteString("\n")
			if g.r.IntN(2) == 0 {
				g.b.WriteString(strings.Repeat(" ", indent) + "-")
				g.entries(indent, depth+1)
			}
		case 2:
			g.b.WriteString(" ")
			g.block(indent)
		default:
			g.b.WriteString(" " + g.pick(genValues))
			if g.r.IntN(6) == 0 {
				g.b.WriteString(g.pick(genComments))
			}
			g.b.WriteString("\n")
		}
		if g.r.IntN(8) == 0 {
			g.b.WriteString(strings.Repeat(" ", g.r.IntN(6)) + "# c\n")
		}
	}
}

// entries writes the rest of a sequence whose first "-" is written.
func (g *generator) entries(indent, depth int) {
	for i := range 1 + g.r.IntN(3) {
		if i > 0 {
			g.b.WriteString(strings.Repeat(" ", indent) + "-")
		}
		if g.r.IntN(3) == 0 {
			g.b.WriteString("\n")
			if g.r.IntN(3) > 0 {
				g.node(indent+1+g.r.IntN(3), depth+1, false)
			}
			continue
		}
		sp := 1 + g.r.IntN(2)
		g.b.WriteString(strings.Repeat(" ", sp))
		g.node(indent+1+sp, depth+1, true)
	}
}

// block writes a block scalar held by a collection at indent.
func (g *generator) block(owner int) {
	g.b.WriteString(g.pick([]string{"|", ">", "|-", ">-", "|+", ">+", "| # c"}) + "\n")
	indent := owner + 1 + g.r.IntN(3) - g.r.IntN(2)
	for range 1 + g.r.IntN(5) {
		switch g.r.IntN(8) {
		case 0:
			g.b.WriteString(strings.Repeat(" ", g.r.IntN(indent+3)) + "\n")
		case 1:
			g.b.WriteString(strings.Repeat(" ", indent+g.r.IntN(3)) + "  x\n")
		case 2:
			g.b.WriteString(strings.Repeat(" ", g.r.IntN(indent+1)) + "# c\n")
		case 3:
			g.b.WriteString(strings.Repeat(" ", indent) + "\tt\n")
		default:
			g.b.WriteString(strings.Repeat(" ", indent) + g.pick([]string{"a", "b c", "d ", "e\t", "#f"}) + "\n")
		}
	}
}

// document returns a new document, now and then with one fragment inserted
// at random.
func (g *generator) document() string {
	g.b.Reset()
	if g.r.IntN(4) == 0 {
		g.b.WriteString("# head\n\n")
	}
	g.node(g.r.IntN(2), 0, false)
	s := g.b.String()
	if g.r.IntN(3) == 0 {
		i := g.r.IntN(len(s) + 1)
		s = s[:i] + g.pick(genInserts) + s[i:]
	}
	if g.r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// TestRandomDocuments compares Parse with yaml.v3 on generated documents,
// which reach the corners of the grammar faster than byte-level fuzzing.
func TestRandomDocuments(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 5000
	}
	g := generator{r: rand.New(rand.NewPCG(1, 2))}
	fast := 0
	ps := new(Parser)
	for range n {
		if check(t, ps, "generated", []byte(g.document())) {
			fast++
		}
	}
	t.Logf("%d of %d generated documents took the fast path", fast, n)
}
