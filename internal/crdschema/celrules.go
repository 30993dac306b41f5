package crdschema

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

// celRules is one schema node's own CEL rules. The library's validator
// (cel.Validator) judges a value by evaluating the rules' programs with
// the value adapted to its schema through model.Structural, which
// rebuilds a node's property map, a copy of every property's schema, on
// each field a rule reads: most of the time a rule takes. So a value is
// first run through the same programs with the schema adapted once
// (adapted); when every rule holds, the library would report nothing
// and spend the cost they took. Anything else (a rule false, an error,
// the budget short) is judged by the library's validator, which is
// deterministic and finds the same.
type celRules struct {
	// programs are the rules' programs as the library compiles them (nil
	// for an empty rule, which the library skips); nil when the node has
	// a rule the fast path leaves to the library: one it compiles with
	// an error, or one that reads oldSelf, which a create has not got,
	// or may (optionalOldSelf).
	programs []celgo.Program
	// reads is what each rule reads of self, nil for a rule the memo
	// does not follow.
	reads  []*reads
	schema common.Schema
	// library is the library's validator of the node, built on first
	// need.
	library func() *cel.Validator
}

// newCELRules compiles the rules of s, the node alone (its children's
// rules cleared), which the library reaches as a resource root or not;
// declType is the node's CEL type as its tree derives it, nil to derive
// it from s.
func newCELRules(s *schema.Structural, root bool, declType *apiservercel.DeclType) *celRules {
	r := &celRules{
		schema:  adapt(s),
		library: sync.OnceValue(func() *cel.Validator { return cel.NewValidator(s, root, celconfig.PerCallLimit) }),
	}
	if root {
		// A root's value also gets the type and object meta (the
		// library's WithTypeAndObjectMeta): its rules go to the
		// library.
		return r
	}
	r.programs, r.reads = compileRules(s, declType)
	return r
}

// compileRules compiles the rules of s, a node that is not a resource
// root, to the programs cel.Compile makes of them for cel.NewValidator:
// in the same environment (the stored expressions' base with self and
// oldSelf of the node's type), each rule parsed, checked to a bool and
// planned with the same cost limit, cost tracking and interrupt
// frequency. Each rule is parsed and checked once, for its program and
// its reads, or taken so from the embedded CRDs' stored rules
// (parseAndCheck). Self's type is named selfTypeName, not the library's
// random name, for the stored rules' sake.
// Left out is what no validation of an object uses: the estimated cost
// (the API server weighs it when a CRD is written), the message
// expressions (read only when a rule breaks, by the library), the new
// expressions' environment and that of optionalOldSelf. programs is nil
// when the node goes to the library: a rule that does not compile, or
// one that reads oldSelf or may.
func compileRules(s *schema.Structural, declType *apiservercel.DeclType) ([]celgo.Program, []*reads) {
	return compileRulesFrom(s, declType, storedRules())
}

// compileRulesFrom is compileRules with the rules stored in stored.
func compileRulesFrom(s *schema.Structural, declType *apiservercel.DeclType, stored *storedSet) ([]celgo.Program, []*reads) {
	self, err := selfType(s, declType)
	if err != nil {
		return nil, nil
	}
	// The node's environment is built only for a rule that is not
	// stored. A stored rule is checked already, and its program is
	// planned in the base environment, which binds its functions once
	// where each node's environment would bind them again: planning a
	// checked rule reads no declaration of self (its fields are
	// selected from the value; the type provider's fields do not tell
	// the planner how to read them), so the programs are those of the
	// node's environment (TestStoredRulesAsCompiled runs both on every
	// node).
	env := sync.OnceValues(func() (*celgo.Env, error) { return rulesEnv(self) })
	base := baseEnv()
	programs := make([]celgo.Program, len(s.XValidations))
	reads := make([]*reads, len(s.XValidations))
	keyPrefix := storedKeyPrefix(self)
	for i, rule := range s.XValidations {
		if strings.TrimSpace(rule.Rule) == "" {
			continue // the library skips it
		}
		if rule.OptionalOldSelf != nil && *rule.OptionalOldSelf {
			return nil, nil
		}
		read := func(e ast.Expr) {
			// A message expression reads what it reads: no memo
			// follows it.
			if rule.MessageExpression == "" {
				reads[i] = newReads(e, s)
			}
		}
		var checked *celgo.Ast
		planner, ok := base, false
		if rec, found := stored.rule(keyPrefix + rule.Rule); found {
			if checked, err = stored.decode(rec); err == nil {
				read(checked.NativeRep().Expr())
				ok = true
			}
		}
		if !ok {
			if planner, err = env(); err != nil {
				return nil, nil
			}
			if checked, ok = parseAndCheck(planner, rule.Rule, read); !ok {
				return nil, nil
			}
		}
		if checked.OutputType() != celgo.BoolType || usesOldSelf(checked) {
			return nil, nil
		}
		programs[i], err = planner.Program(checked,
			celgo.CostLimit(celconfig.PerCallLimit),
			// The library's estimator: its size estimates only serve
			// the estimated cost, which the fast path leaves out.
			celgo.CostTracking(&library.CostEstimator{}),
			celgo.InterruptCheckFrequency(celconfig.CheckFrequency))
		if err != nil {
			return nil, nil
		}
	}
	return programs, reads
}

// baseEnv is the stored expressions' environment of the library's base
// environment set, which compileRules' environments extend.
func baseEnv() *celgo.Env {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv()
}

