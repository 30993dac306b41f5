// Package yamlfast parses the plain block-style YAML that Kubernetes
// manifests are almost always written in into the same node tree as
// go.yaml.in/yaml/v3, several times faster. It accepts only a validated
// subset of YAML and says when a document falls outside it, so that callers
// can fall back to yaml.v3 and stay exact: on the subset, the tree matches
// yaml.v3's in every field but the comments.
//
// The subset: block mappings and sequences (including sequences written at
// their key's indentation and items such as "- key: value"); one-line
// plain, single-quoted and double-quoted scalars; one-line flow sequences
// and mappings of such scalars; literal and folded block scalars without
// an indentation indicator; blank lines and comments. Anything else
// (anchors, aliases, tags, nested or multi-line flow collections,
// multi-line plain and quoted scalars, scalars on a line of their own,
// complex keys, directives, document markers, tabs outside scalars,
// control characters, ...) is rejected.
package yamlfast

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	yaml "go.yaml.in/yaml/v3"
)

const (
	// maxDepth bounds nesting, and so recursion; yaml.v3 allows far more,
	// but no manifest comes close and deeper input just falls back.
	maxDepth = 100
	// maxKeyLen keeps keys below the 1024 characters after which yaml.v3
	// stops treating a scalar as a possible key.
	maxKeyLen = 1000
)

// line is one line of the document.
type line struct {
	start, end int // byte offsets of its text, without the line break
	indent     int // leading spaces
	blank      bool
	ascii      bool // so byte offsets are columns
}

// parser builds the tree of one document. Nodes and Content slices are
// carved out of shared slabs, since allocating them one by one is most of
// the cost of parsing.
type parser struct {
	src   string
	lines []line
	// next is the line after the last one consumed by the node just read.
	next  int
	depth int
	nodes []yaml.Node
	// reused says nodes may hold an earlier document's nodes, which alloc
	// must clear.
	reused bool
	ptrs   []*yaml.Node
	// kids stacks the children of the collections being read.
	kids []*yaml.Node
}

// Parser parses documents one after another, reusing its memory: the
// nodes of one document go where the previous document's were, so a
// loader reading thousands of documents neither faults in fresh pages for
// each nor leaves the collector garbage to trace. A Parser is not safe for
// concurrent use; its zero value is ready.
type Parser struct {
	nodes []yaml.Node
	ptrs  []*yaml.Node
	lines []line
}

// Parse parses one YAML document (no "---" separators inside; the loader
// already splits documents) into the same *yaml.Node tree yaml.v3's
// yaml.Unmarshal(data, &node) would produce, for the block-style subset it
// supports. ok is false when the document uses anything outside that
// subset; the caller then falls back to yaml.v3. The tree is valid until
// the next call to ps.Parse; its scalar values stay valid for good, and
// share data's memory: data must not change after Parse. Sharing rather
// than copying keeps one copy of a loaded file's text, not two (the
// loader keeps the bytes for field lines and values point into them).
func (ps *Parser) Parse(data []byte) (root *yaml.Node, ok bool) {
	src := unsafe.String(unsafe.SliceData(data), len(data))
	lines, ok := splitLines(ps.lines[:0], src)
	ps.lines = lines
	if !ok {
		return nil, false
	}
	p := &parser{src: src, lines: lines}
	n := estimateNodes(src, lines)
	if cap(ps.nodes) < n {
		ps.nodes = make([]yaml.Node, 0, n)
	}
	p.nodes = ps.nodes[:0:n]
	p.reused = true
	// Every node but the document is a child, so n pointers hold every
	// Content; the stack of pending children shares their allocation.
	if cap(ps.ptrs) < 2*n {
		ps.ptrs = make([]*yaml.Node, 2*n)
	}
	ptrs := ps.ptrs[:2*n]
	p.ptrs, p.kids = ptrs[:0:n], ptrs[n:n]
	first := p.skipBlank(0)
	if first == len(lines) {
		return nil, false // empty documents are rare; yaml.v3 handles them
	}
	top := p.node(first, lines[first].indent, false)
	if top == nil || p.skipBlank(p.next) != len(lines) {
		return nil, false
	}
	// yaml.v3 places an implicit document where its content starts.
	doc := p.alloc(yaml.DocumentNode, "", top.Line, top.Column)
	p.kids = append(p.kids, top)
	doc.Content = p.content(0)
	return doc, true
}

