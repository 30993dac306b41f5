// Package atstart enables huge pages (internal/hugepages) while packages
// are still being initialized: a program imports it for that effect alone.
//
// Enable reserves a block of heap and frees it. Placed on fresh pages, the
// block costs address space only; placed where the heap has already freed
// pages, which happens once a collection has run, the runtime must zero
// the whole of it first, a gigabyte of page faults and about half a second.
// Package initialization allocates megabytes (protobuf registries, API
// schemes) and collects on the way, so by main it is too late to be sure.
// Go initializes a package as soon as what it imports is, taking the first
// in import path order among those ready; this one needs only the standard
// library and x/sys, and comes before the packages that allocate most.
package atstart

import "github.com/meshc/meshc/internal/hugepages"

func init() { hugepages.Enable() }
