package crdschema

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/meshc/meshc/internal/model"
)

// nodeAt is the tree's node at path, written as the fields and "[]" for
// a list's items and "*" for a map's values, nil when there is none.
func nodeAt(n *openAPINode, path string) *openAPINode {
	for _, step := range strings.Split(path, ".") {
		if n == nil {
			return nil
		}
		switch step {
		case "[]":
			n = n.items
		case "*":
			n = n.additional
		default:
			n = n.props[step]
		}
	}
	return n
}

// TestInertFields: a field is inert when nothing judges its value but
// its own schema.
func TestInertFields(t *testing.T) {
	for _, c := range []struct {
		plural, version, path string
		inert                 bool
	}{
		// A backend's namespace and name: no rule reads them.
		{"httproutes", "v1", "spec.rules.[].backendRefs.[].namespace", true},
		{"httproutes", "v1", "spec.rules.[].backendRefs.[].name", true},
		// Its kind and port: the backend's rule reads them.
		{"httproutes", "v1", "spec.rules.[].backendRefs.[].kind", false},
		{"httproutes", "v1", "spec.rules.[].backendRefs.[].group", false},
		// A parent's name: the parentRefs' rules compare them.
		{"httproutes", "v1", "spec.parentRefs.[].name", false},
		// A hostname, in an atomic list; a header to remove, in a list
		// of type set.
		{"httproutes", "v1", "spec.hostnames.[]", true},
		{"httproutes", "v1", "spec.rules.[].filters.[].requestHeaderModifier.remove.[]", false},
		// A path match's value: its rules read it.
		{"httproutes", "v1", "spec.rules.[].matches.[].path.value", false},
		// A header match's name: a key of a list of type map.
		{"httproutes", "v1", "spec.rules.[].matches.[].headers.[].name", false},
		{"httproutes", "v1", "spec.rules.[].matches.[].headers.[].value", true},
		// A rule's name: the rules' rule compares them.
		{"httproutes", "v1", "spec.rules.[].name", false},
		// A number is never left out.
		{"httproutes", "v1", "spec.rules.[].backendRefs.[].port", false},
		{"referencegrants", "v1beta1", "spec.from.[].namespace", true},
		{"referencegrants", "v1beta1", "spec.to.[].name", true},
		{"grpcroutes", "v1", "spec.rules.[].matches.[].method.service", false},
		{"grpcroutes", "v1", "spec.rules.[].backendRefs.[].namespace", true},
		// A listener's name: the listeners' rule compares them; an
		// infrastructure label's value: a rule reads the map's keys.
		{"gateways", "v1", "spec.listeners.[].name", false},
		{"gateways", "v1", "spec.infrastructure.labels.*", false},
		{"gateways", "v1", "spec.gatewayClassName", true},
	} {
		s, _, err := GatewayAPI(c.plural, c.version)
		if err != nil {
			t.Fatal(err)
		}
		n := nodeAt(s.openAPITree, c.path)
		if n == nil {
			t.Errorf("%s %s: no node", c.plural, c.path)
			continue
		}
		if got := n.inert(); got != c.inert {
			t.Errorf("%s %s: inert %v, want %v", c.plural, c.path, got, c.inert)
		}
	}
}

// TestMemoSharesAcrossInertValues: objects that differ from one judged
// before only in the values of inert fields share its memo entry, and
// get what the library reports for each, valid or not.
func TestMemoSharesAcrossInertValues(t *testing.T) {
	for plural, version := range map[string]string{"httproutes": "v1", "grpcroutes": "v1", "referencegrants": "v1beta1", "gateways": "v1"} {
		s, _, err := GatewayAPI(plural, version)
		if err != nil {
			t.Fatal(err)
		}
		rules := cel.NewValidator(s.structural, true, celconfig.PerCallLimit)
		shared := 0
		for _, spec := range append([]string{validSpecs[plural]}, append(invalidSpecs[plural], brokenSpecs[plural]...)...) {
			m := NewMemo()
			m.Validate(context.Background(), s, object(t, plural, version, spec))
			for _, p := range leaves(object(t, plural, version, spec)["spec"], model.Path{}.Key("spec")) {
				for _, v := range []string{"other", "z", "x.example.com"} {
					obj := object(t, plural, version, spec)
					set(obj, p, v)
					before := len(m.objects[s])
					got := render(m.Validate(context.Background(), s, obj))
					if len(m.objects[s]) == before {
						shared++
					}
					if want := render(libraryValidate(s, rules, obj)); got != want {
						t.Errorf("%s %s = %q: the memo gives\n%s\nthe library\n%s", plural, p, v, got, want)
					}
				}
			}
		}
		if shared == 0 {
			t.Errorf("%s: no object shared an entry", plural)
		}
	}
}

