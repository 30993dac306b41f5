package atstart

import (
	"runtime/debug"
	"testing"
)

// TestResume: collection is off from the package's initialization until
// Resume, which restores the setting from before.
func TestResume(t *testing.T) {
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GC percent %d before Resume, want -1 (off)", got)
	}
	if held == -1 {
		t.Fatal("init recorded collection as off")
	}
	Resume()
	if got := debug.SetGCPercent(held); got != held {
		t.Fatalf("GC percent %d after Resume, want %d", got, held)
	}
}
