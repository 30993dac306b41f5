package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// maxExpandedNodes bounds the values one document may expand to through
// aliases: a "billion laughs" document stops here instead of eating memory.
const maxExpandedNodes = 1 << 20

// lineError is a problem found while converting a parsed document, at a
// line relative to the document.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// toValue converts a parsed YAML document into the value kubectl would send
// to the API server: map[string]any, []any, string, bool, json.Number and
// nil. It follows kubectl's YAML reader (sigs.k8s.io/yaml, YAML 1.1 rules)
// where YAML 1.2 differs: unquoted yes/no/on/off/y/n are booleans. Duplicate
// keys are errors, since one value would be lost.
func toValue(n *yaml.Node) (any, error) {
	c := converter{budget: maxExpandedNodes}
	return c.value(n)
}

type converter struct {
	budget int
	// expanding holds the anchors being expanded, to stop an alias that
	// refers to a node containing it.
	expanding map[*yaml.Node]bool
	// check walks as toValue does without building the value, to find
	// the problem it would report; it stops with errExpand at an alias or
	// a merge key, whose values toValue must build. keys holds the keys of
	// the mappings being walked, to find a key set twice.
	check bool
	keys  []string
}

// errExpand stops a check at what only building the value resolves.
var errExpand = errors.New("aliases or merge keys")

// decodable returns the node of a parsed document that the decoders read
// in place of the value toValue would build, or toValue's error; nil for
// a document whose value is null. The node holds no alias or merge key,
// no key twice and no scalar toValue refuses. Most documents are such
// nodes already and are only checked; the rest are built and turned back
// into nodes, which then have no lines. keys is memory for the check to
// reuse.
func decodable(doc *yaml.Node, keys *[]string) (*yaml.Node, error) {
	c := converter{budget: maxExpandedNodes, check: true, keys: (*keys)[:0]}
	_, err := c.value(doc)
	*keys = c.keys
	if errors.Is(err, errExpand) {
		v, err := toValue(doc)
		if err != nil || v == nil {
			return nil, err
		}
		return fromValue(v), nil
	}
	if err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, err
	}
	return doc.Content[0], nil
}

