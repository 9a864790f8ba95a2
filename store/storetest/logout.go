package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// logoutSuite is the conformance tests of logout by refresh token and of
// back-channel logout token replay protection.
func logoutSuite() []subTest {
	return []subTest{
		{"LogoutTokenIDReplay", testLogoutTokenIDReplay},
		{"LogoutRefreshTokenOnline", testLogoutRefreshTokenOnline},
		{"LogoutRefreshTokenOffline", testLogoutRefreshTokenOffline},
		{"LogoutRefreshTokenRefused", testLogoutRefreshTokenRefused},
	}
}

func testLogoutTokenIDReplay(t *testing.T, s *store.Store) {
	now := sessionsTestNow
	if err := s.RecordLogoutTokenID(testCtx, "j1", now+1000, now); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "replayed jti", s.RecordLogoutTokenID(testCtx, "j1", now+1000, now+10))
	if err := s.RecordLogoutTokenID(testCtx, "j2", now+2000, now+10); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordLogoutTokenID(testCtx, "j3", now+5000, now+1000); err != nil {
		t.Fatal(err)
	}
	// Once expired, j1 is forgotten and may be seen again; j2 and j3 are
	// still remembered.
	if err := s.RecordLogoutTokenID(testCtx, "j1", now+6000, now+1000); err != nil {
		t.Fatalf("an expired jti seen again: %v", err)
	}
	for _, jti := range []string{"j2", "j3"} {
		if err := s.RecordLogoutTokenID(testCtx, jti, now+2000, now+1500); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("replayed unexpired %s: %v, want ErrConflict", jti, err)
		}
	}
}

// logoutTestSessions makes alice's SSO session with web and cli sessions
// under it, each with a token, plus an offline session of web with an
// offline token and bob's SSO session with a web session and token.
func logoutTestSessions(t *testing.T, s *store.Store) {
	t.Helper()
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
		sessionsTestOAuth("cli", sessionsTestRealm, "alice", "sso", "cli", now-hour, now+hour),
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "web", now-hour, now+30*hour),
		sessionsTestSSO("bob-sso", sessionsTestRealm, "bob", now-hour, now+hour),
		sessionsTestOAuth("bob-web", sessionsTestRealm, "bob", "bob-sso", "web", now-hour, now+hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("w1", "alice", "web", "web", false, now-hour, now+hour),
		sessionsTestToken("c1", "alice", "cli", "cli", false, now-hour, now+hour),
		sessionsTestToken("o1", "alice", "web", "off", true, now-hour, now+30*hour),
		sessionsTestToken("b1", "bob", "web", "bob-web", false, now-hour, now+hour),
	)
}

// logoutTestLive is the IDs of every session of the realm, expired or not.
func logoutTestLive(t *testing.T, s *store.Store) []string {
	t.Helper()
	all, err := s.ListRealmSessions(testCtx, sessionsTestRealm, 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ids := sessionsTestIDs(all)
	slices.Sort(ids)
	return ids
}

func testLogoutRefreshTokenOnline(t *testing.T, s *store.Store) {
	logoutTestSessions(t, s)
	now := sessionsTestNow
	// A rotation first: logout by the successor revokes the whole family.
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-w1"), sessionsTestNext("w2", now, now+sessionsTestHour), now); err != nil {
		t.Fatal(err)
	}
	rt, ended, err := s.LogoutRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-w2"), "web", now+1)
	if err != nil {
		t.Fatal(err)
	}
	if rt.ID != "w2" || rt.FamilyID != "w1" || rt.UserID != "alice" {
		t.Fatalf("token %+v", rt)
	}
	if got := sessionsTestIDs(ended); !slices.Equal(got, []string{"sso", "cli", "web"}) {
		t.Fatalf("ended %v, want the SSO session first, then its client sessions", got)
	}
	// The offline session and bob's survive; the SSO session's tokens went with it.
	if got := logoutTestLive(t, s); !slices.Equal(got, []string{"bob-sso", "bob-web", "off"}) {
		t.Fatalf("sessions left %v", got)
	}
	for _, tok := range []string{"tok-w1", "tok-w2", "tok-c1"} {
		if _, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken(tok)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s after logout: %v, want it gone", tok, err)
		}
	}
	if !sessionsTestTokenState(t, s, "tok-o1").Live(now + 1) {
		t.Fatal("offline token died with the SSO session")
	}
	// The token is gone now: a second logout is refused.
	_, _, err = s.LogoutRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-w2"), "web", now+2)
	mustBeErrNotFound(t, "second logout", err)
}

func testLogoutRefreshTokenOffline(t *testing.T, s *store.Store) {
	logoutTestSessions(t, s)
	now := sessionsTestNow
	_, ended, err := s.LogoutRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-o1"), "web", now)
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsTestIDs(ended); !slices.Equal(got, []string{"off"}) {
		t.Fatalf("ended %v, want the offline session alone", got)
	}
	if got := logoutTestLive(t, s); !slices.Equal(got, []string{"bob-sso", "bob-web", "cli", "sso", "web"}) {
		t.Fatalf("sessions left %v", got)
	}
}

func testLogoutRefreshTokenRefused(t *testing.T, s *store.Store) {
	logoutTestSessions(t, s)
	now := sessionsTestNow
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-c1"), sessionsTestNext("c2", now, now+sessionsTestHour), now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, realm, token, client string
		now                        int64
	}{
		{"another client's token", sessionsTestRealm, "tok-w1", "cli", now},
		{"another realm", sessionsTestOther, "tok-w1", "web", now},
		{"unknown token", sessionsTestRealm, "tok-nope", "web", now},
		{"rotated token", sessionsTestRealm, "tok-c1", "cli", now},
		{"expired token", sessionsTestRealm, "tok-w1", "web", now + sessionsTestHour},
	} {
		_, _, err := s.LogoutRefreshToken(testCtx, tc.realm, store.HashToken(tc.token), tc.client, tc.now)
		mustBeErrNotFound(t, tc.name, err)
	}
	// Nothing changed.
	if got := logoutTestLive(t, s); len(got) != 6 {
		t.Fatalf("sessions left %v", got)
	}
	if !sessionsTestTokenState(t, s, "tok-w1").Live(now) || !sessionsTestTokenState(t, s, "tok-c2").Live(now) {
		t.Fatal("a refused logout revoked a token")
	}
}
