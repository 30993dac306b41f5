package load

import (
	"bytes"
)

// chunk is one YAML document of a stream, with the file line of its first
// byte.
type chunk struct {
	data []byte
	line int
}

// splitDocuments cuts a YAML stream at document markers ("---" or "..." at
// the start of a line, followed by nothing but blanks or a comment). Each
// document is then parsed on its own, so a broken one cannot take its
// neighbours down with it. A "---" followed by content ("--- {a: 1}") stays
// with the document it opens; the YAML parser reads it.
func splitDocuments(data []byte) []chunk {
	var out []chunk
	start, startLine := 0, 1
	line := 1
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		// Only a line that starts as a marker does can be one.
		if c := data[pos]; c != '-' && c != '.' {
			pos = next
			line++
			continue
		}
		text := bytes.TrimRight(data[pos:next], "\r\n")
		if marker, rest := documentMarker(text); marker {
			if pos > start {
				out = append(out, chunk{data: data[start:pos], line: startLine})
			}
			if rest {
				start, startLine = pos, line
			} else {
				start, startLine = next, line+1
			}
		}
		pos = next
		line++
	}
	if start < len(data) {
		out = append(out, chunk{data: data[start:], line: startLine})
	}
	return out
}

// documentMarker reports whether a line starts or ends a document, and
// whether content follows the marker on the same line.
func documentMarker(line []byte) (marker, content bool) {
	if !bytes.HasPrefix(line, []byte("---")) && !bytes.HasPrefix(line, []byte("...")) {
		return false, false
	}
	rest := line[3:]
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return false, false // "----" or "---x" is content, not a marker
	}
	rest = bytes.TrimLeft(rest, " \t")
	if len(rest) == 0 || rest[0] == '#' {
		return true, false
	}
	if line[0] == '.' {
		return false, false // "... x" is not a marker; let the parser judge it
	}
	return true, true
}

// firstContentLine is the line of the first byte that is not blank or part
// of a comment: where a person sees the document begin.
func firstContentLine(c chunk) int {
	line := c.line
	for l := range bytes.Lines(c.data) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' && !bytes.HasPrefix(t, []byte("%")) {
			return line
		}
		line++
	}
	return c.line
}

// blank reports whether a chunk holds nothing but blanks and comments.
func blank(c chunk) bool {
	for l := range bytes.Lines(c.data) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}
