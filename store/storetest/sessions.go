package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// sessionSuite is the conformance tests of sessions, refresh tokens,
// revoked access tokens and consents.
func sessionSuite() []subTest {
	return []subTest{
		{"SessionCreateGet", testSessionCreateGet},
		{"SessionCreateRules", testSessionCreateRules},
		{"SessionTouch", testSessionTouch},
		{"SessionLists", testSessionLists},
		{"SessionDelete", testSessionDelete},
		{"SessionDeleteUser", testSessionDeleteUser},
		{"SessionDeleteExpired", testSessionDeleteExpired},
		{"RefreshTokenCreate", testRefreshTokenCreate},
		{"RefreshGrant", testRefreshGrant},
		{"RefreshTokenRotate", func(t *testing.T, s *store.Store) { testRefreshTokenRotate(t, s, rotateByHash) }},
		{"RefreshTokenRotateRead", func(t *testing.T, s *store.Store) { testRefreshTokenRotate(t, s, rotateAsRead) }},
		{"RefreshTokenReuse", func(t *testing.T, s *store.Store) { testRefreshTokenReuse(t, s, rotateByHash) }},
		{"RefreshTokenReuseRead", func(t *testing.T, s *store.Store) { testRefreshTokenReuse(t, s, rotateAsRead) }},
		{"RefreshTokenRevoke", testRefreshTokenRevoke},
		{"RefreshTokenPurge", testRefreshTokenPurge},
		{"OfflineTokens", testOfflineTokens},
		{"AccessTokenRevocation", testAccessTokenRevocation},
		{"ConsentGrant", testConsentGrant},
		{"ConsentRevoke", testConsentRevoke},
		{"ConsentHistory", testConsentHistory},
		{"SessionUserDeleteCascades", testSessionUserDeleteCascades},
	}
}

const (
	sessionsTestRealm = "11111111-1111-4111-8111-111111111111"
	sessionsTestOther = "22222222-2222-4222-8222-222222222222"
	sessionsTestNow   = int64(1_800_000_000_000)
	sessionsTestHour  = int64(60 * 60 * 1000)
)