// selfType is the CEL type of self in compileRules' environment of s,
// from declType, s's CEL type, when it is known: deriving it again
// walks s's whole subtree (a node's type as its tree derives it is the
// type of its schema alone, TestTreeTypesAsDerived).
func selfType(s *schema.Structural, declType *apiservercel.DeclType) (*apiservercel.DeclType, error) {
	if declType == nil {
		declType = model.SchemaDeclType(s, false)
	}
	if declType == nil {
		return nil, fmt.Errorf("no CEL type")
	}
	return declType.MaybeAssignTypeName(selfTypeName), nil
}

// rulesEnv is the environment compileRules compiles rules in, for a node
// whose self has CEL type self.
func rulesEnv(self *apiservercel.DeclType) (*celgo.Env, error) {
	// The stored expressions' environment alone, as the library's
	// environment set extends it: the variables, then the type of self
	// in a provider that takes CEL keywords as field names (as from
	// Kubernetes 1.31, which stored expressions are compatible with).
	base := baseEnv()
	provider := apiservercel.NewDeclTypeProvider(self)
	provider.SetRecognizeKeywordAsFieldName(true)
	typeOpts, err := provider.EnvOptions(base.CELTypeProvider())
	if err != nil {
		return nil, err
	}
	return base.Extend(append([]celgo.EnvOption{
		celgo.Variable(cel.ScopedVarName, self.CelType()),
		celgo.Variable(cel.OldScopedVarName, self.CelType()),
	}, typeOpts...)...)
}

// usesOldSelf reports whether a checked rule refers to oldSelf.
func usesOldSelf(checked *celgo.Ast) bool {
	for _, ref := range checked.NativeRep().ReferenceMap() {
		if ref.Name == cel.OldScopedVarName {
			return true
		}
	}
	return false
}

// validate is the library's validator of the node on obj (not nil) at
// path, with budget.
func (r *celRules) validate(ctx context.Context, m *Memo, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if left, ok := r.hold(ctx, m, obj, budget); ok {
		return nil, left
	}
	return r.library().Validate(ctx, path, nil, obj, nil, budget)
}

// hold evaluates the rules on obj as the library does; ok reports that
// every rule held within the budget, and left is then what the library
// would leave of it. With m, a rule that held on a value that agrees
// with obj on what the rule reads holds again at the same cost, and is
// not evaluated.
func (r *celRules) hold(ctx context.Context, m *Memo, obj any, budget int64) (left int64, ok bool) {
	if r.programs == nil || budget <= 0 {
		return 0, false
	}
	var self *selfActivation
	for i, p := range r.programs {
		if p == nil {
			continue
		}
		var key []byte
		if m != nil && r.reads[i] != nil {
			var known bool
			key, known = appendReads(m.buf[:0], obj, r.reads[i])
			m.buf = key
			if !known {
				key = nil
			} else if cost, seen := m.held[r.reads[i]][string(key)]; seen && cost <= budget {
				budget -= cost
				continue
			}
		}
		if self == nil {
			self = &selfActivation{common.UnstructuredToVal(obj, r.schema)}
		}
		v, details, err := p.ContextEval(ctx, self)
		if err != nil || details == nil || v != types.True {
			return 0, false
		}
		actual := details.ActualCost()
		if actual == nil || *actual > math.MaxInt64 || int64(*actual) > budget {
			return 0, false
		}
		cost := int64(*actual)
		budget -= cost
		if key != nil {
			m.remember(r.reads[i], key, cost)
		}
	}
	return budget, true
}

// selfActivation binds self, as the library's activation for a rule
// without oldSelf does.
type selfActivation struct{ self any }

func (a selfActivation) ResolveName(name string) (any, bool) {
	if name == cel.ScopedVarName {
		return a.self, true
	}
	return nil, false
}

func (selfActivation) Parent() interpreter.Activation { return nil }

// adapted is model.Structural, the library's adapter of a structural
// schema to CEL, with the schemas under it adapted once, on first use:
// what they are is the library's answer.
type adapted struct {
	*model.Structural
	props      func() map[string]common.Schema
	items      func() common.Schema
	additional func() common.SchemaOrBool
}

func adapt(s *schema.Structural) *adapted {
	a := &adapted{Structural: &model.Structural{Structural: s}}
	a.props = sync.OnceValue(func() map[string]common.Schema {
		if s.Properties == nil {
			return nil
		}
		out := make(map[string]common.Schema, len(s.Properties))
		for k := range s.Properties {
			p := s.Properties[k]
			out[k] = adapt(&p)
		}
		return out
	})
	a.items = sync.OnceValue(func() common.Schema {
		if s.Items == nil {
			return nil
		}
		return adapt(s.Items)
	})
	a.additional = sync.OnceValue(func() common.SchemaOrBool {
		if s.AdditionalProperties == nil {
			return nil
		}
		return adaptedOrBool{StructuralOrBool: &model.StructuralOrBool{StructuralOrBool: s.AdditionalProperties}, schema: adaptOrNil(s.AdditionalProperties.Structural)}
	})
	return a
}

// adaptOrNil is adapt, with a nil interface for no schema.
func adaptOrNil(s *schema.Structural) common.Schema {
	if s == nil {
		return nil
	}
	return adapt(s)
}

func (a *adapted) Properties() map[string]common.Schema      { return a.props() }
func (a *adapted) Items() common.Schema                      { return a.items() }
func (a *adapted) AdditionalProperties() common.SchemaOrBool { return a.additional() }

// adaptedOrBool is model.StructuralOrBool with its schema adapted.
type adaptedOrBool struct {
	*model.StructuralOrBool
	schema common.Schema
}

func (a adaptedOrBool) Schema() common.Schema { return a.schema }
