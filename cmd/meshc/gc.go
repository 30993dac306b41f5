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
// live heap. A compile frees little: most of what load allocates are the
// objects, live to the end, and the later stages allocate about as much
// again, most of it kept. So a batch compile does not collect at all
// (compileGCPercent): at GOGC 800 (nine times live) the only collections
// were the early ones, at a heap of 32 MB and then nine times what they
// found live, tracing a heap still growing while the two cores had loading
// to do. Measured on the generated 100-namespace mesh (lint, paired runs
// on a shared 2-core machine): a tenth less CPU and wall time for 12 MB
// more peak memory (153 MB instead of 141 MB); with its routes as
// HTTPRoutes, 13% less for 51 MB more (207 MB); on 1,000 namespaces a
// quarter less CPU for 13% more memory (1.08 GB instead of 0.96 GB).
//
// A heap that is never collected must not run away on a large input: the
// memory limit caps it at a quarter of the memory meshc may use (the
// machine's, or its container's limit), above which the runtime collects
// as often as it needs to stay below (or, past it for good, spends up to
// half the CPU trying). Building's emit phase and the server set their own
// policy (compileGC's undo).
//
// A server lives long and holds its configurations between recompiles,
// so it collects at the default then; a recompile is a compile phase of
// its own, which builds a heap of garbage as large again as what the
// server holds (recompileGC), and collects at GOGC 800: the heap the
// server holds is its live size, and nine times it is room enough.
// Measured on the generated 100-namespace mesh (BenchmarkRecompile's edit
// to a VirtualService every namespace sees, about 380 MB live before it,
// a machine with other jobs): at the default the recompile takes 1.8 to
// 2.6 s of CPU, a quarter of it collecting; at GOGC 800 1.6 to 2.15 s, no
// collection left in its profile, for a heap of 1.7 GB instead of 0.8 GB
// until the server's next collection.
const (
	// compileGCPercent is a batch compile's: no collection below the
	// memory limit.
	compileGCPercent = -1
	// recompileGCPercent is a server's recompile's.
	recompileGCPercent = 800
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
	setGC(gcPolicy(total, compileGCPercent))
}

func setGC(percent int, limit int64) {
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
}

// gcPolicy is the GC percent and memory limit of a compile phase that
// collects at percent, for total bytes of usable memory.
func gcPolicy(total uint64, percent int) (int, int64) {
	if total == 0 {
		return fallbackGCPercent, math.MaxInt64
	}
	return percent, int64(total / 4)
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
	setGC(gcPolicy(total, recompileGCPercent))
	return func() { leaveCompileGC(serveGCPercent) }
}

// afterStageGC is the compile's hook between stages (compile.Options.
// AfterStage). Load leaves the heap with garbage (files, parse trees,
// validation) around the objects, and the stages after it allocate up to
// about twice what load leaves (1.3 to 2 times on the generated meshes).
// Where that would cross the goal (in a batch compile the memory
// limit's, in a server's recompile nine times the heap last found live),
// one collection is due while resolving or linting, tracing resolve's
// larger heap: collecting as load ends traces the objects alone and sets
// the goal from them instead. In a recompile of the generated
// 100-namespace mesh with its routes as HTTPRoutes, that is about 30 MB
// traced instead of 85 MB; a batch compile collects only where load left
// a third of the memory limit.
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