// sessionsTestFixture makes realms acme and other; users alice and bob
// and clients web and cli in acme; user carol and client far in other.
func sessionsTestFixture(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(sessionsTestRealm, "acme", 1000))
	mustCreateRealm(t, s, testRealm(sessionsTestOther, "other", 2000))
	mustCreateUser(t, s, testUser("alice", sessionsTestRealm, "alice", ""))
	mustCreateUser(t, s, testUser("bob", sessionsTestRealm, "bob", ""))
	mustCreateUser(t, s, testUser("carol", sessionsTestOther, "carol", ""))
	for _, c := range []*store.Client{
		{ID: "web", RealmID: sessionsTestRealm, ClientID: "web-app", ClientType: "PUBLIC", CreatedAt: 1},
		{ID: "cli", RealmID: sessionsTestRealm, ClientID: "cli-app", ClientType: "PUBLIC", CreatedAt: 1},
		{ID: "far", RealmID: sessionsTestOther, ClientID: "far-app", ClientType: "PUBLIC", CreatedAt: 1},
	} {
		if err := s.CreateClient(testCtx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// sessionsTestClients maps the fixture's client IDs to their clientIds.
var sessionsTestClients = map[string]string{"web": "web-app", "cli": "cli-app", "far": "far-app"}

// sessionsTestSSO is an SSO session of user (whose ID is also its
// username) started at start, as reads return it.
func sessionsTestSSO(id, realmID, user string, start, expires int64) *store.Session {
	return &store.Session{ID: id, RealmID: realmID, UserID: user, Kind: store.SessionSSO, IPAddress: "192.0.2.7",
		StartedAt: start, LastAccessAt: start + 1, ExpiresAt: expires, AuthTime: start - 5, AMR: []string{"pwd", "otp"},
		Username: user}
}

// sessionsTestOAuth is an OAuth session of a client under parent, or an
// offline one when parent is "".
func sessionsTestOAuth(id, realmID, user, parent, client string, start, expires int64) *store.Session {
	return &store.Session{ID: id, RealmID: realmID, UserID: user, Kind: store.SessionOAuth, ParentID: parent, ClientID: client,
		IPAddress: "198.51.100.3", StartedAt: start, LastAccessAt: start, ExpiresAt: expires, AuthTime: start,
		AMR: []string{"pwd"}, Offline: parent == "", Username: user, PublicClientID: sessionsTestClients[client]}
}

func sessionsTestMustCreate(t *testing.T, s *store.Store, sessions ...*store.Session) {
	t.Helper()
	for _, sess := range sessions {
		if err := s.CreateSession(testCtx, sess); err != nil {
			t.Fatalf("create session %s: %v", sess.ID, err)
		}
	}
}

func sessionsTestIDs(sessions []*store.Session) []string {
	ids := []string{}
	for _, s := range sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

// sessionsTestToken is the first token of a family; its token is "tok-"+id.
func sessionsTestToken(id, user, client, session string, offline bool, created, expires int64) *store.RefreshToken {
	return &store.RefreshToken{ID: id, RealmID: sessionsTestRealm, TokenHash: store.HashToken("tok-" + id), SessionID: session,
		ClientID: client, UserID: user, Scopes: []string{"openid", "email"}, Offline: offline, AuthTime: created - 10,
		AMR: []string{"pwd"}, CreatedAt: created, ExpiresAt: expires}
}

func sessionsTestMustCreateToken(t *testing.T, s *store.Store, tokens ...*store.RefreshToken) {
	t.Helper()
	for _, tok := range tokens {
		if err := s.CreateRefreshToken(testCtx, tok); err != nil {
			t.Fatalf("create refresh token %s: %v", tok.ID, err)
		}
	}
}

func sessionsTestTokenState(t *testing.T, s *store.Store, token string) *store.RefreshToken {
	t.Helper()
	got, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken(token))
	if err != nil {
		t.Fatalf("refresh token %s: %v", token, err)
	}
	return got
}

func testSessionCreateGet(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	sso := sessionsTestSSO("sso1", sessionsTestRealm, "alice", sessionsTestNow, sessionsTestNow+sessionsTestHour)
	online := sessionsTestOAuth("oa1", sessionsTestRealm, "alice", "sso1", "web", sessionsTestNow+2, sessionsTestNow+sessionsTestHour)
	offline := sessionsTestOAuth("off1", sessionsTestRealm, "alice", "", "cli", sessionsTestNow+3, sessionsTestNow+30*sessionsTestHour)
	sessionsTestMustCreate(t, s, sso, online, offline)
	for _, want := range []*store.Session{sso, online, offline} {
		got, err := s.GetSession(testCtx, sessionsTestRealm, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "session "+want.ID, got, want)
	}
	mustBeErrNotFound(t, "session of another realm", sessionsTestErr(s.GetSession(testCtx, sessionsTestOther, "sso1")))
	mustBeErrNotFound(t, "unknown session", sessionsTestErr(s.GetSession(testCtx, sessionsTestRealm, "nope")))

	// Nil AMR is stored as an empty list; expiry is what Active reads.
	bare := &store.Session{ID: "sso2", RealmID: sessionsTestRealm, UserID: "bob", Kind: store.SessionSSO, ExpiresAt: sessionsTestNow}
	sessionsTestMustCreate(t, s, bare)
	got, err := s.GetSession(testCtx, sessionsTestRealm, "sso2")
	if err != nil {
		t.Fatal(err)
	}
	if got.AMR == nil || len(got.AMR) != 0 || got.Active(sessionsTestNow) || !got.Active(sessionsTestNow-1) {
		t.Fatalf("bare session %+v: want empty AMR, active only before %d", got, sessionsTestNow)
	}
}

// sessionsTestErr keeps the error of a two-valued call.
func sessionsTestErr[T any](_ T, err error) error { return err }

func testSessionCreateRules(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso1", sessionsTestRealm, "alice", sessionsTestNow, sessionsTestNow+sessionsTestHour),
		sessionsTestOAuth("oa1", sessionsTestRealm, "alice", "sso1", "web", sessionsTestNow, sessionsTestNow+sessionsTestHour),
		sessionsTestSSO("sso-carol", sessionsTestOther, "carol", sessionsTestNow, sessionsTestNow+sessionsTestHour),
	)
	with := func(base *store.Session, change func(*store.Session)) *store.Session {
		c := *base
		change(&c)
		return &c
	}
	sso := sessionsTestSSO("new", sessionsTestRealm, "alice", sessionsTestNow, sessionsTestNow+sessionsTestHour)
	oauth := sessionsTestOAuth("new", sessionsTestRealm, "alice", "sso1", "web", sessionsTestNow, sessionsTestNow+sessionsTestHour)
	for _, tc := range []struct {
		name string
		sess *store.Session
		want error
	}{
		{"unknown kind", with(sso, func(s *store.Session) { s.Kind = "saml" }), store.ErrInvalidSession},
		{"SSO with a client", with(sso, func(s *store.Session) { s.ClientID = "web" }), store.ErrInvalidSession},
		{"SSO with a parent", with(sso, func(s *store.Session) { s.ParentID = "sso1" }), store.ErrInvalidSession},
		{"offline SSO", with(sso, func(s *store.Session) { s.Offline = true }), store.ErrInvalidSession},
		{"OAuth without client", with(oauth, func(s *store.Session) { s.ClientID = "" }), store.ErrInvalidSession},
		{"online OAuth without parent", with(oauth, func(s *store.Session) { s.ParentID = "" }), store.ErrInvalidSession},
		{"offline OAuth with a parent", with(oauth, func(s *store.Session) { s.Offline = true }), store.ErrInvalidSession},
		{"unknown realm", with(sso, func(s *store.Session) { s.RealmID = "nope" }), store.ErrNotFound},
		{"user of another realm", with(sso, func(s *store.Session) { s.UserID = "carol" }), store.ErrNotFound},
		{"unknown user", with(sso, func(s *store.Session) { s.UserID = "nobody" }), store.ErrNotFound},
		{"client of another realm", with(oauth, func(s *store.Session) { s.ClientID = "far" }), store.ErrNotFound},
		{"parent of another user", with(oauth, func(s *store.Session) { s.UserID = "bob" }), store.ErrNotFound},
		{"parent not SSO", with(oauth, func(s *store.Session) { s.ParentID = "oa1" }), store.ErrNotFound},
		{"parent of another realm", with(oauth, func(s *store.Session) { s.ParentID = "sso-carol" }), store.ErrNotFound},
		{"taken ID", with(sso, func(s *store.Session) { s.ID = "sso1" }), store.ErrConflict},
	} {
		if err := s.CreateSession(testCtx, tc.sess); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := s.GetSession(testCtx, sessionsTestRealm, "new"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused session was stored: %v", err)
	}
}

func testSessionTouch(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("live", sessionsTestRealm, "alice", sessionsTestNow-10, sessionsTestNow+1),
		sessionsTestSSO("gone", sessionsTestRealm, "alice", sessionsTestNow-10, sessionsTestNow),
	)
	if err := s.TouchSession(testCtx, sessionsTestRealm, "live", sessionsTestNow, sessionsTestNow+sessionsTestHour); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSession(testCtx, sessionsTestRealm, "live")
	if err != nil {
		t.Fatal(err)
	}
	if got.LastAccessAt != sessionsTestNow || got.ExpiresAt != sessionsTestNow+sessionsTestHour || got.StartedAt != sessionsTestNow-10 {
		t.Fatalf("touched session %+v", got)
	}
	mustBeErrNotFound(t, "touch an expired session",
		s.TouchSession(testCtx, sessionsTestRealm, "gone", sessionsTestNow, sessionsTestNow+sessionsTestHour))
	mustBeErrNotFound(t, "touch in another realm",
		s.TouchSession(testCtx, sessionsTestOther, "live", sessionsTestNow, sessionsTestNow+sessionsTestHour))
	got, err = s.GetSession(testCtx, sessionsTestRealm, "gone")
	if err != nil || got.ExpiresAt != sessionsTestNow {
		t.Fatalf("expired session was revived: %+v, %v", got, err)
	}
}

func testSessionLists(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("a-sso", sessionsTestRealm, "alice", now-50, now+hour),
		sessionsTestOAuth("a-web", sessionsTestRealm, "alice", "a-sso", "web", now-40, now+hour),
		sessionsTestSSO("b-sso", sessionsTestRealm, "bob", now-45, now+hour),
		sessionsTestSSO("a-old", sessionsTestRealm, "alice", now-60, now), // expired now
		sessionsTestOAuth("a-off", sessionsTestRealm, "alice", "", "cli", now-30, now+30*hour),
		sessionsTestSSO("c-sso", sessionsTestOther, "carol", now-55, now+hour),
	)
	for _, tc := range []struct {
		name        string
		first, max  int
		wantIDs     []string
		wantFromAll bool
	}{
		{"all", 0, 100, []string{"a-sso", "b-sso", "a-web", "a-off"}, true},
		{"first page", 0, 2, []string{"a-sso", "b-sso"}, false},
		{"second page", 2, 2, []string{"a-web", "a-off"}, false},
		{"past the end", 4, 2, []string{}, false},
	} {
		got, err := s.ListRealmSessions(testCtx, sessionsTestRealm, now, tc.first, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "realm sessions, "+tc.name, sessionsTestIDs(got), tc.wantIDs)
		if tc.wantFromAll {
			mustEqual(t, "listed OAuth session", got[2],
				sessionsTestOAuth("a-web", sessionsTestRealm, "alice", "a-sso", "web", now-40, now+hour))
		}
	}
	got, err := s.ListUserSessions(testCtx, sessionsTestRealm, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's sessions", sessionsTestIDs(got), []string{"a-sso", "a-web", "a-off"})
	got, err = s.ListUserSessions(testCtx, sessionsTestOther, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's sessions in another realm", sessionsTestIDs(got), []string{})
	got, err = s.ListRealmSessions(testCtx, sessionsTestOther, now, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "other realm's sessions", sessionsTestIDs(got), []string{"c-sso"})
}

func testSessionDelete(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-50, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-40, now+hour),
		sessionsTestOAuth("cli", sessionsTestRealm, "alice", "sso", "cli", now-30, now+hour),
		sessionsTestOAuth("stale", sessionsTestRealm, "alice", "sso", "cli", now-35, now-1),
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "web", now-20, now+30*hour),
		sessionsTestSSO("old", sessionsTestRealm, "alice", now-60, now),
		sessionsTestSSO("bob", sessionsTestRealm, "bob", now-60, now+hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("t-web", "alice", "web", "web", false, now-40, now+hour),
		sessionsTestToken("t-off", "alice", "web", "off", true, now-20, now+30*hour),
	)
	for _, tc := range []struct {
		name, id, kind string
		realmID        string
	}{
		{"SSO session as oauth", "sso", store.SessionOAuth, sessionsTestRealm},
		{"OAuth session as sso", "web", store.SessionSSO, sessionsTestRealm},
		{"expired session", "old", store.SessionSSO, sessionsTestRealm},
		{"session of another realm", "sso", store.SessionSSO, sessionsTestOther},
		{"unknown session", "nope", store.SessionSSO, sessionsTestRealm},
	} {
		mustBeErrNotFound(t, tc.name, sessionsTestErr(s.DeleteSession(testCtx, tc.realmID, tc.id, tc.kind, now)))
	}

	ended, err := s.DeleteSession(testCtx, sessionsTestRealm, "cli", store.SessionOAuth, now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ended by deleting an OAuth session", sessionsTestIDs(ended), []string{"cli"})

	ended, err = s.DeleteSession(testCtx, sessionsTestRealm, "sso", store.SessionSSO, now)
	if err != nil {
		t.Fatal(err)
	}
	// The expired child goes too but is not reported; the offline session stays.
	mustEqual(t, "ended by deleting an SSO session", sessionsTestIDs(ended), []string{"sso", "web"})
	if ended[1].ClientID != "web" || ended[1].PublicClientID != "web-app" {
		t.Fatalf("ended OAuth session %+v does not name its client", ended[1])
	}
	for _, id := range []string{"sso", "web", "stale"} {
		mustBeErrNotFound(t, "deleted session "+id, sessionsTestErr(s.GetSession(testCtx, sessionsTestRealm, id)))
	}
	mustBeErrNotFound(t, "token of a deleted session",
		sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t-web"))))
	if !sessionsTestTokenState(t, s, "tok-t-off").Live(now) {
		t.Fatal("SSO logout ended the offline token")
	}
	left, err := s.ListRealmSessions(testCtx, sessionsTestRealm, now, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "sessions left", sessionsTestIDs(left), []string{"bob", "off"})
}

func testSessionDeleteUser(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("s1", sessionsTestRealm, "alice", now-50, now+hour),
		sessionsTestOAuth("s1-web", sessionsTestRealm, "alice", "s1", "web", now-40, now+hour),
		sessionsTestSSO("s2", sessionsTestRealm, "alice", now-30, now+hour),
		sessionsTestSSO("s3", sessionsTestRealm, "alice", now-60, now-1), // expired, not yet purged
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "cli", now-20, now+30*hour),
		sessionsTestSSO("bob", sessionsTestRealm, "bob", now-60, now+hour),
	)
	ended, err := s.DeleteUserSessions(testCtx, sessionsTestRealm, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ended sessions", sessionsTestIDs(ended), []string{"s1", "s1-web", "s2"})
	// Expired or not, only the offline session is left.
	if left, err := s.ListUserSessions(testCtx, sessionsTestRealm, "alice", 0); err != nil || !slices.Equal(sessionsTestIDs(left), []string{"off"}) {
		t.Fatalf("sessions of alice left: %v (%v), want the offline one", sessionsTestIDs(left), err)
	}
	if _, err := s.GetSession(testCtx, sessionsTestRealm, "off"); err != nil {
		t.Fatalf("offline session: %v", err)
	}
	if _, err := s.GetSession(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatalf("another user's session: %v", err)
	}
	ended, err = s.DeleteUserSessions(testCtx, sessionsTestRealm, "alice", now)
	if err != nil || len(ended) != 0 {
		t.Fatalf("second logout ended %v (%v), want none", sessionsTestIDs(ended), err)
	}
	ended, err = s.DeleteUserSessions(testCtx, sessionsTestOther, "bob", now)
	if err != nil || len(ended) != 0 {
		t.Fatalf("logout in another realm ended %v (%v), want none", sessionsTestIDs(ended), err)
	}
}

func testSessionDeleteExpired(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("gone", sessionsTestRealm, "alice", now-50, now),
		sessionsTestOAuth("gone-web", sessionsTestRealm, "alice", "gone", "web", now-40, now+hour), // goes with its parent
		sessionsTestOAuth("off-gone", sessionsTestRealm, "alice", "", "web", now-40, now-1),
		sessionsTestSSO("live", sessionsTestRealm, "alice", now-50, now+1),
		sessionsTestSSO("carol", sessionsTestOther, "carol", now-50, now-10),
	)
	sessionsTestMustCreateToken(t, s, sessionsTestToken("t-off", "alice", "web", "off-gone", true, now-40, now+hour))
	n, err := s.DeleteExpiredSessions(testCtx, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("deleted %d expired sessions, want 3", n)
	}
	var ids []string
	for _, realm := range []string{sessionsTestRealm, sessionsTestOther} {
		got, err := s.ListRealmSessions(testCtx, realm, 0, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sessionsTestIDs(got)...)
	}
	mustEqual(t, "sessions left", ids, []string{"live"})
	mustBeErrNotFound(t, "token of an expired session",
		sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t-off"))))
}

func testRefreshTokenCreate(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now, now+hour),
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "web", now, now+hour),
	)
	want := sessionsTestToken("t1", "alice", "web", "web", false, now, now+hour)
	want.FamilyID = "ignored: a new token starts its own family"
	sessionsTestMustCreateToken(t, s, want)
	if want.FamilyID != "t1" {
		t.Fatalf("family %q, want the token's ID", want.FamilyID)
	}
	got := sessionsTestTokenState(t, s, "tok-t1")
	mustEqual(t, "refresh token", got, want)
	if !got.Live(now) || got.Live(now+hour) {
		t.Fatalf("token %+v: want live only before %d", got, now+hour)
	}
	mustBeErrNotFound(t, "token looked up in another realm",
		sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestOther, store.HashToken("tok-t1"))))
	mustBeErrNotFound(t, "unknown token", sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("nope"))))
	// The token itself is not what is stored.
	mustBeErrNotFound(t, "token looked up by itself", sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, []byte("tok-t1"))))

	// A token without session; nil lists come back empty.
	bare := &store.RefreshToken{ID: "t2", RealmID: sessionsTestRealm, TokenHash: store.HashToken("tok-t2"), ClientID: "cli",
		UserID: "bob", Offline: true, CreatedAt: now, ExpiresAt: now + hour}
	sessionsTestMustCreateToken(t, s, bare)
	got = sessionsTestTokenState(t, s, "tok-t2")
	bare.Scopes, bare.AMR = []string{}, []string{}
	mustEqual(t, "bare token", got, bare)

	with := func(change func(*store.RefreshToken)) *store.RefreshToken {
		tok := sessionsTestToken("t3", "alice", "web", "web", false, now, now+hour)
		change(tok)
		return tok
	}
	for _, tc := range []struct {
		name string
		tok  *store.RefreshToken
		want error
	}{
		{"user of another realm", with(func(t *store.RefreshToken) { t.UserID, t.SessionID = "carol", "" }), store.ErrNotFound},
		{"client of another realm", with(func(t *store.RefreshToken) { t.ClientID = "far" }), store.ErrNotFound},
		{"unknown session", with(func(t *store.RefreshToken) { t.SessionID = "nope" }), store.ErrNotFound},
		{"session of another user", with(func(t *store.RefreshToken) { t.UserID = "bob" }), store.ErrNotFound},
		{"offline token under an online session", with(func(t *store.RefreshToken) { t.Offline = true }), store.ErrNotFound},
		{"online token under an offline session", with(func(t *store.RefreshToken) { t.SessionID = "off" }), store.ErrNotFound},
		{"hash already stored", with(func(t *store.RefreshToken) { t.TokenHash = store.HashToken("tok-t1") }), store.ErrConflict},
		{"taken ID", with(func(t *store.RefreshToken) { t.ID = "t1" }), store.ErrConflict},
	} {
		if err := s.CreateRefreshToken(testCtx, tc.tok); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := s.CreateRefreshToken(testCtx, with(func(t *store.RefreshToken) { t.TokenHash = []byte("tok-t3") })); err == nil {
		t.Fatal("a token that is not a SHA-256 hash was stored")
	}
	mustBeErrNotFound(t, "refused token", sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t3"))))
}

func testRefreshGrant(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now, now+hour),
		sessionsTestOAuth("off", sessionsTestRealm, "bob", "", "cli", now, now+hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("on", "alice", "web", "web", false, now, now+hour),
		sessionsTestToken("offline", "bob", "cli", "off", true, now, now+hour),
		&store.RefreshToken{ID: "bare", RealmID: sessionsTestRealm, TokenHash: store.HashToken("tok-bare"), ClientID: "cli",
			UserID: "bob", Offline: true, CreatedAt: now, ExpiresAt: now + hour},
	)
	// A rotated token is read as it is: the refresh finds it reused.
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-on"), sessionsTestNext("on2", now+1, now+hour), now+1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ token, user, session, sso string }{
		{"tok-on", "alice", "web", "sso"}, {"tok-on2", "alice", "web", "sso"}, {"tok-offline", "bob", "off", ""},
	} {
		g, err := s.RefreshGrantByHash(testCtx, sessionsTestRealm, store.HashToken(tc.token))
		if err != nil {
			t.Fatalf("%s: %v", tc.token, err)
		}
		mustEqual(t, tc.token+": token", g.Token, sessionsTestTokenState(t, s, tc.token))
		// The grant leaves out what a refresh never uses: the user's
		// password, the sessions' public client ID.
		user, err := s.GetUser(testCtx, sessionsTestRealm, tc.user)
		if err != nil {
			t.Fatal(err)
		}
		user.PasswordHash, user.PasswordChangedAt = "", 0
		mustEqual(t, tc.token+": user", g.User, user)
		sess, err := s.GetSession(testCtx, sessionsTestRealm, tc.session)
		if err != nil {
			t.Fatal(err)
		}
		sess.PublicClientID = ""
		mustEqual(t, tc.token+": session", g.Session, sess)
		var sso *store.Session
		if tc.sso != "" {
			if sso, err = s.GetSession(testCtx, sessionsTestRealm, tc.sso); err != nil {
				t.Fatal(err)
			}
		}
		mustEqual(t, tc.token+": SSO session", g.SSO, sso)
	}
	for _, tc := range []struct{ name, realmID, token string }{
		{"unknown token", sessionsTestRealm, "nope"},
		{"token of another realm", sessionsTestOther, "tok-offline"},
		{"token without a session", sessionsTestRealm, "tok-bare"},
	} {
		mustBeErrNotFound(t, tc.name, sessionsTestErr(s.RefreshGrantByHash(testCtx, tc.realmID, store.HashToken(tc.token))))
	}
}

