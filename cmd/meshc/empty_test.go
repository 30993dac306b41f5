package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestEmptyInputIsNoPass: a run that loads no object exits 2 unless
// --allow-empty says that is expected; inputs that fail to load report
// themselves as usual (issue 28).
func TestEmptyInputIsNoPass(t *testing.T) {
	empty := writeFiles(t, map[string]string{"README.md": "no manifests here\n", "ci.yaml": "jobs: {test: {runs-on: linux}}\n"})
	broken := writeFiles(t, map[string]string{"broken.yaml": "a: b: c\n"})
	runCLICases(t, []cliCase{
		{"lint of no objects", []string{"lint", empty}, 2, "", "no Kubernetes objects found in " + empty},
		{"lint with --allow-empty", []string{"lint", empty, "--allow-empty"}, 0, "0 objects", ""},
		{"build of no objects", []string{"build", empty, "-o", t.TempDir() + "/out"}, 2, "", "no Kubernetes objects found"},
		{"broken input still reports", []string{"lint", broken}, 1, "MC1001", ""},
	})
}

// TestEmptyPipeIsNotTheInput: `true | meshc lint` in a directory of
// manifests lints the directory, not the empty pipe; a pipe that carries
// manifests is read, its first byte included.
func TestEmptyPipeIsNotTheInput(t *testing.T) {
	dir := writeFiles(t, map[string]string{"ns.yaml": goodNS})
	t.Chdir(dir)
	for _, tc := range []struct {
		name, piped, want string
	}{
		{"empty pipe", "", "2 objects from 1 file"},
		{"pipe with manifests", "apiVersion: v1\nkind: Namespace\nmetadata: {name: piped}\n", "1 object from 1 file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go func() {
				_, _ = w.WriteString(tc.piped)
				w.Close()
			}()
			var out, errOut bytes.Buffer
			code := run(context.Background(), []string{"lint"}, r, &out, &errOut)
			if code != 0 || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit %d, want 0 and %q:\n%s%s", code, tc.want, out.String(), errOut.String())
			}
		})
	}
}

// TestSignalEndsWaitForPipe: a pipe whose writer has not written yet keeps
// meshc waiting, as reading the input would, until the run's context ends.
func TestSignalEndsWaitForPipe(t *testing.T) {
	t.Chdir(writeFiles(t, map[string]string{"ns.yaml": goodNS}))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"lint"}, r, &out, &errOut) }()
	select {
	case code := <-done:
		if code == 0 {
			t.Errorf("exit 0 after the context ended:\n%s", out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("meshc still waits for the pipe after its context ended")
	}
}
