package storetest

import (
	"errors"
	"math"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// accessTokenSuite is the conformance tests of what can end an access
// token before it expires.
func accessTokenSuite() []subTest {
	return []subTest{
		{"AccessTokenLiveUntil", testAccessTokenLiveUntil},
		{"EndClientSession", testEndClientSession},
		{"RevocationGenerationMoves", testRevocationGenerationMoves},
		{"RevocationGenerationKeepsOnSessionUse", testRevocationGenerationKeepsOnSessionUse},
	}
}

// accessTokensTestFixture is the sessions' fixture with its clients
// enabled, bob disabled, a user dave, a client "off" that is disabled, and alice's
// sessions: SSO session sso (until 10 000) with web's session under it
// (started at 2 000, until 8 000), and an offline session of cli (started
// at 3 000, until 20 000).
func accessTokensTestFixture(t *testing.T, s *store.Store) {
	t.Helper()
	sessionsTestFixture(t, s)
	for _, id := range []string{"web", "cli"} {
		c, err := s.GetClient(testCtx, sessionsTestRealm, id)
		if err != nil {
			t.Fatal(err)
		}
		c.Enabled = true
		if err := s.UpdateClient(testCtx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateClient(testCtx, &store.Client{ID: "off", RealmID: sessionsTestRealm, ClientID: "off-app", ClientType: "PUBLIC", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, s, testUser("dave", sessionsTestRealm, "dave", ""))
	bob, err := s.GetUser(testCtx, sessionsTestRealm, "bob")
	if err != nil {
		t.Fatal(err)
	}
	bob.Enabled = false
	if err := s.UpdateUser(testCtx, bob); err != nil {
		t.Fatal(err)
	}
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", 1000, 10_000),
		sessionsTestOAuth("sso-web", sessionsTestRealm, "alice", "sso", "web", 2000, 8000),
		sessionsTestOAuth("offline-cli", sessionsTestRealm, "alice", "", "cli", 3000, 20_000))
}

func testAccessTokenLiveUntil(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	if err := s.RevokeAccessToken(testCtx, sessionsTestRealm, "revoked", 1_000_000); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		t    store.AccessTokenClaims
		want int64
	}{
		{"SSO session: the earlier of it and its client's", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", SessionID: "sso", IssuedAt: 5}, 8000},
		{"issued in the second the client's session started", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", SessionID: "sso", IssuedAt: 2}, 8000},
		{"issued before the client's session started", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", SessionID: "sso", IssuedAt: 1}, 0},
		{"client without a session in the SSO session", store.AccessTokenClaims{UserID: "alice", ClientID: "cli-app", SessionID: "sso", IssuedAt: 5}, 0},
		{"offline session", store.AccessTokenClaims{UserID: "alice", ClientID: "cli-app", SessionID: "offline-cli", IssuedAt: 3}, 20_000},
		{"offline session of another client", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", SessionID: "offline-cli", IssuedAt: 3}, 0},
		{"an online client session as sid", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", SessionID: "sso-web", IssuedAt: 3}, 0},
		{"another user's session", store.AccessTokenClaims{UserID: "dave", ClientID: "web-app", SessionID: "sso", IssuedAt: 3}, 0},
		{"unknown session", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", SessionID: "nope", IssuedAt: 3}, 0},
		{"no session", store.AccessTokenClaims{UserID: "alice", ClientID: "web-app", IssuedAt: 3}, math.MaxInt64},
		{"revoked", store.AccessTokenClaims{TokenID: "revoked", UserID: "alice", ClientID: "web-app", IssuedAt: 3}, 0},
		{"disabled user", store.AccessTokenClaims{UserID: "bob", ClientID: "web-app", IssuedAt: 3}, 0},
		{"unknown user", store.AccessTokenClaims{UserID: "nobody", ClientID: "web-app", IssuedAt: 3}, 0},
		{"disabled client", store.AccessTokenClaims{UserID: "alice", ClientID: "off-app", IssuedAt: 3}, 0},
		{"unknown client", store.AccessTokenClaims{UserID: "alice", ClientID: "nope", IssuedAt: 3}, 0},
		{"another realm's client", store.AccessTokenClaims{UserID: "alice", ClientID: "far-app", IssuedAt: 3}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.t.RealmID = sessionsTestRealm
			if tc.t.TokenID == "" {
				tc.t.TokenID = "jti"
			}
			got, err := s.AccessTokenLiveUntil(testCtx, &tc.t)
			if err != nil || got != tc.want {
				t.Fatalf("AccessTokenLiveUntil(%+v) = %d, %v; want %d", tc.t, got, err, tc.want)
			}
		})
	}
}

func testEndClientSession(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	sessionsTestMustCreate(t, s,
		sessionsTestOAuth("sso-web-2", sessionsTestRealm, "alice", "sso", "web", 2500, 9000),
		sessionsTestOAuth("sso-cli", sessionsTestRealm, "alice", "sso", "cli", 2500, 9000),
		sessionsTestSSO("sso-2", sessionsTestRealm, "alice", 1000, 10_000),
		sessionsTestOAuth("sso-2-web", sessionsTestRealm, "alice", "sso-2", "web", 2500, 9000),
		sessionsTestOAuth("offline-cli-2", sessionsTestRealm, "alice", "", "cli", 3000, 20_000))
	for _, tok := range []*store.RefreshToken{
		sessionsTestToken("t-web", "alice", "web", "sso-web", false, 2000, 8000),
		sessionsTestToken("t-off", "alice", "cli", "offline-cli", true, 3000, 20_000),
	} {
		if err := s.CreateRefreshToken(testCtx, tok); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		t.Helper()
		live, err := s.ListUserSessions(testCtx, sessionsTestRealm, "alice", 0)
		if err != nil {
			t.Fatal(err)
		}
		return sessionsTestIDs(live)
	}
	for _, id := range []string{"nope", "sso"} {
		if _, err := s.EndClientSession(testCtx, sessionsTestRealm, id, 0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("EndClientSession(%s): %v, want ErrNotFound", id, err)
		}
	}
	if _, err := s.EndClientSession(testCtx, sessionsTestOther, "sso-web", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("EndClientSession in another realm: %v, want ErrNotFound", err)
	}

	// An online one takes its client's sibling, active at now, with it;
	// the SSO session, other clients' and other SSO sessions' stay.
	ended, err := s.EndClientSession(testCtx, sessionsTestRealm, "sso-web", 8500)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ended", sessionsTestIDs(ended), []string{"sso-web-2"})
	mustEqual(t, "sessions left", left(), []string{"sso", "sso-2", "sso-2-web", "sso-cli", "offline-cli", "offline-cli-2"})
	if _, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t-web")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the ended session's refresh token: %v, want it gone", err)
	}
	// An offline one goes alone.
	ended, err = s.EndClientSession(testCtx, sessionsTestRealm, "offline-cli", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ended", sessionsTestIDs(ended), []string{"offline-cli"})
	mustEqual(t, "sessions left", left(), []string{"sso", "sso-2", "sso-2-web", "sso-cli", "offline-cli-2"})
}

// Every committed write that may end an access token moves the revocation
// generation, after its commit.
func testRevocationGenerationMoves(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso-2", sessionsTestRealm, "alice", 1000, 10_000),
		sessionsTestSSO("sso-bob", sessionsTestRealm, "bob", 1000, 10_000))
	// cachedData: the write changes cached data too, which moves both.
	moved := func(what string, cachedData bool, write func() error) {
		t.Helper()
		before, cached := s.RevocationGeneration(), s.Generation()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if s.RevocationGeneration() == before {
			t.Fatalf("%s kept the revocation generation", what)
		}
		if (s.Generation() != cached) != cachedData {
			t.Fatalf("%s: generation of cached data %d then %d", what, cached, s.Generation())
		}
	}
	moved("end a client session", false, func() error {
		_, err := s.EndClientSession(testCtx, sessionsTestRealm, "sso-web", 0)
		return err
	})
	moved("delete a session", false, func() error {
		_, err := s.DeleteSession(testCtx, sessionsTestRealm, "sso-2", store.SessionSSO, 0)
		return err
	})
	moved("delete a user's sessions", false, func() error {
		_, err := s.DeleteUserSessions(testCtx, sessionsTestRealm, "bob", 0)
		return err
	})
	moved("revoke an access token", false, func() error { return s.RevokeAccessToken(testCtx, sessionsTestRealm, "j1", 5000) })
	moved("delete expired sessions", false, func() error {
		_, err := s.DeleteExpiredSessions(testCtx, 50_000)
		return err
	})
	moved("disable a user", true, func() error {
		u, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
		if err != nil {
			return err
		}
		u.Enabled = false
		return s.UpdateUser(testCtx, u)
	})
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso-3", sessionsTestRealm, "alice", 1000, 100_000))
	before := s.RevocationGeneration()
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if _, err := tx.DeleteSession(testCtx, sessionsTestRealm, "sso-3", store.SessionSSO, 0); err != nil {
			return err
		}
		// Before the commit readers still see the session: a check that
		// reads it now must not be taken for current afterwards.
		if s.RevocationGeneration() != before {
			return errors.New("the revocation generation moved before the commit")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.RevocationGeneration() == before {
		t.Fatal("a committed logout kept the revocation generation")
	}
}

// Sign-ins and refreshes create and slide sessions on every request:
// they must keep the revocation generation, or the cache of token checks
// would empty at every one.
func testRevocationGenerationKeepsOnSessionUse(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	before := s.RevocationGeneration()
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso-2", sessionsTestRealm, "alice", 1000, 10_000),
		sessionsTestOAuth("sso-2-web", sessionsTestRealm, "alice", "sso-2", "web", 1000, 10_000))
	if err := s.CreateRefreshToken(testCtx, sessionsTestToken("t1", "alice", "web", "sso-2-web", false, 1000, 10_000)); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchSession(testCtx, sessionsTestRealm, "sso-2", 2000, 12_000); err != nil {
		t.Fatal(err)
	}
	if err := s.ReauthenticateSession(testCtx, sessionsTestRealm, "sso-2", 2500, []string{"pwd", "otp"}, 2500, 13_000); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLoginEvents(testCtx, []*store.LoginEvent{{ID: "e1", RealmID: sessionsTestRealm, Time: 1, Type: "LOGIN"}}); err != nil {
		t.Fatal(err)
	}
	if s.RevocationGeneration() != before {
		t.Fatal("creating and using sessions moved the revocation generation")
	}
	// Sliding never shortens: a cached expiry stays a lower bound.
	if err := s.TouchSession(testCtx, sessionsTestRealm, "sso-2", 3000, 11_000); err != nil {
		t.Fatal(err)
	}
	if err := s.ReauthenticateSession(testCtx, sessionsTestRealm, "sso-2", 3000, nil, 3000, 11_000); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(testCtx, sessionsTestRealm, "sso-2"); err != nil || got.ExpiresAt != 13_000 {
		t.Fatalf("session after an earlier expiry: %+v, %v; want it to keep 13000", got, err)
	}
}
