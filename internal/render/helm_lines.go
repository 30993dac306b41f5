package render

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/engine"
)

// Marks placed in a template's text to follow it into the output: a
// private-use character, the template's number and line, another one.
// Nothing a chart writes holds them (a template whose output does is not
// mapped).
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
)

// templateLines tells, for each template the chart rendered into out, which
// line of the template wrote each line of its output: lines[i] is the
// template line of output line i+1, 0 where no line of the template's own
// text starts it (the line begins with a value, a helper's text, or the
// output of a range over values). It renders the chart a second time with
// a mark before the first character of every line of text outside actions
// and define blocks, and believes the marks only where the marked output,
// marks removed, is the output: a template whose output changes from one
// render to the next (random values, a mark swallowed by a function) gets
// no lines. vals are the render values out was rendered with.
func templateLines(ch *chart.Chart, vals common.Values, out map[string]string) map[string][]int {
	var names []string
	restore := markTemplates(ch, out, &names)
	defer restore()
	if len(names) == 0 {
		return nil
	}
	marked, err := engine.Render(ch, vals)
	if err != nil {
		return nil
	}
	lines := map[string][]int{}
	for id, name := range names {
		if m, ok := marked[name]; ok {
			if l, ok := readMarks(m, out[name], id); ok {
				lines[name] = l
			}
		}
	}
	return lines
}

// markTemplates replaces, in ch and its subcharts, the text of every
// template that out holds with its marked text, adding its name to names
// (its mark's number is its index there). restore puts the texts back.
func markTemplates(ch *chart.Chart, out map[string]string, names *[]string) (restore func()) {
	// An aliased subchart shares its templates' array with the chart it
	// copies: mark a copy of the array, so each is marked as itself.
	templates := ch.Templates
	ch.Templates = slices.Clone(templates)
	undo := []func(){func() { ch.Templates = templates }}
	for i, t := range templates {
		name := path.Join(ch.ChartFullPath(), t.Name)
		text, ok := out[name]
		if !ok || strings.ContainsRune(text, markOpen) {
			continue
		}
		data, ok := mark(name, string(t.Data), len(*names))
		if !ok {
			continue
		}
		*names = append(*names, name)
		ch.Templates[i] = &common.File{Name: t.Name, ModTime: t.ModTime, Data: []byte(data)}
	}
	for _, sub := range ch.Dependencies() {
		undo = append(undo, markTemplates(sub, out, names))
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// mark returns text with a mark of template id before the first character
// of each line whose first character is text, not an action, in the
// template's own body. Put there, a mark survives both trim markers: "{{-"
// on a later line trims back only to the text after it, and "-}}" on an
// earlier line trims forward only through the indentation before it.
func mark(name, text string, id int) (string, bool) {
	tree := parse.New(name)
	tree.Mode = parse.SkipFuncCheck | parse.ParseComments
	if _, err := tree.Parse(text, "", "", map[string]*parse.Tree{}); err != nil || tree.Root == nil {
		return "", false
	}
	var at []int
	ok := true
	walkText(tree.Root, func(n *parse.TextNode) {
		start, end := int(n.Pos), int(n.Pos)+len(n.Text)
		if end > len(text) || text[start:end] != string(n.Text) {
			ok = false // not where the parser says: mark nothing
			return
		}
		for i := start; i < end; i++ {
			if text[i] == ' ' || text[i] == '\t' {
				continue
			}
			if text[i] != '\n' && lineStartsAt(text, i) {
				at = append(at, i)
			}
			// On to the next line's first character.
			nl := strings.IndexByte(text[i:end], '\n')
			if nl < 0 {
				break
			}
			i += nl
		}
	})
	if !ok || len(at) == 0 {
		return "", false
	}
	var b strings.Builder
	prev := 0
	for _, i := range at {
		b.WriteString(text[prev:i])
		b.WriteRune(markOpen)
		b.WriteString(strconv.Itoa(id) + ":" + strconv.Itoa(1+strings.Count(text[:i], "\n")))
		b.WriteRune(markClose)
		prev = i
	}
	b.WriteString(text[prev:])
	return b.String(), true
}

// lineStartsAt reports whether only blanks precede position i on its line.
func lineStartsAt(text string, i int) bool {
	for j := i - 1; j >= 0 && text[j] != '\n'; j-- {
		if text[j] != ' ' && text[j] != '\t' {
			return false
		}
	}
	return true
}

// walkText calls f on each text node of a template's body, in order,
// through if, range and with; define and block bodies are trees of their
// own, rendered where they are used, and are not visited.
func walkText(n parse.Node, f func(*parse.TextNode)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkText(c, f)
		}
	case *parse.TextNode:
		f(n)
	case *parse.IfNode:
		walkText(n.List, f)
		walkText(n.ElseList, f)
	case *parse.RangeNode:
		walkText(n.List, f)
		walkText(n.ElseList, f)
	case *parse.WithNode:
		walkText(n.List, f)
		walkText(n.ElseList, f)
	}
}

// readMarks returns the template line of each line of marked, the output
// of template id rendered with marks, if marked without its marks is want.
func readMarks(marked, want string, id int) ([]int, bool) {
	var plain strings.Builder
	var lines []int
	prefix := strconv.Itoa(id) + ":"
	for line := range strings.Lines(marked) {
		written := 0
		if body := strings.TrimLeft(line, " \t"); strings.HasPrefix(body, string(markOpen)+prefix) {
			num, _, _ := strings.Cut(body[len(string(markOpen))+len(prefix):], string(markClose))
			written, _ = strconv.Atoi(num)
		}
		lines = append(lines, written)
		plain.WriteString(unmark(line))
	}
	if plain.String() != want {
		return nil, false
	}
	return lines, true
}

// unmark removes every mark from s.
func unmark(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexRune(s, markOpen)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexRune(s[i:], markClose)
		if j < 0 {
			b.WriteString(s[i:])
			return b.String()
		}
		s = s[i+j+len(string(markClose)):]
	}
}
