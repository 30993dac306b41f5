package emit

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Store holds resources by content, so that equal resources built apart
// are one value: the virtual hosts scopes build for the same services,
// and with a Store shared by Emitters, what the two sides of a diff or a
// server's successive compiles build alike. Comparing two configurations
// (envdiff) or hashing them (serve) then skips a shared resource by its
// pointer. A resource's content is its type and deterministic protobuf
// form, so an interned resource equals the one it stands for; resources
// never change once built, so sharing them is safe.
type Store struct {
	entries sync.Map // storeKey → *storeEntry
	// gen counts Sweeps; an entry records the last one it was used in.
	gen atomic.Uint64
}

type storeKey struct {
	sum [sha256.Size]byte
	typ protoreflect.FullName
}

type storeEntry struct {
	m    proto.Message
	used atomic.Uint64
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{} }

// intern returns the resource of s equal to m, adding m when there is
// none; without a Store, m.
func intern[M proto.Message](s *Store, m M) M {
	if s == nil {
		return m
	}
	bin, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return m
	}
	k := storeKey{sha256.Sum256(bin), m.ProtoReflect().Descriptor().FullName()}
	v, ok := s.entries.Load(k)
	if !ok {
		v, _ = s.entries.LoadOrStore(k, &storeEntry{m: m})
	}
	e := v.(*storeEntry)
	e.used.Store(s.gen.Load())
	return e.m.(M)
}

// Sweep drops the resources no build asked for since the last Sweep, so
// that a server's Store holds what its latest compile built. It must not
// run while a build uses s.
func (s *Store) Sweep() {
	gen := s.gen.Load()
	s.entries.Range(func(k, v any) bool {
		if v.(*storeEntry).used.Load() < gen {
			s.entries.Delete(k)
		}
		return true
	})
	s.gen.Store(gen + 1)
}

// Len is how many resources s holds.
func (s *Store) Len() int {
	n := 0
	s.entries.Range(func(any, any) bool { n++; return true })
	return n
}
