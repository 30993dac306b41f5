package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/meshdiff"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/testfiles"
)

// diffCases are bookinfo edits under testdata/diff/NAME/head, files that
// replace or add to bookinfo's in HEAD.
var diffCases = []string{
	"weights", // the reviews split moved from 50/50 to 20/80
	"subset",  // a subset added and routed to
	"sidecar", // a Sidecar added to default
	"moved",   // the reviews VirtualService moved to its own file: no change
	"shadow",  // a second DestinationRule for reviews, whose policy loses
	"export",  // ratings exported to its own namespace only
	"gateway", // an HTTPS server added to the bookinfo Gateway
}

// diffTree copies bookinfo to base/ and head/ under a temporary directory,
// overlays the case's files on head/, and makes it the working directory,
// so reports name base/... and head/....
func diffTree(t *testing.T, name string) {
	t.Helper()
	bookinfo, err := filepath.Abs(filepath.Join("..", "..", "examples", "bookinfo"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := filepath.Abs(filepath.Join("testdata", "diff", name, "head"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, side := range []string{"base", "head"} {
		if err := os.CopyFS(filepath.Join(dir, side), os.DirFS(bookinfo)); err != nil {
			t.Fatal(err)
		}
	}
	edits, err := os.ReadDir(overlay)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		data, err := os.ReadFile(filepath.Join(overlay, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "head", e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

func TestDiffGolden(t *testing.T) {
	for _, name := range diffCases {
		t.Run(name, func(t *testing.T) {
			want := filepath.Join("testdata", "diff", name)
			wantAbs, err := filepath.Abs(want)
			if err != nil {
				t.Fatal(err)
			}
			diffTree(t, name)
			formats := []string{"text", "json", "markdown"}
			if name == "shadow" { // the case with a new finding
				formats = append(formats, "sarif")
			}
			for _, format := range formats {
				code, out, errOut := meshc(t, "", "diff", "base", "head", "-o", format)
				if code != 0 || errOut != "" {
					t.Fatalf("-o %s: exit %d, stderr:\n%s", format, code, errOut)
				}
				ext := map[string]string{"text": ".txt", "json": ".json", "markdown": ".md", "sarif": ".sarif"}[format]
				testfiles.Golden(t, wantAbs+ext, []byte(out))
			}
		})
	}
}

// TestDiffMovedIsNoChange holds the point of the moved case: moving an
// object to another file changes nothing at all.
func TestDiffMovedIsNoChange(t *testing.T) {
	diffTree(t, "moved")
	code, out, _ := meshc(t, "", "diff", "base", "head", "--fail-on-change", "--fail-on", "info")
	if code != 0 || !strings.Contains(out, "proxies: 7 compared, 0 changed") || !strings.Contains(out, "objects: 0 added, 0 removed, 0 modified") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestDiffExitCodes(t *testing.T) {
	diffTree(t, "weights")
	runCLICases(t, []cliCase{
		{"a change is not a failure by default", []string{"diff", "base", "head"}, 0, "6 changed", ""},
		{"--fail-on-change", []string{"diff", "base", "head", "--fail-on-change"}, 1, "6 changed", ""},
		{"no change with --fail-on-change", []string{"diff", "base", "base", "--fail-on-change"}, 0, "0 changed", ""},
		{"an empty BASE adds every proxy", []string{"diff", "-", "head", "--fail-on-change"}, 1, "7 added", ""},
		{"an empty HEAD removes every proxy", []string{"diff", "base", "-"}, 0, "7 removed", ""},
		{"one side only", []string{"diff", "base"}, 2, "", "want BASE and HEAD"},
		{"a missing HEAD", []string{"diff", "base", "nowhere"}, 2, "", "HEAD nowhere"},
		{"a missing BASE", []string{"diff", "nowhere", "head"}, 2, "", "BASE nowhere"},
		{"-f is not a side", []string{"diff", "base", "head", "-f", "base"}, 2, "", "-f: diff takes its sides as arguments"},
		{"unknown format", []string{"diff", "base", "head", "-o", "github"}, 2, "", "unknown output format"},
		{"bad --fail-on", []string{"diff", "base", "head", "--fail-on", "loud"}, 2, "", "--fail-on"},
	})
}

func TestDiffFailOnNewFinding(t *testing.T) {
	diffTree(t, "shadow")
	runCLICases(t, []cliCase{
		// The new finding is a warning.
		{"below the threshold", []string{"diff", "base", "head"}, 0, "1 new", ""},
		{"at the threshold", []string{"diff", "base", "head", "--fail-on", "warning"}, 1, "1 new", ""},
		// Fixed findings never fail.
		{"fixed", []string{"diff", "head", "base", "--fail-on", "warning"}, 0, "1 fixed", ""},
	})
}

func TestDiffUnreadableSide(t *testing.T) {
	diffTree(t, "weights")
	if err := os.WriteFile(filepath.Join("head", "broken.yaml"), []byte("a: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join("head", "broken.yaml"), 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	code, _, errOut := meshc(t, "", "diff", "base", "head")
	if code != 2 || !strings.Contains(errOut, "HEAD head: some input could not be read") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestDiffGit compares a revision with the working tree in a repository
// with two commits.
func TestDiffGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	diffTree(t, "weights")
	// The manifests live in m/: first bookinfo, then the weights edit.
	if err := os.Rename("base", "m"); err != nil {
		t.Fatal(err)
	}
	gitIn(t, "init", "-q")
	gitIn(t, "add", "m")
	gitIn(t, "commit", "-q", "-m", "bookinfo")
	data, err := os.ReadFile(filepath.Join("head", "virtual-services.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("m", "virtual-services.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, "commit", "-q", "-a", "-m", "weights")

	runCLICases(t, []cliCase{
		{"the last commit", []string{"diff", "--git", "HEAD~1", "m"}, 0, "modified VirtualService default/reviews (HEAD~1:m/virtual-services.yaml:2 → m/virtual-services.yaml:2)", ""},
		{"the working tree as committed", []string{"diff", "--git", "HEAD", "m", "--fail-on-change"}, 0, "0 changed", ""},
		{"a file", []string{"diff", "--git", "HEAD~1", "m/virtual-services.yaml"}, 0, "spec.http[1].route[0].weight: 50 → 20", ""},
		{"no such revision", []string{"diff", "--git", "nope", "m"}, 2, "", `BASE nope: no revision "nope"`},
		{"a path the revision lacks", []string{"diff", "--git", "HEAD", "head"}, 2, "", "BASE HEAD: head is not in revision HEAD"},
	})
	// Nothing is written: the revision is read in memory.
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "meshc-rev-*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	outside := t.TempDir()
	code, _, errOut := meshc(t, "", "diff", "--git", "HEAD", outside)
	if code != 2 || !strings.Contains(errOut, "is not in a git repository") {
		t.Errorf("outside a repository: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestDiffIgnoresInputOrder: both sides' documents scattered over their
// files give the same diff, places aside.
func TestDiffIgnoresInputOrder(t *testing.T) {
	sides := map[string][]meshgen.File{}
	for _, side := range []string{"base", "head"} {
		dir := filepath.Join("..", "..", "examples", "bookinfo")
		entries, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range entries {
			overlay := filepath.Join("testdata", "diff", "subset", "head", filepath.Base(p))
			if _, err := os.Stat(overlay); side == "head" && err == nil {
				p = overlay
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sides[side] = append(sides[side], meshgen.File{Name: filepath.Base(p), Data: data})
		}
	}
	diffOf := func(base, head map[string]string) string {
		t.Helper()
		code, out, errOut := meshc(t, "", "diff", writeFiles(t, base), writeFiles(t, head), "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		stripPlaces(v)
		ds := v["diagnostics"].(map[string]any)
		ds["new"], ds["fixed"] = sortedJSON(ds["new"]), sortedJSON(ds["fixed"])
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	asGiven := func(files []meshgen.File) map[string]string {
		m := map[string]string{}
		for _, f := range files {
			m[f.Name] = string(f.Data)
		}
		return m
	}
	want := diffOf(asGiven(sides["base"]), asGiven(sides["head"]))
	if !strings.Contains(want, `"changed": 7`) || !strings.Contains(want, `"new": 1`) {
		t.Fatalf("the diff does not hold the edit:\n%s", want)
	}
	r := rand.New(rand.NewPCG(23, 1))
	for i := range 3 {
		got := diffOf(reordered(r, sides["base"], true), reordered(r, sides["head"], true))
		if got != want {
			t.Errorf("layout %d differs:\n%s\nwant:\n%s", i, got, want)
		}
	}
}

// TestDiffGitProjectConfig: each side reads its own .meshc.yaml, the
// revision's from the revision.
func TestDiffGitProjectConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	diffTree(t, "shadow")
	gitIn(t, "init", "-q")
	suppressed := "suppress:\n  - code: MC4002\n    reason: the merge is intended\n"
	if err := os.WriteFile(".meshc.yaml", []byte(suppressed), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, "add", ".meshc.yaml", "head")
	gitIn(t, "commit", "-q", "-m", "suppressed")
	if err := os.Remove(".meshc.yaml"); err != nil {
		t.Fatal(err)
	}
	runCLICases(t, []cliCase{
		{"the suppression is gone in the working tree", []string{"diff", "--git", "HEAD", "head", "--fail-on", "warning"}, 1, "findings: 1 new, 0 fixed", ""},
	})
}

// gitIn runs git in the working directory, as a fixed author.
func gitIn(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=meshc", "-c", "user.email=meshc@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestDiffSameAtAnyParallelism: the reports are the same bytes whatever
// GOMAXPROCS, in every format.
func TestDiffSameAtAnyParallelism(t *testing.T) {
	diffTree(t, "subset")
	for _, format := range meshdiff.Formats() {
		var first string
		for i, procs := range []int{1, 4} {
			prev := runtime.GOMAXPROCS(procs)
			_, out, errOut := meshc(t, "", "diff", "base", "head", "-o", format)
			runtime.GOMAXPROCS(prev)
			if errOut != "" {
				t.Fatalf("-o %s: %s", format, errOut)
			}
			if i == 0 {
				first = out
			} else if out != first {
				t.Errorf("-o %s differs at GOMAXPROCS %d", format, procs)
			}
		}
	}
}

// TestDiffGitRenders: a kustomization at a revision renders from the
// revision, its bases beside it included (they are not under PATH), and
// so does a chart.
func TestDiffGitRenders(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	for from, to := range map[string]string{"kustomize": "k", "helm/mesh": "chart"} {
		if err := os.CopyFS(filepath.Join(dir, to), os.DirFS(filepath.Join(fixtures, from))); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	gitIn(t, "init", "-q")
	gitIn(t, "add", ".")
	gitIn(t, "commit", "-q", "-m", "one")
	base := filepath.Join("k", "base", "reviews.yaml")
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, []byte(strings.Replace(string(data), "port: 9080", "port: 9090", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLICases(t, []cliCase{
		{"an overlay whose base changed", []string{"diff", "--git", "HEAD", "k/overlays/staging"}, 0,
			"~ modified Service shop/reviews (HEAD:k/base/reviews.yaml:2 → k/base/reviews.yaml:2)\n    ~ spec.ports[0].port: 9080 → 9090", ""},
		{"a chart as committed", []string{"diff", "--git", "HEAD", "chart", "--fail-on-change", "--fail-on", "none"}, 0, "objects: 0 added, 0 removed, 0 modified", ""},
	})
}

// TestDiffKustomizeOverlay: both sides of a diff render an overlay the
// same way, two folders as two revisions of the repository; the
// revision's tree holds the base the overlay reaches beside it.
func TestDiffKustomizeOverlay(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	src, err := filepath.Abs(filepath.Join(fixtures, "kustomize"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for _, side := range []string{"old", "new"} {
		if err := os.CopyFS(side, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	canary := filepath.Join("new", "overlays", "prod", "canary.yaml")
	data, err := os.ReadFile(canary)
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, "init", "-q")
	gitIn(t, "add", "new")
	gitIn(t, "commit", "-q", "-m", "canary at 10%")
	shifted := strings.NewReplacer("weight: 90", "weight: 70", "weight: 10", "weight: 30").Replace(string(data))
	if err := os.WriteFile(canary, []byte(shifted), 0o644); err != nil {
		t.Fatal(err)
	}
	const weights = "~ spec.http[0].route[0].weight: 90 → 70\n    ~ spec.http[0].route[1].weight: 10 → 30\n"
	runCLICases(t, []cliCase{
		{"two folders", []string{"diff", "old/overlays/prod", "new/overlays/prod", "--fail-on", "none"}, 0,
			"modified VirtualService shop/reviews (old/overlays/prod/kustomization.yaml:5 → new/overlays/prod/kustomization.yaml:5)\n    " + weights, ""},
		{"a revision", []string{"diff", "--git", "HEAD", "new/overlays/prod", "--fail-on", "none"}, 0,
			"findings: 0 new, 0 fixed, 2 unchanged", ""},
		{"a revision: the weights", []string{"diff", "--git", "HEAD", "new/overlays/prod", "--fail-on", "none"}, 0,
			"(HEAD:new/overlays/prod/kustomization.yaml:5 → new/overlays/prod/kustomization.yaml:5)\n    " + weights, ""},
	})
}

// TestDiffLeavesCompileGC: comparing is an emit phase, collected under
// its own policy, not the compile phase's, which would not collect a
// diff's heap below the memory limit.
func TestDiffLeavesCompileGC(t *testing.T) {
	diffTree(t, "weights")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(compileGCPercent))
	if code, out, errOut := meshc(t, "", "diff", "base", "head"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if percent := debug.SetGCPercent(compileGCPercent); percent != diffGCPercent {
		t.Errorf("GC percent %d after diff, want %d", percent, diffGCPercent)
	}
}
