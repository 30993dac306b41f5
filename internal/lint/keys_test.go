package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// seedFindings loads a seed as meshc lint does and returns every finding:
// the loader's, resolve's and the analyzers'.
func seedFindings(t *testing.T, file string, data []byte) []diag.Diagnostic {
	objs, ds := load.Bytes(file, data)
	m := resolvetest.Resolve(objs)
	return append(append(ds, m.Diagnostics...), analyze(t, m, Analyzers(), Options{undeclared: undeclared(t)})...)
}

// seed is one file of testdata/seeds.
type seed struct {
	file string
	data []byte
}

// seeds reads the seeds matching pattern (MC9*.yaml).
func seeds(t *testing.T, pattern string) []seed {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "seeds", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds: %v", err)
	}
	out := make([]seed, len(files))
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = seed{file, data}
	}
	return out
}

// TestKeysUniqueInSeeds: two distinct findings of one run never share a
// key; if they do, their message's discriminator misses what tells them
// apart.
func TestKeysUniqueInSeeds(t *testing.T) {
	for _, s := range seeds(t, "*.yaml") {
		t.Run(filepath.Base(s.file), func(t *testing.T) {
			uniqueKeys(t, seedFindings(t, s.file, s.data))
		})
	}
}

// reshaped rewrites a YAML stream as the same objects at other lines: the
// documents in reverse order, each as one line of JSON (keys sorted,
// indentation gone) after a comment.
func reshaped(t *testing.T, data []byte) []byte {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs [][]byte
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if v == nil {
			continue
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, j)
	}
	slices.Reverse(docs)
	var b bytes.Buffer
	for i, d := range docs {
		fmt.Fprintf(&b, "---\n# moved, document %d\n\n%s\n", i, d)
	}
	return b.Bytes()
}

// subjects are the findings by code and subject: what must not change
// when a file is only reformatted and its blocks moved.
func subjects(ds []diag.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Code + " " + d.Object.String()
	}
	slices.Sort(out)
	return out
}

// TestKeysSurviveMovesAndReformatting: the seeds' findings, with their
// documents moved and reformatted (other lines, same objects), have the
// same keys. A seed whose findings depend on the order of its objects
// (the first definition wins) is compared only when the findings agree.
func TestKeysSurviveMovesAndReformatting(t *testing.T) {
	all := seeds(t, "*.yaml")
	compared, moved, found := 0, 0, 0
	for _, s := range all {
		file, data := s.file, s.data
		before := seedFindings(t, file, data)
		after := seedFindings(t, file, reshaped(t, data))
		if !slices.Equal(subjects(before), subjects(after)) {
			t.Logf("%s: findings depend on order; not compared", file)
			continue
		}
		compared++
		lines := map[string]int{}
		for _, d := range before {
			lines[d.Key] = d.Object.Line
		}
		for _, d := range after {
			found++
			if lines[d.Key] != d.Object.Line {
				moved++
			}
		}
		bk, ak := diag.Keys(before), diag.Keys(after)
		slices.Sort(bk)
		slices.Sort(ak)
		if !slices.Equal(bk, ak) {
			t.Errorf("%s: keys changed when the file was reshaped:\n  before %q\n  after  %q", file, bk, ak)
		}
	}
	if compared < len(all)*9/10 || moved < found*9/10 {
		t.Errorf("only %d of %d seeds compared, %d of %d findings at other lines: the test proves little", compared, len(all), moved, found)
	}
}
