package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/outdir"
)

// The tests below reproduce the build-output items of the reliability
// issue: nothing deleted that meshc did not write, OUT a directory or
// nothing, diagnostics delivered before the swap, and prompt stops. Where
// OUT lies outside a temporary directory, the input does not exist, so
// that even a check that let OUT through would stop before writing.

const missingInput = "/nonexistent/manifests"

// A file dropped into OUT while the build runs stops the swap: exit 2,
// OUT keeps the file and its earlier build, the finished build is removed.
func TestBuildKeepsFilesAddedDuringBuild(t *testing.T) {
	out := built(t)
	before := snapshot(t, out)
	ctx := outdir.WithHooks(context.Background(), outdir.Hooks{BeforeSwap: func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "NOTES.txt"), []byte("notes"), 0o644); err != nil {
			t.Error(err)
		}
	}})
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"build", bookinfoDir, "-o", out, "--format", "xds", "-q"}, strings.NewReader(""), &stdout, &stderr)
	want := "files meshc did not write appeared in it during the build: NOTES.txt; the finished build was removed; " + out + " left as it was"
	if code != exitUsage || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	before["NOTES.txt"] = "notes"
	sameTree(t, "OUT", before, snapshot(t, out))
	assertNothingBeside(t, out)
}

// With --force, a config file inside OUT is an input as the manifests
// are: named by a flag, or by the .meshc.yaml found above the inputs.
func TestBuildForceKeepsConfigFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"out/mesh.yaml":    "trustDomain: cluster.local\n",
		"out/project.yaml": "failOn: error\n",
		"m/ns.yaml":        goodNS,
		"p/.meshc.yaml":    "meshConfig: ../out/mesh.yaml\n",
		"p/ns.yaml":        goodNS,
	})
	out := filepath.Join(dir, "out")
	before := snapshot(t, out)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"--mesh-config", []string{filepath.Join(dir, "m"), "--mesh-config", filepath.Join(out, "mesh.yaml")}},
		{"--project-config", []string{filepath.Join(dir, "m"), "--project-config", filepath.Join(out, "project.yaml")}},
		{".meshc.yaml's meshConfig", []string{filepath.Join(dir, "p")}},
	} {
		args := append(append([]string{"build"}, tc.args...), "-o", out, "--force", "-q")
		code, _, errOut := meshc(t, "", args...)
		if code != exitUsage || !strings.Contains(errOut, "it holds the input") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal naming the input", tc.name, code, errOut)
		}
		sameTree(t, tc.name, before, snapshot(t, out))
	}
}

// OUT must be a directory or nothing: a device node is refused whatever
// the flags, and so is /dev/stdout, which resolves to a pipe.
func TestBuildRefusesNonDirectoryOUT(t *testing.T) {
	code, _, errOut := meshc(t, "", "build", missingInput, "-o", os.DevNull, "--force")
	if code != exitUsage || !strings.Contains(errOut, "it is a character device, and OUT must be a directory or absent") {
		t.Errorf("-o %s --force: exit %d, stderr %q", os.DevNull, code, errOut)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v", os.DevNull, err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := meshcCmd("build", missingInput, "-o", "/dev/stdout")
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	w.Close()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(stderr.String(), "it is a pipe, and OUT must be a directory or absent") || strings.Contains(stderr.String(), "lock") {
		t.Errorf("-o /dev/stdout into a pipe: exit %d (%v), stderr %q", code, err, stderr.String())
	}
}

// A mount point cannot be replaced: /proc and /dev are refused even with
// --force, before anything is read or written.
func TestBuildRefusesMountPoint(t *testing.T) {
	tested := 0
	for _, dir := range []string{"/proc", "/dev"} {
		var st, parent syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || syscall.Stat(filepath.Dir(dir), &parent) != nil || st.Dev == parent.Dev {
			continue // not a mount point here: not a case for this test
		}
		tested++
		code, _, errOut := meshc(t, "", "build", missingInput, "-o", dir, "--force")
		if code != exitUsage || !strings.Contains(errOut, "it is a mount point") {
			t.Errorf("-o %s --force: exit %d, stderr %q", dir, code, errOut)
		}
	}
	if tested == 0 {
		t.Skip("neither /proc nor /dev is a mount point here")
	}
}

// The diagnostics are printed before the swap: when standard error is a
// closed pipe, the build is not swapped in and meshc exits 2, not killed
// by SIGPIPE with OUT replaced.
func TestBuildClosedStderrKeepsOUT(t *testing.T) {
	out := built(t)
	before := snapshot(t, out)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := meshcCmd("build", bookinfoDir, "-o", out, "--format", "xds")
	cmd.Stderr = w
	_ = cmd.Run()
	w.Close()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() || ws.ExitStatus() != exitUsage {
		t.Errorf("build with a closed standard error: %v, want exit 2", cmd.ProcessState)
	}
	sameTree(t, "OUT", before, snapshot(t, out))
	assertNothingBeside(t, out)
}

// A stop during emit returns at once, the proxies being compiled stopping
// at their next resource, and leaves OUT as it was and nothing beside it.
func TestBuildStopsPromptly(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a large generated mesh")
	}
	mesh := t.TempDir()
	if _, _, err := meshgen.Write(mesh, meshgen.Options{Namespaces: 60, ServicesPerNS: 20, SidecarEveryNth: -1}); err != nil {
		t.Fatal(err)
	}
	out := built(t)
	before := snapshot(t, out)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopped := make(chan time.Time, 1)
	go func() {
		// Stop once the build's directory is made: the workers are
		// then compiling the first proxies, whose clusters and
		// listeners, shared by every proxy of the mesh, take seconds.
		pattern := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".meshc-tmp-*", outdir.Marker)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if files, _ := filepath.Glob(pattern); len(files) > 0 {
				break
			}
		}
		stopped <- time.Now()
		cancel(interrupted{syscall.SIGTERM})
	}()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"build", mesh, "-o", out, "-q", "--fail-on", "none"}, strings.NewReader(""), &stdout, &stderr)
	took := time.Since(<-stopped)
	t.Logf("stopped %v after the cancel", took)
	if code != 143 || !strings.Contains(stderr.String(), "left as it was") {
		t.Errorf("exit %d, stderr %q; want 143", code, stderr.String())
	}
	// The bound leaves room for a loaded machine; an unloaded one stops
	// in tens of milliseconds.
	if took > time.Second {
		t.Errorf("stopped %v after the cancel, want under a second", took)
	}
	sameTree(t, "OUT", before, snapshot(t, out))
	assertNothingBeside(t, out)
}