// Parse parses one document with a Parser of its own; see Parser.Parse.
func Parse(data []byte) (root *yaml.Node, ok bool) {
	return new(Parser).Parse(data)
}

// splitLines cuts src into lines and rejects what the subset leaves out at
// the character level: bytes yaml.v3 refuses or reads as line breaks other
// than LF and CRLF, invalid UTF-8, byte-order marks and document markers.
// It reads every byte of every file loaded, so it looks for line ends with
// strings.IndexByte and checks a line eight bytes at a time (lineText).
func splitLines(lines []line, src string) ([]line, bool) {
	for start := 0; start < len(src); {
		end, next := len(src), len(src)
		if i := strings.IndexByte(src[start:], '\n'); i >= 0 {
			end, next = start+i, start+i+1
			if end > start && src[end-1] == '\r' {
				end-- // CRLF
			}
		}
		ascii, ok := lineText(src[start:end])
		if !ok {
			return nil, false
		}
		l, ok := newLine(src, start, end, ascii)
		if !ok {
			return nil, false
		}
		lines = append(lines, l)
		start = next
	}
	return lines, true
}

// lineText checks the text of a line, its break left out: tabs and
// printable characters only, and reports whether they are all ASCII.
func lineText(t string) (ascii, ok bool) {
	i := 0
	for ; i+8 <= len(t); i += 8 {
		if !printableASCII(load64(t[i:])) {
			break
		}
	}
	ascii = true
	for ; i < len(t); i++ {
		switch c := t[i]; {
		case c >= 0x20 && c < 0x7f, c == '\t':
		case c < utf8.RuneSelf:
			// Control characters, DEL, and a CR but before the line
			// break.
			return false, false
		default:
			r, size := utf8.DecodeRuneInString(t[i:])
			if !allowedRune(r, size) {
				return false, false
			}
			ascii = false
			i += size - 1
		}
	}
	return ascii, true
}

// load64 reads the first eight bytes of b as one little-endian word.
func load64(b string) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// printableASCII reports whether every byte of w is in 0x20-0x7e: no byte
// below 0x20 (subtracting 0x20 from it borrows into its top bit) and none
// above 0x7e (adding 1 to it, or the byte itself, sets its top bit).
func printableASCII(w uint64) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	below := (w - 0x20*ones) &^ w
	above := (w + ones) | w
	return (below|above)&tops == 0
}

// allowedRune reports whether a non-ASCII character may appear in the
// subset: what yaml.v3 reads as an ordinary character, so not NEL, LS and
// PS (line breaks to it) nor the byte-order mark.
func allowedRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return false
	case r == 0xFEFF || r == 0x2028 || r == 0x2029:
		return false
	}
	return r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= utf8.MaxRune
}

func newLine(src string, start, end int, ascii bool) (line, bool) {
	t := src[start:end]
	if strings.HasPrefix(t, "---") || strings.HasPrefix(t, "...") {
		return line{}, false
	}
	indent := 0
	for indent < len(t) && t[indent] == ' ' {
		indent++
	}
	blank := indent == len(t) || t[indent] == '#'
	return line{start: start, end: end, indent: indent, blank: blank, ascii: ascii}, true
}

// estimateNodes bounds the nodes of a document in the subset, but for
// rare lines such as "- - a", so that one allocation holds them: a line has
// a key and its value, or a collection and the key that holds it; an entry
// ("- ") adds its sequence and what the line would hold without it; the
// document and its top collection add one each.
func estimateNodes(src string, lines []line) int {
	n := 2
	for _, l := range lines {
		if l.blank {
			continue
		}
		n += 2
		if t := src[l.start+l.indent : l.end]; t == "-" || strings.HasPrefix(t, "- ") {
			n += 2
		}
	}
	return n
}

