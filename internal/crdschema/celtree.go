package crdschema

import (
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// celNode is one node of the validator the CEL library builds for a
// schema (cel.NewValidator), with the node's own rules apart from its
// children's and compiled on first use: compiling HTTPRoute's rules takes
// a tenth of a second, most of it for fields few inputs have (its
// filters), and a walk node by node can stop at a subtree it has judged
// before (Memo).
type celNode struct {
	// own is the node's rules, nil when it has none.
	own func() *celRules
	// declType is the node's CEL type, derived from its parent's.
	declType   *apiservercel.DeclType
	items      *celNode
	props      map[string]*celNode
	additional *celNode
}

// newCELTree is the tree of the validator cel.NewValidator(s, true, ...)
// would build, nil when s has no rules: the same nodes, each compiled
// against its own schema, the CEL type of which is the one the library
// derives from its parent's. Rules under allOf, which the library compiles
// against the node beside them, are refused.
func newCELTree(s *schema.Structural) (*celNode, error) {
	if allOfRules(s) {
		return nil, fmt.Errorf("CEL rules under allOf are not supported")
	}
	return newCELNode(s, true, model.SchemaDeclType(s, true)), nil
}

// newCELNode is the node of s, which the library reaches as a resource
// root or not, with CEL type declType; nil when nothing under it has
// rules. It follows the library's validator(): a property whose name has
// no CEL spelling takes its own type, one whose type CEL cannot show is
// left out, and items and additional properties take the element type.
func newCELNode(s *schema.Structural, root bool, declType *apiservercel.DeclType) *celNode {
	if !hasRules(s) {
		return nil
	}
	n := &celNode{declType: declType}
	if len(s.XValidations) > 0 {
		n.own = sync.OnceValue(func() *celRules { return newCELRules(withoutChildRules(s), root, n.declType) })
	}
	var elem *apiservercel.DeclType
	if declType != nil {
		elem = declType.ElemType
	}
	if s.Items != nil {
		n.items = newCELNode(s.Items, s.Items.XEmbeddedResource, elem)
	}
	for k, p := range s.Properties {
		var t *apiservercel.DeclType
		if name, ok := apiservercel.Escape(k); ok {
			if declType == nil || declType.Fields[name] == nil {
				continue
			}
			t = declType.Fields[name].Type
		} else if t = model.SchemaDeclType(&p, p.XEmbeddedResource); t == nil {
			continue
		}
		if c := newCELNode(&p, p.XEmbeddedResource, t); c != nil {
			if n.props == nil {
				n.props = map[string]*celNode{}
			}
			n.props[k] = c
		}
	}
	if a := s.AdditionalProperties; a != nil && a.Structural != nil {
		n.additional = newCELNode(a.Structural, a.Structural.XEmbeddedResource, elem)
	}
	return n
}

// hasRules reports whether s or a schema under it has CEL rules.
func hasRules(s *schema.Structural) bool {
	return s != nil && (len(s.XValidations) > 0 || hasChildRules(s))
}

// hasChildRules reports whether a schema under s has CEL rules.
func hasChildRules(s *schema.Structural) bool {
	if hasRules(s.Items) || s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	return false
}

// withoutChildRules is s without the rules under it, which their own
// nodes run. It shares with s the schemas under it that hold no rule and
// copies the others, so that s stays as it is.
func withoutChildRules(s *schema.Structural) *schema.Structural {
	if !hasChildRules(s) {
		return s
	}
	own := *s
	own.Items = withoutRules(s.Items)
	if a := s.AdditionalProperties; a != nil && a.Structural != nil {
		own.AdditionalProperties = &schema.StructuralOrBool{Structural: withoutRules(a.Structural), Bool: a.Bool}
	}
	if s.Properties != nil {
		own.Properties = make(map[string]schema.Structural, len(s.Properties))
		for k, p := range s.Properties {
			own.Properties[k] = *withoutRules(&p)
		}
	}
	return &own
}

// withoutRules is s without its rules and those under it: s itself
// when it holds none.
func withoutRules(s *schema.Structural) *schema.Structural {
	if !hasRules(s) {
		return s
	}
	c := *withoutChildRules(s)
	c.XValidations = nil
	return &c
}

// allOfRules reports whether some allOf in s holds CEL rules.
func allOfRules(s *schema.Structural) bool {
	if s == nil {
		return false
	}
	if s.ValueValidation != nil {
		for i := range s.ValueValidation.AllOf {
			if nestedRules(&s.ValueValidation.AllOf[i]) {
				return true
			}
		}
	}
	if allOfRules(s.Items) || s.AdditionalProperties != nil && allOfRules(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if allOfRules(&p) {
			return true
		}
	}
	return false
}

func nestedRules(v *schema.NestedValueValidation) bool {
	if v == nil {
		return false
	}
	if len(v.XValidations) > 0 || nestedRules(v.Items) || nestedRules(v.AdditionalProperties) {
		return true
	}
	for _, p := range v.Properties {
		if nestedRules(&p) {
			return true
		}
	}
	return false
}
