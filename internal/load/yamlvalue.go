package load

import (
	"encoding/json"
	"fmt"
	"math"
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
		return c.mapping(n)
	case yaml.ScalarNode:
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
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
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

// keyString renders a mapping key as JSON object keys must be: strings,
// with numbers and booleans written out as kubectl's converter does.
func keyString(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", &lineError{k.Line, "mapping keys must be scalars"}
	}
	if k.ShortTag() == "!!str" && !isYAML11Bool(k) {
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
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return nil, &lineError{n.Line, fmt.Sprintf("invalid boolean %q", n.Value)}
		}
		return b, nil
	case "!!int":
		return intValue(n)
	case "!!float":
		return floatValue(n)
	case "!!str":
		if isYAML11Bool(n) {
			b, _ := yaml11Bool(n.Value)
			return b, nil
		}
	}
	// Strings, timestamps (kept as written, as kubectl sends them) and
	// anything with a custom tag.
	return n.Value, nil
}

func intValue(n *yaml.Node) (any, error) {
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
		return json.Number(strconv.FormatInt(i, 10)), nil
	}
	if u, err := strconv.ParseUint(digits, 0, 64); err == nil {
		return json.Number(strconv.FormatUint(u, 10)), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	}
	return nil, &lineError{n.Line, fmt.Sprintf("integer %q is out of range", n.Value)}
}

func floatValue(n *yaml.Node) (any, error) {
	s := strings.ReplaceAll(n.Value, "_", "")
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case ".inf", ".nan":
		return nil, &lineError{n.Line, fmt.Sprintf("%s cannot be represented in JSON", n.Value)}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, &lineError{n.Line, fmt.Sprintf("invalid number %q", n.Value)}
	}
	// Keep the text when it is already valid JSON, so 1.50 stays 1.50.
	if json.Valid([]byte(s)) {
		return json.Number(s), nil
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
}
