package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestBuildCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	runCLICases(t, []cliCase{
		{name: "bookinfo", args: []string{"build", "../../examples/bookinfo", "-o", out}, err: "wrote 7 proxies"},
		{name: "xds subset", args: []string{"build", "../../examples/bookinfo", "-o", out, "--format", "xds", "--proxy", "default/reviews-*", "-q"}},
		{name: "no output dir", args: []string{"build", "../../examples/bookinfo"}, code: 2, err: `"out" not set`},
		{name: "bad format", args: []string{"build", "../../examples/bookinfo", "-o", out, "--format", "yaml"}, code: 2, err: "--format"},
		{name: "proxy matching nothing", args: []string{"build", "../../examples/bookinfo", "-o", out, "--proxy", "default/nope"}, code: 2, err: "matches no proxy"},
	})
	// Quiet and clean: nothing at all on stderr.
	if code, _, errOut := meshc(t, "", "build", "../../examples/bookinfo", "-o", filepath.Join(t.TempDir(), "q"), "-q"); code != 0 || errOut != "" {
		t.Errorf("quiet build: exit %d, stderr %q; want 0 and nothing", code, errOut)
	}
	// The last successful build (xds, reviews only) is what OUT holds.
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Proxies []struct{ Name, Path string }
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Proxies) != 3 {
		t.Fatalf("index lists %d proxies, want the 3 reviews versions", len(idx.Proxies))
	}
	for _, p := range idx.Proxies {
		if _, err := os.Stat(filepath.Join(out, p.Path, "clusters.json")); err != nil {
			t.Error(err)
		}
	}
}
