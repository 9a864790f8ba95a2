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
		{"AccessTokenOfCredential", testAccessTokenOfCredential},
		{"EndUserAccess", testEndUserAccess},
		{"EndClientAccess", testEndClientAccess},
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

// A token obtained with an identity's credential stands while the
// credential is not revoked, and until a revocation still to come; a
// revocation moves the revocation generation, a use of the credential
// does not.
func testAccessTokenOfCredential(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	nhiTestMustCreate(t, s, &store.NHI{ID: "n1", RealmID: sessionsTestRealm, ClientID: "cli", Kind: "workload", Name: "cli-app",
		State: "active", CreatedAt: 1, UpdatedAt: 1})
	for _, id := range []string{"key", "later"} {
		if err := s.CreateNHICredential(testCtx, &store.NHICredential{ID: id, RealmID: sessionsTestRealm, NHIID: "n1",
			Type: "api_key", Prefix: "p-" + id, SecretHash: []byte(id), CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	standing := func(cred string) int64 {
		t.Helper()
		got, err := s.AccessTokenLiveUntil(testCtx, &store.AccessTokenClaims{RealmID: sessionsTestRealm, TokenID: "jti",
			UserID: "alice", ClientID: "cli-app", IssuedAt: 3, CredentialID: cred})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := standing("key"); got != math.MaxInt64 {
		t.Fatalf("a working credential's token: %d, want MaxInt64", got)
	}
	if got := standing("gone"); got != 0 {
		t.Fatalf("an unknown credential's token: %d, want 0", got)
	}
	before := s.RevocationGeneration()
	if err := s.TouchNHICredential(testCtx, "key", 5000); err != nil {
		t.Fatal(err)
	}
	if s.RevocationGeneration() != before {
		t.Fatal("a use of a credential moved the revocation generation")
	}
	if err := s.RevokeNHICredential(testCtx, "n1", "key", 4000, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeNHICredential(testCtx, "n1", "later", 90_000, ""); err != nil {
		t.Fatal(err)
	}
	if s.RevocationGeneration() == before {
		t.Fatal("revoking a credential kept the revocation generation")
	}
	if got := standing("key"); got != 4000 {
		t.Fatalf("a revoked credential's token: %d, want 4000, its revocation", got)
	}
	if got := standing("later"); got != 90_000 {
		t.Fatalf("the token of a credential revoked later: %d, want 90000", got)
	}
}

// EndUserAccess ends every session of the user, offline ones too, with
// their refresh tokens, and the tokens without a session issued before
// its not-before; the other users' stay.
func testEndUserAccess(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso-dave", sessionsTestRealm, "dave", 1000, 10_000))
	if err := s.CreateRefreshToken(testCtx, sessionsTestToken("t-off", "alice", "cli", "offline-cli", true, 3000, 20_000)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDeviceAuthorization(testCtx, &store.DeviceAuthorization{DeviceCodeHash: store.HashToken("device"),
		UserCode: "ABCDEFGH", RealmID: sessionsTestRealm, ClientID: "cli", Scopes: []string{"openid"}, Status: store.DevicePending,
		Interval: 5, CreatedAt: 1000, ExpiresAt: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	if err := s.ApproveDeviceAuthorization(testCtx, sessionsTestRealm, "ABCDEFGH", "alice", 1000, 2000); err != nil {
		t.Fatal(err)
	}
	noSession := func(iat int64) int64 {
		t.Helper()
		got, err := s.AccessTokenLiveUntil(testCtx, &store.AccessTokenClaims{RealmID: sessionsTestRealm, TokenID: "jti",
			UserID: "alice", ClientID: "cli-app", IssuedAt: iat})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := s.RevocationGeneration()
	ended, err := s.EndUserAccess(testCtx, sessionsTestRealm, "alice", 10, 9000)
	if err != nil {
		t.Fatal(err)
	}
	if s.RevocationGeneration() == before {
		t.Fatal("ending a user's access kept the revocation generation")
	}
	mustEqual(t, "ended", sessionsTestIDs(ended), []string{"sso", "offline-cli"})
	if live, err := s.ListUserSessions(testCtx, sessionsTestRealm, "alice", 0); err != nil || len(live) != 0 {
		t.Fatalf("alice's sessions left: %v, %v; want none", sessionsTestIDs(live), err)
	}
	if _, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t-off")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the offline refresh token: %v, want it gone", err)
	}
	if _, _, err := s.PollDeviceAuthorization(testCtx, sessionsTestRealm, store.HashToken("device"), "cli", 9000); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a device authorization alice approved: %v, want it gone", err)
	}
	if live, err := s.ListUserSessions(testCtx, sessionsTestRealm, "dave", 0); err != nil || len(live) != 1 {
		t.Fatalf("dave's sessions: %v, %v; want his own kept", sessionsTestIDs(live), err)
	}
	if got := noSession(9); got != 0 {
		t.Fatalf("a token issued before the not-before: %d, want 0", got)
	}
	if got := noSession(10); got != math.MaxInt64 {
		t.Fatalf("a token issued at the not-before: %d, want MaxInt64", got)
	}
	// An earlier not-before never brings tokens back.
	if _, err := s.EndUserAccess(testCtx, sessionsTestRealm, "alice", 5, 9000); err != nil {
		t.Fatal(err)
	}
	if got := noSession(9); got != 0 {
		t.Fatalf("after an earlier not-before: %d, want 0", got)
	}
}

// EndClientAccess ends the client's sessions under every SSO session and
// its offline ones, with its refresh tokens, and its tokens without a
// session issued before its not-before; the SSO sessions and the other
// clients' sessions stay.
func testEndClientAccess(t *testing.T, s *store.Store) {
	accessTokensTestFixture(t, s)
	sessionsTestMustCreate(t, s, sessionsTestOAuth("sso-cli", sessionsTestRealm, "alice", "sso", "cli", 2500, 9000))
	for _, tok := range []*store.RefreshToken{
		sessionsTestToken("t-web", "alice", "web", "sso-web", false, 2000, 8000),
		sessionsTestToken("t-off", "alice", "cli", "offline-cli", true, 3000, 20_000),
	} {
		if err := s.CreateRefreshToken(testCtx, tok); err != nil {
			t.Fatal(err)
		}
	}
	before := s.RevocationGeneration()
	ended, err := s.EndClientAccess(testCtx, sessionsTestRealm, "cli", 10, 2600)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "sessions ended", sessionsTestIDs(ended), []string{"sso-cli", "offline-cli"})
	if s.RevocationGeneration() == before {
		t.Fatal("ending a client's access kept the revocation generation")
	}
	live, err := s.ListUserSessions(testCtx, sessionsTestRealm, "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "sessions left", sessionsTestIDs(live), []string{"sso", "sso-web"})
	if _, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t-off")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the client's refresh token: %v, want it gone", err)
	}
	if _, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t-web")); err != nil {
		t.Fatalf("another client's refresh token: %v, want it kept", err)
	}
	for _, tc := range []struct {
		client string
		iat    int64
		want   int64
	}{{"cli-app", 9, 0}, {"cli-app", 10, math.MaxInt64}, {"web-app", 9, math.MaxInt64}} {
		got, err := s.AccessTokenLiveUntil(testCtx, &store.AccessTokenClaims{RealmID: sessionsTestRealm, TokenID: "jti",
			UserID: "alice", ClientID: tc.client, IssuedAt: tc.iat})
		if err != nil || got != tc.want {
			t.Fatalf("token of %s issued at %d: %d, %v; want %d", tc.client, tc.iat, got, err, tc.want)
		}
	}
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