func (c *converter) value(n *yaml.Node) (any, error) {
	if c.budget--; c.budget < 0 {
		return nil, &lineError{n.Line, "document contains excessive aliasing"}
	}
	switch n.Kind {
	case 0:
		return nil, nil // nothing parsed, e.g. only a byte-order mark
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		if c.check {
			return nil, errExpand
		}
		if n.Alias == nil {
			return nil, &lineError{n.Line, "unknown anchor"}
		}
		if c.expanding[n.Alias] {
			return nil, &lineError{n.Line, fmt.Sprintf("alias *%s refers to a value that contains it", n.Value)}
		}
		if c.expanding == nil {
			c.expanding = map[*yaml.Node]bool{}
		}
		c.expanding[n.Alias] = true
		v, err := c.value(n.Alias)
		delete(c.expanding, n.Alias)
		return v, err
	case yaml.SequenceNode:
		if c.check {
			for _, item := range n.Content {
				if _, err := c.value(item); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.value(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if c.check {
			return nil, c.checkMapping(n)
		}
		return c.mapping(n)
	case yaml.ScalarNode:
		if c.check {
			_, err := scalarJSON(n)
			return nil, err
		}
		return scalar(n)
	}
	return nil, &lineError{n.Line, "unsupported YAML node"}
}

func (c *converter) mapping(n *yaml.Node) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	// Merge keys (<<) fill in what the mapping does not set itself,
	// earlier merged mappings winning over later ones.
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && tagOf(k) == "!!merge" {
			merges = append(merges, v)
			continue
		}
		key, err := keyString(k)
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, &lineError{k.Line, fmt.Sprintf("key %q already set in this mapping", key)}
		}
		val, err := c.value(v)
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	for _, m := range merges {
		if err := c.merge(out, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkMapping is mapping for a check: the same problems in the same
// order, without the map.
func (c *converter) checkMapping(n *yaml.Node) error {
	base := len(c.keys)
	defer func() { c.keys = c.keys[:base] }()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && tagOf(k) == "!!merge" {
			return errExpand
		}
		key, err := keyString(k)
		if err != nil {
			return err
		}
		if slices.Contains(c.keys[base:], key) {
			return &lineError{k.Line, fmt.Sprintf("key %q already set in this mapping", key)}
		}
		c.keys = append(c.keys, key)
		if _, err := c.value(v); err != nil {
			return err
		}
	}
	return nil
}

func (c *converter) merge(out map[string]any, m *yaml.Node) error {
	for m.Kind == yaml.AliasNode && m.Alias != nil {
		m = m.Alias
	}
	var sources []*yaml.Node
	switch m.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{m}
	case yaml.SequenceNode:
		sources = m.Content
	default:
		return &lineError{m.Line, "a merge key (<<) needs a mapping or a list of mappings"}
	}
	for _, s := range sources {
		v, err := c.value(s)
		if err != nil {
			return err
		}
		sm, ok := v.(map[string]any)
		if !ok {
			return &lineError{s.Line, "a merge key (<<) needs a mapping or a list of mappings"}
		}
		for k, v := range sm {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	return nil
}

// tagOf is n.ShortTag() without its work where the tag is in short form
// already ("!!str", "!!int"), as both parsers leave nearly every node:
// ShortTag returns such a tag as it is. Loading asks for the tag of every
// scalar more than once.
func tagOf(n *yaml.Node) string {
	if strings.HasPrefix(n.Tag, "!!") {
		return n.Tag
	}
	return n.ShortTag()
}

// keyString renders a mapping key as JSON object keys must be: strings,
// with numbers and booleans written out as kubectl's converter does.
func keyString(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", &lineError{k.Line, "mapping keys must be scalars"}
	}
	if tagOf(k) == "!!str" && !isYAML11Bool(k) {
		return k.Value, nil // most keys: what scalar returns, without boxing it
	}
	v, err := scalar(k)
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		return x.String(), nil
	case string:
		return x, nil
	}
	return k.Value, nil
}

// yaml11Bools are the plain scalars YAML 1.1 (and so kubectl) reads as
// booleans beyond true and false.
func yaml11Bool(s string) (value, ok bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// isYAML11Bool reports whether a !!str scalar is a plain one kubectl reads
// as a boolean.
func isYAML11Bool(n *yaml.Node) bool {
	_, ok := yaml11Bool(n.Value)
	return ok && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

func scalar(n *yaml.Node) (any, error) {
	j, err := scalarJSON(n)
	if err != nil {
		return nil, err
	}
	return j.value(), nil
}

// jsonKind is the kind of a JSON value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonObject
	jsonList
)

// jsonScalar is what the decoders need of a YAML node's JSON value,
// without boxing it: its kind and, for a scalar, its text (a number's as
// json.Number writes it) or truth.
type jsonScalar struct {
	kind jsonKind
	text string
	b    bool
}

// value is the scalar as toValue gives it; an object or a list is given
// as an empty one, enough to describe it.
func (j jsonScalar) value() any {
	switch j.kind {
	case jsonBool:
		return j.b
	case jsonNumber:
		return json.Number(j.text)
	case jsonString:
		return j.text
	case jsonObject:
		return map[string]any{}
	case jsonList:
		return []any{}
	}
	return nil
}

// scalarJSON is the JSON value of a scalar node, as scalar gives it.
func scalarJSON(n *yaml.Node) (jsonScalar, error) {
	switch tagOf(n) {
	case "!!null":
		return jsonScalar{}, nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return jsonScalar{}, &lineError{n.Line, fmt.Sprintf("invalid boolean %q", n.Value)}
		}
		return jsonScalar{kind: jsonBool, b: b}, nil
	case "!!int":
		s, err := intValue(n)
		return jsonScalar{kind: jsonNumber, text: s}, err
	case "!!float":
		s, err := floatValue(n)
		return jsonScalar{kind: jsonNumber, text: s}, err
	case "!!str":
		if isYAML11Bool(n) {
			b, _ := yaml11Bool(n.Value)
			return jsonScalar{kind: jsonBool, b: b}, nil
		}
	}
	// Strings, timestamps (kept as written, as kubectl sends them) and
	// anything with a custom tag.
	return jsonScalar{kind: jsonString, text: n.Value}, nil
}

func intValue(n *yaml.Node) (string, error) {
	s := strings.ReplaceAll(n.Value, "_", "")
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimLeft(s, "+-")
	// YAML 1.1, like kubectl's reader: a leading 0 means octal.
	if len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9' {
		digits = "0o" + digits[1:]
	}
	if neg {
		digits = "-" + digits
	}
	if i, err := strconv.ParseInt(digits, 0, 64); err == nil {
		return strconv.FormatInt(i, 10), nil
	}
	if u, err := strconv.ParseUint(digits, 0, 64); err == nil {
		return strconv.FormatUint(u, 10), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return "", &lineError{n.Line, fmt.Sprintf("integer %q is out of range", n.Value)}
}

func floatValue(n *yaml.Node) (string, error) {
	s := strings.ReplaceAll(n.Value, "_", "")
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case ".inf", ".nan":
		return "", &lineError{n.Line, fmt.Sprintf("%s cannot be represented in JSON", n.Value)}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", &lineError{n.Line, fmt.Sprintf("invalid number %q", n.Value)}
	}
	// Keep the text when it is already valid JSON, so 1.50 stays 1.50.
	if json.Valid([]byte(s)) {
		return s, nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// The decoders read a node decodable returned through what follows: the
// value toValue would give, one node at a time.

// isNull reports whether n is absent or null.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && tagOf(n) == "!!null"
}

// jsonOf is n's JSON value.
func jsonOf(n *yaml.Node) jsonScalar {
	switch {
	case n == nil:
		return jsonScalar{}
	case n.Kind == yaml.MappingNode:
		return jsonScalar{kind: jsonObject}
	case n.Kind == yaml.SequenceNode:
		return jsonScalar{kind: jsonList}
	case n.Kind == yaml.ScalarNode:
		j, _ := scalarJSON(n) // decodable checked it
		return j
	}
	return jsonScalar{}
}

// stringOf is n's value if it is a string.
func stringOf(n *yaml.Node) (string, bool) {
	if j := jsonOf(n); j.kind == jsonString {
		return j.text, true
	}
	return "", false
}

// describeNode is describe for n's value.
func describeNode(n *yaml.Node) string { return describe(jsonOf(n).value()) }

// valueOf is the value toValue gives for n: what the few readers of
// whole values (unknown kinds, the CRD schemas, types with their own JSON
// form) take.
func valueOf(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	c := converter{budget: maxExpandedNodes}
	v, _ := c.value(n)
	return v
}

// keyOf is the key string of a mapping key of a node decodable returned.
func keyOf(k *yaml.Node) string {
	s, _ := keyString(k)
	return s
}

// field returns the value of key in mapping n, nil when n is no mapping
// or does not set key.
func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if keyOf(n.Content[i]) == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// withField returns mapping n with key set to the string s after its own
// keys; n itself is left as it is.
func withField(n *yaml.Node, key, s string) *yaml.Node {
	out := *n
	out.Content = append(slices.Clip(n.Content), stringNode(key), stringNode(s))
	return &out
}

// withoutField returns mapping n without the field key, n itself when it
// has none.
func withoutField(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if keyOf(n.Content[i]) == key {
			out := *n
			out.Content = slices.Concat(n.Content[:i], n.Content[i+2:])
			return &out
		}
	}
	return n
}

// stringNode is a node whose value is the string s, whatever s says.
func stringNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}
}

// sortedPairs returns the indexes in n.Content of mapping n's keys in
// key order, the order of a walk through a map's sorted keys. buf may
// hold them.
func sortedPairs(n *yaml.Node, buf []int) []int {
	idx := buf[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		idx = append(idx, i)
	}
	// Keys are mostly written in order already.
	if !slices.IsSortedFunc(idx, func(a, b int) int { return strings.Compare(keyOf(n.Content[a]), keyOf(n.Content[b])) }) {
		slices.SortFunc(idx, func(a, b int) int { return strings.Compare(keyOf(n.Content[a]), keyOf(n.Content[b])) })
	}
	return idx
}

// fromValue is the node of v, a value toValue built: keys in sorted
// order, strings quoted so that they stay strings.
func fromValue(v any) *yaml.Node {
	switch x := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			n.Content = append(n.Content, stringNode(k), fromValue(x[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, item := range x {
			n.Content = append(n.Content, fromValue(item))
		}
		return n
	case string:
		return stringNode(x)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(x), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
}
