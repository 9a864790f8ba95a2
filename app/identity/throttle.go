package identity

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/idenplane/idenplane/store"
)

// throttleKeep is how many of a key's latest failures the throttle keeps:
// at least every limit a caller passes to Wait. Failures past it push the
// window on without taking more memory.
const throttleKeep = 20

// ThrottleWindow is how long the server's throttles remember a failure.
const ThrottleWindow = 15 * time.Minute

// Throttle counts failures per key in a sliding window. Once a key has
// reached its limit, further attempts wait until the oldest failure ages out.
//
// A shared throttle (NewSharedThrottle) counts in the database instead,
// for the servers of a fleet together.
type Throttle struct {
	mu       sync.Mutex
	now      func() time.Time
	window   time.Duration
	failures map[string][]time.Time
	shared   *store.Store // nil: in memory
	log      *slog.Logger
}

// NewThrottle makes a throttle that remembers each failure for window; a
// zero window forgets every failure at once.
func NewThrottle(now func() time.Time, window time.Duration) *Throttle {
	return &Throttle{now: now, window: window, failures: map[string][]time.Time{}}
}

// sharedTimeout bounds each of a shared throttle's statements: a throttle
// is asked before a credential is checked, and must not hold it up long.
const sharedTimeout = 5 * time.Second

// NewSharedThrottle makes a throttle that counts in st, for every server
// on st's database. Its keys are kept as their SHA-256. A statement that
// fails is logged and counts nothing: the database is then out of reach
// for the credential checks too.
func NewSharedThrottle(st *store.Store, now func() time.Time, window time.Duration, log *slog.Logger) *Throttle {
	t := NewThrottle(now, window)
	t.shared, t.log = st, log
	return t
}

// Wait says how long key must wait before another attempt, 0 if it need not.
func (t *Throttle) Wait(key string, limit int) time.Duration {
	if t.shared != nil {
		return t.sharedWait(key, limit)
	}
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
	if t.shared != nil {
		_ = t.Record(context.Background(), key)
		return
	}
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
	if t.shared != nil {
		_ = t.Forget(context.Background(), key)
		return
	}
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
func (t *Throttle) Record(ctx context.Context, keys ...string) error {
	if t.shared != nil {
		hashes := make([]string, len(keys))
		for i, k := range keys {
			hashes[i] = throttleKeyHash(k)
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
		defer cancel()
		err := t.shared.RecordThrottleFailures(ctx, hashes, t.now().UnixMilli(), throttleKeep)
		if err != nil {
			t.log.Error("counting a failure in the shared throttle failed", "err", err)
		}
		return err
	}
	for _, k := range keys {
		t.Fail(k)
	}
	return nil
}

// Forget forgets key's failures.
func (t *Throttle) Forget(ctx context.Context, key string) error {
	if t.shared != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
		defer cancel()
		err := t.shared.ClearThrottleFailures(ctx, throttleKeyHash(key))
		if err != nil {
			t.log.Error("clearing the shared throttle failed", "err", err)
		}
		return err
	}
	t.Reset(key)
	return nil
}

// sharedWait is Wait on the database: the limit-th newest failure in the
// window says when the key may try again.
func (t *Throttle) sharedWait(key string, limit int) time.Duration {
	if limit <= 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	now := t.now()
	at, found, err := t.shared.ThrottleFailureAt(ctx, throttleKeyHash(key), limit, now.Add(-t.window).UnixMilli())
	if err != nil {
		t.log.Error("reading the shared throttle failed", "err", err)
		return 0
	}
	if !found {
		return 0
	}
	return max(time.UnixMilli(at).Add(t.window).Sub(now), time.Millisecond)
}
