package app

import (
	"context"
	"sync"
	"time"
)

// throttleKeep is how many of a key's latest failures the throttle keeps:
// at least every limit a caller passes to wait. Failures past it push the
// window on without taking more memory.
const throttleKeep = 20

// throttle counts failures per key in a sliding window. Once a key has
// reached its limit, further attempts wait until the oldest failure ages out.
type throttle struct {
	mu       sync.Mutex
	now      func() time.Time
	window   time.Duration
	failures map[string][]time.Time
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, window: 15 * time.Minute, failures: map[string][]time.Time{}}
}

// wait says how long key must wait before another attempt, 0 if it need not.
func (t *throttle) wait(key string, limit int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.prune(key)
	if len(f) < limit {
		return 0
	}
	return f[len(f)-limit].Add(t.window).Sub(t.now())
}

func (t *throttle) fail(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(key, t.now())
}

// add records a failure of key at, no earlier than its others.
func (t *throttle) add(key string, at time.Time) {
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

func (t *throttle) reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
}

// full says whether key already holds as many failures as it keeps, the
// most any limit needs.
func (t *throttle) full(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.prune(key)) >= throttleKeep
}

func (t *throttle) prune(key string) []time.Time {
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

// failureCounter is what the sign-in guard counts on: the realms' throttle
// in memory, or the admin login's, kept in the store too.
type failureCounter interface {
	wait(key string, limit int) time.Duration
	record(ctx context.Context, keys ...string) error
	forget(ctx context.Context, key string) error
}

func (t *throttle) record(_ context.Context, keys ...string) error {
	for _, k := range keys {
		t.fail(k)
	}
	return nil
}

func (t *throttle) forget(_ context.Context, key string) error {
	t.reset(key)
	return nil
}
