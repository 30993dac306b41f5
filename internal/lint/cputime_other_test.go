//go:build !unix

package lint

import (
	"testing"
	"time"
)

// cpuTime is not measured here: benchmarks report wall time only.
func cpuTime(*testing.B) time.Duration { return 0 }
