package identity

import (
	"context"
	"sync"
	"time"
)

// throttleKeep is how many of a key's latest failures the throttle keeps:
// at least every limit a caller passes to Wait. Failures past it push the
// window on without taking more memory.
const throttleKeep = 20

// ThrottleWindow is how long the server's throttles remember a failure.
const ThrottleWindow = 15 * time.Minute

// Throttle counts failures per key in a sliding window. Once a key has
// reached its limit, further attempts wait until the oldest failure ages out.
type Throttle struct {
	mu       sync.Mutex
	now      func() time.Time
	window   time.Duration
	failures map[string][]time.Time
}

// NewThrottle makes a throttle that remembers each failure for window; a
// zero window forgets every failure at once.
func NewThrottle(now func() time.Time, window time.Duration) *Throttle {
	return &Throttle{now: now, window: window, failures: map[string][]time.Time{}}
}

// Wait says how long key must wait before another attempt, 0 if it need not.
func (t *Throttle) Wait(key string, limit int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.prune(key)
	if len(f) < limit {
		return 0
	}
	return f[len(f)-limit].Add(t.window).Sub(t.now())
}

// Fail counts a failure of key now.
func (t *Throttle) Fail(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(key, t.now())
}

// add records a failure of key at, no earlier than its others.
func (t *Throttle) add(key string, at time.Time) {
	f := append(t.prune(key), at)
	if len(f) > throttleKeep {
		f = append(f[:0], f[len(f)-throttleKeep:]...)
	}
	t.failures[key] = f
	// Forget idle keys now and then so the map cannot grow without bound.
	if len(t.failures) > 10000 {
		for k := range t.failures {
			if len(t.prune(k)) == 0 {
				delete(t.failures, k)
			}
		}
	}
}

// Reset forgets key's failures.
func (t *Throttle) Reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
}

// full says whether key already holds as many failures as it keeps, the
// most any limit needs.
func (t *Throttle) full(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.prune(key)) >= throttleKeep
}

func (t *Throttle) prune(key string) []time.Time {
	f := t.failures[key]
	cutoff := t.now().Add(-t.window)
	i := 0
	for i < len(f) && !f[i].After(cutoff) {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(t.failures, key)
		return nil
	}
	t.failures[key] = f
	return f
}

// FailureCounter is what the sign-in guard counts on: the realms' throttle
// in memory, or the admin login's, kept in the store too.
type FailureCounter interface {
	// Wait says how long key must wait before another attempt.
	Wait(key string, limit int) time.Duration
	// Record counts a failure of each key.
	Record(ctx context.Context, keys ...string) error
	// Forget forgets key's failures.
	Forget(ctx context.Context, key string) error
}

// Record counts a failure of each key.
func (t *Throttle) Record(_ context.Context, keys ...string) error {
	for _, k := range keys {
		t.Fail(k)
	}
	return nil
}

// Forget forgets key's failures.
func (t *Throttle) Forget(_ context.Context, key string) error {
	t.Reset(key)
	return nil
}
