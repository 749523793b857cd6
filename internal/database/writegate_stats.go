//go:build writegatestats

package database

import (
	"sync/atomic"
	"time"
)

// WriteGateStats is true in a build with the writegatestats tag, whose write gate
// sums how long its holders keep SQLite's one write lock. A write's throughput at
// many clients is bound by that time per write, so a benchmark that compares it
// with and without some extra work finds the floor of their ratio
// (docs/performance.md, "The webhook endpoint's floor at the write lock").
const WriteGateStats = true

var gateHoldNanos, gateHolds atomic.Int64

func holdClock() time.Time { return time.Now() }

func recordHold(since time.Time) {
	gateHoldNanos.Add(int64(time.Since(since)))
	gateHolds.Add(1)
}

// WriteGateHolds is how many times this process's write gates were held and for
// how long in all, summed over every SQLite handle since the process began; zero
// on PostgreSQL and in a build without the writegatestats tag.
func WriteGateHolds() (holds int64, held time.Duration) {
	return gateHolds.Load(), time.Duration(gateHoldNanos.Load())
}