// text returns line li without its line break.
func (p *parser) text(li int) string {
	return p.src[p.lines[li].start:p.lines[li].end]
}

// skipBlank returns the first line from li on that has content, or
// len(p.lines).
func (p *parser) skipBlank(li int) int {
	for li < len(p.lines) && p.lines[li].blank {
		li++
	}
	return li
}

// column is yaml.v3's 1-based column of byte offset off in line li: it
// counts characters, not bytes.
func (p *parser) column(li, off int) int {
	l := p.lines[li]
	if l.ascii {
		return off + 1
	}
	return utf8.RuneCountInString(p.src[l.start:l.start+off]) + 1
}

func (p *parser) alloc(kind yaml.Kind, tag string, line, column int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes, p.reused = make([]yaml.Node, 0, 64), false
	}
	// Fields are set in place: appending a whole Node would copy it with a
	// bulk write barrier, a cost that shows while the GC runs.
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, line, column
	if p.reused {
		// The parser sets no anchors, aliases or comments, so these are
		// all an earlier document can have left.
		n.Style, n.Value, n.Content = 0, "", nil
	}
	return n
}

// content pops the children stacked since base into a Content slice. Its
// capacity is capped so that a caller appending to it cannot overwrite a
// neighbour's children.
func (p *parser) content(base int) []*yaml.Node {
	n := len(p.kids) - base
	if len(p.ptrs)+n > cap(p.ptrs) {
		p.ptrs = make([]*yaml.Node, 0, max(n, 256))
	}
	start := len(p.ptrs)
	p.ptrs = append(p.ptrs, p.kids[base:]...)
	p.kids = p.kids[:base]
	return p.ptrs[start:len(p.ptrs):len(p.ptrs)]
}

// node reads the node that starts at byte offset col of line li: a block
// sequence, a block mapping or, when scalarOK (after "- "), a scalar. It
// returns nil for anything outside the subset.
func (p *parser) node(li, col int, scalarOK bool) *yaml.Node {
	if p.entry(li, col) {
		return p.sequence(li, col)
	}
	if k, after := p.key(li, col); k != nil {
		return p.mapping(li, col, k, after)
	}
	if scalarOK {
		return p.scalar(li, col)
	}
	return nil // a scalar on a line of its own may go on over several lines
}

// entry reports whether a sequence entry ("-" and a space or the end of
// the line) starts at t[i].
func (p *parser) entry(li, i int) bool {
	t := p.text(li)
	return i < len(t) && t[i] == '-' && (i+1 == len(t) || t[i+1] == ' ')
}

// enter counts one more level of nesting and reports whether it is allowed.
func (p *parser) enter() bool {
	p.depth++
	return p.depth <= maxDepth
}

func (p *parser) leave() { p.depth-- }

// mapping reads a block mapping whose keys are at byte offset col. Its first
// key, k, is on line li, and the key's value follows at byte offset after.
func (p *parser) mapping(li, col int, k *yaml.Node, after int) *yaml.Node {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	m := p.alloc(yaml.MappingNode, tagMap, k.Line, k.Column)
	base := len(p.kids)
	for {
		v := p.value(li, after, col, true)
		if v == nil {
			return nil
		}
		p.kids = append(p.kids, k, v)
		li = p.skipBlank(p.next)
		if li == len(p.lines) || p.lines[li].indent < col {
			break
		}
		if p.lines[li].indent > col {
			return nil // a continuation line, or an error to yaml.v3
		}
		if k, after = p.key(li, col); k == nil {
			return nil
		}
	}
	m.Content = p.content(base)
	return m
}

