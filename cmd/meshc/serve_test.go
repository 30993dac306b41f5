package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/testfiles"
)

func TestServeUsage(t *testing.T) {
	bookinfo := filepath.Join("..", "..", "examples", "bookinfo")
	runCLICases(t, []cliCase{
		{"standard input", []string{"serve", "-"}, exitUsage, "", "standard input is not one"},
		{"debounce max below after", []string{"serve", bookinfo, "--debounce-after", "2s", "--debounce-max", "1s"}, exitUsage, "", "0 < after ≤ max"},
		{"log format", []string{"serve", bookinfo, "--log-format", "xml"}, exitUsage, "", "--log-format"},
		{"tls mode", []string{"serve", bookinfo, "--tls-mode", "maybe"}, exitUsage, "", "--tls-mode"},
		{"no objects", []string{"serve", t.TempDir()}, exitUsage, "", "no Kubernetes objects"},
		{"bad listen address", []string{"serve", bookinfo, "--listen", "nowhere:-1"}, exitUsage, "", "--listen"},
	})
}

// serving is meshc serve ARGS... running in-process until its test ends:
// its log, the address of its status endpoints, and how to stop it.
type serving struct {
	stderr testfiles.Buffer
	web    string
	cancel context.CancelCauseFunc
	done   chan int
}

func startServe(t *testing.T, args ...string) *serving {
	t.Helper()
	s := &serving{done: make(chan int, 1)}
	ctx, cancel := context.WithCancelCause(context.Background())
	s.cancel = cancel
	go func() {
		s.done <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, args...), strings.NewReader(""), io.Discard, &s.stderr)
	}()
	t.Cleanup(func() {
		cancel(interrupted{syscall.SIGTERM})
		<-s.done
	})
	addr := regexp.MustCompile(`msg="serving metrics and status" address=(\S+)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(s.stderr.String()); m != nil && strings.Contains(s.stderr.String(), "msg=compiled") {
			s.web = m[1]
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", s.stderr.String())
		}
	}
}

// compiled waits for the nth compile's log line and returns it.
func (s *serving) compiled(t *testing.T, n int) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var lines []string
		for line := range strings.Lines(s.stderr.String()) {
			if strings.Contains(line, "msg=compiled") {
				lines = append(lines, line)
			}
		}
		if len(lines) >= n {
			return lines[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compile %d:\n%s", n, s.stderr.String())
		}
	}
}

// serve starts, compiles, answers /readyz, recompiles on SIGHUP (which
// main's handler, here mainHup, then no longer sees), and stops on SIGTERM
// after draining, with the signal's exit status.
func TestServeRunsAndStops(t *testing.T) {
	mainHup := make(chan os.Signal, 1)
	signal.Notify(mainHup, syscall.SIGHUP)
	defer signal.Stop(mainHup)
	s := startServe(t, filepath.Join("..", "..", "examples", "bookinfo"))
	resp, err := http.Get("http://" + s.web + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %d after the first compile", resp.StatusCode)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.compiled(t, 2)
	select {
	case <-mainHup:
		t.Error("SIGHUP reached main's handler too: it would stop serve")
	default:
	}
	s.cancel(interrupted{syscall.SIGTERM})
	select {
	case code := <-s.done:
		s.done <- code
		if code != 143 || !strings.Contains(s.stderr.String(), "msg=stopped") {
			t.Errorf("exit %d (want 143) after SIGTERM:\n%s", code, s.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// TestServeRecompilesItsInputs: a recompile reads what the first compile
// read — here the overlay .meshc.yaml names when no PATH is given, not
// the working directory — rendered alike.
func TestServeRecompilesItsInputs(t *testing.T) {
	mainHup := make(chan os.Signal, 1)
	signal.Notify(mainHup, syscall.SIGHUP)
	defer signal.Stop(mainHup)
	overlay, err := filepath.Abs(fixtures + "/kustomize/overlays/staging")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{".meshc.yaml": "kustomize: [" + overlay + "]\n"})
	s := startServe(t, "--project-config", filepath.Join(dir, ".meshc.yaml"))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// What was compiled, not how much of it was rebuilt.
	counts := regexp.MustCompile(`proxies=\d+|diagnostics=\d+`)
	first := strings.Join(counts.FindAllString(s.compiled(t, 1), -1), " ")
	again := strings.Join(counts.FindAllString(s.compiled(t, 2), -1), " ")
	if first == "" || first != again {
		t.Errorf("first compile %q, recompile %q:\n%s", first, again, s.stderr.String())
	}
}
