package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/meshtest"
)

// seedFindings loads a seed as meshc lint does and returns every finding:
// the loader's, resolve's and the analyzers'.
func seedFindings(file string, data []byte) []diag.Diagnostic {
	objs, ds := load.Bytes(file, data)
	m := meshtest.Resolve(objs)
	return append(append(ds, m.Diagnostics...), Run(m, Analyzers(), Options{})...)
}

// TestKeysUniqueInSeeds: two distinct findings of one run never share a
// key; if they do, their message's discriminator misses what tells them
// apart.
func TestKeysUniqueInSeeds(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "seeds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]diag.Diagnostic{}
		for _, d := range seedFindings(file, data) {
			if prev, dup := seen[d.Key]; dup {
				t.Errorf("%s: key %s for two findings:\n  %s\n  %s", file, d.Key, prev.Message, d.Message)
			}
			seen[d.Key] = d
		}
	}
}
