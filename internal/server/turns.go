package server

import (
	"context"
	"sync"
)

// turns makes the password checks of one account take turns in this instance, so
// that each check reads the failures recorded by the one before it: without it,
// concurrent wrong passwords all read the count before any of them was recorded,
// and a burst checked far more than the throttle's 10 (docs/security.md). Across
// instances sharing Redis, one check per instance can still overlap another's.
// Only accounts with a check in flight are held: the map never outgrows them.
type turns struct {
	mu   sync.Mutex
	held map[string]*turn
}

// turn is one account's: a slot of one, and how many hold or wait for it.
type turn struct {
	slot  chan struct{}
	users int
}

func newTurns() *turns { return &turns{held: map[string]*turn{}} }

// take waits for key's turn, or for ctx to end (its error). The returned func
// ends the turn; call it once.
func (t *turns) take(ctx context.Context, key string) (func(), error) {
	t.mu.Lock()
	tn := t.held[key]
	if tn == nil {
		tn = &turn{slot: make(chan struct{}, 1)}
		t.held[key] = tn
	}
	tn.users++
	t.mu.Unlock()
	leave := func() {
		t.mu.Lock()
		if tn.users--; tn.users == 0 {
			delete(t.held, key)
		}
		t.mu.Unlock()
	}
	select {
	case tn.slot <- struct{}{}:
		return func() { <-tn.slot; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}
