// Package deephash digests Go values by content: everything reachable
// from a value through fields, elements, map entries and pointers, so two
// values with equal digests hold equal data wherever they live. Protocol
// buffer messages are digested as their deterministic wire form; maps in
// any order; struct fields named in Cuts are left out, for back-references
// the caller knows to be derived from what is digested.
//
// It exists to prove that a computation reading only the digested data
// gives the same result on two inputs: an omitted field would make that
// proof wrong, so every field is digested unless cut by name, and what
// cannot be digested (functions, channels) is an error rather than a
// guess.
package deephash

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// Sum is a digest.
type Sum [sha256.Size]byte

// Cuts are struct fields left out of digests: type → field names.
type Cuts map[reflect.Type][]string

// Hasher digests values, remembering the digest of every pointer, map
// and long slice it met, so values sharing structure are digested once. Values must not
// change while a Hasher is in use. It is not safe for concurrent use.
type Hasher struct {
	cuts map[reflect.Type]map[string]bool
	// fields are the digested fields of each struct type met, in order.
	fields map[reflect.Type][]int
	// free are writers to reuse, one per nesting level at most.
	free []*writer
	memo map[node]Sum
	// busy are the nodes whose digests are being taken, by depth; low is
	// the least depth the current node's digest refers back to.
	busy map[node]int
	low  int
}

// node is a pointer or map: its address and its type (a struct and its
// first field share an address).
type node struct {
	addr uintptr
	t    reflect.Type
	// len is a slice's length: a slice's node is its elements.
	len int
}

// New returns a Hasher leaving out cuts.
func New(cuts Cuts) *Hasher {
	h := &Hasher{cuts: map[reflect.Type]map[string]bool{}, fields: map[reflect.Type][]int{}, memo: map[node]Sum{}, busy: map[node]int{}, low: math.MaxInt}
	for t, fs := range cuts {
		set := map[string]bool{}
		for _, f := range fs {
			if _, ok := t.FieldByName(f); !ok {
				panic(fmt.Sprintf("deephash: %s has no field %s", t, f))
			}
			set[f] = true
		}
		h.cuts[t] = set
	}
	return h
}

// Sum digests v and what it reaches.
func (h *Hasher) Sum(v any) (Sum, error) {
	w := h.writer()
	defer h.release(w)
	if err := h.value(w, reflect.ValueOf(v)); err != nil {
		return Sum{}, err
	}
	return w.sum(), nil
}

// writer feeds a digest through a buffer: a value writes many pieces of
// a few bytes each, which one at a time cost the hash a call and the
// heap a slice apiece.
type writer struct {
	h   hash.Hash
	buf []byte
}

// flushAt is the buffered length past which a writer hashes its buffer.
const flushAt = 4096

// flush hashes the buffer once it is long.
func (w *writer) flush() {
	if len(w.buf) >= flushAt {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *writer) byte(b byte) {
	w.buf = append(w.buf, b)
	w.flush()
}

func (w *writer) uint(n uint64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, n)
	w.flush()
}

func (w *writer) bytes(b []byte) {
	w.buf = append(w.buf, b...)
	w.flush()
}

func (w *writer) string(s string) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(len(s)))
	w.buf = append(w.buf, s...)
	w.flush()
}

func (w *writer) sum() Sum {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
	return Sum(w.h.Sum(nil))
}

// writer is a fresh writer, reused from an earlier digest when one is
// free.
func (h *Hasher) writer() *writer {
	if n := len(h.free); n > 0 {
		w := h.free[n-1]
		h.free = h.free[:n-1]
		return w
	}
	return &writer{h: sha256.New(), buf: make([]byte, 0, 2*flushAt)}
}

// release makes w free for reuse.
func (h *Hasher) release(w *writer) {
	w.h.Reset()
	w.buf = w.buf[:0]
	h.free = append(h.free, w)
}

var messageState = reflect.TypeFor[protoimpl.MessageState]()

// isMessage says whether a struct type is a generated protocol buffer
// message, not a struct embedding one (whose methods it would promote).
func isMessage(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() > 0 && t.Field(0).Type == messageState
}

