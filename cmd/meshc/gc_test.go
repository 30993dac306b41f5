package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGCPolicy(t *testing.T) {
	tests := []struct {
		name    string
		total   uint64
		percent int
		limit   int64
	}{
		{"unknown memory keeps the uncapped default", 0, fallbackGCPercent, math.MaxInt64},
		{"a quarter of the machine caps the heap", 8 << 30, compileGCPercent, 2 << 30},
		{"a small machine", 1 << 30, compileGCPercent, 256 << 20},
		{"the most memory a machine can report", math.MaxUint64, compileGCPercent, math.MaxUint64 / 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			percent, limit := gcPolicy(tt.total, compileGCPercent)
			if percent != tt.percent || limit != tt.limit {
				t.Errorf("gcPolicy(%d) = %d, %d; want %d, %d", tt.total, percent, limit, tt.percent, tt.limit)
			}
		})
	}
}

func TestCollectAfterLoad(t *testing.T) {
	tests := []struct {
		name       string
		heap, goal uint64
		want       bool
	}{
		// The generated 100-namespace mesh's load, in MB.
		{"HTTPRoutes leave a heap the later stages take past the goal", 60 << 20, 162 << 20, true},
		{"VirtualServices leave room for the later stages", 36 << 20, 221 << 20, false},
		{"at a third of the goal the later stages just fit", 50 << 20, 150 << 20, false},
		{"a heap past its goal", 40 << 20, 32 << 20, true},
		{"a batch compile's goal is the memory limit", 60 << 20, 2 << 30, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := collectAfterLoad(tt.heap, tt.goal); got != tt.want {
				t.Errorf("collectAfterLoad(%d, %d) = %v, want %v", tt.heap, tt.goal, got, tt.want)
			}
		})
	}
}

func TestTotalMemory(t *testing.T) {
	// Where it is known, it is the memory of a machine that runs tests.
	if m := totalMemory(); m != 0 && m < 64<<20 {
		t.Errorf("totalMemory() = %d bytes", m)
	}
}

// TestRecompileGC: a server's recompile collects as a compile does, and
// the server as before once it ends.
func TestRecompileGC(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	end := recompileGC(8 << 30)
	if percent, limit := debug.SetGCPercent(recompileGCPercent), debug.SetMemoryLimit(-1); percent != recompileGCPercent || limit != 2<<30 {
		t.Errorf("recompiling: GC percent %d, memory limit %d; want %d, %d", percent, limit, recompileGCPercent, 2<<30)
	}
	end()
	if percent, limit := debug.SetGCPercent(serveGCPercent), debug.SetMemoryLimit(-1); percent != serveGCPercent || limit != math.MaxInt64 {
		t.Errorf("after the recompile: GC percent %d, memory limit %d; want %d, none", percent, limit, serveGCPercent)
	}
}

// TestCollectionResumed: atstart holds collection off from the packages'
// initialization until main sets its policy; TestMain turned it back on
// for the tests.
func TestCollectionResumed(t *testing.T) {
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	if percent < 0 {
		t.Fatalf("GC percent %d in tests, want collection on", percent)
	}
}
