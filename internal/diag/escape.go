package diag

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s safe to print on a terminal: every control
// character (C0 and C1, DEL, line breaks included), every Unicode bidi
// control and every byte that is not UTF-8 is written as a Go escape
// (\x1b, \n, \u202e). Names and messages come from the input, and raw,
// an ESC could recolour, move the cursor or retitle the terminal, and a
// line break could forge a line of output. Human-facing renderers pass
// every piece of the input they print through it.
func Printable(s string) string { return printable(s, false) }

// PrintableLines is Printable keeping line feeds, for multi-line text a
// renderer lays out itself (indenting continuation lines).
func PrintableLines(s string) string { return printable(s, true) }

func printable(s string, keepLF bool) string {
	i := unsafeAt(s, keepLF)
	if i < 0 {
		return s // the common case: nothing to escape, no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case !unsafeRune(r, keepLF):
			b.WriteString(s[i : i+size])
		default:
			// QuoteRune's escapes (\n, \x1b, \u202e) without its quotes.
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// unsafeAt is the index of the first byte Printable rewrites, or -1.
func unsafeAt(s string, keepLF bool) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
		if unsafeRune(r, keepLF) {
			return i
		}
	}
	return -1
}

func unsafeRune(r rune, keepLF bool) bool {
	if r == '\n' {
		return !keepLF
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// Styled is text a renderer wrote itself, colour codes and all, any input
// in it escaped already: Fprintf prints it as it is.
type Styled string

// Fprintf is fmt.Fprintf for human-facing output: every argument of a
// string type (Styled aside), []string, error and textual fmt.Stringer is
// passed through Printable first. Its verbs for text are %s and %v; %q
// would escape the escapes again.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	safe := make([]any, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case Styled:
			safe[i] = string(x)
		case []string:
			s := make([]string, len(x))
			for j, e := range x {
				s[j] = Printable(e)
			}
			safe[i] = s
		case error:
			safe[i] = Printable(x.Error())
		case fmt.Stringer:
			// Text such as a condition's; a number's name (%d) stays a number.
			safe[i] = a
			switch v := reflect.ValueOf(a); v.Kind() {
			case reflect.String, reflect.Struct:
				safe[i] = Printable(x.String())
			case reflect.Pointer:
				if !v.IsNil() {
					safe[i] = Printable(x.String())
				}
			}
		default:
			safe[i] = a
			if v := reflect.ValueOf(a); v.Kind() == reflect.String {
				safe[i] = Printable(v.String())
			}
		}
	}
	return fmt.Fprintf(w, format, safe...)
}
