package yamlfast

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/meshgen"
)

// corpusDirs hold the hand-written manifests the fast path is checked on.
var corpusDirs = []string{"../../examples", "../load/testdata"}

// testMesh sizes the generated mesh the fast path is checked on.
var testMesh = meshgen.Options{Namespaces: 3, ServicesPerNS: 5}

// document is one YAML document of the test corpus.
type document struct {
	name string
	data []byte
}

// splitDocs cuts a stream at lines that are exactly "---", which is all the
// corpus uses.
func splitDocs(name string, data []byte) []document {
	var out []document
	for i, d := range strings.Split(string(data), "\n---\n") {
		out = append(out, document{fmt.Sprintf("%s#%d", name, i), []byte(d)})
	}
	return out
}

func fileDocuments(t testing.TB) []document {
	var out []document
	for _, dir := range corpusDirs {
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			switch filepath.Ext(path) {
			case ".yaml", ".yml", ".json":
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				out = append(out, splitDocs(path, data)...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func meshDocuments(opts meshgen.Options) []document {
	var out []document
	for _, f := range meshgen.Generate(opts) {
		out = append(out, splitDocs(f.Name, f.Data)...)
	}
	return out
}

// diff returns where two trees differ, ignoring comments, or "".
func diff(got, want *yaml.Node, path string) string {
	switch {
	case got.Kind != want.Kind:
		return fmt.Sprintf("%s: kind %v, want %v", path, got.Kind, want.Kind)
	case got.Style != want.Style:
		return fmt.Sprintf("%s: style %v, want %v", path, got.Style, want.Style)
	case got.Tag != want.Tag || got.ShortTag() != want.ShortTag():
		return fmt.Sprintf("%s: tag %q, want %q", path, got.Tag, want.Tag)
	case got.Value != want.Value:
		return fmt.Sprintf("%s: value %q, want %q", path, got.Value, want.Value)
	case got.Anchor != want.Anchor || got.Alias != nil || want.Alias != nil:
		return fmt.Sprintf("%s: anchor %q, want %q", path, got.Anchor, want.Anchor)
	case got.Line != want.Line || got.Column != want.Column:
		return fmt.Sprintf("%s: at %d:%d, want %d:%d", path, got.Line, got.Column, want.Line, want.Column)
	case len(got.Content) != len(want.Content):
		return fmt.Sprintf("%s: %d children, want %d", path, len(got.Content), len(want.Content))
	}
	for i := range got.Content {
		if d := diff(got.Content[i], want.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// check parses data both ways and fails t if ps accepts it but yaml.v3
// rejects it or reads it differently. It reports whether ps accepted it.
// Tests pass one Parser for many documents, so that every comparison also
// checks that nothing of an earlier document leaks into a later one.
func check(t *testing.T, ps *Parser, name string, data []byte) bool {
	t.Helper()
	got, ok := ps.Parse(data)
	if !ok {
		return false
	}
	var want yaml.Node
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatalf("%s: Parse accepts what yaml.v3 rejects (%v):\n%s", name, err, data)
	}
	if d := diff(got, &want, ""); d != "" {
		t.Fatalf("%s: %s in\n%s", name, d, data)
	}
	return true
}

func TestCorpusMatchesYAMLv3(t *testing.T) {
	docs := fileDocuments(t)
	if len(docs) == 0 {
		t.Fatal("no documents found under", corpusDirs)
	}
	fast := 0
	ps := new(Parser)
	for _, d := range docs {
		if check(t, ps, d.name, d.data) {
			fast++
		}
	}
	t.Logf("%d of %d documents took the fast path", fast, len(docs))
}

// TestGeneratedMeshTakesFastPath is the point of the package: every
// generated manifest must be parsed here, and exactly as yaml.v3 would.
func TestGeneratedMeshTakesFastPath(t *testing.T) {
	ps := new(Parser)
	for _, d := range meshDocuments(testMesh) {
		if !check(t, ps, d.name, d.data) {
			t.Errorf("%s: fell back to yaml.v3:\n%s", d.name, d.data)
		}
	}
}

// TestExamplesTakeFastPath keeps the hand-written examples on the fast path.
func TestExamplesTakeFastPath(t *testing.T) {
	ps := new(Parser)
	for _, d := range fileDocuments(t) {
		if strings.HasPrefix(d.name, filepath.Clean(corpusDirs[0])) && !check(t, ps, d.name, d.data) {
			t.Errorf("%s: fell back to yaml.v3:\n%s", d.name, d.data)
		}
	}
}

// fuzzSeeds are snippets near the edges of the subset.
var fuzzSeeds = []string{
	"a: 1\nb:\n  - x\n  -\n  - y: 2\n    z: [] # c\n",
	"a:\n- b\n- c: d\n  e:\n  - f\ng: {}\n",
	"- - a: 1\n    b: 2\n  - c\n-\n- 'q''s'\n",
	"# head\n\n  a: \"x\\ty\\u00e9\\x41\\U0001F600\"\n  b: 'it''s'   # c\n",
	"a: b # c\n  # d\n# e\nc:   # f\n  d: e\n",
	"a: foo\n  bar\n",
	"a: b: c\n",
	"a: - b\n",
	"a:\tb\n",
	"a: \"x\\\n  y\"\n",
	"a: |\n  x\n",
	"a: &x 1\nb: *x\n",
	"? a\n: b\n",
	"a: !!str 1\n",
	"a: [1, 2]\n",
	"--- \na: 1\n",
	"\ufeffa: 1\n",
	"a: 1\r\nb: 2\r\n",
	"a: 1\rb: 2\n",
	"ä: ö\nb:   ü # ß\n",
	"ints: [0x1F, 0o17, 017, -0b101, 1_000, +12, 1e3, .5, 1., -.inf, .NaN, 2001-12-14]\n",
	"- 0x1F\n- 0o17\n- 017\n- -0b101\n- 1_000\n- +12\n- 1e3\n- .5\n- 1.\n- -.inf\n- .NaN\n- 2001-12-14\n- 2001-12-14 21:59:43.10\n- 2001-12-14t21:59:43.10-05:00\n",
	"- y\n- Yes\n- off\n- ~\n- null\n- NULL\n- TRUE\n- tRue\n- <<\n- 9223372036854775808\n- 18446744073709551616\n- 1e400\n- 0b\n- 0b2\n- -0o8\n- 0o-7\n",
	"<<: {}\nk: v\n",
	"a:\n    b: 1\nc:\n  d: 2\n",
	"  a: 1\nb: 2\n",
	"a: 1\n  b: 2\n",
	"- a\n - b\n",
	"a:b: c\n",
	"-a: -b\n:c: ?d\n",
	"a: 'x'#c\n",
	"\"a\" : b\n'c':\n",
	"a: \"\\/\"\n",
	"a: \"\\q\"\n",
	"a: \"\\ud800\"\n",
	"a: [b, \"c\" , 'd',]\nb: {e: 1, \"f\":g}\nc: [h: i]\nd: {j:k}\n",
	"a: |\n  x\n\n   y # z\n  # w\n\nb: >-\n  p\n  q\n\n   r\n- |+\n  s\n\n",
	"- >\n z\n-  |-\n   # c\n  \n",
	"a: |2\n   x\nb: |\n    \n  y\nc: |\n\tz\n",
}

func FuzzParse(f *testing.F) {
	for _, d := range fileDocuments(f) {
		f.Add(d.data)
	}
	for _, d := range meshDocuments(testMesh) {
		f.Add(d.data)
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, new(Parser), "input", data)
	})
}

// BenchmarkParse parses the ~800 documents of a generated mesh of 10
// namespaces with Parse and with yaml.v3.
func BenchmarkParse(b *testing.B) {
	docs := meshDocuments(meshgen.Options{Namespaces: 10})
	size := 0
	for _, d := range docs {
		size += len(d.data)
	}
	b.Run("yamlfast", func(b *testing.B) {
		ps := new(Parser) // reused, as the loader does
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range docs {
				if _, ok := ps.Parse(d.data); !ok {
					b.Fatalf("%s fell back", d.name)
				}
			}
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range docs {
				var n yaml.Node
				if err := yaml.Unmarshal(d.data, &n); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
