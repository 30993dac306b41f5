package crdschema

import (
	"reflect"
	"strconv"
	"unsafe"
)

// contents numbers the subtrees of the objects a Memo validates by their
// content: two subtrees get the same number exactly when appendContent
// encodes them alike. A subtree is numbered once per object, from its
// children's numbers, so that the memo's keys at every depth cost a
// walk of the object and not of each subtree again.
type contents struct {
	// ids is the number of each encoding: a scalar's appendContent, a
	// map's or list's with its elements' numbers in place of their
	// content.
	ids map[string]uint32
	// seen is the number of each map and list of the object being
	// validated, by address; it holds for one object only, whose
	// content does not change while it is validated.
	seen map[address]uint32
	buf  []byte
}

// address is where a map's or list's content is: a list by its first
// element and length (an empty list's content is that of any other).
type address struct {
	p unsafe.Pointer
	n int
}

func newContents() contents {
	return contents{ids: map[string]uint32{}, seen: map[address]uint32{}}
}

// object starts numbering the subtrees of another object.
func (c *contents) object() { clear(c.seen) }

// id is v's number; ok is false for a type appendContent does not know.
func (c *contents) id(v any) (id uint32, ok bool) {
	var at address
	switch x := v.(type) {
	case map[string]any:
		at = address{p: reflect.ValueOf(x).UnsafePointer(), n: -1}
	case []any:
		at = address{p: unsafe.Pointer(unsafe.SliceData(x)), n: len(x)}
	default:
		b, ok := appendContent(c.buf[:0], v)
		c.buf = b
		return c.intern(b), ok
	}
	if id, ok := c.seen[at]; ok {
		return id, true
	}
	// The elements are numbered first: numbering one reuses buf.
	var b []byte
	switch x := v.(type) {
	case map[string]any:
		var smallKeys [16]string
		var small [16]uint32
		keys, elems := sortedKeys(smallKeys[:0], x), small[:0]
		for _, k := range keys {
			e, ok := c.id(x[k])
			if !ok {
				return 0, false
			}
			elems = append(elems, e)
		}
		b = append(c.buf[:0], '{')
		for i, k := range keys {
			b = strconv.AppendQuote(b, k)
			b = strconv.AppendUint(append(b, ':'), uint64(elems[i]), 10)
			b = append(b, ',')
		}
		b = append(b, '}')
	case []any:
		var small [16]uint32
		elems := small[:0]
		for _, v := range x {
			e, ok := c.id(v)
			if !ok {
				return 0, false
			}
			elems = append(elems, e)
		}
		b = append(c.buf[:0], '[')
		for _, e := range elems {
			b = append(strconv.AppendUint(b, uint64(e), 10), ',')
		}
		b = append(b, ']')
	}
	c.buf = b
	id = c.intern(b)
	c.seen[at] = id
	return id, true
}

// intern is the number of the encoding b, a new one if b is new.
func (c *contents) intern(b []byte) uint32 {
	if id, ok := c.ids[string(b)]; ok {
		return id
	}
	id := uint32(len(c.ids))
	c.ids[string(b)] = id
	return id
}
