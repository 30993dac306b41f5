package model

import (
	"strconv"
	"strings"
)

// PathElem is one step into a document: a mapping key or a sequence index.
type PathElem struct {
	Key   string
	Index int
	// IsIndex tells an index step from a key step (Index 0 is valid).
	IsIndex bool
}

// Path addresses a field inside an object, e.g. spec.http[0].route.
type Path []PathElem

// Key returns p extended by a mapping key. It never aliases p's array, so
// sibling paths built from one parent stay independent.
func (p Path) Key(k string) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, PathElem{Key: k})
}

// Index returns p extended by a sequence index.
func (p Path) Index(i int) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, PathElem{Index: i, IsIndex: true})
}

// ParsePath reads the dotted form String writes ("spec.hosts[1]"). Keys with
// dots, brackets or quotes are written ["like.this"].
func ParsePath(s string) Path {
	var p Path
	for len(s) > 0 {
		switch {
		case s[0] == '.':
			s = s[1:]
		case strings.HasPrefix(s, "[\""):
			end := strings.Index(s, "\"]")
			if end < 0 {
				return append(p, PathElem{Key: s})
			}
			k, err := strconv.Unquote(s[1 : end+1])
			if err != nil {
				k = s[2:end]
			}
			p = append(p, PathElem{Key: k})
			s = s[end+2:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return append(p, PathElem{Key: s})
			}
			i, _ := strconv.Atoi(s[1:end])
			p = append(p, PathElem{Index: i, IsIndex: true})
			s = s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			p = append(p, PathElem{Key: s[:end]})
			s = s[end:]
		}
	}
	return p
}

func (p Path) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case e.IsIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.Index))
			b.WriteByte(']')
		case e.Key == "" || strings.ContainsAny(e.Key, ".[]\"' "):
			b.WriteByte('[')
			b.WriteString(strconv.Quote(e.Key))
			b.WriteByte(']')
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.Key)
		}
	}
	return b.String()
}