// value writes v's content to w. Every value starts with its kind, and
// every variable-length part with its length, so distinct values never
// write the same bytes.
func (h *Hasher) value(w *writer, v reflect.Value) error {
	if !v.IsValid() {
		w.byte(0)
		return nil
	}
	w.byte(byte(v.Kind()))
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			w.byte(1)
		} else {
			w.byte(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.uint(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		w.uint(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		w.uint(math.Float64bits(real(v.Complex())))
		w.uint(math.Float64bits(imag(v.Complex())))
	case reflect.String:
		w.string(v.String())
	case reflect.Array:
		for i := range v.Len() {
			if err := h.value(w, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		w.byte(1)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			w.uint(uint64(v.Len()))
			w.bytes(v.Bytes())
			return nil
		}
		if v.Len() >= sharedSliceLen {
			// Marked apart from the elements written in place.
			w.byte(3)
			return h.shared(w, v)
		}
		return h.elements(w, v)
	case reflect.Interface:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		w.byte(1)
		w.string(typeName(v.Elem().Type()))
		return h.value(w, v.Elem())
	case reflect.Pointer, reflect.Map:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		return h.shared(w, v)
	case reflect.Struct:
		return h.structValue(w, v)
	default:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		return fmt.Errorf("deephash: cannot digest a %s (%s)", v.Kind(), v.Type())
	}
	return nil
}

// shared digests what a pointer or map refers to, once per Hasher.
//
// A node met again while its own digest is being taken (a route pointing
// back at its VirtualService) is written as how many nodes up the path it
// is: the digest then stands for the value unfolded, which is the data
// anyone reading through the pointers sees. A node whose digest holds such
// a reference to a node above it depends on the path it was reached by,
// so it is not remembered.
func (h *Hasher) shared(w *writer, v reflect.Value) error {
	n := node{addr: v.Pointer(), t: v.Type()}
	if v.Kind() == reflect.Slice {
		n.len = v.Len()
	}
	if s, ok := h.memo[n]; ok {
		w.byte(1)
		w.bytes(s[:])
		return nil
	}
	if d, ok := h.busy[n]; ok {
		w.byte(2)
		w.uint(uint64(len(h.busy) - d))
		h.low = min(h.low, d)
		return nil
	}
	depth := len(h.busy)
	h.busy[n] = depth
	outer := h.low
	h.low = math.MaxInt
	defer delete(h.busy, n)
	sub := h.writer()
	defer h.release(sub)
	var err error
	switch {
	case v.Kind() == reflect.Map:
		err = h.mapValue(sub, v)
	case v.Kind() == reflect.Slice:
		err = h.elements(sub, v)
	case isMessage(v.Type().Elem()):
		err = protoValue(sub, exported(v))
	default:
		err = h.value(sub, v.Elem())
	}
	if err != nil {
		return err
	}
	s := sub.sum()
	if h.low >= depth {
		h.memo[n] = s
		h.low = outer
	} else {
		h.low = min(outer, h.low)
	}
	w.byte(1)
	w.bytes(s[:])
	return nil
}

// exported is a pointer reached through unexported fields made usable as
// an interface: reading a protocol buffer's content takes its methods.
func exported(v reflect.Value) reflect.Value {
	if v.CanInterface() {
		return v
	}
	return reflect.NewAt(v.Type().Elem(), unsafe.Pointer(v.Pointer()))
}

// protoValue writes a message's type and deterministic wire form.
func protoValue(w *writer, v reflect.Value) error {
	m := v.Interface().(proto.Message)
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("deephash: %s: %w", v.Type(), err)
	}
	w.string(string(m.ProtoReflect().Descriptor().FullName()))
	w.uint(uint64(len(raw)))
	w.bytes(raw)
	return nil
}

// sharedSliceLen is the length from which a slice is digested once per
// Hasher, as a pointer is: resolved scopes hold slices of thousands of
// elements, some met again (digesting the generated 100-namespace mesh's
// views took 0.21 s of CPU instead of 0.30 s).
const sharedSliceLen = 64

// elements writes a slice's length and elements.
func (h *Hasher) elements(w *writer, v reflect.Value) error {
	w.uint(uint64(v.Len()))
	for i := range v.Len() {
		if err := h.value(w, v.Index(i)); err != nil {
			return err
		}
	}
	return nil
}

// mapValue writes a map's entries in the order of their digests.
func (h *Hasher) mapValue(w *writer, v reflect.Value) error {
	entries := make([][]byte, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		e := h.writer()
		err := h.value(e, it.Key())
		if err == nil {
			err = h.value(e, it.Value())
		}
		if err != nil {
			h.release(e)
			return err
		}
		s := e.sum()
		h.release(e)
		entries = append(entries, s[:])
	}
	slices.SortFunc(entries, bytes.Compare)
	w.uint(uint64(len(entries)))
	for _, e := range entries {
		w.bytes(e)
	}
	return nil
}

func (h *Hasher) structValue(w *writer, v reflect.Value) error {
	t := v.Type()
	if isMessage(t) {
		// A message held by value: only its address gives its methods.
		if !v.CanAddr() {
			return fmt.Errorf("deephash: %s held by value", t)
		}
		return protoValue(w, reflect.NewAt(t, unsafe.Pointer(v.UnsafeAddr())))
	}
	fields, ok := h.fields[t]
	if !ok {
		cut := h.cuts[t]
		for i := range t.NumField() {
			if !cut[t.Field(i).Name] {
				fields = append(fields, i)
			}
		}
		h.fields[t] = fields
	}
	for _, i := range fields {
		if err := h.value(w, v.Field(i)); err != nil {
			return fmt.Errorf("%s.%s: %w", t, t.Field(i).Name, err)
		}
	}
	return nil
}

// typeName names a dynamic type, so equal bits of two types differ.
func typeName(t reflect.Type) string {
	return t.PkgPath() + "." + t.String()
}
