package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	runCLICases(t, []cliCase{
		{name: "bookinfo", args: []string{"build", "../../examples/bookinfo", "-o", out}, err: "wrote 7 proxies"},
		{name: "xds subset", args: []string{"build", "../../examples/bookinfo", "-o", out, "--format", "xds", "--proxy", "default/reviews-*", "-q"}},
		{name: "no output dir", args: []string{"build", "../../examples/bookinfo"}, code: 2, err: "see meshc build --help"},
		{name: "bad format", args: []string{"build", "../../examples/bookinfo", "-o", out, "--format", "yaml"}, code: 2, err: "--format"},
		{name: "proxy matching nothing", args: []string{"build", "../../examples/bookinfo", "-o", out, "--proxy", "default/nope"}, code: 2, err: "matches no proxy"},
		{name: "ads without port", args: []string{"build", "../../examples/bookinfo", "-o", out, "--ads", "meshc-serve"}, code: 2, err: "--ads: want HOST:PORT"},
		{name: "ads with xds", args: []string{"build", "../../examples/bookinfo", "-o", out, "--ads", "127.0.0.1:15010", "--format", "xds"}, code: 2, err: "--format xds shapes files it does not write"},
		{name: "ads with dns", args: []string{"build", "../../examples/bookinfo", "-o", out, "--ads", "127.0.0.1:15010", "--endpoints", "dns"}, code: 2, err: "--endpoints dns shapes"},
		{name: "ads self-contained", args: []string{"build", "../../examples/bookinfo", "-o", out, "--ads", "127.0.0.1:15010", "--self-contained"}, code: 2, err: "--self-contained shapes"},
		{name: "ads shared root", args: []string{"build", "../../examples/bookinfo", "-o", out, "--ads", "127.0.0.1:15010", "--shared-root", "/x"}, code: 2, err: "--shared-root shapes"},
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

// TestBuildADS: --ads writes one bootstrap per proxy and index.json,
// which records the server.
func TestBuildADS(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := meshc(t, "", "build", "../../examples/bookinfo", "-o", out, "--ads", "127.0.0.1:15010", "-q"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var files []string
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 9 || !slices.Contains(files, ".meshc-out") || !slices.Contains(files, "default/productpage-v1.json") || !slices.Contains(files, "index.json") {
		t.Errorf("wrote %v, want 7 bootstraps, index.json and the .meshc-out marker", files)
	}
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil || !strings.Contains(string(data), `"ads": "127.0.0.1:15010"`) {
		t.Errorf("index.json does not record --ads (%v):\n%s", err, data)
	}
}

// TestBuildReportsUntranslatedPolicies: a policy meshc does not build
// that selects a built proxy is a warning naming it (MC8003); the build
// still succeeds, and a policy selecting no built proxy says nothing.
func TestBuildReportsUntranslatedPolicies(t *testing.T) {
	authz := `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: reviews-only, namespace: default}
spec: {selector: {matchLabels: {app: %s}}, action: DENY, rules: [{}]}
`
	for _, tc := range []struct {
		app  string
		want bool
	}{{"reviews", true}, {"nothing", false}} {
		dir := writeFiles(t, map[string]string{"authz.yaml": fmt.Sprintf(authz, tc.app)})
		out := filepath.Join(t.TempDir(), "out")
		code, _, errOut := meshc(t, "", "build", "../../examples/bookinfo", dir, "-o", out)
		got := strings.Contains(errOut, "warning MC8003 UntranslatedPolicy: AuthorizationPolicy default/reviews-only applies to 3 of the proxies built")
		if code != 0 || got != tc.want {
			t.Errorf("selector app=%s: exit %d, MC8003 reported %v (want %v)\n%s", tc.app, code, got, tc.want, errOut)
		}
	}
}

// TestBuildStopsOverBudget: a build estimated over --max-output-bytes
// says so, names the scope, writes nothing; 0 lifts the limit.
func TestBuildStopsOverBudget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out, "--max-output-bytes", "100Ki")
	if code != exitUsage || !strings.Contains(errOut, "this build would write about") || !strings.Contains(errOut, "namespace default") || !strings.Contains(errOut, "nothing written") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("OUT written over budget")
	}
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out, "--max-output-bytes", "0", "-q"); code != 0 {
		t.Errorf("--max-output-bytes 0: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out, "--max-output-bytes", "lots"); code != exitUsage || !strings.Contains(errOut, "--max-output-bytes") {
		t.Errorf("bad size: exit %d\n%s", code, errOut)
	}
}
