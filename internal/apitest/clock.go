package apitest

import (
	"sync"
	"time"
)

// Clock is a settable clock for tests that runs with real time; the zero value
// starts at the real time.
type Clock struct {
	mu  sync.Mutex
	off time.Duration
}

// Now returns the real time plus every Advance so far.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// StoppedClock is a clock for tests that stands still until advanced, for checks
// that compare exact times. Safe for concurrent use.
type StoppedClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewStoppedClock returns a clock stopped at t.
func NewStoppedClock(t time.Time) *StoppedClock { return &StoppedClock{now: t} }

// Now returns the time the clock stands at.
func (c *StoppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *StoppedClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
