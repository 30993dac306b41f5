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
	// compareLimitFactor is diff's memory limit over what is live as
	// comparing starts (compareGC).
	compareLimitFactor = 5
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

// compareGC sets the policy for diff's comparison, which builds both
// sides' configurations of the changed scopes: a heap that grows and dies
// scope by scope, with the builders' mesh-wide caches around it, on top
// of the two compile results. Under the compile phase's policy it grew to
// nine times what is live; at GOGC 100 alone its peak was twice the
// comparison's live heap, which at its largest is about three times what
// is live as it starts. A memory limit at five times that start (measured
// by a collection, which traces the two results alone) trims the top
// without collecting much more often: on the generated 100-namespace
// mesh (a diff of one VirtualService, about 57 MB live at the start, a
// machine with other jobs) peak RSS goes from 420 to 470 MB down to about
// 365 MB for 0.4 to 0.9 s more CPU. Six times takes it to 410 MB for 0.2 s
// more, 4.5 to 340 MB for 1.3 s, four to 310 MB for 2 s; GOGC 70 without a
// limit to about 390 MB, GOGC 20 to 290 MB for twice the CPU. The limit
// scales with the mesh, where a fixed size would not.
func compareGC() {
	leaveCompileGC(100)
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	debug.SetMemoryLimit(compareLimit(s[0].Value.Uint64()))
}

// compareLimit is compareGC's memory limit for live bytes.
func compareLimit(live uint64) int64 {
	if live > math.MaxInt64/compareLimitFactor {
		return math.MaxInt64
	}
	return int64(live * compareLimitFactor)
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