// sessionsTestNext is the successor of a token, as the provider builds it.
func sessionsTestNext(id string, created, expires int64) *store.RefreshToken {
	return &store.RefreshToken{ID: id, TokenHash: store.HashToken("tok-" + id), Scopes: []string{"openid"}, CreatedAt: created, ExpiresAt: expires}
}

// rotation rotates the token with the presented hash as a caller of the
// store does: rotateByHash, or rotateAsRead after reading the token.
type rotation func(s *store.Store, realmID string, hash []byte, next *store.RefreshToken, now int64) (*store.RefreshToken, error)

func rotateByHash(s *store.Store, realmID string, hash []byte, next *store.RefreshToken, now int64) (*store.RefreshToken, error) {
	return s.RotateRefreshToken(testCtx, realmID, hash, next, now)
}

// rotateAsRead reads the token first, as a refresh does, and rotates it
// with RotateReadRefreshToken.
func rotateAsRead(s *store.Store, realmID string, hash []byte, next *store.RefreshToken, now int64) (*store.RefreshToken, error) {
	presented, err := s.RefreshTokenByHash(testCtx, realmID, hash)
	if err != nil {
		return nil, err
	}
	return presented, s.RotateReadRefreshToken(testCtx, presented, next, now)
}

func testRefreshTokenRotate(t *testing.T, s *store.Store, rotate rotation) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
		sessionsTestSSO("ending", sessionsTestRealm, "bob", now-hour, now+10),
		sessionsTestOAuth("ending-web", sessionsTestRealm, "bob", "ending", "web", now-hour, now+10),
	)
	first := sessionsTestToken("t1", "alice", "web", "web", false, now-hour, now+hour)
	first.Org = store.OrgChoice{Made: true, ID: "org-1"}
	sessionsTestMustCreateToken(t, s, first,
		sessionsTestToken("old", "alice", "web", "web", false, now-hour, now),
		sessionsTestToken("bobs", "bob", "web", "ending-web", false, now-hour, now+hour),
	)
	next := sessionsTestNext("t2", now, now+2*hour)
	presented, err := rotate(s, sessionsTestRealm, store.HashToken("tok-t1"), next, now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "presented token", presented, first)
	want := &store.RefreshToken{ID: "t2", RealmID: sessionsTestRealm, TokenHash: store.HashToken("tok-t2"), FamilyID: "t1",
		SessionID: "web", ClientID: "web", UserID: "alice", Scopes: []string{"openid"}, AuthTime: first.AuthTime,
		AMR: []string{"pwd"}, Org: first.Org, CreatedAt: now, ExpiresAt: now + 2*hour}
	mustEqual(t, "successor as filled in", next, want)
	mustEqual(t, "successor as stored", sessionsTestTokenState(t, s, "tok-t2"), want)
	if got := sessionsTestTokenState(t, s, "tok-t1"); got.RotatedAt != now || got.RevokedAt != 0 {
		t.Fatalf("presented token after rotation: %+v, want rotated at %d", got, now)
	}

	// The successor rotates in turn, keeping the family.
	if _, err := rotate(s, sessionsTestRealm, store.HashToken("tok-t2"), sessionsTestNext("t3", now+1, now+3*hour), now+1); err != nil {
		t.Fatal(err)
	}
	if got := sessionsTestTokenState(t, s, "tok-t3"); got.FamilyID != "t1" || !got.Live(now+1) {
		t.Fatalf("third token %+v, want live in family t1", got)
	}

	for _, tc := range []struct {
		name    string
		realmID string
		token   string
		at      int64
	}{
		{"unknown token", sessionsTestRealm, "nope", now},
		{"token of another realm", sessionsTestOther, "tok-t3", now},
		{"expired token", sessionsTestRealm, "tok-old", now},
		{"token whose session expired", sessionsTestRealm, "tok-bobs", now + 10},
	} {
		_, err := rotate(s, tc.realmID, store.HashToken(tc.token), sessionsTestNext("x-"+tc.token, tc.at, tc.at+hour), tc.at)
		mustBeErrNotFound(t, tc.name, err)
		mustBeErrNotFound(t, tc.name+": successor",
			sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-x-"+tc.token))))
	}
	if got := sessionsTestTokenState(t, s, "tok-bobs"); got.RotatedAt != 0 {
		t.Fatalf("refused rotation marked the token: %+v", got)
	}

	// A successor that cannot be stored leaves the presented token unrotated.
	clash := sessionsTestNext("t1", now+2, now+hour) // the ID of the family's first token
	if _, err := rotate(s, sessionsTestRealm, store.HashToken("tok-t3"), clash, now+2); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("successor with a taken ID: %v, want ErrConflict", err)
	}
	if got := sessionsTestTokenState(t, s, "tok-t3"); !got.Live(now + 2) {
		t.Fatalf("token after a failed rotation: %+v, want still live", got)
	}
}

