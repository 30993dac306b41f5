package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rawControl is a control character no human-facing output may print
// from the input: all but line feeds (colour is off in tests).
var rawControl = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

// TestOutputEscapesHostileNames: file and object names holding terminal
// escapes and line breaks reach the terminal escaped, in tree's drawings,
// build's summary and refusals, and error lines.
func TestOutputEscapesHostileNames(t *testing.T) {
	files := map[string]string{"orphan.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: orphan}\n---\n" +
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: hierarchy, namespace: orphan}\nspec: {parent: \"p\\u001b[31mq\\nforged\"}\n"}
	for _, name := range []string{"hierarchy.yaml", "mesh-policy.yaml", "teams.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "hierarchy", name))
		if err != nil {
			t.Fatal(err)
		}
		files[strings.Replace(name, ".yaml", "\x1b[2J\nforged.yaml", 1)] = string(data)
	}
	dir := writeFiles(t, files)
	out := filepath.Join(t.TempDir(), "out\x1b]0;owned\a")
	for _, args := range [][]string{
		{"tree", "-f", dir, "--propagated"},
		{"tree", "acme", "orphan", "-f", dir, "--describe"},
		{"tree", "-f", dir, "--config"},
		{"lint", dir},
		{"lint", dir, "-o", "github"},
		{"build", dir, "-o", out, "--fail-on", "none"},
		{"build", dir, "-o", out, "--fail-on", "info"},
		{"lint", filepath.Join(dir, "missing\x1b[31m")},
		{"explain", "proxy", "team-a/api-v1\x1b[31m", "-f", dir},
	} {
		_, stdout, stderr := meshc(t, "", args...)
		for _, s := range []string{stdout, stderr} {
			if loc := rawControl.FindStringIndex(s); loc != nil {
				t.Errorf("%q: raw control character at %v:\n%s", args, loc, s)
			}
			if strings.Contains(s, "\nforged") {
				t.Errorf("%q: a name started a line:\n%s", args, s)
			}
		}
		if stdout+stderr == "" {
			t.Errorf("%q printed nothing", args)
		}
	}
}
