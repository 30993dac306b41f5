package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/meshc/meshc/internal/compile"
)

// Garbage collection while compiling. meshc is a short batch run that
// builds a heap of many small objects from nothing, and both collecting
// and growing the heap cost: every fresh page is a fault (a cheap one
// under huge pages, see internal/hugepages), every collection traces the
// live heap. Measured on the generated 100-namespace mesh (lint, CPU time
// per run, huge pages on): 0.36 s at GOGC 200, 0.28 s at 800, 0.30 s at
// 1600 and 0.33 s with no collection at all, for a peak RSS of 163, 190,
// 188 and 214 MB. 800 is the best of these, at about 27 MB more memory.
//
// A heap allowed nine times its live size must not run away on a large
// input: the memory limit caps it at a quarter of the memory meshc may use
// (the machine's, or its container's limit), above which the runtime collects as often as it needs to stay below
// (or, past it for good, spends up to half the CPU trying). Building's
// emit phase and the server set their own policy (compileGC's undo).
//
// A server lives long and holds its configurations between recompiles,
// so it collects at the default then; a recompile is a compile phase of
// its own, which builds a heap of garbage as large again as what the
// server holds (recompileGC). Measured on the generated 100-namespace
// mesh (BenchmarkRecompile's edit to a VirtualService every namespace
// sees, about 380 MB live before it, a machine with other jobs): at the
// default the recompile takes 1.8 to 2.6 s of CPU, a quarter of it
// collecting; at GOGC 800 1.6 to 2.15 s, no collection left in its
// profile, for a heap of 1.7 GB instead of 0.8 GB until the server's
// next collection.
const (
	compileGCPercent = 800
	// fallbackGCPercent is the setting where the machine's memory is
	// unknown, without a cap.
	fallbackGCPercent = 200
	// serveGCPercent is a server's between recompiles.
	serveGCPercent = 100
	// diffGCPercent is a diff's while comparing (newDiffCmd).
	diffGCPercent = 70
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

// recompileGC sets the compile phase's policy for one of a server's
// recompiles, for total bytes of usable memory, and returns what sets
// the server's back.
func recompileGC(total uint64) (end func()) {
	compileGC(total)
	return func() { leaveCompileGC(serveGCPercent) }
}

// afterStageGC is the compile's hook between stages (compile.Options.
// AfterStage). Load leaves the heap with garbage (files, parse trees,
// validation) around the objects, and the stages after it allocate up to
// about twice what load leaves (1.3 to 2 times on the generated meshes).
// Where that would cross the goal the last collection set, one
// collection is due while resolving or linting, tracing resolve's larger
// heap: collecting as load ends traces the objects alone and sets the
// goal from them instead. On the generated 100-namespace mesh with its
// routes as HTTPRoutes, that is about 30 MB traced instead of 85 MB and a
// peak of 190 MB instead of 220 MB; the same mesh with VirtualServices,
// whose load leaves less, does not collect.
func afterStageGC(stage string) {
	if stage != compile.StageLoad {
		return
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	if collectAfterLoad(s[0].Value.Uint64(), s[1].Value.Uint64()) {
		runtime.GC()
	}
}

// collectAfterLoad reports whether the stages after load, allocating
// twice the heap bytes load leaves, would reach goal bytes.
func collectAfterLoad(heap, goal uint64) bool {
	return 3*heap > goal
}