func testRefreshTokenReuse(t *testing.T, s *store.Store, rotate rotation) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("t1", "alice", "web", "web", false, now-hour, now+hour),
		sessionsTestToken("other", "alice", "web", "web", false, now-hour, now+hour),
	)
	if _, err := rotate(s, sessionsTestRealm, store.HashToken("tok-t1"), sessionsTestNext("t2", now, now+hour), now); err != nil {
		t.Fatal(err)
	}
	// The rotated token comes back: someone holds a copy.
	presented, err := rotate(s, sessionsTestRealm, store.HashToken("tok-t1"), sessionsTestNext("t3", now+5, now+hour), now+5)
	if !errors.Is(err, store.ErrTokenReused) {
		t.Fatalf("reused token: %v, want ErrTokenReused", err)
	}
	if presented == nil || presented.FamilyID != "t1" || presented.SessionID != "web" {
		t.Fatalf("reused token came back as %+v, want the presented token", presented)
	}
	for _, tok := range []string{"tok-t1", "tok-t2"} {
		if got := sessionsTestTokenState(t, s, tok); got.RevokedAt != now+5 {
			t.Fatalf("%s after reuse: %+v, want revoked at %d", tok, got, now+5)
		}
	}
	mustBeErrNotFound(t, "successor of a reused token",
		sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t3"))))
	if !sessionsTestTokenState(t, s, "tok-other").Live(now + 5) {
		t.Fatal("reuse revoked another family")
	}
	// The successor, revoked before it was ever used, is refused as revoked,
	// and its revocation time kept.
	if _, err := rotate(s, sessionsTestRealm, store.HashToken("tok-t2"), sessionsTestNext("t4", now+9, now+hour), now+9); !errors.Is(err, store.ErrTokenRevoked) {
		t.Fatalf("revoked token: %v, want ErrTokenRevoked", err)
	}
	if got := sessionsTestTokenState(t, s, "tok-t2"); got.RevokedAt != now+5 {
		t.Fatalf("revocation time moved: %+v", got)
	}
}

