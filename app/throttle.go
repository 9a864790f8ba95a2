package app

import (
	"sync"
	"time"
)

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
	t.failures[key] = append(t.prune(key), t.now())
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

// signInIPKey is the throttle key of the sign-in failures from one address
// in a realm, shared by every check of a password, code or key.
func signInIPKey(realmID, ip string) string { return "realm:" + realmID + ":ip:" + ip }

// signInWait is how long a credential check for userKey from ipKey must
// wait: the per-account and per-address limits every sign-in path shares.
func (a *App) signInWait(userKey, ipKey string) time.Duration {
	return max(a.loginThrottle.wait(userKey, loginLimitPerUser), a.loginThrottle.wait(ipKey, loginLimitPerIP))
}
