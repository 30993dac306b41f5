package main

import (
	"math"
	"runtime/debug"
)

// Garbage collection while compiling. meshc is a short batch run that
// builds a heap of many small objects from nothing, and both collecting
// and growing the heap cost: every fresh page is a fault (a cheap one
// under huge pages, see internal/hugepages), every collection traces the
// live heap. Compiling allocates mostly what stays live to the end (the
// objects, the resolved mesh, the findings), so a collection on the way
// frees little: on the generated 100-namespace mesh, lint's one
// collection at GOGC 800 found 23 of 30 MB live. Measured there (lint, 15
// paired runs, huge pages on): 0.233 s CPU at GOGC 800 and 0.221 s with
// no collection, for a peak RSS of 163 and 177 MiB. (Before the loader
// stopped building JSON values, with twice the garbage: 0.36 s at GOGC
// 200, 0.28 s at 800, 0.33 s with no collection.)
//
// So the compile phase collects nothing below the memory limit, a quarter
// of the memory meshc may use (the machine's, or its container's limit):
// there the runtime collects as often as it needs to stay below (or, past
// it for good, spends up to half the CPU trying). Building's emit phase
// and the server set their own policy (compileGC's undo).
const (
	// compileGCPercent turns collection off but at the memory limit.
	compileGCPercent = -1
	// fallbackGCPercent is the setting where the machine's memory is
	// unknown, without a cap.
	fallbackGCPercent = 200
)

// compileGC sets the compile phase's collection policy for total bytes of
// usable memory (0: unknown).
func compileGC(total uint64) {
	percent, limit := gcPolicy(total)
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
}

// gcPolicy is compileGC's GC percent and memory limit.
func gcPolicy(total uint64) (percent int, limit int64) {
	if total == 0 {
		return fallbackGCPercent, math.MaxInt64
	}
	return compileGCPercent, int64(total / 4)
}

// leaveCompileGC sets percent for what follows the compile phase (emit's
// large documents, a long-lived server) and lifts the compile phase's cap.
func leaveCompileGC(percent int) {
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(math.MaxInt64)
}