// TestInertFieldsOfSchemas: what makes a field not inert, one thing at
// a time.
func TestInertFieldsOfSchemas(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		inert, not   []string
	}{
		{"plain", `{"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}, "n": {"type": "integer"}}}`,
			[]string{"a"}, []string{"n"}},
		{"a rule reads b", `{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "o": {"type": "object", "properties": {"c": {"type": "string"}}}},
			"x-kubernetes-validations": [{"rule": "self.b != 'x' && has(self.o)"}]}`,
			[]string{"a", "o.c"}, []string{"b"}},
		{"a message expression", `{"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}},
			"x-kubernetes-validations": [{"rule": "self.n > 0", "messageExpression": "self.a"}]}`,
			nil, []string{"a"}},
		{"a map read by key", `{"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
			"x-kubernetes-validations": [{"rule": "self.m.k != 'x'"}]}`,
			nil, []string{"m.*"}},
		{"a map not read", `{"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
			"x-kubernetes-validations": [{"rule": "has(self.m)"}]}`,
			[]string{"m.*"}, nil},
		{"a set", `{"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}`,
			nil, []string{"l.[]"}},
		{"a map list", `{"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
			"items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}}}}`,
			[]string{"l.[].v"}, []string{"l.[].k"}},
		{"under anyOf", `{"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]}}}`,
			nil, []string{"o.a"}},
		{"an enum", `{"type": "object", "properties": {"e": {"type": "string", "enum": ["a", "b"]}}}`,
			[]string{"e"}, nil},
	} {
		var props apiextv1.JSONSchemaProps
		if err := json.Unmarshal([]byte(c.schema), &props); err != nil {
			t.Fatal(err)
		}
		s := compile(t, apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"spec": props}})
		for _, want := range []bool{true, false} {
			paths := c.inert
			if !want {
				paths = c.not
			}
			for _, p := range paths {
				n := nodeAt(s.openAPITree, "spec."+p)
				if n == nil {
					t.Errorf("%s: no node at %s", c.name, p)
				} else if got := n.inert(); got != want {
					t.Errorf("%s: %s inert %v, want %v", c.name, p, got, want)
				}
			}
		}
	}
}

// TestObjectKeysTellContentApart: the whole-object memo's key tells
// apart objects that differ in anything but the values of inert fields
// their schemas pass.
func TestObjectKeysTellContentApart(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	const same = `{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80}]}]}`
	keys := map[string]string{}
	for _, spec := range []string{
		same,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80.0}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 81}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a"}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80, "extra": 1}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80}], "extra": {"a": "b"}}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80}], "extra": {"a": "c"}}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "A_", "port": 80}]}]}`,
		`{"parentRefs": [{"name": "gw2"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80}, {"name": "web", "namespace": "a", "port": 80}]}]}`,
		`{"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "namespace": "a", "port": 80}]}], "hostnames": []}`,
	} {
		key, ok := s.appendObjectKey(nil, object(t, "httproutes", "v1", spec))
		if !ok {
			t.Fatalf("%s: no key", spec)
		}
		if other, dup := keys[string(key)]; dup {
			t.Errorf("%s and %s share a key", spec, other)
		}
		keys[string(key)] = spec
	}
	// Another backend name and namespace, each passing its schema: the
	// same key.
	key, _ := s.appendObjectKey(nil, object(t, "httproutes", "v1", strings.NewReplacer(`"web"`, `"api"`, `"a"`, `"b"`).Replace(same)))
	if keys[string(key)] != same {
		t.Errorf("objects differing in inert values have different keys")
	}
}
