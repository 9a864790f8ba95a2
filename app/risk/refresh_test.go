package risk

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// statements records the store's statements by name (its Tracer).
type statements struct {
	mu    sync.Mutex
	names []string
}

func (s *statements) trace(ctx context.Context, name string) (context.Context, func(error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = append(s.names, name)
	return ctx, func(error) {}
}

func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.names
	s.names = nil
	return out
}

// The refresh's hook reads nothing while the realm has no session policy
// that can act, and one profile by its key for a session refreshed where
// it was last seen; a move is judged and written, and a policy that ends
// the session answers its refusal.
func TestRefreshHookCost(t *testing.T) {
	st, _ := apptest.OpenStore(t)
	rec := &statements{}
	st.SetTracer(rec.trace)
	ctx, now := t.Context(), time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	s, err := New(Deps{Store: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	realm := &store.Realm{ID: "r1", Name: "acme", Enabled: true, AccessTokenLifespan: 300, RefreshTokenLifespan: 1800,
		OfflineTokenLifespan: 2592000, CreatedAt: 1}
	user := &store.User{ID: "u1", RealmID: "r1", Username: "alice", Enabled: true, CreatedAt: 1}
	sso := &store.Session{ID: "s1", RealmID: "r1", UserID: "u1", Kind: store.SessionSSO, IPAddress: "198.51.100.7",
		StartedAt: now.UnixMilli(), LastAccessAt: now.UnixMilli(), ExpiresAt: now.Add(time.Hour).UnixMilli(), AMR: []string{"pwd"}}
	for _, err := range []error{st.CreateRealm(ctx, realm), st.CreateUser(ctx, user), st.CreateSession(ctx, sso)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	policy := func(id, action string, priority int) {
		t.Helper()
		if err := st.CreateRiskPolicy(ctx, &store.RiskPolicy{ID: id, RealmID: "r1", Name: id, Enabled: true, Priority: priority,
			Conditions: `{"networks": ["203.0.113.0/24"]}`, Action: action, Scope: string(ScopeSession)}); err != nil {
			t.Fatal(err)
		}
	}
	refresh := func(from string) error {
		t.Helper()
		rec.take()
		return s.Refreshed(ctx, realm, user, sso, "app", from)
	}
	mustRead := func(what string, want ...string) {
		t.Helper()
		got := rec.take()
		if len(got) != len(want) {
			t.Fatalf("%s: statements %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: statements %v, want %v", what, got, want)
			}
		}
	}

	// No session policy; then one that only allows.
	for _, step := range []func(){func() {}, func() { policy("quiet", string(Allow), 100) }} {
		step()
		if err := refresh("203.0.113.9"); err != nil { // reads the realm's settings and policies once
			t.Fatal(err)
		}
		if err := refresh("203.0.113.9"); err != nil {
			t.Fatal(err)
		}
		mustRead("a refresh without a session policy that can act")
	}

	policy("watching", string(Notify), 10)
	if err := refresh("198.51.100.7"); err != nil { // the session's first observation: its profile starts
		t.Fatal(err)
	}
	if err := refresh("198.51.100.7"); err != nil {
		t.Fatal(err)
	}
	mustRead("a refresh where the session was last seen", "store.GetSessionRisk")

	now = now.Add(time.Minute)
	if err := refresh("203.0.113.9"); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) < 2 || got[0] != "store.GetSessionRisk" || got[1] != "store.Tx" {
		t.Fatalf("a move: statements %v", got)
	}
	p, err := st.GetSessionRisk(ctx, "r1", "s1", now.UnixMilli())
	if err != nil || p.IPAddress != "203.0.113.9" || p.Action != string(Notify) || p.Observations != 2 {
		t.Fatalf("profile %+v %v", p, err)
	}

	policy("end", string(EndSession), 1)
	now = now.Add(time.Minute)
	err = refresh("203.0.113.10")
	var refused *Refusal
	if !errors.As(err, &refused) || refused.Action != EndSession || err.Error() != EndedDescription {
		t.Fatalf("a move under an end-session policy: %v", err)
	}
	if _, err := st.GetSession(ctx, "r1", "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the session after its end: %v", err)
	}
}
