//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/testfiles"
)

// badVS is a VirtualService the API server rejects (MC1003): lint exits 1.
const badVS = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: default}\nspec: {hosts: [a], bogus: 1}\n"

// meshcWithin is meshc failing the test when it hangs, as a read waiting
// on a FIFO would.
func meshcWithin(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	testfiles.Within(t, "meshc "+strings.Join(args, " "), func() { code, out, errOut = meshc(t, "", args...) })
	return code, out, errOut
}

// TestConfigFilesThatAreNotFiles: --mesh-config and --project-config
// naming /dev/zero or a FIFO, and a .meshc.yaml linked to /dev/zero, are
// refused at once (exit 2) with the path, never read without end.
func TestConfigFilesThatAreNotFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"m/ns.yaml": goodNS})
	m := filepath.Join(dir, "m")
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	linked := filepath.Join(dir, "linked")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(linked, "ns.yaml"), []byte(goodNS), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(linked, ".meshc.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"mesh config device", []string{"lint", m, "--mesh-config", "/dev/zero"}, "mesh config: /dev/zero is a character device, not a regular file"},
		{"mesh config FIFO", []string{"lint", m, "--mesh-config", fifo}, "mesh config: " + fifo + " is a pipe, not a regular file"},
		{"project config device", []string{"lint", m, "--project-config", "/dev/zero"}, "/dev/zero is a character device, not a regular file"},
		{"project config FIFO", []string{"lint", m, "--project-config", fifo}, fifo + " is a pipe, not a regular file"},
		{"found .meshc.yaml linked to a device", []string{"lint", linked}, filepath.Join(linked, ".meshc.yaml") + " is a character device, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := meshcWithin(t, tc.args...)
			if code != exitUsage || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", code, exitUsage, tc.want, out, errOut)
			}
		})
	}
}

// lintJSON runs lint -o json and decodes its report.
func lintJSON(t *testing.T, args ...string) (int, diag.Input, []diag.Diagnostic) {
	t.Helper()
	code, out, errOut := meshc(t, "", append([]string{"lint", "-o", "json"}, args...)...)
	var rep struct {
		Diagnostics []diag.Diagnostic `json:"diagnostics"`
		Input       diag.Input        `json:"input"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("lint -o json: %v\n%s\n%s", err, out, errOut)
	}
	return code, rep.Input, rep.Diagnostics
}

func hasCode(ds []diag.Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// TestOnlyRealBuildsAreSkipped: a directory is passed over as an earlier
// build only when its marker is meshc's and the files it lists are there;
// then it is named. An empty marker, or a build missing a file, hides
// nothing: the MC1003 below it is reported and lint exits 1.
func TestOnlyRealBuildsAreSkipped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, sub string)
		skipped bool
	}{
		{"empty marker", func(t *testing.T, sub string) {
			if err := os.WriteFile(filepath.Join(sub, ".meshc-out"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"build missing a listed file", func(t *testing.T, sub string) {
			out := filepath.Join(sub, "out")
			if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out, "-q"); code != 0 {
				t.Fatalf("build: exit %d\n%s", code, errOut)
			}
			if err := os.Remove(filepath.Join(out, "index.json")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sub, "vs.yaml"), []byte(badVS), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"earlier build", func(t *testing.T, sub string) {
			if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", filepath.Join(sub, "out"), "-q"); code != 0 {
				t.Fatalf("build: exit %d\n%s", code, errOut)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := writeFiles(t, map[string]string{"ns.yaml": goodNS, "sub/vs.yaml": badVS})
			sub := filepath.Join(m, "sub")
			tc.prepare(t, sub)
			skippedDir := sub
			if tc.skipped {
				skippedDir = filepath.Join(sub, "out")
			}
			code, out, _ := meshc(t, "", "lint", m)
			named := strings.Contains(out, "skipped 1 earlier meshc build ("+skippedDir+")")
			if code != exitFindings || !strings.Contains(out, "MC1003") || named != tc.skipped {
				t.Errorf("exit %d, want %d with MC1003, skipped named %v\n%s", code, exitFindings, tc.skipped, out)
			}
			_, in, ds := lintJSON(t, m)
			var dirs []string
			for _, s := range in.Skipped {
				if s.Reason == diag.EarlierBuild {
					dirs = append(dirs, s.File)
				}
			}
			if !hasCode(ds, "MC1003") || (len(dirs) == 1 && dirs[0] == skippedDir) != tc.skipped || (!tc.skipped && len(dirs) > 0) {
				t.Errorf("JSON: input.skipped %v, MC1003 %v", in.Skipped, hasCode(ds, "MC1003"))
			}
		})
	}
}

// TestProjectConfigStopsAtTheRepository: a .meshc.yaml above the
// repository root that would leave everything out is not used; -v and the
// JSON report say which file applies.
func TestProjectConfigStopsAtTheRepository(t *testing.T) {
	outside := writeFiles(t, map[string]string{".meshc.yaml": "exclude: [\"**\"]\n", "repo/m/vs.yaml": badVS})
	repo := filepath.Join(outside, "repo")
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(repo, "m")
	code, out, errOut := meshc(t, "", "lint", m, "-v")
	if code != exitFindings || !strings.Contains(out, "MC1003") {
		t.Errorf("the parent's .meshc.yaml applied: exit %d\n%s", code, out)
	}
	if want := "meshc: no project config: no .meshc.yaml in " + m + " or above it, up to the repository root\n"; errOut != want {
		t.Errorf("-v said %q, want %q", errOut, want)
	}
	if _, in, _ := lintJSON(t, m); in.ProjectConfig != "" {
		t.Errorf("JSON input.projectConfig = %q, want none", in.ProjectConfig)
	}
	own := filepath.Join(repo, ".meshc.yaml")
	if err := os.WriteFile(own, []byte("failOn: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := meshc(t, "", "lint", m, "--verbose"); code != 0 || errOut != "meshc: project config "+own+"\n" {
		t.Errorf("exit %d, -v said %q", code, errOut)
	}
	if _, in, _ := lintJSON(t, m); in.ProjectConfig != own {
		t.Errorf("JSON input.projectConfig = %q, want %s", in.ProjectConfig, own)
	}
}
