package main

import (
	"context"
	"io"
	"net/http"
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
		{"bad listen address", []string{"serve", bookinfo, "--listen", "nowhere:-1"}, exitUsage, "", "--listen"},
	})
}

// serve starts, compiles, answers /readyz, and stops on SIGTERM after
// draining, with the signal's exit status.
func TestServeRunsAndStops(t *testing.T) {
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
