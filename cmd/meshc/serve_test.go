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

// serve starts, compiles, answers /readyz, recompiles on SIGHUP (which
// main's handler, here mainHup, then no longer sees), and stops on SIGTERM
// after draining, with the signal's exit status.
func TestServeRunsAndStops(t *testing.T) {
	mainHup := make(chan os.Signal, 1)
	signal.Notify(mainHup, syscall.SIGHUP)
	defer signal.Stop(mainHup)
	var stderr testfiles.Buffer
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", filepath.Join("..", "..", "examples", "bookinfo"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"},
			strings.NewReader(""), io.Discard, &stderr)
	}()
	addr := regexp.MustCompile(`msg="serving metrics and status" address=(\S+)`)
	var web string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil && strings.Contains(stderr.String(), "msg=compiled") {
			web = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
	}
	resp, err := http.Get("http://" + web + "/readyz")
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
	for deadline := time.Now().Add(10 * time.Second); strings.Count(stderr.String(), "msg=compiled") < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no recompile after SIGHUP:\n%s", stderr.String())
		}
	}
	select {
	case <-mainHup:
		t.Error("SIGHUP reached main's handler too: it would stop serve")
	default:
	}
	cancel(interrupted{syscall.SIGTERM})
	select {
	case code := <-done:
		if code != 143 || !strings.Contains(stderr.String(), "msg=stopped") {
			t.Errorf("exit %d (want 143) after SIGTERM:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}
