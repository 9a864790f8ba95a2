package signingkeys

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testService is the keys of a store in t.TempDir() on a hand-moved
// clock, which starts at the real time: a key's stamps are the store's.
func testService(t *testing.T) (*Service, *store.Store, *testClock) {
	t.Helper()
	st, _ := apptest.OpenStore(t)
	clock := &testClock{now: time.Now().Truncate(time.Millisecond)}
	s := New(Deps{Store: st, Log: apptest.Logger(t), Now: clock.Now, MakeKey: apptest.SigningKeys(NewPrivateKey)})
	return s, st, clock
}

// testRealm stores a realm with its first keys, as creating one does.
func testRealm(t *testing.T, s *Service, st *store.Store, name string) *store.Realm {
	t.Helper()
	ctx := context.Background()
	realm := &store.Realm{ID: uuid.NewString(), Name: name, Enabled: true, AccessTokenLifespan: 300,
		RefreshTokenLifespan: 1800, OfflineTokenLifespan: 2592000, CreatedAt: s.deps.Now().UnixMilli()}
	keys, err := NewRealmKeys(s.deps.MakeKey, realm.ID, s.deps.Now())
	if err != nil {
		t.Fatal(err)
	}
	err = st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateRealm(ctx, realm); err != nil {
			return err
		}
		return keys.Write(ctx, tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	return realm
}

func mustActive(t *testing.T, s *Service, realm *store.Realm) *Key {
	t.Helper()
	k, err := s.Active(context.Background(), realm)
	if err != nil {
		t.Fatalf("active key of %s: %v", realm.Name, err)
	}
	return k
}

// The parsed key is kept between signatures, a rotation signs with the
// new key at once, and the job drops the keys that no longer sign.
func TestParsedKeyCached(t *testing.T) {
	s, st, clock := testService(t)
	realm := testRealm(t, s, st, "acme")
	ctx := context.Background()
	first := mustActive(t, s, realm)
	if again := mustActive(t, s, realm); again != first || s.parsed.get(first.ID) != first {
		t.Fatal("the parsed key is not cached")
	}
	if err := s.changeRealmKeys(ctx, realm, keyChange{algorithm: jose.RS256, immediate: true}); err != nil {
		t.Fatal(err)
	}
	rotated := mustActive(t, s, realm)
	if rotated.ID == first.ID {
		t.Fatal("the cache still signs with the retired key")
	}
	clock.advance(time.Minute)
	s.RotateDue(ctx)
	if s.parsed.get(first.ID) != nil || s.parsed.get(rotated.ID) != rotated {
		t.Fatal("the job did not drop the retired key from the cache, or dropped the active one")
	}
}

// The job forgets a deleted realm's parsed key; another realm keeps its own.
func TestParsedKeyOfDeletedRealmDropped(t *testing.T) {
	s, st, clock := testService(t)
	acme, other := testRealm(t, s, st, "acme"), testRealm(t, s, st, "other")
	acmeKey, otherKey := mustActive(t, s, acme), mustActive(t, s, other)
	if err := st.DeleteRealm(context.Background(), acme.Name); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	s.RotateDue(context.Background())
	if s.parsed.get(acmeKey.ID) != nil || s.parsed.get(otherKey.ID) != otherKey {
		t.Fatal("the key cache was not pruned to the live realms' keys")
	}
}
