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

// storeRules is the stored rules file of the embedded CRDs: the table of
// their types, in the order of their encodings, then a record for every
// rule that compiles, in the order of the keys.
func storeRules(t *testing.T) []byte {
	t.Helper()
	type record struct {
		checked []byte
		types   map[int64]string // node id: its type's encoding
	}
	records := map[string]record{}
	opts := proto.MarshalOptions{Deterministic: true}
	forEachSchema(t, func(plural, version string, s *Schema) {
		forEachOwnRules(s, nil, func(at string, own *schema.Structural, _ any) {
			self, err := selfType(own, nil)
			if err != nil {
				t.Fatalf("%s %s %s: %v", plural, version, at, err)
			}
			env, err := rulesEnv(self)
			if err != nil {
				t.Fatalf("%s %s %s: %v", plural, version, at, err)
			}
			for _, rule := range own.XValidations {
				checked, issues := env.Compile(rule.Rule)
				if issues.Err() != nil {
					continue
				}
				c, err := celgo.AstToCheckedExpr(checked)
				if err != nil {
					t.Fatal(err)
				}
				rec := record{types: map[int64]string{}}
				for id, typ := range c.TypeMap {
					b, err := opts.Marshal(typ)
					if err != nil {
						t.Fatal(err)
					}
					rec.types[id] = string(b)
				}
				c.TypeMap = nil
				if rec.checked, err = opts.Marshal(c); err != nil {
					t.Fatal(err)
				}
				records[storedKeyPrefix(self)+rule.Rule] = rec
			}
		})
	})
	index := map[string]int{}
	for _, rec := range records {
		for _, typ := range rec.types {
			index[typ] = 0
		}
	}
	table := slices.Sorted(maps.Keys(index))
	out := binary.AppendUvarint(nil, uint64(len(table)))
	for i, typ := range table {
		index[typ] = i
		out = binary.AppendUvarint(out, uint64(len(typ)))
		out = append(out, typ...)
	}
	for _, key := range slices.Sorted(maps.Keys(records)) {
		rec := records[key]
		var types []byte
		for _, id := range slices.Sorted(maps.Keys(rec.types)) {
			types = binary.AppendUvarint(types, uint64(id))
			types = binary.AppendUvarint(types, uint64(index[rec.types[id]]))
		}
		for _, f := range [][]byte{[]byte(key), rec.checked, types} {
			out = binary.AppendUvarint(out, uint64(len(f)))
			out = append(out, f...)
		}
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
		self, err := selfType(own, nil)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		for _, rule := range own.XValidations {
			if _, ok := storedRules().rule(storedKeyPrefix(self) + rule.Rule); !ok {
				t.Errorf("%s: rule %q is not stored", at, rule.Rule)
			}
		}
		stored, storedReads := compileRulesFrom(own, nil, storedRules())
		fresh, freshReads := compileRulesFrom(own, nil, nil)
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
	if _, ok := newCELRules(node, false, nil).hold(context.Background(), nil, v, 1<<40); ok {
		t.Fatal("a redirect beside backends holds")
	}

	// The rules negated: the stored ones would break, the texts hold.
	negated := node.DeepCopy()
	for i := range negated.XValidations {
		negated.XValidations[i].Rule = "!(" + negated.XValidations[i].Rule + ")"
	}
	self, err := selfType(negated, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range negated.XValidations {
		if _, ok := storedRules().rule(storedKeyPrefix(self) + rule.Rule); ok {
			t.Fatalf("%s is stored", rule.Rule)
		}
	}
	r := newCELRules(negated, false, nil)
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
	if self, err = selfType(narrowed, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedRules().rule(storedKeyPrefix(self) + narrowed.XValidations[0].Rule); ok {
		t.Error("a rule is stored for another type of self")
	}
	if r := newCELRules(narrowed, false, nil); r.programs != nil {
		t.Error("rules naming no field of self compile")
	}
}
