package crdschema

import (
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	celtypes "github.com/google/cel-go/common/types"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// selfTypeName names the CEL type of self in every environment
// compileRules builds. The library names it selfType<random> so that no
// rule can name it; a stored checked rule carries the name in its types,
// so the name is fixed, and a program built from a stored rule finds the
// fields of self in the environment of the run. No rule text reaches it
// either: a name a rule spells (an identifier, a qualified name, a
// message to build) begins with an identifier, and '#' begins none.
const selfTypeName = "#selfType"

// storedRulesFile holds the CEL rules of the embedded CRDs' nodes below
// the root, checked in compileRules' environment (`go test -update` in
// this package writes it): parsing and checking are most of the time a
// process spends on the rules, the parser's first use above all. It is a
// table of types, then a list of records, all numbers uvarints:
//
//   - the table: the number of types, then each a length-prefixed
//     protocol buffer exprpb.Type. The rules' nodes have few types among
//     them (31 in 2,500 nodes), which are decoded once;
//   - a record: the key (storedKeyPrefix and the rule's text) and the
//     checked rule without its type map (an exprpb.CheckedExpr), each
//     length-prefixed, then the length of the type map's encoding and
//     for each node its id and the index of its type in the table.
//
// A rule's reads are found from its checked form, which reads what the
// parsed form does (TestStoredRulesAsCompiled compares them).
//
//go:embed celrules.bin
var storedRulesFile []byte

// storedSet is storedRulesFile decoded.
type storedSet struct {
	types []*celtypes.Type
	rules map[string]storedRule
}

// storedRule is a record's checked rule and type map, encoded.
type storedRule struct {
	checked, types []byte
}

// storedRules is storedRulesFile decoded on first use, nil when it is
// broken (every rule is then compiled).
var storedRules = sync.OnceValue(func() *storedSet { return decodeStoredSet(storedRulesFile) })

func decodeStoredSet(b []byte) *storedSet {
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, false
		}
		f := b[k : k+int(n)]
		b = b[k+int(n):]
		return f, true
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil
	}
	b = b[k:]
	out := &storedSet{types: make([]*celtypes.Type, n), rules: map[string]storedRule{}}
	for i := range out.types {
		f, ok := field()
		if !ok {
			return nil
		}
		pb := new(exprpb.Type)
		if err := proto.Unmarshal(f, pb); err != nil {
			return nil
		}
		t, err := celtypes.ExprTypeToType(pb)
		if err != nil {
			return nil
		}
		out.types[i] = t
	}
	for len(b) > 0 {
		var rec [3][]byte
		for i := range rec {
			f, ok := field()
			if !ok {
				return nil
			}
			rec[i] = f
		}
		out.rules[string(rec[0])] = storedRule{checked: rec[1], types: rec[2]}
	}
	return out
}

// storedKeyPrefix is the start of the keys of the stored rules of a
// node whose self has CEL type self: a digest of the type, which with
// the environment's base (the library's, regenerated with it) and the
// rule's text, the key's rest, is all that parsing and checking a rule
// depends on.
func storedKeyPrefix(self *apiservercel.DeclType) string {
	return fmt.Sprintf("%x ", sha256.Sum256(appendTypeShape(nil, self)))
}

// appendTypeShape appends to b what a checker can see of t: its name,
// its fields', elements' and keys' types.
func appendTypeShape(b []byte, t *apiservercel.DeclType) []byte {
	if t == nil {
		return append(b, '-')
	}
	b = append(b, t.CelType().String()...)
	switch {
	case t.IsObject():
		b = append(b, '{')
		for _, name := range slices.Sorted(maps.Keys(t.Fields)) {
			b = append(b, name...)
			b = append(b, ':')
			b = appendTypeShape(b, t.Fields[name].Type)
			b = append(b, ',')
		}
		b = append(b, '}')
	case t.IsList():
		b = appendTypeShape(append(b, '['), t.ElemType)
		b = append(b, ']')
	case t.IsMap():
		b = appendTypeShape(append(b, '<'), t.KeyType)
		b = appendTypeShape(append(b, ','), t.ElemType)
		b = append(b, '>')
	}
	return b
}

// parseAndCheck is rule parsed and checked in env; read is called with
// the rule as parsed (before the check, which rewrites it). ok is false
// when the rule does not compile.
func parseAndCheck(env *celgo.Env, rule string, read func(parsed ast.Expr)) (checked *celgo.Ast, ok bool) {
	parsed, issues := env.Parse(rule)
	if issues.Err() != nil {
		return nil, false
	}
	read(parsed.NativeRep().Expr())
	checked, issues = env.Check(parsed)
	if issues.Err() != nil {
		return nil, false
	}
	return checked, true
}

// rule is the record under key; found is false when there is none, or
// no set (s nil).
func (s *storedSet) rule(key string) (rec storedRule, found bool) {
	if s == nil {
		return rec, false
	}
	rec, found = s.rules[key]
	return rec, found
}

// decode is the checked rule of rec, its types from the table.
func (s *storedSet) decode(rec storedRule) (*celgo.Ast, error) {
	pb := new(exprpb.CheckedExpr)
	if err := proto.Unmarshal(rec.checked, pb); err != nil {
		return nil, err
	}
	checked, err := celgo.CheckedExprToAstWithSource(pb, nil)
	if err != nil {
		return nil, err
	}
	native := checked.NativeRep()
	for b := rec.types; len(b) > 0; {
		id, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("a broken type map")
		}
		i, j := binary.Uvarint(b[k:])
		if j <= 0 || i >= uint64(len(s.types)) {
			return nil, fmt.Errorf("a broken type map")
		}
		native.SetType(int64(id), s.types[i])
		b = b[k+j:]
	}
	return checked, nil
}
