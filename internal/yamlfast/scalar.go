package yamlfast

import (
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// plainStart reports whether a plain scalar may start at t[i] in block
// context: not at an indicator, except "-", "?" and ":" directly followed
// by more text.
func plainStart(t string, i int) bool {
	switch t[i] {
	case '-', '?', ':':
		return i+1 < len(t) && t[i+1] != ' ' && t[i+1] != '\t'
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\t':
		return false
	}
	return true
}

// scanPlain reads a one-line plain scalar starting at t[i]. The scalar ends
// at the end of the line, at a comment (" #") or at a ':' followed by a
// space or the end of the line, which makes it a key. end is where its
// value ends (trailing spaces dropped) and at where the scan stopped: the
// ':', the '#' or len(t). ok is false for a tab, whose rules the subset
// leaves to yaml.v3.
func scanPlain(t string, i int) (end, at int, ok bool) {
	end = i
	for at = i; at < len(t); at++ {
		switch t[at] {
		case '\t':
			return 0, 0, false
		case ':':
			if at+1 == len(t) || t[at+1] == ' ' {
				return end, at, true
			}
		case ' ':
			j := skipSpaces(t, at)
			if j == len(t) || t[j] == '#' {
				return end, j, true
			}
			at = j - 1
			continue
		}
		end = at + 1
	}
	return end, at, true
}

func skipSpaces(t string, i int) int {
	for i < len(t) && t[i] == ' ' {
		i++
	}
	return i
}

// restBlank reports whether t holds nothing from i on but spaces and a
// comment, which needs a space before it.
func restBlank(t string, i int) bool {
	j := skipSpaces(t, i)
	return j == len(t) || t[j] == '#' && j > i
}

func quoteStyle(q byte) yaml.Style {
	if q == '"' {
		return yaml.DoubleQuotedStyle
	}
	return yaml.SingleQuotedStyle
}

// scanQuoted reads a quoted scalar that starts at t[i] and closes on the
// same line; end is the offset after the closing quote.
func scanQuoted(t string, i int) (value string, end int, ok bool) {
	if t[i] == '"' {
		return scanDouble(t, i)
	}
	return scanSingle(t, i)
}

// scanSingle reads a single-quoted scalar, where a doubled quote stands
// for one.
func scanSingle(t string, i int) (value string, end int, ok bool) {
	start := i + 1
	var buf []byte // only once a quote has been doubled
	for j := start; j < len(t); j++ {
		if t[j] != '\'' {
			continue
		}
		if j+1 < len(t) && t[j+1] == '\'' {
			if buf == nil {
				buf = make([]byte, 0, len(t)-start)
			}
			buf = append(buf, t[start:j+1]...)
			start = j + 2
			j++
			continue
		}
		if buf == nil {
			return t[i+1 : j], j + 1, true
		}
		return string(append(buf, t[start:j]...)), j + 1, true
	}
	return "", 0, false
}

// scanDouble reads a double-quoted scalar, decoding its escapes as yaml.v3
// does. A backslash at the end of the line continues the scalar on the next
// one, which the subset leaves to yaml.v3.
func scanDouble(t string, i int) (value string, end int, ok bool) {
	start := i + 1
	j := start
	for j < len(t) && t[j] != '"' && t[j] != '\\' {
		j++
	}
	if j == len(t) {
		return "", 0, false
	}
	if t[j] == '"' {
		return t[start:j], j + 1, true
	}
	buf := make([]byte, 0, len(t)-start)
	for j < len(t) {
		switch c := t[j]; c {
		case '"':
			return string(append(buf, t[start:j]...)), j + 1, true
		case '\\':
			buf = append(buf, t[start:j]...)
			var n int
			if buf, n, ok = unescape(buf, t[j+1:]); !ok {
				return "", 0, false
			}
			j += 1 + n
			start = j
		default:
			j++
		}
	}
	return "", 0, false
}

// unescape appends the character that the escape sequence at the start of
// s (after its backslash) stands for, and returns how many bytes it took.
func unescape(buf []byte, s string) ([]byte, int, bool) {
	if s == "" {
		return buf, 0, false
	}
	if c, ok := simpleEscapes[s[0]]; ok {
		return append(buf, c...), 1, true
	}
	digits := 0
	switch s[0] {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		return buf, 0, false // yaml.v3 rejects an unknown escape
	}
	if len(s) < 1+digits {
		return buf, 0, false
	}
	r := 0
	for _, c := range []byte(s[1 : 1+digits]) {
		d, ok := hexDigit(c)
		if !ok {
			return buf, 0, false
		}
		r = r<<4 | d
	}
	if r >= 0xD800 && r <= 0xDFFF || r > utf8.MaxRune {
		return buf, 0, false
	}
	// yaml.v3 writes code points below 0x80 as raw bytes, control
	// characters included, and the rest as UTF-8.
	if r < utf8.RuneSelf {
		return append(buf, byte(r)), 1 + digits, true
	}
	return utf8.AppendRune(buf, rune(r)), 1 + digits, true
}

// simpleEscapes maps the one-character escapes yaml.v3 knows to what they
// stand for. There is no "\/": yaml.v3 rejects it.
var simpleEscapes = map[byte]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n",
	'v': "\v", 'f': "\f", 'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"",
	'\'': "'", '\\': "\\", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028",
	'P': "\u2029",
}

func hexDigit(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}
