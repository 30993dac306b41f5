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

// Hasher digests values, remembering the digest of every pointer and map
// it met, so values sharing structure are digested once. Values must not
// change while a Hasher is in use. It is not safe for concurrent use.
type Hasher struct {
	cuts map[reflect.Type]map[string]bool
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
}

// New returns a Hasher leaving out cuts.
func New(cuts Cuts) *Hasher {
	h := &Hasher{cuts: map[reflect.Type]map[string]bool{}, memo: map[node]Sum{}, busy: map[node]int{}, low: math.MaxInt}
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
	w := sha256.New()
	if err := h.value(w, reflect.ValueOf(v)); err != nil {
		return Sum{}, err
	}
	return Sum(w.Sum(nil)), nil
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
func (h *Hasher) value(w hash.Hash, v reflect.Value) error {
	if !v.IsValid() {
		w.Write([]byte{0})
		return nil
	}
	w.Write([]byte{byte(v.Kind())})
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			w.Write([]byte{1})
		} else {
			w.Write([]byte{0})
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		writeUint(w, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		writeUint(w, v.Uint())
	case reflect.Float32, reflect.Float64:
		writeUint(w, math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		writeUint(w, math.Float64bits(real(v.Complex())))
		writeUint(w, math.Float64bits(imag(v.Complex())))
	case reflect.String:
		writeString(w, v.String())
	case reflect.Array:
		for i := range v.Len() {
			if err := h.value(w, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			w.Write([]byte{0})
			return nil
		}
		w.Write([]byte{1})
		if v.Type().Elem().Kind() == reflect.Uint8 {
			writeString(w, string(v.Bytes()))
			return nil
		}
		writeUint(w, uint64(v.Len()))
		for i := range v.Len() {
			if err := h.value(w, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if v.IsNil() {
			w.Write([]byte{0})
			return nil
		}
		w.Write([]byte{1})
		writeType(w, v.Elem().Type())
		return h.value(w, v.Elem())
	case reflect.Pointer, reflect.Map:
		if v.IsNil() {
			w.Write([]byte{0})
			return nil
		}
		return h.shared(w, v)
	case reflect.Struct:
		return h.structValue(w, v)
	default:
		if v.IsNil() {
			w.Write([]byte{0})
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
func (h *Hasher) shared(w hash.Hash, v reflect.Value) error {
	n := node{v.Pointer(), v.Type()}
	if s, ok := h.memo[n]; ok {
		w.Write([]byte{1})
		w.Write(s[:])
		return nil
	}
	if d, ok := h.busy[n]; ok {
		w.Write([]byte{2})
		writeUint(w, uint64(len(h.busy)-d))
		h.low = min(h.low, d)
		return nil
	}
	depth := len(h.busy)
	h.busy[n] = depth
	outer := h.low
	h.low = math.MaxInt
	defer delete(h.busy, n)
	sub := sha256.New()
	var err error
	switch {
	case v.Kind() == reflect.Map:
		err = h.mapValue(sub, v)
	case isMessage(v.Type().Elem()):
		err = protoValue(sub, exported(v))
	default:
		err = h.value(sub, v.Elem())
	}
	if err != nil {
		return err
	}
	s := Sum(sub.Sum(nil))
	if h.low >= depth {
		h.memo[n] = s
		h.low = outer
	} else {
		h.low = min(outer, h.low)
	}
	w.Write([]byte{1})
	w.Write(s[:])
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
func protoValue(w hash.Hash, v reflect.Value) error {
	m := v.Interface().(proto.Message)
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("deephash: %s: %w", v.Type(), err)
	}
	writeString(w, string(m.ProtoReflect().Descriptor().FullName()))
	writeString(w, string(raw))
	return nil
}

// mapValue writes a map's entries in the order of their digests.
func (h *Hasher) mapValue(w hash.Hash, v reflect.Value) error {
	entries := make([][]byte, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		e := sha256.New()
		if err := h.value(e, it.Key()); err != nil {
			return err
		}
		if err := h.value(e, it.Value()); err != nil {
			return err
		}
		entries = append(entries, e.Sum(nil))
	}
	slices.SortFunc(entries, bytes.Compare)
	writeUint(w, uint64(len(entries)))
	for _, e := range entries {
		w.Write(e)
	}
	return nil
}

func (h *Hasher) structValue(w hash.Hash, v reflect.Value) error {
	t := v.Type()
	if isMessage(t) {
		// A message held by value: only its address gives its methods.
		if !v.CanAddr() {
			return fmt.Errorf("deephash: %s held by value", t)
		}
		return protoValue(w, reflect.NewAt(t, unsafe.Pointer(v.UnsafeAddr())))
	}
	cut := h.cuts[t]
	for i := range t.NumField() {
		if cut[t.Field(i).Name] {
			continue
		}
		if err := h.value(w, v.Field(i)); err != nil {
			return fmt.Errorf("%s.%s: %w", t, t.Field(i).Name, err)
		}
	}
	return nil
}

func writeUint(w hash.Hash, n uint64) {
	w.Write(binary.LittleEndian.AppendUint64(nil, n))
}

func writeString(w hash.Hash, s string) {
	writeUint(w, uint64(len(s)))
	w.Write([]byte(s))
}

// writeType names a dynamic type, so equal bits of two types differ.
func writeType(w hash.Hash, t reflect.Type) {
	writeString(w, t.PkgPath()+"."+t.String())
}
