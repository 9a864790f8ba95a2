package identity

import (
	"math"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// A user or client written disabled loses every session and every token
// issued so far, in the one write, whatever handle the caller gives: the
// pool as much as a transaction. Enabling again brings none back; a token
// issued from the next second on stands.
func TestDisableEndsAccessForGood(t *testing.T) {
	e := newTestEnv(t)
	ctx := t.Context()
	bob, err := e.core.CreateUser(ctx, e.store, e.realm, NewUser{Username: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	client := &store.Client{ID: "c1", RealmID: e.realm.ID, ClientID: "web", ClientType: ClientConfidential, Enabled: true,
		CreatedAt: 1}
	if err := e.store.CreateClient(ctx, client); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now().UnixMilli()
	sessions := func() []*store.Session {
		t.Helper()
		return []*store.Session{
			{ID: "sso", RealmID: e.realm.ID, UserID: bob.ID, Kind: store.SessionSSO, StartedAt: now, LastAccessAt: now,
				ExpiresAt: now + 3_600_000, AMR: []string{"pwd"}},
			{ID: "offline", RealmID: e.realm.ID, UserID: bob.ID, Kind: store.SessionOAuth, ClientID: client.ID, Offline: true,
				StartedAt: now, LastAccessAt: now, ExpiresAt: now + 3_600_000, AMR: []string{"pwd"}},
		}
	}
	create := func() {
		t.Helper()
		for _, s := range sessions() {
			if err := e.store.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	left := func() int {
		t.Helper()
		live, err := e.store.ListUserSessions(ctx, e.realm.ID, bob.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(live)
	}
	// stands is the standing of a token without a session issued now.
	stands := func() bool {
		t.Helper()
		until, err := e.store.AccessTokenLiveUntil(ctx, &store.AccessTokenClaims{RealmID: e.realm.ID, TokenID: "jti",
			UserID: bob.ID, ClientID: "web", IssuedAt: e.clock.Now().Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return until == math.MaxInt64
	}

	create()
	if !stands() {
		t.Fatal("a token of an enabled user and client does not stand")
	}
	bob.Enabled = false
	ended, err := e.core.UpdateUser(ctx, e.store, bob)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) != 2 || left() != 0 {
		t.Fatalf("disabling bob ended %d sessions and left %d; want both ended", len(ended), left())
	}
	bob.Enabled = true
	if _, err := e.core.UpdateUser(ctx, e.store, bob); err != nil {
		t.Fatal(err)
	}
	if stands() {
		t.Fatal("a token issued in the second of the disable stands once bob is enabled again")
	}
	e.clock.advance(time.Second)
	if !stands() {
		t.Fatal("a token issued after the re-enable does not stand")
	}

	create()
	client.Enabled = false
	ended, err = e.core.UpdateClient(ctx, e.store, client)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) == 0 {
		t.Fatal("disabling the client answered no ended session, for the back-channel logouts")
	}
	for _, s := range ended {
		if s.ClientID != client.ID {
			t.Fatalf("disabling the client answered session %s of client %s as ended", s.ID, s.ClientID)
		}
	}
	if n := left(); n != 1 {
		t.Fatalf("disabling the client left %d sessions of bob, want his SSO session alone", n)
	}
	client.Enabled = true
	if _, err := e.core.UpdateClient(ctx, e.store, client); err != nil {
		t.Fatal(err)
	}
	if stands() {
		t.Fatal("a client's token issued in the second of its disable stands once it is enabled again")
	}
}