func testRefreshTokenRevoke(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
		sessionsTestOAuth("cli", sessionsTestRealm, "alice", "sso", "cli", now-hour, now+hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("w1", "alice", "web", "web", false, now-hour, now+hour),
		sessionsTestToken("w2", "alice", "web", "web", false, now-hour, now+hour),
		sessionsTestToken("c1", "alice", "cli", "cli", false, now-hour, now+hour),
	)
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-w1"), sessionsTestNext("w1b", now, now+hour), now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		revoke  func() (int64, error)
		want    int64
		revoked []string
	}{
		{"family in another realm", func() (int64, error) { return s.RevokeRefreshFamily(testCtx, sessionsTestOther, "w1", now) }, 0, nil},
		{"family", func() (int64, error) { return s.RevokeRefreshFamily(testCtx, sessionsTestRealm, "w1", now) }, 2,
			[]string{"tok-w1", "tok-w1b"}},
		{"family again", func() (int64, error) { return s.RevokeRefreshFamily(testCtx, sessionsTestRealm, "w1", now+1) }, 0,
			[]string{"tok-w1", "tok-w1b"}},
		{"session", func() (int64, error) { return s.RevokeRefreshTokensOfSession(testCtx, sessionsTestRealm, "web", now) }, 1,
			[]string{"tok-w1", "tok-w1b", "tok-w2"}},
		{"session in another realm", func() (int64, error) {
			return s.RevokeRefreshTokensOfSession(testCtx, sessionsTestOther, "cli", now)
		}, 0, []string{"tok-w1", "tok-w1b", "tok-w2"}},
	} {
		n, err := tc.revoke()
		if err != nil || n != tc.want {
			t.Fatalf("revoke %s: %d (%v), want %d", tc.name, n, err, tc.want)
		}
		for _, tok := range []string{"tok-w1", "tok-w1b", "tok-w2", "tok-c1"} {
			got := sessionsTestTokenState(t, s, tok)
			want := int64(0)
			for _, r := range tc.revoked {
				if r == tok {
					want = now
				}
			}
			if got.RevokedAt != want {
				t.Fatalf("after revoking %s: %s revoked at %d, want %d", tc.name, tok, got.RevokedAt, want)
			}
		}
	}
}

