package crdschema

import (
	"slices"
	"strconv"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// reads is what a CEL rule can read of self, found from its syntax: a
// rule judges two values alike when they agree on it, so that its
// verdict on one stands for the other (Memo). Routes that differ in a
// backend's name or namespace agree on what their rules read (the
// lengths of lists, which filters a rule has, a backend's kind), and
// each rule is evaluated once for them all.
//
// A node is a value under self. Each field of fields was selected or
// tested for (its presence is read, and what its node says); size means
// a list's length was read, elem what its elements were; all that the
// whole value was read, as an operand of anything else (a comparison, a
// function). A value reached is read at least as far as the library's
// adapter converts it on reaching it: a map's or a list's type, a
// scalar whole (appendReads).
type reads struct {
	all    bool
	size   bool
	fields map[string]*reads
	elem   *reads
}

func (r *reads) field(name string) *reads {
	if r.fields == nil {
		r.fields = map[string]*reads{}
	}
	if r.fields[name] == nil {
		r.fields[name] = &reads{}
	}
	return r.fields[name]
}

func (r *reads) element() *reads {
	r.size = true
	if r.elem == nil {
		r.elem = &reads{}
	}
	return r.elem
}

// newReads is what rule, on a value of schema s, can read of it; nil when
// the rule does not parse as env parses it.
func newReads(env *celgo.Env, rule string, s *schema.Structural) *reads {
	parsed, issues := env.Parse(rule)
	if issues.Err() != nil {
		return nil
	}
	root := &reads{}
	w := readWalker{scope: []binding{{name: cel.ScopedVarName, at: &path{r: root, s: s}}}}
	w.use(parsed.NativeRep().Expr())
	return root
}

// path is a value under self: what is read of it and its schema.
type path struct {
	r *reads
	s *schema.Structural
}

// binding names a value: a path, or (at nil) anything else, such as a
// comprehension's accumulator, which hides a path of the same name.
type binding struct {
	name string
	at   *path
}

type readWalker struct {
	scope []binding
}

// use walks e, whose value is used whole.
func (w *readWalker) use(e ast.Expr) {
	if p := w.denote(e); p != nil {
		p.r.all = true
	}
}

// denote walks e and returns the value under self it is, nil when it is
// not one.
func (w *readWalker) denote(e ast.Expr) *path {
	switch e.Kind() {
	case ast.IdentKind:
		for i := len(w.scope) - 1; i >= 0; i-- {
			if w.scope[i].name == e.AsIdent() {
				return w.scope[i].at
			}
		}
	case ast.SelectKind:
		sel := e.AsSelect()
		p := w.denote(sel.Operand())
		if p == nil {
			return nil
		}
		child := fieldOf(p, sel.FieldName())
		if child == nil {
			p.r.all = true
			return nil
		}
		if sel.IsTestOnly() {
			// has(): the presence alone, which fields records.
			return nil
		}
		return child
	case ast.CallKind:
		return w.call(e.AsCall())
	case ast.ComprehensionKind:
		w.comprehension(e.AsComprehension())
	case ast.ListKind:
		for _, x := range e.AsList().Elements() {
			w.use(x)
		}
	case ast.MapKind:
		for _, x := range e.AsMap().Entries() {
			w.use(x.AsMapEntry().Key())
			w.use(x.AsMapEntry().Value())
		}
	case ast.StructKind:
		for _, x := range e.AsStruct().Fields() {
			w.use(x.AsStructField().Value())
		}
	}
	return nil
}

// fieldOf is p's field named name (as CEL spells it), nil when p's schema
// has none.
func fieldOf(p *path, name string) *path {
	if p.s.Properties != nil {
		for k := range p.s.Properties {
			if escaped, ok := apiservercel.Escape(k); ok && escaped == name {
				s := p.s.Properties[k]
				return &path{r: p.r.field(k), s: &s}
			}
		}
		return nil
	}
	if a := p.s.AdditionalProperties; a != nil && a.Structural != nil {
		return &path{r: p.r.field(name), s: a.Structural}
	}
	return nil
}

// call walks a call: a list's size and index read its length and
// element; every other operand is used whole.
func (w *readWalker) call(c ast.CallExpr) *path {
	args := c.Args()
	if c.IsMemberFunction() {
		args = append([]ast.Expr{c.Target()}, args...)
	}
	switch fn := c.FunctionName(); {
	case fn == "size" && len(args) == 1:
		if p := w.denote(args[0]); p != nil {
			if p.s.Type == "array" {
				p.r.size = true
			} else {
				p.r.all = true
			}
		}
		return nil
	case fn == operators.Index && len(args) == 2:
		w.use(args[1])
		p := w.denote(args[0])
		if p == nil {
			return nil
		}
		if p.s.Type == "array" && p.s.Items != nil {
			return &path{r: p.r.element(), s: p.s.Items}
		}
		p.r.all = true
		return nil
	}
	for _, a := range args {
		w.use(a)
	}
	return nil
}

// comprehension walks a comprehension (the macros all, exists, map,
// ...): over a list, its variable is the list's element; over anything
// else, the range is used whole.
func (w *readWalker) comprehension(c ast.ComprehensionExpr) {
	var elem *path
	if p := w.denote(c.IterRange()); p != nil {
		if p.s.Type == "array" && p.s.Items != nil && !c.HasIterVar2() {
			elem = &path{r: p.r.element(), s: p.s.Items}
		} else {
			p.r.all = true
		}
	}
	w.use(c.AccuInit())
	n := len(w.scope)
	w.scope = append(w.scope, binding{name: c.AccuVar()}, binding{name: c.IterVar(), at: elem})
	if c.HasIterVar2() {
		w.scope = append(w.scope, binding{name: c.IterVar2()})
	}
	w.use(c.LoopCondition())
	w.use(c.LoopStep())
	w.scope = w.scope[:n+1]
	w.use(c.Result())
	w.scope = w.scope[:n]
}

// appendReads appends to b an encoding of what r reads of v: values
// that encode alike are alike to the rule. Where v's shape is not the
// one r reads through (a list where fields are read), all of v is
// encoded.
func appendReads(b []byte, v any, r *reads) ([]byte, bool) {
	if r.all {
		return appendContent(b, v)
	}
	switch x := v.(type) {
	case []any:
		if r.fields != nil {
			return appendContent(b, v)
		}
		b = append(b, '[')
		if r.size {
			b = strconv.AppendInt(b, int64(len(x)), 10)
		}
		if r.elem != nil {
			for _, e := range x {
				var ok bool
				if b, ok = appendReads(append(b, ','), e, r.elem); !ok {
					return b, false
				}
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if r.size || r.elem != nil {
			return appendContent(b, v)
		}
		b = append(b, '{')
		var small [16]string
		for _, k := range sortedFields(small[:0], r.fields) {
			b = strconv.AppendQuote(b, k)
			e, ok := x[k]
			if !ok {
				b = append(b, '-')
				continue
			}
			if b, ok = appendReads(append(b, ':'), e, r.fields[k]); !ok {
				return b, false
			}
			b = append(b, ',')
		}
		return append(b, '}'), true
	}
	// A scalar is read whole as soon as it is reached: the library's
	// adapter converts it by its schema, which fails on a value of
	// another type or a string not in the schema's format.
	return appendContent(b, v)
}

// sortedFields appends m's keys to keys, in order.
func sortedFields(keys []string, m map[string]*reads) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
