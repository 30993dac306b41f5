package yamlfast

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// blockScalar reads a literal (|) or folded (>) block scalar whose
// indicator is at byte offset i of line li, the value of a collection at
// byte offset owner. Its indentation is that of its first line, as yaml.v3
// detects it; an explicit indentation indicator, a scalar with no content
// line and leading blank lines wider than the first line are left to
// yaml.v3.
func (p *parser) blockScalar(li, i, owner int) *yaml.Node {
	t := p.text(li)
	j, chomp := i+1, byte(0)
	if j < len(t) && (t[j] == '-' || t[j] == '+') {
		chomp, j = t[j], j+1
	}
	if !restBlank(t, j) {
		return nil
	}
	k, breaks, indent, ok := p.blockStart(li+1, owner)
	if !ok {
		return nil
	}
	var b strings.Builder
	folded := t[i] == '>'
	// leadingBreak is the previous line's break, not written yet since
	// folding or chomping may drop it; leadingBlank says that line began
	// with a blank, which keeps its break from folding.
	leadingBreak, leadingBlank := false, false
	for k < len(p.lines) {
		content := p.text(k)[indent:]
		trailingBlank := content[0] == ' ' || content[0] == '\t'
		switch {
		case folded && leadingBreak && !leadingBlank && !trailingBlank:
			// A line break between two lines of text folds into a
			// space, or into nothing when blank lines stand for it.
			if breaks == 0 {
				b.WriteByte(' ')
			}
		case leadingBreak:
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("\n", breaks))
		b.WriteString(content)
		leadingBreak, leadingBlank, breaks = p.hasBreak(k), trailingBlank, 0
		if k, breaks, ok = p.blockBreaks(k+1, indent); !ok {
			return nil
		}
		if k < len(p.lines) && leadingSpaces(p.text(k), indent) < indent {
			break // less indented: the scalar is over
		}
	}
	// Chomping: clip keeps the last line break, keep keeps the trailing
	// blank lines too, strip drops them all.
	if leadingBreak && chomp != '-' {
		b.WriteByte('\n')
	}
	if chomp == '+' {
		b.WriteString(strings.Repeat("\n", breaks))
	}
	p.next = k
	n := p.alloc(yaml.ScalarNode, tagStr, li+1, p.column(li, i))
	n.Value, n.Style = b.String(), yaml.LiteralStyle
	if folded {
		n.Style = yaml.FoldedStyle
	}
	return n
}

// blockStart finds the first content line of a block scalar from line k
// on, past blank lines, and takes its indentation as the scalar's. It
// returns that line, the number of blank lines before it and the
// indentation; ok is false where yaml.v3 would see no content or an error.
func (p *parser) blockStart(k, owner int) (first, breaks, indent int, ok bool) {
	widest := 0 // yaml.v3 counts the spaces of leading blank lines too
	for ; k < len(p.lines); k++ {
		lt := p.text(k)
		sp := leadingSpaces(lt, len(lt))
		if sp == len(lt) && p.hasBreak(k) {
			widest = max(widest, sp)
			breaks++
			continue
		}
		if sp == len(lt) || lt[sp] == '\t' || sp <= owner || sp < widest {
			return 0, 0, 0, false
		}
		return k, breaks, sp, true
	}
	return 0, 0, 0, false
}

// blockBreaks skips the blank lines of a block scalar at indentation
// indent from line k on and returns the next line with content (or
// len(p.lines)) and the number of line breaks skipped. A line of nothing
// but spaces ends without a break at the end of the input. ok is false for
// a tab within the indentation.
func (p *parser) blockBreaks(k, indent int) (next, breaks int, ok bool) {
	for ; k < len(p.lines); k++ {
		lt := p.text(k)
		sp := leadingSpaces(lt, indent)
		switch {
		case sp < len(lt) && sp < indent && lt[sp] == '\t':
			return 0, 0, false
		case sp < len(lt):
			return k, breaks, true
		case !p.hasBreak(k):
			return len(p.lines), breaks, true
		}
		breaks++
	}
	return k, breaks, true
}

// leadingSpaces counts the spaces t starts with, up to limit.
func leadingSpaces(t string, limit int) int {
	n := 0
	for n < len(t) && n < limit && t[n] == ' ' {
		n++
	}
	return n
}

// hasBreak reports whether line li ends with a line break rather than the
// end of the input.
func (p *parser) hasBreak(li int) bool {
	return p.lines[li].end < len(p.src)
}