func testRefreshTokenPurge(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "web", now-9*hour, now+30*hour))
	// Family a lives on through a rotation; family d has wholly expired.
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("a1", "alice", "web", "off", true, now-9*hour, now-8*hour+hour),
		sessionsTestToken("d1", "alice", "web", "off", true, now-9*hour, now-5*hour),
	)
	steps := []struct {
		id      string
		at, exp int64
	}{{"a2", now - 8*hour, now - 1}, {"a3", now - 2, now + hour}}
	prev := "a1"
	for _, st := range steps {
		if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-"+prev), sessionsTestNext(st.id, st.at, st.exp), st.at); err != nil {
			t.Fatal(err)
		}
		prev = st.id
	}
	n, err := s.DeleteExpiredRefreshTokens(testCtx, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("purged %d tokens, want 2 (a2 and d1)", n)
	}
	for tok, kept := range map[string]bool{"tok-a1": true, "tok-a2": false, "tok-a3": true, "tok-d1": false} {
		_, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken(tok))
		if kept && err != nil || !kept && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after purge: %v, want kept=%t", tok, err, kept)
		}
	}
	offline, err := s.ListOfflineTokens(testCtx, sessionsTestRealm, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(offline) != 1 || offline[0].CreatedAt != now-9*hour {
		t.Fatalf("offline tokens after purge: %+v, want family a dated %d", offline, now-9*hour)
	}
	// Once the whole family has expired, its first token goes too.
	if n, err := s.DeleteExpiredRefreshTokens(testCtx, now+hour); err != nil || n != 2 {
		t.Fatalf("second purge: %d (%v), want 2", n, err)
	}
}

func testOfflineTokens(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestOAuth("off-web", sessionsTestRealm, "alice", "", "web", now-5*hour, now+30*hour),
		sessionsTestOAuth("off-cli", sessionsTestRealm, "alice", "", "cli", now-3*hour, now+30*hour),
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
		sessionsTestOAuth("off-bob", sessionsTestRealm, "bob", "", "web", now-hour, now+30*hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("w1", "alice", "web", "off-web", true, now-5*hour, now+20*hour),
		sessionsTestToken("c1", "alice", "cli", "off-cli", true, now-3*hour, now+20*hour),
		sessionsTestToken("gone", "alice", "cli", "", true, now-6*hour, now),          // expired
		sessionsTestToken("online", "alice", "web", "web", false, now-hour, now+hour), // not offline
		sessionsTestToken("b1", "bob", "web", "off-bob", true, now-hour, now+20*hour),
	)
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-w1"), sessionsTestNext("w2", now-hour, now+25*hour), now-hour); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListOfflineTokens(testCtx, sessionsTestRealm, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's offline tokens", got, []*store.OfflineToken{
		{ID: "c1", ClientID: "cli", PublicClientID: "cli-app", Scopes: []string{"openid", "email"},
			CreatedAt: now - 3*hour, ExpiresAt: now + 20*hour},
		{ID: "w1", ClientID: "web", PublicClientID: "web-app", Scopes: []string{"openid"},
			CreatedAt: now - 5*hour, LastRefreshAt: now - hour, ExpiresAt: now + 25*hour},
	})
	got, err = s.ListOfflineTokens(testCtx, sessionsTestOther, "alice", now)
	if err != nil || len(got) != 0 {
		t.Fatalf("alice's offline tokens in another realm: %+v (%v)", got, err)
	}

	for _, tc := range []struct {
		name, realmID, user, id string
	}{
		{"unknown family", sessionsTestRealm, "alice", "nope"},
		{"successor's own ID", sessionsTestRealm, "alice", "w2"},
		{"another user's", sessionsTestRealm, "alice", "b1"},
		{"another realm", sessionsTestOther, "alice", "w1"},
		{"expired", sessionsTestRealm, "alice", "gone"},
		{"online token", sessionsTestRealm, "alice", "online"},
	} {
		mustBeErrNotFound(t, "revoke "+tc.name, s.RevokeOfflineToken(testCtx, tc.realmID, tc.user, tc.id, now))
	}
	if err := s.RevokeOfflineToken(testCtx, sessionsTestRealm, "alice", "w1", now); err != nil {
		t.Fatal(err)
	}
	// The offline session had no other token, so it ended with it.
	mustBeErrNotFound(t, "offline session of the revoked token", sessionsTestErr(s.GetSession(testCtx, sessionsTestRealm, "off-web")))
	mustBeErrNotFound(t, "revoke twice", s.RevokeOfflineToken(testCtx, sessionsTestRealm, "alice", "w1", now))
	got, err = s.ListOfflineTokens(testCtx, sessionsTestRealm, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "c1" {
		t.Fatalf("offline tokens after revoking w1: %+v, want c1", got)
	}
	for _, id := range []string{"off-cli", "web", "off-bob"} {
		if _, err := s.GetSession(testCtx, sessionsTestRealm, id); err != nil {
			t.Fatalf("session %s after revoking w1: %v", id, err)
		}
	}
}

