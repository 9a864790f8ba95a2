package risk

import (
	"context"
	"sync"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// The failure signals count login.failed events off the bus, in memory:
// on a fleet each server counts those it saw.
const (
	failureWindow = 15 * time.Minute
	failureLimit  = 3 // failures in the window that make the signal present
	failureKeys   = 100000
)

type failures struct {
	now  func() time.Time
	mu   sync.Mutex
	seen map[string][]time.Time
}

func newFailures(now func() time.Time) *failures {
	return &failures{now: now, seen: map[string][]time.Time{}}
}

func (f *failures) add(key string) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) >= failureKeys {
		for k, ts := range f.seen {
			if now.Sub(ts[len(ts)-1]) > failureWindow {
				delete(f.seen, k)
			}
		}
		if len(f.seen) >= failureKeys { // a flood of fresh keys: forget them rather than grow
			clear(f.seen)
		}
	}
	ts := append(f.seen[key], now)
	if len(ts) > failureLimit {
		ts = ts[len(ts)-failureLimit:]
	}
	f.seen[key] = ts
}

// many says whether key failed failureLimit times within the window.
func (f *failures) many(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.seen[key]
	return len(ts) >= failureLimit && f.now().Sub(ts[0]) <= failureWindow
}

func userKey(realmID, userID string) string { return realmID + "\x00user\x00" + userID }
func ipKey(realmID, ip string) string       { return realmID + "\x00ip\x00" + ip }

// Wants takes the failed sign-ins (bus.Subscriber).
func (s *Service) Wants(_ context.Context, _ *store.Realm, t bus.Type) bool {
	return t == bus.LoginFailed
}

// Queue counts a failed sign-in; it writes nothing.
func (s *Service) Queue(_ context.Context, _ *store.Store, e *bus.Event) (bool, error) {
	d, ok := e.Data.(bus.LoginData)
	if !ok || e.Realm == nil {
		return false, nil
	}
	if d.UserID != "" {
		s.failures.add(userKey(e.Realm.ID, d.UserID))
	}
	if d.IPAddress != "" {
		s.failures.add(ipKey(e.Realm.ID, d.IPAddress))
	}
	return false, nil
}

// Wake has nothing to do: Queue did it all.
func (s *Service) Wake() {}
