package load

import (
	"reflect"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/yamlfast"
)

// FuzzDecodable: the node the decoders read stands for the value toValue
// builds, and checking a document finds the problem building it would.
func FuzzDecodable(f *testing.F) {
	for _, s := range []string{
		"a: 1\nb: [x, 2, yes, ~, 1.50, 0x1F, 010]\nc: {d: 'no', e: \"on\"}\n",
		"a: 1\na: 2\n",
		"a: {b: 1, b: 2}\n",
		"1: a\n'1': b\n",
		"a: .inf\n",
		"a: 99999999999999999999\n",
		"a: &x {b: 1}\nc: *x\nd:\n  <<: *x\n  e: 2\n",
		"a: *nowhere\n",
		"a: &a [x, *a]\n",
		"? [complex, key]\n: value\n",
		"- a\n- {b: c}\n",
		"~\n",
		"!!binary aGk=\n",
		"a: !!bool maybe\n",
		"<<: {a: 1}\n<<: [{b: 2}, {a: 3}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, ok := yamlfast.Parse(data)
		if !ok {
			root = new(yaml.Node)
			if yaml.Unmarshal(data, root) != nil {
				return
			}
		}
		want, wantErr := toValue(root)
		var keys []string
		n, err := decodable(root, &keys)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("decodable: error %v, toValue: %v", err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(valueOf(n), want) {
			t.Fatalf("decodable's node holds %#v, toValue builds %#v", valueOf(n), want)
		}
	})
}

// TestTagOf: tagOf is ShortTag, for the nodes of both parsers, tags long,
// short, custom and none.
func TestTagOf(t *testing.T) {
	doc := "a: !!str 1\nb: !custom x\nc: \"q\"\nd: 1\ne: null\nf: !<tag:yaml.org,2002:int> 3\ng: &x {h: [1, 'two', ~]}\ni: *x\nj: |\n  text\n<<: {k: v}\n"
	var full yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &full); err != nil {
		t.Fatal(err)
	}
	fast, ok := yamlfast.Parse([]byte("c: \"q\"\nd: 1\ne: null\nf: true\nl:\n  - x\n  - 2.5\n"))
	if !ok {
		t.Fatal("yamlfast refused the document")
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if got, want := tagOf(n), n.ShortTag(); got != want {
			t.Errorf("line %d %q (tag %q): tagOf %q, ShortTag %q", n.Line, n.Value, n.Tag, got, want)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&full)
	walk(fast)
}