// sequence reads a block sequence whose entries are at byte offset col,
// the first one on line li.
func (p *parser) sequence(li, col int) *yaml.Node {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	s := p.alloc(yaml.SequenceNode, tagSeq, li+1, p.column(li, col))
	base := len(p.kids)
	for {
		v := p.value(li, col+1, col, false)
		if v == nil {
			return nil
		}
		p.kids = append(p.kids, v)
		li = p.skipBlank(p.next)
		if li == len(p.lines) || p.lines[li].indent < col {
			break
		}
		if p.lines[li].indent > col {
			return nil
		}
		if !p.entry(li, col) {
			break // the next key of a mapping the sequence is the value of
		}
	}
	s.Content = p.content(base)
	return s
}

// value reads what follows an indicator (a key's ':' or an entry's '-')
// ending at byte offset pos of line li, in a collection at byte offset
// owner. inMap says the indicator is a key's: its value may be a sequence at
// the key's own indentation, but not a block collection on the same line.
func (p *parser) value(li, pos, owner int, inMap bool) *yaml.Node {
	t := p.text(li)
	i := skipSpaces(t, pos)
	if i < len(t) && t[i] != '#' {
		if t[i] == '|' || t[i] == '>' {
			return p.blockScalar(li, i, owner)
		}
		if inMap {
			return p.scalar(li, i)
		}
		return p.node(li, i, true)
	}
	p.next = li + 1
	if j := p.skipBlank(li + 1); j < len(p.lines) {
		switch ind := p.lines[j].indent; {
		case ind > owner:
			return p.node(j, ind, false)
		case inMap && ind == owner && p.entry(j, ind):
			return p.sequence(j, ind)
		}
	}
	// yaml.v3 places an empty value right after its indicator.
	return p.alloc(yaml.ScalarNode, tagNull, li+1, p.column(li, pos))
}

// scalar reads a one-line scalar or flow collection at byte offset i of
// line li; nothing but blanks and a comment may follow it on the line.
func (p *parser) scalar(li, i int) *yaml.Node {
	t := p.text(li)
	var n *yaml.Node
	end := 0
	switch c := t[i]; {
	case c == '"' || c == '\'':
		v, e, ok := scanQuoted(t, i)
		if !ok {
			return nil
		}
		n, end = p.alloc(yaml.ScalarNode, tagStr, li+1, p.column(li, i)), e
		n.Value, n.Style = v, quoteStyle(c)
	case c == '[' || c == '{':
		if n, end = p.flow(li, i); n == nil {
			return nil
		}
	case plainStart(t, i):
		e, at, ok := scanPlain(t, i)
		if !ok || at < len(t) && t[at] == ':' {
			return nil // "a: b: c" is an error to yaml.v3
		}
		n, end = p.alloc(yaml.ScalarNode, resolve(t[i:e]), li+1, p.column(li, i)), e
		n.Value = t[i:e]
	default:
		return nil
	}
	if !restBlank(t, end) {
		return nil
	}
	p.next = li + 1
	return n
}

// key reads a mapping key at byte offset i of line li: a one-line scalar
// followed by ':' and a space or the end of the line. after is the offset
// past the ':'. It returns a nil node when there is no such key.
func (p *parser) key(li, i int) (k *yaml.Node, after int) {
	t := p.text(li)
	if i >= len(t) {
		return nil, 0
	}
	var value, tag string
	var style yaml.Style
	colon := 0
	switch c := t[i]; {
	case c == '"' || c == '\'':
		v, e, ok := scanQuoted(t, i)
		if !ok {
			return nil, 0
		}
		colon = skipSpaces(t, e)
		if colon == len(t) || t[colon] != ':' || colon+1 < len(t) && t[colon+1] != ' ' {
			return nil, 0
		}
		value, tag, style = v, tagStr, quoteStyle(c)
	case plainStart(t, i):
		e, at, ok := scanPlain(t, i)
		if !ok || at == len(t) || t[at] != ':' {
			return nil, 0
		}
		value, colon = t[i:e], at
		tag = resolve(value)
	default:
		return nil, 0
	}
	if colon-i > maxKeyLen {
		return nil, 0
	}
	k = p.alloc(yaml.ScalarNode, tag, li+1, p.column(li, i))
	k.Value, k.Style = value, style
	return k, colon + 1
}
