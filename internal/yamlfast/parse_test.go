package yamlfast

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	yaml "go.yaml.in/yaml/v3"
)

// sketch renders a tree compactly for table tests: kind, short tag, style
// where not plain, value and position; children in brackets.
func sketch(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode:
			b.WriteString("doc")
		case yaml.MappingNode:
			b.WriteString("map")
		case yaml.SequenceNode:
			b.WriteString("seq")
		case yaml.ScalarNode:
			fmt.Fprintf(&b, "%s%q", n.ShortTag(), n.Value)
		}
		switch n.Style {
		case yaml.DoubleQuotedStyle:
			b.WriteString("dq")
		case yaml.SingleQuotedStyle:
			b.WriteString("sq")
		case yaml.FlowStyle:
			b.WriteString("flow")
		case yaml.LiteralStyle:
			b.WriteString("literal")
		case yaml.FoldedStyle:
			b.WriteString("folded")
		}
		fmt.Fprintf(&b, "@%d:%d", n.Line, n.Column)
		if len(n.Content) > 0 {
			b.WriteString("[")
			for i, c := range n.Content {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(c)
			}
			b.WriteString("]")
		}
	}
	walk(n)
	return b.String()
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"mapping", "a: 1\nb: x\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!int"1"@1:4 !!str"b"@2:1 !!str"x"@2:4]]`},
		{"leading comments and indented root", "# head\n\n  a: 1\n",
			`doc@3:3[map@3:3[!!str"a"@3:3 !!int"1"@3:6]]`},
		{"nested mapping", "a:\n  b: c\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 map@2:3[!!str"b"@2:3 !!str"c"@2:6]]]`},
		{"empty values sit after their indicator", "a:\nb:   # c\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!null""@1:3 !!str"b"@2:1 !!null""@2:3]]`},
		{"null entries", "-\n- x\n-   # c\n",
			`doc@1:1[seq@1:1[!!null""@1:2 !!str"x"@2:3 !!null""@3:2]]`},
		{"sequence at the key's indentation", "a:\n- x\n- y\nb: 1\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 seq@2:1[!!str"x"@2:3 !!str"y"@3:3] !!str"b"@4:1 !!int"1"@4:4]]`},
		{"mapping in an entry", "- name: a\n  port: 80\n- name: b\n",
			`doc@1:1[seq@1:1[map@1:3[!!str"name"@1:3 !!str"a"@1:9 !!str"port"@2:3 !!int"80"@2:9] map@3:3[!!str"name"@3:3 !!str"b"@3:9]]]`},
		{"sequence in an entry", "- - a\n  - b\n- c\n",
			`doc@1:1[seq@1:1[seq@1:3[!!str"a"@1:5 !!str"b"@2:5] !!str"c"@3:3]]`},
		{"entry on the next line", "-\n  a: 1\n",
			`doc@1:1[seq@1:1[map@2:3[!!str"a"@2:3 !!int"1"@2:6]]]`},
		{"comments anywhere", "a: b # c\n    # d\n# e\nc:   # f\n  d: e\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!str"b"@1:4 !!str"c"@4:1 map@5:3[!!str"d"@5:3 !!str"e"@5:6]]]`},
		{"empty flow collections", "a: []\nb: {} # c\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 seqflow@1:4 !!str"b"@2:1 mapflow@2:4]]`},
		{"flow sequence", "a: [1, \"b\" , c d,]\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 seqflow@1:4[!!int"1"@1:5 !!str"b"dq@1:8 !!str"c d"@1:14]]]`},
		{"flow mapping", `a: {b: 1, "c":d, 'e' : "f"}` + "\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 mapflow@1:4[!!str"b"@1:5 !!int"1"@1:8 !!str"c"dq@1:11 !!str"d"@1:15 !!str"e"sq@1:18 !!str"f"dq@1:24]]]`},
		{"literal block scalar", "a: |\n  x\n\n   y # z\n  # w\n\nb: 1\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!str"x\n\n y # z\n# w\n"literal@1:4 !!str"b"@7:1 !!int"1"@7:4]]`},
		{"folded block scalar", "- >-\n  x\n  y\n\n   z\n  w\n- |+ # c\n  v\t\n\n",
			`doc@1:1[seq@1:1[!!str"x y\n\n z\nw"folded@1:3 !!str"v\t\n\n"literal@7:3]]`},
		{"block scalar at the end of the input", "a: |\n  x",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!str"x"literal@1:4]]`},
		{"quoted scalars", `a: "x\ty\u00e9\x41\"" ` + "\n'b''c': 'it''s'\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!str"x\tyéA\""dq@1:4 !!str"b'c"sq@2:1 !!str"it's"sq@2:9]]`},
		{"quoted key with spaces before the colon", `"a" : b` + "\n",
			`doc@1:1[map@1:1[!!str"a"dq@1:1 !!str"b"@1:7]]`},
		{"plain scalars with indicators inside", "a: b#c:d, [e]\nurl: http://x/y?z=1&w\n-a: :b\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!str"b#c:d, [e]"@1:4 !!str"url"@2:1 !!str"http://x/y?z=1&w"@2:6 !!str"-a"@3:1 !!str":b"@3:5]]`},
		{"columns count characters", "ä: ö\nb:   ü\n",
			`doc@1:1[map@1:1[!!str"ä"@1:1 !!str"ö"@1:4 !!str"b"@2:1 !!str"ü"@2:6]]`},
		{"CRLF", "a: 1\r\nb: 2\r\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!int"1"@1:4 !!str"b"@2:1 !!int"2"@2:4]]`},
		{"resolved tags", "- 0x1F\n- 017\n- 1_000\n- -0b101\n- 1e3\n- .5\n- -.inf\n- true\n- yes\n- ~\n- 2001-12-14\n- <<\n- 1.2.3\n",
			`doc@1:1[seq@1:1[!!int"0x1F"@1:3 !!int"017"@2:3 !!int"1_000"@3:3 !!int"-0b101"@4:3 !!float"1e3"@5:3 !!float".5"@6:3 !!float"-.inf"@7:3 !!bool"true"@8:3 !!str"yes"@9:3 !!null"~"@10:3 !!timestamp"2001-12-14"@11:3 !!merge"<<"@12:3 !!str"1.2.3"@13:3]]`},
		{"quoted numbers stay strings", "a: \"1\"\nb: 'true'\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!str"1"dq@1:4 !!str"b"@2:1 !!str"true"sq@2:4]]`},
		{"duplicate keys are kept, as yaml.v3 does", "a: 1\na: 2\n",
			`doc@1:1[map@1:1[!!str"a"@1:1 !!int"1"@1:4 !!str"a"@2:1 !!int"2"@2:4]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse([]byte(tt.in))
			if !ok {
				t.Fatalf("Parse(%q) fell back", tt.in)
			}
			if s := sketch(got); s != tt.want {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tt.in, s, tt.want)
			}
			check(t, new(Parser), tt.name, []byte(tt.in))
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"only comments", "# a\n\n"},
		{"scalar document", "hello\n"},
		{"anchor", "a: &x 1\n"},
		{"alias", "a: *x\n"},
		{"tag", "a: !!str 1\n"},
		{"flow document", "{a: 1}\n"},
		{"JSON", `{"a": 1}`},
		{"nested flow", "a: [[b]]\n"},
		{"flow mapping in a flow sequence", "a: [b, {c: d}]\n"},
		{"multi-line flow", "a: [b,\n  c]\n"},
		{"empty flow entry", "a: [b,,c]\n"},
		{"single-pair mapping in a flow sequence", "a: [b: c]\n"},
		{"colon in a flow plain scalar", "a: [b:c]\n"},
		{"comment in a flow collection", "a: [b #c\n"},
		{"flow key without value", "a: {b, c: d}\n"},
		{"flow value missing", "a: {b: }\n"},
		{"flow plain key glued to its value", "a: {b:c}\n"},
		{"flow collection as a key", "[a]: b\n"},
		{"content after a flow collection", "a: [b] c\n"},
		{"block scalar indentation indicator", "a: |2\n   x\n"},
		{"block scalar without content", "a: |\nb: 1\n"},
		{"block scalar under its key", "a: |\nx\n"},
		{"wide blank line before a block scalar", "a: |\n    \n  x\n"},
		{"tab indenting a block scalar", "a: |\n\tx\n"},
		{"block scalar document", "|\n  x\n"},
		{"multi-line plain scalar", "a: foo\n  bar\n"},
		{"multi-line quoted scalar", "a: \"foo\n  bar\"\n"},
		{"escaped line break", "a: \"foo\\\n  bar\"\n"},
		{"unknown escape", `a: "\/"`},
		{"surrogate escape", `a: "\ud800"`},
		{"short hex escape", `a: "\x4"`},
		{"unterminated quote", "a: 'x\n"},
		{"content after a quoted scalar", "a: 'x' y\n"},
		{"comment glued to a quoted scalar", "a: 'x'#c\n"},
		{"complex key", "? a\n: b\n"},
		{"empty key", ": b\n"},
		{"directive", "%YAML 1.2\na: 1\n"},
		{"document start", "---\na: 1\n"},
		{"document end", "a: 1\n...\n"},
		{"byte-order mark", "\ufeffa: 1\n"},
		{"tab indentation", "a:\n\tb: 1\n"},
		{"tab separator", "a:\tb\n"},
		{"lone CR", "a: 1\rb: 2\n"},
		{"control character", "a: \x01\n"},
		{"NEL", "a: x\u0085y\n"},
		{"invalid UTF-8", "a: \xff\n"},
		{"mapping value on the key's line", "a: b: c\n"},
		{"entry on the key's line", "a: - b\n"},
		{"over-indented key", "a: 1\n  b: 2\n"},
		{"under-indented key", "a:\n    b: 1\n  c: 2\n"},
		{"misaligned entry", "- a\n - b\n"},
		{"content after the root", "  a: 1\nb: 2\n"},
		{"scalar on its own line", "a:\n  b\n"},
		{"long key", strings.Repeat("k", 1001) + ": v\n"},
		{"too deep", strings.Repeat("- ", maxDepth+1) + "x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, ok := Parse([]byte(tt.in)); ok {
				t.Errorf("Parse(%q) = %s, want a fallback", tt.in, sketch(n))
			}
		})
	}
}

// TestValuesShareInput checks that plain scalar values point into the
// parsed bytes rather than a copy of them: a loader keeps the bytes, so a
// copy would hold every manifest's text twice.
func TestValuesShareInput(t *testing.T) {
	data := []byte("metadata:\n  name: reviews\n  labels: {app: reviews}\nspec:\n  hosts:\n  - reviews.default.svc.cluster.local\n")
	root, ok := Parse(data)
	if !ok {
		t.Fatal("not parsed")
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	end := start + uintptr(len(data))
	var walk func(n *yaml.Node)
	scalars := 0
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			scalars++
			if p := uintptr(unsafe.Pointer(unsafe.StringData(n.Value))); p < start || p >= end {
				t.Errorf("value %q (line %d) is a copy, not part of the input", n.Value, n.Line)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	if scalars != 9 {
		t.Errorf("walked %d scalars, want 9", scalars)
	}
}

// TestPrintableASCII: every byte value at every place in a word, among
// printable neighbours, and a word of one value throughout.
func TestPrintableASCII(t *testing.T) {
	for b := range 256 {
		want := b >= 0x20 && b <= 0x7e
		for place := range 8 {
			w := []byte("abcdefgh")
			w[place] = byte(b)
			if got := printableASCII(load64(string(w))); got != want {
				t.Errorf("byte %#x at %d: printable %v, want %v", b, place, got, want)
			}
		}
		if got := printableASCII(load64(strings.Repeat(string([]byte{byte(b)}), 8))); got != want {
			t.Errorf("eight bytes %#x: printable %v, want %v", b, got, want)
		}
	}
}

// TestLineText: what a line may hold, whatever its length (the word-wise
// check and the byte-wise one agree).
func TestLineText(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		ascii, ok bool
	}{
		{"empty", "", true, true},
		{"printable", "key: value # comment", true, true},
		{"a tab", "key:\tvalue", true, true},
		{"non-ASCII", "name: café", false, true},
		{"a CR inside", "key: va\rlue", false, false},
		{"a control character", "key: \x01", false, false},
		{"DEL", "key: value\x7f", false, false},
		{"invalid UTF-8", "key: \xff", false, false},
		{"a byte-order mark", "key: \ufeffx", false, false},
		{"NEL", "key: \u0085", false, false},
		{"line separator", "key: \u2028", false, false},
	}
	for _, tt := range tests {
		// The same text at every offset from a word's start, and past
		// the first word.
		for pad := range 17 {
			text := strings.Repeat(" ", pad) + tt.text
			ascii, ok := lineText(text)
			if ok != tt.ok || (ok && ascii != tt.ascii) {
				t.Errorf("%s, %d spaces before: lineText = %v, %v; want %v, %v", tt.name, pad, ascii, ok, tt.ascii, tt.ok)
			}
		}
	}
}
