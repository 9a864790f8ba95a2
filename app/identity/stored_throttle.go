package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/idenplane/idenplane/store"
)

// StoredThrottle is the admin login's flood guard: the throttle in memory,
// each failure written to the database too and read back at start, so
// that a restart does not lift it. Keys are kept as their SHA-256, in
// memory and at rest: a fixed length whatever a client types as a
// username, and no usernames or addresses in the database.
type StoredThrottle struct {
	mem *Throttle
	st  *store.Store
}

// NewStoredThrottle reads back the failures still in the window.
func NewStoredThrottle(ctx context.Context, st *store.Store, now func() time.Time) (*StoredThrottle, error) {
	t := &StoredThrottle{mem: NewThrottle(now, ThrottleWindow), st: st}
	failures, err := st.AdminLoginFailures(ctx, now().Add(-t.mem.window).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("read the admin login throttle: %w", err)
	}
	t.mem.mu.Lock()
	defer t.mem.mu.Unlock()
	for _, f := range failures { // oldest first
		t.mem.add(f.KeyHash, time.UnixMilli(f.FailedAt))
	}
	return t, nil
}

func throttleKeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Wait says how long key must wait before another attempt.
func (t *StoredThrottle) Wait(key string, limit int) time.Duration {
	return t.mem.Wait(throttleKeyHash(key), limit)
}

// Record counts the failures in memory and writes them to the database.
// A key that already holds as many failures as any limit needs (a
// guarded address failing on) moves its window on in memory only: a
// client cannot make the database write, or grow, with every attempt. A
// restart forgets those newest ones, so the throttle it reads back may
// end sooner, never later, than it would have.
func (t *StoredThrottle) Record(ctx context.Context, keys ...string) error {
	hashes := make([]string, 0, len(keys))
	var write []string
	for _, k := range keys {
		h := throttleKeyHash(k)
		hashes = append(hashes, h)
		if !t.mem.full(h) {
			write = append(write, h)
		}
	}
	_ = t.mem.Record(ctx, hashes...)
	if len(write) == 0 {
		return nil
	}
	now := t.mem.now()
	return t.st.RecordAdminLoginFailures(ctx, write, now.UnixMilli(), now.Add(-t.mem.window).UnixMilli())
}

// Forget forgets key's failures, in memory and in the database.
func (t *StoredThrottle) Forget(ctx context.Context, key string) error {
	h := throttleKeyHash(key)
	if err := t.st.ClearAdminLoginFailures(ctx, h); err != nil {
		return err
	}
	return t.mem.Forget(ctx, h)
}
