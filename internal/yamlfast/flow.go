package yamlfast

import (
	yaml "go.yaml.in/yaml/v3"
)

// flow reads a flow sequence or mapping of scalars that starts at byte
// offset i of line li ('[' or '{') and closes on the same line, such as
// [a, "b"] or {name: x}; end is the offset after its closing bracket.
// Nested collections, entries without a value and every plain scalar whose
// reading in flow context is subtle (one holding ':', '?' or '#') are left
// to yaml.v3.
func (p *parser) flow(li, i int) (n *yaml.Node, end int) {
	t := p.text(li)
	closer, kind, tag := byte(']'), yaml.SequenceNode, tagSeq
	if t[i] == '{' {
		closer, kind, tag = '}', yaml.MappingNode, tagMap
	}
	n = p.alloc(kind, tag, li+1, p.column(li, i))
	n.Style = yaml.FlowStyle
	base := len(p.kids)
	j := skipSpaces(t, i+1)
	for j < len(t) && t[j] != closer {
		var ok bool
		if kind == yaml.MappingNode {
			j, ok = p.flowPair(li, j)
		} else {
			j, ok = p.flowItem(li, j)
		}
		if !ok {
			return nil, 0
		}
		// A comma may end the last entry too.
		if j = skipSpaces(t, j); j < len(t) && t[j] == ',' {
			j = skipSpaces(t, j+1)
		} else if j == len(t) || t[j] != closer {
			return nil, 0
		}
	}
	if j == len(t) {
		return nil, 0
	}
	if len(p.kids) > base {
		n.Content = p.content(base)
	}
	return n, j + 1
}

// flowItem reads a sequence entry at t[j] and returns the offset after it.
func (p *parser) flowItem(li, j int) (int, bool) {
	v, end := p.flowScalar(li, j)
	if v == nil {
		return 0, false
	}
	p.kids = append(p.kids, v)
	return end, true
}

// flowPair reads a mapping entry "key: value" at t[j] and returns the
// offset after it.
func (p *parser) flowPair(li, j int) (int, bool) {
	t := p.text(li)
	k, end := p.flowScalar(li, j)
	if k == nil {
		return 0, false
	}
	colon := skipSpaces(t, end)
	// After a plain key the ':' needs a space, or it would belong to the
	// scalar; after a quoted one it need not, as in JSON.
	if colon == len(t) || t[colon] != ':' || colon-j > maxKeyLen ||
		k.Style == 0 && (colon+1 == len(t) || t[colon+1] != ' ') {
		return 0, false
	}
	v, end := p.flowScalar(li, skipSpaces(t, colon+1))
	if v == nil {
		return 0, false
	}
	p.kids = append(p.kids, k, v)
	return end, true
}

// flowScalar reads a quoted or plain scalar inside a flow collection and
// returns the offset after it.
func (p *parser) flowScalar(li, j int) (*yaml.Node, int) {
	t := p.text(li)
	if j == len(t) {
		return nil, 0
	}
	if c := t[j]; c == '"' || c == '\'' {
		v, end, ok := scanQuoted(t, j)
		if !ok {
			return nil, 0
		}
		n := p.alloc(yaml.ScalarNode, tagStr, li+1, p.column(li, j))
		n.Value, n.Style = v, quoteStyle(c)
		return n, end
	}
	if !plainStart(t, j) {
		return nil, 0
	}
	end, ok := scanFlowPlain(t, j)
	if !ok {
		return nil, 0
	}
	n := p.alloc(yaml.ScalarNode, resolve(t[j:end]), li+1, p.column(li, j))
	n.Value = t[j:end]
	return n, end
}

// scanFlowPlain reads a plain scalar inside a flow collection up to a ',',
// a closing bracket or a ':' and a space, and returns where its value ends
// (trailing spaces dropped). ok is false when it holds anything whose
// meaning in flow context the subset does not cover.
func scanFlowPlain(t string, i int) (end int, ok bool) {
	end = i
	for at := i; at < len(t); at++ {
		switch t[at] {
		case ',', ']', '}':
			return end, true
		case ':':
			if at+1 < len(t) && t[at+1] == ' ' {
				return end, true
			}
			return 0, false
		case '[', '{', '?', '#', '\t':
			return 0, false
		case ' ':
			continue
		}
		end = at + 1
	}
	return 0, false // not closed on this line
}
