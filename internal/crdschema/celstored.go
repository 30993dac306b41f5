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
// the root, parsed and checked in compileRules' environment (`go test
// -update` in this package writes it): parsing is most of the time a
// process spends on the rules, the parser's first use above all. It is
// a list of records, each three length-prefixed byte strings: the key
// (storedKeyPrefix and the rule's text), the parsed rule and the
// checked rule (protocol buffers exprpb.ParsedExpr and
// exprpb.CheckedExpr).
//
//go:embed celrules.bin
var storedRulesFile []byte

// storedRules indexes storedRulesFile by key, decoded on first use.
var storedRules = sync.OnceValue(func() map[string][2][]byte {
	out := map[string][2][]byte{}
	for b := storedRulesFile; len(b) > 0; {
		var rec [3][]byte
		for i := range rec {
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				return nil // a broken file: every rule is compiled
			}
			rec[i], b = b[k:k+int(n)], b[k+int(n):]
		}
		out[string(rec[0])] = [2][]byte{rec[1], rec[2]}
	}
	return out
})

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

// parseAndCheck is rule checked in env, from stored (storedRules) when
// it holds the rule under key, by env otherwise; read is called with the
// rule as parsed (before the check, which rewrites it). ok is false when
// the rule does not compile.
func parseAndCheck(env *celgo.Env, stored map[string][2][]byte, key, rule string, read func(parsed ast.Expr)) (checked *celgo.Ast, ok bool) {
	if rec, found := stored[key]; found {
		if parsed, checked, err := decodeStored(rec); err == nil {
			read(parsed.NativeRep().Expr())
			return checked, true
		}
	}
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

func decodeStored(rec [2][]byte) (parsed, checked *celgo.Ast, err error) {
	p, c := new(exprpb.ParsedExpr), new(exprpb.CheckedExpr)
	if err := proto.Unmarshal(rec[0], p); err != nil {
		return nil, nil, err
	}
	if err := proto.Unmarshal(rec[1], c); err != nil {
		return nil, nil, err
	}
	checked, err = celgo.CheckedExprToAstWithSource(c, nil)
	if err != nil {
		return nil, nil, err
	}
	return celgo.ParsedExprToAst(p), checked, nil
}
