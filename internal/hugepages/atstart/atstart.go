// Package atstart sets up the Go heap while packages are still being
// initialized: a program imports it for that effect, and sets its own
// collection policy first thing in main (or calls Resume).
//
// It holds garbage collection off until then. Package initialization
// allocates some 7 MB (protobuf registries, API schemes, JSON schemas),
// and collecting it on the way, twice at the runtime's default setting,
// costs a few milliseconds of every run for memory the run uses anyway.
//
// It enables huge pages (internal/hugepages), which reserves a block of
// heap and frees it. Placed on fresh pages, the block costs address space
// only; placed where the heap has already freed pages, which happens once
// a collection has run, the runtime must zero the whole of it first, a
// gigabyte of page faults and about half a second. Package initialization
// allocates megabytes and, collecting, would free some, so by main it is
// too late to be sure.
//
// Go initializes a package as soon as what it imports is, taking the first
// in import path order among those ready; this one needs only the standard
// library and x/sys, and comes before the packages that allocate most.
package atstart

import (
	"runtime/debug"

	"github.com/meshc/meshc/internal/hugepages"
)

// held is the collection setting before init held it off (GOGC's).
var held = debug.SetGCPercent(-1)

func init() { hugepages.Enable() }

// Resume turns garbage collection back on as it was set before init, for
// a program with no policy of its own (a test binary).
func Resume() { debug.SetGCPercent(held) }
