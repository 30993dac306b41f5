package projectconfig

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/suggest"
)

// checkShape compares the YAML tree n with the Go type t a config decodes
// into, key by key, so that what is wrong is said in the config's words:
// file, line, the key as written, the keys that would do and the nearest
// one; a value of the wrong shape names what was wanted. It returns the
// first problem in the file's order (an error message is one line). where
// is the key path so far ("helm[1]"), empty at the top.
func checkShape(path string, n *yaml.Node, t reflect.Type, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkShape(path, n.Content[0], t, where)
	}
	if n.Kind == yaml.AliasNode || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil // an alias is checked where it points; null leaves the default
	}
	at := func(line int, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if where != "" {
			msg = where + ": " + msg
		}
		return fmt.Errorf("%s:%d: %s", path, line, msg)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return at(n.Line, "expected a mapping of keys, got %s", shapeOf(n))
		}
		fields := yamlFields(t)
		known := make([]string, 0, len(fields))
		for k := range fields {
			known = append(known, k)
		}
		slices.Sort(known)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			f, ok := fields[key.Value]
			if !ok {
				return at(key.Line, "unknown key %q%s; known keys: %s", key.Value, suggest.DidYouMean(key.Value, known), strings.Join(known, ", "))
			}
			if err := checkShape(path, val, f.Type, joinKey(where, key.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return at(n.Line, "expected a mapping, got %s", shapeOf(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkShape(path, n.Content[i+1], t.Elem(), joinKey(where, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return at(n.Line, "expected a list, got %s", shapeOf(n))
		}
		for i, item := range n.Content {
			if err := checkShape(path, item, t.Elem(), fmt.Sprintf("%s[%d]", where, i+1)); err != nil {
				return err
			}
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return at(n.Line, "expected true or false, got %s", shapeOf(n))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return at(n.Line, "expected a string, got %s", shapeOf(n))
		}
	}
	return nil
}

func joinKey(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// yamlFields maps the YAML keys of struct type t to their fields.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		out[name] = f
	}
	return out
}

// shapeOf says what a node is, as a person writing YAML would.
func shapeOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!bool":
		return fmt.Sprintf("the boolean %s", n.Value)
	case "!!int", "!!float":
		return fmt.Sprintf("the number %s", n.Value)
	}
	return fmt.Sprintf("%q", n.Value)
}
