package identity

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// testEnv is a core over a real SQLite file in t.TempDir(), with a clock
// the test moves and the login events it records.
type testEnv struct {
	t      *testing.T
	store  *store.Store
	core   *Core
	clock  *testClock
	realm  *store.Realm
	mu     sync.Mutex
	events []store.LoginEvent
}

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

// newTestEnv opens a store with one realm, "acme", whose brute-force
// protection locks a user after three failures; tune adjusts the core's
// dependencies.
func newTestEnv(t *testing.T, tune ...func(*Deps)) *testEnv {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "idenplane.db"),
		Schema: string(schema), MasterKey: bytes.Repeat([]byte{7}, store.MasterKeySize)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &testEnv{t: t, store: st, clock: &testClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}}
	e.realm = &store.Realm{ID: uuid.NewString(), Name: "acme", Enabled: true, PasswordMinLength: 8, BruteForceEnabled: true,
		MaxLoginFailures: 3, LockoutDuration: 900, FailureResetTime: 43200, CreatedAt: e.clock.Now().UnixMilli()}
	if err := st.CreateRealm(t.Context(), e.realm); err != nil {
		t.Fatal(err)
	}
	d := Deps{Store: st, Now: e.clock.Now, GuardedAnswerTime: time.Millisecond,
		LoginEvent: func(_ context.Context, _ *store.Realm, ev store.LoginEvent) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, ev)
		}}
	for _, f := range tune {
		f(&d)
	}
	e.core = New(d)
	return e
}

// user creates a user of acme through the core, with password when not
// "".
func (e *testEnv) user(username, password string) *store.User {
	e.t.Helper()
	nu := NewUser{Username: username}
	if password != "" {
		nu.Password = &password
	}
	u, err := e.core.CreateUser(e.t.Context(), e.store, e.realm, nu)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// failures is the user's record of failed checks; zero when none.
func (e *testEnv) failures(u *store.User) store.LoginFailure {
	e.t.Helper()
	f, err := e.store.GetLoginFailure(e.t.Context(), e.realm.ID, u.ID)
	if err != nil {
		return store.LoginFailure{}
	}
	return *f
}
