package model

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/yamlfast"
)

// Source says where an object was written.
type Source struct {
	// File is the path as the user named it, or "<stdin>".
	File string
	// Line is the 1-based line where the object starts.
	Line int
	// Origin says what File and Line are for a rendered object when not
	// the text a person wrote (diag.ObjectRef.Origin).
	Origin string
	// doc is the YAML or JSON text of the document that holds the object;
	// base is the object's path inside it (non-empty for List items).
	// FieldLine parses it on demand, so objects carry no position index.
	doc  *Document
	base Path
}

// Document is the text of one YAML or JSON document and where it starts.
type Document struct {
	Data []byte
	// Line is the file line of the first byte of Data.
	Line int
	// Written, for a document a template rendered, maps the lines of the
	// rendered text (Written[i] for line i+1) to the template lines that
	// wrote them, 0 where not known; nil for text a person wrote.
	Written []int
}

// WrittenLine is the template line that wrote line of a rendered text with
// the map written (Document.Written), or 0.
func WrittenLine(written []int, line int) int {
	if line < 1 || line > len(written) {
		return 0
	}
	return written[line-1]
}

// Position is where a finding at line of the object's file points: the
// template line that wrote it when the object was rendered from a
// template that says, else line itself with the note Origin.
func (s Source) Position(line int) (int, string) {
	if s.doc != nil {
		if w := WrittenLine(s.doc.Written, line); w > 0 {
			return w, ""
		}
	}
	return line, s.Origin
}

// NewSource records an object that starts at line of file, inside doc at
// path base.
func NewSource(file string, line int, doc *Document, base Path) Source {
	return Source{File: file, Line: line, doc: doc, base: base}
}

// Text is the YAML or JSON text of the document the object was written
// in (a List's whole document for one of its items); nil when unknown.
func (s Source) Text() []byte {
	if s.doc == nil {
		return nil
	}
	return s.doc.Data
}

// FieldLine returns the file line of the field at path (relative to the
// object). A path that does not exist resolves to its deepest existing
// prefix; without a document it is the object's line.
func (s Source) FieldLine(path Path) int {
	return s.FieldLines([]Path{path})[0]
}

// FieldLines is FieldLine for several paths, parsing the document once.
func (s Source) FieldLines(paths []Path) []int {
	out := make([]int, len(paths))
	if s.doc == nil {
		for i := range out {
			out[i] = s.Line
		}
		return out
	}
	full := make([]Path, len(paths))
	for i, p := range paths {
		full[i] = append(append(make(Path, 0, len(s.base)+len(p)), s.base...), p...)
	}
	for i, line := range s.doc.LinesOf(full) {
		out[i] = line
		if line == 0 {
			out[i] = s.Line
		}
	}
	return out
}

// LinesOf finds the file line of each path inside the document; 0 where the
// document does not parse.
func (d *Document) LinesOf(paths []Path) []int {
	out := make([]int, len(paths))
	root, ok := yamlfast.Parse(d.Data)
	if !ok {
		root = new(yaml.Node)
		if err := yaml.Unmarshal(d.Data, root); err != nil || len(root.Content) == 0 {
			return out
		}
	}
	for i, p := range paths {
		n := root.Content[0]
		line := n.Line
		for _, e := range p {
			next, keyLine := child(deref(n), e)
			if next == nil {
				break
			}
			line, n = keyLine, next
		}
		out[i] = d.Line + line - 1
	}
	return out
}

// child steps into n; keyLine is the line to report for the step: the key's
// line for a mapping entry (where a person looks for a field), the item's
// line for a sequence element.
func child(n *yaml.Node, e PathElem) (next *yaml.Node, keyLine int) {
	switch {
	case e.IsIndex && n.Kind == yaml.SequenceNode:
		if e.Index >= 0 && e.Index < len(n.Content) {
			c := n.Content[e.Index]
			return c, c.Line
		}
	case !e.IsIndex && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == e.Key {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	}
	return nil, 0
}

// Child steps from a parsed node into a key or index, following aliases;
// nil when there is no such child.
func Child(n *yaml.Node, e PathElem) *yaml.Node {
	if n == nil {
		return nil
	}
	c, _ := child(deref(n), e)
	return c
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
