// Command meshc compiles Kubernetes + Istio (+ HNC) manifests into
// diagnostics and per-proxy Envoy config. This package holds the cobra
// commands only: flags, arguments, renderer choice and exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshc/meshc/internal/diag"
	// Huge pages for the heap, and no collection from before other
	// packages' init until main sets its policy.
	_ "github.com/meshc/meshc/internal/hugepages/atstart"
)

func main() {
	compileGC(totalMemory())
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	// SIGHUP (the terminal closed) stops a run as SIGTERM does. SIGQUIT
	// keeps Go's meaning, a goroutine dump for debugging a hang: like
	// kill -9 it leaves a build's temporary directory, which the next
	// build into the same OUT removes.
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		// The first signal asks every phase to stop and clean up; a
		// second one stops at once (a build's temporary directory is then
		// removed by the next build into the same OUT).
		s := <-sigs
		cancel(interrupted{s.(syscall.Signal)})
		s = <-sigs
		os.Exit(interrupted{s.(syscall.Signal)}.code())
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// interrupted is the cause of a context ended by a signal.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

// code is the shell's exit status for death by the signal: 129 for
// SIGHUP, 130 for SIGINT, 143 for SIGTERM.
func (i interrupted) code() int { return 128 + int(i.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// Exit statuses shared by every command.
const (
	exitOK       = 0
	exitFindings = 1 // something reached --fail-on
	exitUsage    = 2 // bad flags or arguments, or input that could not be read
)

// exitError carries an exit status out of a command. A nil err means the
// command already said everything it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// run executes meshc with args and returns the exit status; tests call it
// in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var sig interrupted
	if errors.As(context.Cause(ctx), &sig) {
		// Whatever the command made of it, the run was cut short; its
		// error, if any, says what was left as it was.
		if err == nil {
			err = sig
		}
		diag.Fprintf(stderr, "meshc: %v\n", err)
		return sig.code()
	}
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			diag.Fprintf(stderr, "meshc: %v\n", ee.err)
		}
		return ee.code
	}
	// Anything else comes from cobra itself: an unknown flag or command.
	diag.Fprintf(stderr, "meshc: %v\nRun 'meshc --help' for usage.\n", err)
	return exitUsage
}