func testAccessTokenRevocation(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	for _, tc := range []struct {
		jti     string
		expires int64
	}{{"j1", now}, {"j2", now + 1}, {"j1", now + 99}} { // twice is no error
		if err := s.RevokeAccessToken(testCtx, sessionsTestRealm, tc.jti, tc.expires); err != nil {
			t.Fatal(err)
		}
	}
	mustBeErrNotFound(t, "revocation in an unknown realm", s.RevokeAccessToken(testCtx, "nope", "j3", now))
	check := func(when string, want map[string]bool) {
		t.Helper()
		for jti, revoked := range want {
			got, err := s.AccessTokenRevoked(testCtx, jti)
			if err != nil || got != revoked {
				t.Fatalf("%s: %s revoked %t (%v), want %t", when, jti, got, err, revoked)
			}
		}
	}
	check("after revoking", map[string]bool{"j1": true, "j2": true, "j3": false})
	n, err := s.DeleteExpiredAccessTokenRevocations(testCtx, now)
	if err != nil || n != 1 {
		t.Fatalf("purged %d revocations (%v), want 1", n, err)
	}
	check("after the purge", map[string]bool{"j1": false, "j2": true})
}

func testConsentGrant(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	if err := s.GrantConsent(testCtx, "alice", "web", []string{"profile", "openid", "openid"}, 1000); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantConsent(testCtx, "alice", "web", []string{"email", "openid"}, 2000); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetConsent(testCtx, "alice", "web")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "consent after two grants", got, &store.Consent{UserID: "alice", ClientID: "web", PublicClientID: "web-app",
		Scopes: []string{"email", "openid", "profile"}, GrantedAt: 1000, UpdatedAt: 2000})

	// UpsertConsent sets the scopes exactly.
	if err := s.UpsertConsent(testCtx, "alice", "web", []string{"openid"}, 3000); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertConsent(testCtx, "alice", "cli", nil, 3500); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListUserConsents(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's consents", list, []*store.Consent{
		{UserID: "alice", ClientID: "cli", PublicClientID: "cli-app", Scopes: []string{}, GrantedAt: 3500, UpdatedAt: 3500},
		{UserID: "alice", ClientID: "web", PublicClientID: "web-app", Scopes: []string{"openid"}, GrantedAt: 1000, UpdatedAt: 3000},
	})
	list, err = s.ListUserConsents(testCtx, sessionsTestOther, "alice")
	if err != nil || len(list) != 0 {
		t.Fatalf("alice's consents in another realm: %+v (%v)", list, err)
	}
	history, err := s.ConsentHistory(testCtx, sessionsTestRealm, "alice", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range history {
		actions = append(actions, e.PublicClientID+" "+e.Action+" "+jsonList(e.Scopes))
	}
	mustEqual(t, "history", actions, []string{
		`cli-app GRANT []`, `web-app GRANT ["openid"]`, `web-app GRANT ["email","openid"]`, `web-app GRANT ["openid","profile"]`,
	})

	for _, tc := range []struct{ name, user, client string }{
		{"unknown user", "nobody", "web"},
		{"unknown client", "alice", "nope"},
		{"client of another realm", "alice", "far"},
		{"user of another realm", "carol", "web"},
	} {
		mustBeErrNotFound(t, "grant: "+tc.name, s.GrantConsent(testCtx, tc.user, tc.client, []string{"openid"}, 1))
		mustBeErrNotFound(t, "upsert: "+tc.name, s.UpsertConsent(testCtx, tc.user, tc.client, []string{"openid"}, 1))
	}
	mustBeErrNotFound(t, "consent never given", sessionsTestErr(s.GetConsent(testCtx, "bob", "web")))
	// Refused grants record nothing: alice's four are all the events there are.
	events := 0
	for _, u := range []struct{ realm, user string }{
		{sessionsTestRealm, "alice"}, {sessionsTestRealm, "bob"}, {sessionsTestOther, "carol"}, {sessionsTestRealm, "nobody"},
	} {
		history, err := s.ConsentHistory(testCtx, u.realm, u.user, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		events += len(history)
	}
	if events != 4 {
		t.Fatalf("%d consent events, want 4: refused grants record nothing", events)
	}
}

func testConsentRevoke(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
		sessionsTestOAuth("cli", sessionsTestRealm, "alice", "sso", "cli", now-hour, now+hour),
		sessionsTestOAuth("off-web", sessionsTestRealm, "alice", "", "web", now-2*hour, now+30*hour),
		sessionsTestOAuth("bob-web", sessionsTestRealm, "bob", "", "web", now-2*hour, now+30*hour),
	)
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("off", "alice", "web", "", true, now-2*hour, now+20*hour), // an offline token without session
		sessionsTestToken("off-cli", "alice", "cli", "", true, now-2*hour, now+20*hour),
		sessionsTestToken("bob", "bob", "web", "bob-web", true, now-2*hour, now+20*hour),
	)
	// Bob has an offline token and no consent, as a client that asks for
	// none leaves him.
	for _, c := range []struct{ user, client string }{{"alice", "web"}, {"alice", "cli"}} {
		if err := s.GrantConsent(testCtx, c.user, c.client, []string{"openid", "offline_access"}, now-3*hour); err != nil {
			t.Fatal(err)
		}
	}
	mustBeErrNotFound(t, "revoke in another realm", sessionsTestErr(s.RevokeConsent(testCtx, sessionsTestOther, "alice", "web", now)))

	ended, err := s.RevokeConsent(testCtx, sessionsTestRealm, "alice", "web", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "sessions ended", sessionsTestIDs(ended), []string{"off-web", "web"})
	mustBeErrNotFound(t, "revoked consent", sessionsTestErr(s.GetConsent(testCtx, "alice", "web")))
	if got := sessionsTestTokenState(t, s, "tok-off"); got.RevokedAt != now {
		t.Fatalf("offline token after consent revocation: %+v", got)
	}
	for _, tok := range []string{"tok-off-cli", "tok-bob"} {
		if !sessionsTestTokenState(t, s, tok).Live(now) {
			t.Fatalf("%s was revoked with another consent", tok)
		}
	}
	left, err := s.ListRealmSessions(testCtx, sessionsTestRealm, now, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "sessions left", sessionsTestIDs(left), []string{"bob-web", "cli", "sso"})
	history, err := s.ConsentHistory(testCtx, sessionsTestRealm, "alice", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 1 || history[0].Action != store.ConsentRevoke || history[0].ClientID != "web" || history[0].Time != now ||
		jsonList(history[0].Scopes) != `["offline_access","openid"]` {
		t.Fatalf("latest consent event %+v, want the revocation with the scopes held", history)
	}
	mustBeErrNotFound(t, "revoke twice", sessionsTestErr(s.RevokeConsent(testCtx, sessionsTestRealm, "alice", "web", now)))

	if _, err := s.RevokeConsent(testCtx, sessionsTestRealm, "alice", "cli", now); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "revoke cli twice", sessionsTestErr(s.RevokeConsent(testCtx, sessionsTestRealm, "alice", "cli", now)))

	// An offline token is enough to revoke, as in Keycloak; no consent event then.
	ended, err = s.RevokeConsent(testCtx, sessionsTestRealm, "bob", "web", now)
	if err != nil {
		t.Fatalf("revoke with an offline token only: %v", err)
	}
	mustEqual(t, "bob's sessions ended", sessionsTestIDs(ended), []string{"bob-web"})
	if got := sessionsTestTokenState(t, s, "tok-off-cli"); got.RevokedAt != now {
		t.Fatalf("offline token of cli after its revocation: %+v", got)
	}
	history, err = s.ConsentHistory(testCtx, sessionsTestRealm, "bob", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 0 {
		t.Fatalf("bob's history %+v: a revocation without consent records no event", history)
	}
}

