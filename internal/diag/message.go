package diag

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ArgType is what a message argument holds, which decides how the
// argument enters a finding's key.
type ArgType int

const (
	// Word is a name the finding is about: a host, a namespace, a subset,
	// a port name, a field. It enters a key as written.
	Word ArgType = iota + 1
	// Number is an integer: a port, an index, a count.
	Number
	// Text is prose composed at the report site (a reason, a list, a
	// hint). It enters a key as a digest.
	Text
)

func (t ArgType) String() string {
	switch t {
	case Word:
		return "word"
	case Number:
		return "number"
	case Text:
		return "text"
	}
	return fmt.Sprintf("ArgType(%d)", int(t))
}

// accepts reports whether v is a value of t.
func (t ArgType) accepts(v any) bool {
	if _, ok := v.(fmt.Stringer); ok {
		return t == Word || t == Text
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.String:
		return t == Word || t == Text
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return t == Number
	}
	return false
}

// Arg declares one argument of a message template.
type Arg struct {
	Name string
	Type ArgType
	// Identifies marks an argument that tells this finding apart from
	// others of the same code about the same subject: it is part of the
	// key.
	Identifies bool
}

// ID returns a with Identifies set.
func (a Arg) ID() Arg {
	a.Identifies = true
	return a
}

// W, N and T declare a Word, Number and Text argument.
func W(name string) Arg { return Arg{Name: name, Type: Word} }
func N(name string) Arg { return Arg{Name: name, Type: Number} }
func T(name string) Arg { return Arg{Name: name, Type: Text} }

// Message is one way a finding of an entry reads: a template with one fmt
// verb per argument, and the arguments it takes, in order. Report sites
// pass values, never text, so every finding of a message reads alike and
// its key comes from the arguments marked as identifying.
type Message struct {
	Entry *Entry
	Text  string
	Args  []Arg
	// ByField marks a message whose arguments can recur, in one subject,
	// at several fields (the same subset routed to from two routes): its
	// findings are also told apart by their field. Findings of a message
	// without identifying arguments always are.
	ByField bool
	// NoSubject marks a message about the whole input or a kind, shown at
	// the first object that stands for it: its key leaves that object out,
	// so it does not change when another object comes first.
	NoSubject bool
}

// WithoutSubject returns m with NoSubject set.
func (m *Message) WithoutSubject() *Message {
	m.NoSubject = true
	return m
}

// Fielded returns m with ByField set.
func (m *Message) Fielded() *Message {
	m.ByField = true
	return m
}

// Template declares a message of e. It is called only while the catalog
// is initialised.
func (e *Entry) Template(text string, args ...Arg) *Message {
	m := &Message{Entry: e, Text: text, Args: args}
	e.Messages = append(e.Messages, m)
	return m
}

// KeysByField reports whether a finding of m is told apart by the field
// it is at (see ByField).
func (m *Message) KeysByField() bool {
	return m.ByField || !slices.ContainsFunc(m.Args, func(a Arg) bool { return a.Identifies })
}

// At is a finding of m's entry about obj, its text rendered from args.
func (m *Message) At(obj ObjectRef, args ...any) Diagnostic {
	e := m.Entry
	return Diagnostic{
		Code:     e.Code,
		Name:     e.Name,
		Severity: e.Severity,
		Message:  m.render(args),
		Key:      m.key(obj, args),
		Object:   obj,
	}
}

// render fills the template. An argument of the wrong type or count is
// marked in the text, as fmt marks a bad verb, so tests see it.
func (m *Message) render(args []any) string {
	s := fmt.Sprintf(m.Text, args...)
	var bad []string
	for i, a := range m.Args {
		if i < len(args) && !a.Type.accepts(args[i]) {
			bad = append(bad, fmt.Sprintf("%s: want %s, got %T", a.Name, a.Type, args[i]))
		}
	}
	if len(args) != len(m.Args) {
		bad = append(bad, fmt.Sprintf("%d arguments for %d", len(args), len(m.Args)))
	}
	if len(bad) > 0 {
		s += "%!(BADARGS " + strings.Join(bad, "; ") + ")"
	}
	return s
}

func (m *Message) key(obj ObjectRef, args []any) string {
	if m.NoSubject {
		return strings.Join(append([]string{m.Entry.Code}, m.parts(args)...), "/")
	}
	return keyFor(m.Entry.Code, obj, m.parts(args))
}

// parts are the key parts of the identifying arguments.
func (m *Message) parts(args []any) []string {
	var out []string
	for i, a := range m.Args {
		if !a.Identifies || i >= len(args) {
			continue
		}
		v := fmt.Sprint(args[i])
		if a.Type == Text {
			out = append(out, TextPart(a.Name, v))
			continue
		}
		out = append(out, Part(a.Name, v))
	}
	return out
}

// verb matches a fmt verb, with an explicit argument index when given.
var verb = regexp.MustCompile(`%[-+# 0]*(?:\[(\d+)\])?[0-9]*(?:\.[0-9]+)?([a-zA-Z%])`)

// Pattern is the template with each verb replaced by its argument's name
// in braces ({host}; "{subset}" for a quoted one), as docs show it.
func (m *Message) Pattern() string {
	next := 0
	return verb.ReplaceAllStringFunc(m.Text, func(v string) string {
		sub := verb.FindStringSubmatch(v)
		if sub[2] == "%" {
			return "%"
		}
		if sub[1] != "" {
			n, _ := strconv.Atoi(sub[1])
			next = n - 1
		}
		i := next
		next++
		if i < 0 || i >= len(m.Args) {
			return v
		}
		if sub[2] == "q" {
			return `"{` + m.Args[i].Name + `}"`
		}
		return "{" + m.Args[i].Name + "}"
	})
}

// KeyArgs names the arguments that enter a finding's key.
func (m *Message) KeyArgs() []string {
	var out []string
	for _, a := range m.Args {
		if a.Identifies {
			out = append(out, a.Name)
		}
	}
	return out
}
