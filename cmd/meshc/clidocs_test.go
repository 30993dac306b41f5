package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/meshc/meshc/internal/testfiles"
)

// cliReference is the directory of the CLI reference: one Markdown page per
// visible command, generated from the cobra tree.
var cliReference = filepath.Join("..", "..", "docs", "cli")

// TestCLIReference keeps docs/cli/ in step with the commands: it generates
// every page with cobra's doc package and compares each with the checked-in
// one. go test -run TestCLIReference -update rewrites the pages and removes
// those of commands that no longer exist.
func TestCLIReference(t *testing.T) {
	root := newRootCmd(nil, io.Discard, io.Discard)
	// Execute adds the completion command to the tree; meshc completion is a
	// real command, so the reference documents it too.
	root.InitDefaultCompletionCmd()
	var hidden []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		// Without this every page ends with today's date.
		c.DisableAutoGenTag = true
		if c.Hidden {
			hidden = append(hidden, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var generated []string
	for _, e := range entries {
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		generated = append(generated, e.Name())
		testfiles.Golden(t, filepath.Join(cliReference, e.Name()), got)
	}
	if !slices.Contains(generated, "meshc.md") {
		t.Errorf("no page for the root command among %v", generated)
	}
	for _, c := range hidden {
		if page := pageName(c); slices.Contains(generated, page) {
			t.Errorf("hidden command %q got a page, %s", c.CommandPath(), page)
		}
	}

	checked, err := os.ReadDir(cliReference)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range checked {
		if slices.Contains(generated, e.Name()) {
			continue
		}
		stale := filepath.Join(cliReference, e.Name())
		if updating() && e.Type().IsRegular() {
			if err := os.Remove(stale); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is not generated from any command (run go test with -update to remove it)", stale)
	}
}

// pageName is the file cobra's doc package writes for c.
func pageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// updating reports whether the tests run with -update, the flag
// internal/testfiles defines.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