func testConsentHistory(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	steps := []struct {
		grant  bool
		client string
		time   int64
	}{
		{true, "web", 100}, {true, "cli", 100}, {false, "web", 100}, {true, "web", 300}, {false, "cli", 200},
	}
	for _, st := range steps {
		var err error
		if st.grant {
			err = s.GrantConsent(testCtx, "alice", st.client, []string{"openid"}, st.time)
		} else {
			_, err = s.RevokeConsent(testCtx, sessionsTestRealm, "alice", st.client, st.time)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.GrantConsent(testCtx, "bob", "web", []string{"openid"}, 999); err != nil {
		t.Fatal(err)
	}
	describe := func(events []*store.ConsentEvent) []string {
		out := []string{}
		for _, e := range events {
			out = append(out, e.PublicClientID+" "+e.Action+" "+jsonList(e.Scopes)+" "+strconv.FormatInt(e.Time, 10))
		}
		return out
	}
	for _, tc := range []struct {
		first, max int
		want       []string
	}{
		{0, 10, []string{`web-app GRANT ["openid"] 300`, `cli-app REVOKE ["openid"] 200`, `web-app REVOKE ["openid"] 100`,
			`cli-app GRANT ["openid"] 100`, `web-app GRANT ["openid"] 100`}},
		{1, 2, []string{`cli-app REVOKE ["openid"] 200`, `web-app REVOKE ["openid"] 100`}},
		{5, 2, []string{}},
	} {
		got, err := s.ConsentHistory(testCtx, sessionsTestRealm, "alice", tc.first, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "history page", describe(got), tc.want)
	}
	got, err := s.ConsentHistory(testCtx, sessionsTestOther, "alice", 0, 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("history in another realm: %+v (%v)", got, err)
	}
	// A deleted client takes its history with it.
	if err := s.DeleteClient(testCtx, sessionsTestRealm, "cli"); err != nil {
		t.Fatal(err)
	}
	got, err = s.ConsentHistory(testCtx, sessionsTestRealm, "alice", 0, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("history after deleting cli: %v (%v), want the 3 web events", describe(got), err)
	}
}

func testSessionUserDeleteCascades(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now, now+hour),
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "web", now, now+hour),
	)
	sessionsTestMustCreateToken(t, s, sessionsTestToken("t", "alice", "web", "off", true, now, now+hour))
	if err := s.GrantConsent(testCtx, "alice", "web", []string{"openid"}, now); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	// A user made again with her ID has nothing of hers.
	mustCreateUser(t, s, testUser("alice", sessionsTestRealm, "alice", ""))
	if left, err := s.ListUserSessions(testCtx, sessionsTestRealm, "alice", 0); err != nil || len(left) != 0 {
		t.Fatalf("sessions left: %v (%v)", sessionsTestIDs(left), err)
	}
	for _, id := range []string{"sso", "off"} {
		mustBeErrNotFound(t, "session "+id, sessionsTestErr(s.GetSession(testCtx, sessionsTestRealm, id)))
	}
	mustBeErrNotFound(t, "refresh token", sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t"))))
	if tokens, err := s.ListOfflineTokens(testCtx, sessionsTestRealm, "alice", 0); err != nil || len(tokens) != 0 {
		t.Fatalf("offline tokens left: %+v (%v)", tokens, err)
	}
	mustBeErrNotFound(t, "consent", sessionsTestErr(s.GetConsent(testCtx, "alice", "web")))
	if history, err := s.ConsentHistory(testCtx, sessionsTestRealm, "alice", 0, 100); err != nil || len(history) != 0 {
		t.Fatalf("consent events left: %+v (%v)", history, err)
	}
}

// jsonList writes scopes as the store keeps them, for messages and
// comparisons: a JSON array, [] for none.
func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
