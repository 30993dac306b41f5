package crdschema

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	celgo "github.com/google/cel-go/cel"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/meshc/meshc/internal/testfiles"
)

// TestStoredRulesFile compiles the rules of every node below the root of
// every served schema of the embedded CRDs and compares the records with
// celrules.bin, which go test -update rewrites: a stale file (new CRDs,
// a new CEL library) fails here.
func TestStoredRulesFile(t *testing.T) {
	testfiles.Golden(t, "celrules.bin", storeRules(t))
}

// storeRules is the stored rules file of the embedded CRDs: a record for
// every rule that compiles, in the order of the keys.
func storeRules(t *testing.T) []byte {
	t.Helper()
	records := map[string][]byte{}
	opts := proto.MarshalOptions{Deterministic: true}
	forEachSchema(t, func(plural, version string, s *Schema) {
		forEachOwnRules(s, nil, func(at string, own *schema.Structural, _ any) {
			env, self, err := rulesEnv(own)
			if err != nil {
				t.Fatalf("%s %s %s: %v", plural, version, at, err)
			}
			for _, rule := range own.XValidations {
				key := storedKeyPrefix(self) + rule.Rule
				parsed, issues := env.Parse(rule.Rule)
				if issues.Err() != nil {
					continue
				}
				// Marshalled before the check, which rewrites it.
				pb, err := opts.Marshal(&exprpb.ParsedExpr{Expr: parsed.Expr(), SourceInfo: parsed.SourceInfo()})
				if err != nil {
					t.Fatal(err)
				}
				checked, issues := env.Check(parsed)
				if issues.Err() != nil {
					continue
				}
				c, err := celgo.AstToCheckedExpr(checked)
				if err != nil {
					t.Fatal(err)
				}
				cb, err := opts.Marshal(c)
				if err != nil {
					t.Fatal(err)
				}
				var rec []byte
				for _, f := range [][]byte{[]byte(key), pb, cb} {
					rec = binary.AppendUvarint(rec, uint64(len(f)))
					rec = append(rec, f...)
				}
				records[key] = rec
			}
		})
	})
	var out []byte
	for _, k := range slices.Sorted(maps.Keys(records)) {
		out = append(out, records[k]...)
	}
	return out
}

// TestStoredRulesAsCompiled: for every node below the root of every
// served schema, every rule is found stored, and the programs built from
// the stored rules give the same value, error and cost as programs
// compiled from the rules' text, on no value and on the valid and broken
// specs; the reads are the same.
func TestStoredRulesAsCompiled(t *testing.T) {
	nodes := 0
	forEachServedOwnRules(t, func(at string, own *schema.Structural, v any) {
		_, self, err := rulesEnv(own)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		for _, rule := range own.XValidations {
			if _, ok := storedRules()[storedKeyPrefix(self)+rule.Rule]; !ok {
				t.Errorf("%s: rule %q is not stored", at, rule.Rule)
			}
		}
		stored, storedReads := compileRulesFrom(own, storedRules())
		fresh, freshReads := compileRulesFrom(own, nil)
		if (stored == nil) != (fresh == nil) || len(stored) != len(fresh) {
			t.Fatalf("%s: %d stored programs, %d compiled", at, len(stored), len(fresh))
		}
		if !reflect.DeepEqual(storedReads, freshReads) {
			t.Errorf("%s: stored rules read %v, compiled %v", at, storedReads, freshReads)
		}
		nodes++
		if v == nil {
			return
		}
		ctx := context.Background()
		activation := selfActivation{common.UnstructuredToVal(v, adapt(own))}
		for i := range fresh {
			if (stored[i] == nil) != (fresh[i] == nil) {
				t.Fatalf("%s rule %d: stored program %v, compiled %v", at, i, stored[i] != nil, fresh[i] != nil)
			}
			if fresh[i] == nil {
				continue
			}
			got, gotDetails, gotErr := stored[i].ContextEval(ctx, activation)
			want, wantDetails, wantErr := fresh[i].ContextEval(ctx, activation)
			if fmt.Sprint(got, gotErr) != fmt.Sprint(want, wantErr) || *gotDetails.ActualCost() != *wantDetails.ActualCost() {
				t.Errorf("%s rule %d on %v: %v %v cost %d, want %v %v cost %d", at, i, v, got, gotErr, *gotDetails.ActualCost(), want, wantErr, *wantDetails.ActualCost())
			}
		}
	})
	if nodes == 0 {
		t.Error("no node was compiled")
	}
}

// TestStoredRulesFallBack: a rule whose text or whose self's type is not
// the stored one's is compiled from its text.
func TestStoredRulesFallBack(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	var node *schema.Structural
	forEachOwnRules(s, nil, func(at string, own *schema.Structural, _ any) {
		if at == ".spec.rules[]" {
			node = own
		}
	})
	if node == nil {
		t.Fatal("spec.rules[] has no rules of its own")
	}
	// A redirect beside backends breaks a rule of spec.rules[].
	v := unstructured(decodeJSON(t, `{"backendRefs": [{"name": "web", "port": 80}], "filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https"}}]}`))
	defaulting.Default(v, node)
	if _, ok := newCELRules(node, false).hold(context.Background(), nil, v, 1<<40); ok {
		t.Fatal("a redirect beside backends holds")
	}

	// The rules negated: the stored ones would break, the texts hold.
	negated := node.DeepCopy()
	for i := range negated.XValidations {
		negated.XValidations[i].Rule = "!(" + negated.XValidations[i].Rule + ")"
	}
	_, self, err := rulesEnv(negated)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range negated.XValidations {
		if _, ok := storedRules()[storedKeyPrefix(self)+rule.Rule]; ok {
			t.Fatalf("%s is stored", rule.Rule)
		}
	}
	r := newCELRules(negated, false)
	if r.programs == nil {
		t.Fatal("negated rules go to the library")
	}
	ctx := context.Background()
	activation := selfActivation{common.UnstructuredToVal(v, adapt(negated))}
	broken := 0
	for i, p := range r.programs {
		got, _, err := p.ContextEval(ctx, activation)
		if err != nil {
			t.Fatalf("rule %d: %v", i, err)
		}
		if got.Value() == true {
			broken++
		}
	}
	if broken == 0 {
		t.Error("no negated rule holds where the rules break")
	}

	// The same texts, with self's filters gone from its type: the
	// stored rules name them, the texts do not compile.
	narrowed := node.DeepCopy()
	delete(narrowed.Properties, "filters")
	if _, self, err = rulesEnv(narrowed); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedRules()[storedKeyPrefix(self)+narrowed.XValidations[0].Rule]; ok {
		t.Error("a rule is stored for another type of self")
	}
	if r := newCELRules(narrowed, false); r.programs != nil {
		t.Error("rules naming no field of self compile")
	}
}
