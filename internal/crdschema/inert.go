package crdschema

import (
	"slices"
	"strconv"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// A string field is inert when nothing judges its value but its own
// schema: no CEL rule reaches it (reads), it is no key of a list of type
// map and in no list of type set (whose items the list-type check
// compares), and every schema above it is one the quick check follows
// (no anyOf, no enum of objects: nothing that judges a subtree whole).
// Two objects that differ only in the values of inert fields, each of
// which its own schema passes (holds), break the same rules with the
// same messages at the same paths: defaulting reads only which fields
// are there, and a message names a value only where it is wrong. So the
// whole-object memo (Memo) keys an object with such values left out:
// routes that differ only in a backend's namespace, or grants that
// differ only in the namespace they admit, are judged once.

// flow is what reaches a node of the schema from above.
type flow struct {
	// reach is what each rule above the node, or of it, reads of the
	// node (reads); all is set when one reads it whole, or may.
	reach []*reads
	all   bool
	// blocked: something above judges the node's subtree in a way
	// inertness does not follow.
	blocked bool
}

// step is how a node is reached from its parent.
type step uint8

const (
	stepRoot step = iota
	stepField
	stepMapValue
	stepItem
)

// link gives each node of the tree under n (whose structural schema is
// s and CEL validator node c) what inertness needs: its parent, its
// structural schema and the rules on it.
func link(n *openAPINode, s *schema.Structural, c *celNode) {
	n.structural = s
	n.inert = sync.OnceValue(n.isInert)
	n.flow = sync.OnceValue(func() flow { return n.flowFrom(c) })
	var cprops map[string]*celNode
	var citems, cadditional *celNode
	if c != nil {
		cprops, citems, cadditional = c.props, c.items, c.additional
	}
	for k, child := range n.props {
		child.parent, child.step, child.field = n, stepField, k
		if p, ok := s.Properties[k]; ok {
			link(child, &p, cprops[k])
		} else {
			child.orphan()
		}
	}
	if child := n.additional; child != nil {
		child.parent, child.step = n, stepMapValue
		if a := s.AdditionalProperties; a != nil && a.Structural != nil {
			link(child, a.Structural, cadditional)
		} else {
			child.orphan()
		}
	}
	if child := n.items; child != nil {
		child.parent, child.step = n, stepItem
		if s.Items != nil {
			link(child, s.Items, citems)
		} else {
			child.orphan()
		}
	}
}

// orphan marks a subtree whose structural schema is unknown: nothing in
// it is inert.
func (n *openAPINode) orphan() {
	n.inert = func() bool { return false }
	for _, c := range n.props {
		c.orphan()
	}
	for _, c := range []*openAPINode{n.additional, n.items} {
		if c != nil {
			c.orphan()
		}
	}
}

// flowFrom is the flow into n, whose CEL validator node is c.
func (n *openAPINode) flowFrom(c *celNode) flow {
	var f flow
	if p := n.parent; p != nil {
		in := p.flow()
		f.blocked = in.blocked || !p.quick.ok || listType(p.structural) == "set"
		f.all = in.all
		for _, r := range in.reach {
			switch {
			case r.all:
				f.all = true
			case n.step == stepField && r.fields[n.field] != nil:
				f.reach = append(f.reach, r.fields[n.field])
			case n.step == stepMapValue && r.fields != nil:
				// A rule reads a map's values by keys, which are
				// data: any value may be one it reads.
				f.all = true
			case n.step == stepItem && r.elem != nil:
				f.reach = append(f.reach, r.elem)
			}
		}
	}
	s := n.structural
	f.blocked = f.blocked || s.XPreserveUnknownFields || s.XEmbeddedResource || s.XIntOrString
	if c != nil && c.own != nil {
		own := c.own()
		if own.programs == nil {
			f.all = true
		}
		for _, r := range own.reads {
			if r == nil {
				f.all = true
			} else {
				f.reach = append(f.reach, r)
			}
		}
	}
	return f
}

// isInert reports whether n is an inert string field.
func (n *openAPINode) isInert() bool {
	if !n.quick.ok || n.quick.typ != "string" {
		return false
	}
	if f := n.flow(); f.blocked || f.all || len(f.reach) > 0 {
		return false
	}
	// A key of an item of a list of type map, which the list-type check
	// compares.
	if item := n.parent; n.step == stepField && item.step == stepItem {
		if list := item.parent.structural; listType(list) == "map" && slices.Contains(list.XListMapKeys, n.field) {
			return false
		}
	}
	return true
}

// appendKey appends to b the whole-object memo's encoding of v, a value
// of n's schema (n nil: of none known), which tells apart every two
// values appendContent tells apart but for the values of inert fields
// that their schemas pass, which it leaves out. A map's fields with a
// schema of their own come in the schema's order, the others after a
// bar, sorted; keys in skip are left out (at the top only). ok is false
// for a type appendContent does not know.
func (n *openAPINode) appendKey(b []byte, v any, skip ...string) ([]byte, bool) {
	ok := true
	switch x := v.(type) {
	case string:
		if n != nil && n.inert() && n.holds(x) {
			return append(b, 'S'), true
		}
	case map[string]any:
		b = append(b, '{')
		seen := 0
		if n != nil {
			for i, k := range n.names {
				e, found := x[k]
				if !found {
					continue
				}
				if seen++; slices.Contains(skip, k) {
					continue
				}
				if b, ok = n.props[k].appendKey(append(b, n.quoted[i]...), e); !ok {
					return b, false
				}
				b = append(b, ',')
			}
		}
		if seen < len(x) {
			var other *openAPINode
			if n != nil {
				other = n.additional
			}
			b = append(b, '|')
			var small [16]string
			for _, k := range sortedKeys(small[:0], x) {
				if n != nil && n.props[k] != nil || slices.Contains(skip, k) {
					continue
				}
				b = append(strconv.AppendQuote(b, k), ':')
				if b, ok = other.appendKey(b, x[k]); !ok {
					return b, false
				}
				b = append(b, ',')
			}
		}
		return append(b, '}'), true
	case []any:
		var c *openAPINode
		if n != nil {
			c = n.items
		}
		b = append(b, '[')
		for _, e := range x {
			if b, ok = c.appendKey(b, e); !ok {
				return b, false
			}
			b = append(b, ',')
		}
		return append(b, ']'), true
	}
	return appendContent(b, v)
}

// listType is s's x-kubernetes-list-type, "" for none.
func listType(s *schema.Structural) string {
	if s.XListType == nil {
		return ""
	}
	return *s.XListType
}
