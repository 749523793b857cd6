//go:build !writegatestats

package database

import "time"

// WriteGateStats is false: the write gate keeps no hold times without the
// writegatestats build tag (writegate_stats.go), so a write pays nothing for them.
const WriteGateStats = false

func holdClock() time.Time { return time.Time{} }

func recordHold(time.Time) {}

// WriteGateHolds is zero without the writegatestats build tag (writegate_stats.go).
func WriteGateHolds() (holds int64, held time.Duration) { return 0, 0 }
