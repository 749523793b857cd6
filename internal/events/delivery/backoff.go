package delivery

import (
	"math/rand/v2"
	"time"
)

// Backoff is exponential backoff with full jitter (AWS Architecture Blog,
// "Exponential Backoff And Jitter"): the wait after attempt n is uniform in
// [0, min(Max, Base·2^(n-1))), so receivers recovering from an outage are not hit by
// every sender at once.
type Backoff struct {
	// Base is the ceiling of the first wait. Optional. Default 5s.
	Base time.Duration
	// Max caps every ceiling. Optional. Default 1h.
	Max time.Duration
}

// Wait returns the wait after attempt n (from 1).
func (b Backoff) Wait(n int) time.Duration {
	base, maxWait := b.Base, b.Max
	if base <= 0 {
		base = 5 * time.Second
	}
	if maxWait <= 0 {
		maxWait = time.Hour
	}
	ceil := maxWait
	if n < 1 {
		n = 1
	}
	if n < 40 {
		if c := base << (n - 1); c > 0 && c < maxWait {
			ceil = c
		}
	}
	return rand.N(ceil)
}
