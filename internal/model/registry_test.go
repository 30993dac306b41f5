package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

// readsMarker precedes the README's table of what meshc reads.
const readsMarker = "<!-- Generated from internal/model/registry.go by `go test ./internal/model -update`. -->\n"

// TestREADMEReadsTable keeps the README's "What meshc reads" table the
// registry's: the table after the marker, up to the first blank line, is
// regenerated and the README compared.
func TestREADMEReadsTable(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, readsMarker)
	if start < 0 {
		t.Fatalf("README.md lacks the marker %q", readsMarker)
	}
	start += len(readsMarker)
	end := start + strings.Index(readme[start:], "\n\n")
	testfiles.Golden(t, path, []byte(readme[:start]+ReadsTable()+readme[end+1:]))
}

// TestRegistry: every kind is named once, has resource names and served
// versions, and decoded kinds build the object type passes expect.
func TestRegistry(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, k := range Kinds() {
		id := [2]string{k.Group, k.Kind}
		if seen[id] || k.Plural == "" || k.Singular == "" || len(k.Versions) == 0 {
			t.Errorf("%s.%s: duplicate, or without resource names or versions", k.Kind, k.Group)
		}
		seen[id] = true
		if got, ok := LookupKind(k.Group, k.Kind); !ok || got != k {
			t.Errorf("LookupKind(%s, %s) does not find it", k.Group, k.Kind)
		}
		if k.Decoded() != (k.Build != nil) {
			t.Errorf("%s: New and Build go together", k.Kind)
		}
		if k.Decoded() {
			obj := k.Build(ObjectMeta{Kind: k.Kind, Name: "x"}, k.New())
			if obj.Meta().Name != "x" {
				t.Errorf("%s: Build loses the metadata", k.Kind)
			}
		}
	}
	for kind, want := range map[string]any{"Service": &Service{}, "Deployment": &Workload{}, "VirtualService": &VirtualService{}, "HNCConfiguration": &HNCConfiguration{}} {
		for _, k := range Kinds() {
			if k.Kind == kind && k.Decoded() {
				if got := k.Build(ObjectMeta{}, k.New()); typeName(got) != typeName(want) {
					t.Errorf("%s builds %s, want %s", kind, typeName(got), typeName(want))
				}
			}
		}
	}
	if k, ok := LookupKind(GroupSecurity, "RequestAuthentication"); !ok || k.Decoded() || k.Untranslated == "" || len(k.SelectorPath) != 2 {
		t.Errorf("RequestAuthentication: %+v", k)
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
