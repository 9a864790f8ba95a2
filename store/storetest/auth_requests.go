package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// authRequestSuite is the conformance tests of authorization requests and
// codes, and of the session methods the code flow adds.
func authRequestSuite() []subTest {
	return []subTest{
		{"AuthRequestCreateGet", testAuthRequestCreateGet},
		{"AuthRequestCreateRules", testAuthRequestCreateRules},
		{"AuthRequestAuthenticate", testAuthRequestAuthenticate},
		{"AuthRequestSettleOrganization", testAuthRequestSettleOrganization},
		{"AuthCodeIssue", testAuthCodeIssue},
		{"AuthCodeRedeem", testAuthCodeRedeem},
		{"AuthCodeReplayRevokes", testAuthCodeReplayRevokes},
		{"AuthRequestDelete", testAuthRequestDelete},
		{"SessionReauthenticate", testSessionReauthenticate},
		{"ClientSessionOf", testClientSessionOf},
	}
}

// authRequestsTestPending is a pending request of client web in acme,
// expiring an hour after now, with every field set.
func authRequestsTestPending(id string) *store.AuthRequest {
	maxAge := 600
	return &store.AuthRequest{ID: id, RealmID: sessionsTestRealm, ClientID: "web", RedirectURI: "https://app.test/cb",
		Scopes: []string{"openid", "email"}, State: "st-" + id, Nonce: "n-" + id, ResponseType: "code",
		ResponseMode: "query", CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", CodeChallengeMethod: "S256",
		Prompt: []string{"login"}, MaxAge: &maxAge, LoginHint: "alice", AMR: []string{},
		CreatedAt: sessionsTestNow, ExpiresAt: sessionsTestNow + sessionsTestHour}
}

func authRequestsTestMustCreate(t *testing.T, s *store.Store, reqs ...*store.AuthRequest) {
	t.Helper()
	for _, r := range reqs {
		if err := s.CreateAuthRequest(testCtx, r); err != nil {
			t.Fatalf("create auth request %s: %v", r.ID, err)
		}
	}
}

func authRequestsTestGet(t *testing.T, s *store.Store, id string) *store.AuthRequest {
	t.Helper()
	r, err := s.GetAuthRequest(testCtx, sessionsTestRealm, id)
	if err != nil {
		t.Fatalf("auth request %s: %v", id, err)
	}
	return r
}

// authRequestsTestIssued is request id authenticated by alice in SSO
// session sso, its code "code-"+id issued at now for 60 seconds.
func authRequestsTestIssued(t *testing.T, s *store.Store, id string) *store.AuthRequest {
	t.Helper()
	r := authRequestsTestPending(id)
	authRequestsTestMustCreate(t, s, r)
	if err := s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, id, "alice", "sso", sessionsTestNow-5, []string{"pwd"}, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if err := s.IssueAuthCode(testCtx, sessionsTestRealm, id, store.HashToken("code-"+id), sessionsTestNow, sessionsTestNow+60_000); err != nil {
		t.Fatal(err)
	}
	return authRequestsTestGet(t, s, id)
}

func testAuthRequestCreateGet(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour))
	pending := authRequestsTestPending("pending")
	// Answered at once from the SSO session: authenticated, its code issued.
	answered := &store.AuthRequest{ID: "answered", RealmID: sessionsTestRealm, ClientID: "web", RedirectURI: "https://app.test/cb",
		Scopes: []string{"openid"}, Prompt: []string{}, ResponseType: "code", UserID: "alice", SessionID: "sso",
		AuthTime: now - hour, AMR: []string{"pwd"}, Done: true, CodeHash: store.HashToken("the-code"), CreatedAt: now,
		ExpiresAt: now + 60_000}
	authRequestsTestMustCreate(t, s, pending, answered)
	mustEqual(t, "pending request", authRequestsTestGet(t, s, "pending"), pending)
	mustEqual(t, "answered request", authRequestsTestGet(t, s, "answered"), answered)
	byCode, err := s.AuthRequestByCode(testCtx, sessionsTestRealm, store.HashToken("the-code"))
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "request by code", byCode, answered)

	mustBeErrNotFound(t, "request of another realm", sessionsTestErr(s.GetAuthRequest(testCtx, sessionsTestOther, "pending")))
	mustBeErrNotFound(t, "unknown request", sessionsTestErr(s.GetAuthRequest(testCtx, sessionsTestRealm, "nope")))
	mustBeErrNotFound(t, "code in another realm",
		sessionsTestErr(s.AuthRequestByCode(testCtx, sessionsTestOther, store.HashToken("the-code"))))
	mustBeErrNotFound(t, "unknown code", sessionsTestErr(s.AuthRequestByCode(testCtx, sessionsTestRealm, store.HashToken("nope"))))

	// Nil lists are stored as empty ones.
	bare := &store.AuthRequest{ID: "bare", RealmID: sessionsTestRealm, ClientID: "cli", CreatedAt: now, ExpiresAt: now + 1}
	authRequestsTestMustCreate(t, s, bare)
	got := authRequestsTestGet(t, s, "bare")
	if got.Scopes == nil || got.Prompt == nil || got.AMR == nil || got.MaxAge != nil {
		t.Fatalf("bare request %+v: want empty lists and no max_age", got)
	}
}

func testAuthRequestCreateRules(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("oa", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
	)
	with := func(change func(*store.AuthRequest)) *store.AuthRequest {
		r := authRequestsTestPending("new")
		r.UserID, r.SessionID = "alice", "sso"
		change(r)
		return r
	}
	for _, tc := range []struct {
		name string
		req  *store.AuthRequest
		want error
	}{
		{"client of another realm", with(func(r *store.AuthRequest) { r.ClientID = "far" }), store.ErrNotFound},
		{"unknown client", with(func(r *store.AuthRequest) { r.ClientID = "ghost" }), store.ErrNotFound},
		{"session of another user", with(func(r *store.AuthRequest) { r.UserID = "bob" }), store.ErrNotFound},
		{"session not SSO", with(func(r *store.AuthRequest) { r.SessionID = "oa" }), store.ErrNotFound},
		{"user without session", with(func(r *store.AuthRequest) { r.SessionID = "" }), store.ErrNotFound},
		{"unknown realm", with(func(r *store.AuthRequest) { r.RealmID = "nope" }), store.ErrNotFound},
	} {
		if err := s.CreateAuthRequest(testCtx, tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := s.CreateAuthRequest(testCtx, with(func(r *store.AuthRequest) { r.CodeHash = []byte("the-code") })); err == nil {
		t.Error("a code stored in clear was accepted")
	}
	mustBeErrNotFound(t, "a refused request was stored", sessionsTestErr(s.GetAuthRequest(testCtx, sessionsTestRealm, "new")))
	authRequestsTestMustCreate(t, s, with(func(*store.AuthRequest) {}))
	mustBeErrConflict(t, "taken ID", s.CreateAuthRequest(testCtx, with(func(*store.AuthRequest) {})))
}

func testAuthRequestAuthenticate(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestSSO("bobs", sessionsTestRealm, "bob", now-hour, now+hour),
		sessionsTestSSO("ended", sessionsTestRealm, "alice", now-hour, now),
		sessionsTestOAuth("oa", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
	)
	expired := authRequestsTestPending("expired")
	expired.ExpiresAt = now
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"), expired)
	for _, tc := range []struct {
		name, id, user, session string
	}{
		{"session of another user", "r1", "alice", "bobs"},
		{"expired session", "r1", "alice", "ended"},
		{"OAuth session", "r1", "alice", "oa"},
		{"expired request", "expired", "alice", "sso"},
		{"unknown request", "nope", "alice", "sso"},
	} {
		mustBeErrNotFound(t, tc.name,
			s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, tc.id, tc.user, tc.session, now-5, []string{"pwd"}, now))
	}
	mustBeErrNotFound(t, "request of another realm",
		s.AuthenticateAuthRequest(testCtx, sessionsTestOther, "r1", "alice", "sso", now-5, []string{"pwd"}, now))
	if err := s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, "r1", "alice", "sso", now-5, []string{"pwd"}, now); err != nil {
		t.Fatal(err)
	}
	want := authRequestsTestPending("r1")
	want.UserID, want.SessionID, want.AuthTime, want.AMR = "alice", "sso", now-5, []string{"pwd"}
	mustEqual(t, "authenticated request", authRequestsTestGet(t, s, "r1"), want)

	// Ending the SSO session ends the requests authenticated in it.
	if _, err := s.DeleteSession(testCtx, sessionsTestRealm, "sso", store.SessionSSO, now); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "request of an ended session", sessionsTestErr(s.GetAuthRequest(testCtx, sessionsTestRealm, "r1")))
}

func testAuthCodeIssue(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour))
	authRequestsTestMustCreate(t, s, authRequestsTestPending("anonymous"))
	mustBeErrNotFound(t, "code for a request nobody authenticated",
		s.IssueAuthCode(testCtx, sessionsTestRealm, "anonymous", store.HashToken("c0"), now, now+60_000))

	issued := authRequestsTestIssued(t, s, "r1")
	if !issued.Done || string(issued.CodeHash) != string(store.HashToken("code-r1")) || issued.ExpiresAt != now+60_000 || issued.CodeUsedAt != 0 {
		t.Fatalf("issued request %+v", issued)
	}
	mustBeErrNotFound(t, "second code for a request",
		s.IssueAuthCode(testCtx, sessionsTestRealm, "r1", store.HashToken("again"), now, now+60_000))
	if got := authRequestsTestGet(t, s, "r1"); string(got.CodeHash) != string(store.HashToken("code-r1")) {
		t.Fatal("a refused issue replaced the code")
	}

	// Codes are unique.
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r2"))
	if err := s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, "r2", "alice", "sso", now, []string{"pwd"}, now); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "a taken code", s.IssueAuthCode(testCtx, sessionsTestRealm, "r2", store.HashToken("code-r1"), now, now+60_000))
	if err := s.IssueAuthCode(testCtx, sessionsTestRealm, "r2", []byte("code-r2"), now, now+60_000); err == nil {
		t.Fatal("a code stored in clear was accepted")
	}
	mustBeErrNotFound(t, "code for an expired request",
		s.IssueAuthCode(testCtx, sessionsTestRealm, "r2", store.HashToken("code-r2"), now+hour, now+hour+60_000))
}

func testAuthCodeRedeem(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour))
	authRequestsTestIssued(t, s, "r1")
	authRequestsTestIssued(t, s, "late")
	authRequestsTestMustCreate(t, s, authRequestsTestPending("pending"))

	mustBeErrNotFound(t, "expired code", s.RedeemAuthCode(testCtx, sessionsTestRealm, "late", "", now+60_000, now+hour))
	mustBeErrNotFound(t, "code never issued", s.RedeemAuthCode(testCtx, sessionsTestRealm, "pending", "", now, now+hour))
	mustBeErrNotFound(t, "request of another realm", s.RedeemAuthCode(testCtx, sessionsTestOther, "r1", "", now, now+hour))
	if err := s.RedeemAuthCode(testCtx, sessionsTestRealm, "r1", "fam", now+1, now+300_000); err != nil {
		t.Fatal(err)
	}
	got := authRequestsTestGet(t, s, "r1")
	if got.CodeUsedAt != now+1 || got.TokenFamily != "fam" || got.ExpiresAt != now+300_000 {
		t.Fatalf("redeemed request %+v", got)
	}
	if n, err := s.DeleteExpiredAuthRequests(testCtx, now+60_000); err != nil || n != 1 {
		t.Fatalf("purge at code expiry: %d, %v; want only the unredeemed expired code", n, err)
	}
	authRequestsTestGet(t, s, "r1") // kept until its access token expires
	mustBeErrNotFound(t, "purged code", sessionsTestErr(s.GetAuthRequest(testCtx, sessionsTestRealm, "late")))
}

func testAuthCodeReplayRevokes(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("oa", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
	)
	authRequestsTestIssued(t, s, "r1")
	authRequestsTestIssued(t, s, "r2")
	mustBeErrNotFound(t, "revoke before redemption", s.RevokeAuthCodeGrant(testCtx, sessionsTestRealm, "r1", now))
	// The redemption and the family it starts, in one transaction.
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := tx.RedeemAuthCode(testCtx, sessionsTestRealm, "r1", "f1", now, now+300_000); err != nil {
			return err
		}
		return tx.CreateRefreshToken(testCtx, sessionsTestToken("f1", "alice", "web", "oa", false, now, now+hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	sessionsTestMustCreateToken(t, s, sessionsTestToken("other", "alice", "web", "oa", false, now, now+hour))
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-f1"), sessionsTestNext("f1b", now+1, now+hour), now+1); err != nil {
		t.Fatal(err)
	}

	// The replay is refused, and what the first redemption issued revoked.
	if err := s.RedeemAuthCode(testCtx, sessionsTestRealm, "r1", "f2", now+2, now+400_000); !errors.Is(err, store.ErrCodeReused) {
		t.Fatalf("replayed code: %v, want ErrCodeReused", err)
	}
	for _, tok := range []string{"tok-f1", "tok-f1b"} {
		if got := sessionsTestTokenState(t, s, tok); got.RevokedAt != now+2 {
			t.Fatalf("%s after the replay: %+v, want revoked", tok, got)
		}
	}
	if !sessionsTestTokenState(t, s, "tok-other").Live(now + 2) {
		t.Fatal("the replay revoked another family")
	}
	if revoked, err := s.AccessTokenRevoked(testCtx, "r1"); err != nil || !revoked {
		t.Fatalf("access token of the replayed code: revoked %t, %v", revoked, err)
	}
	if got := authRequestsTestGet(t, s, "r1"); got.CodeUsedAt != now || got.TokenFamily != "f1" || got.ExpiresAt != now+300_000 {
		t.Fatalf("replay changed the redeemed request: %+v", got)
	}
	// The revocation lasts until the access token would have expired.
	if n, err := s.DeleteExpiredAccessTokenRevocations(testCtx, now+300_000-1); err != nil || n != 0 {
		t.Fatalf("revocation purged early: %d, %v", n, err)
	}
	if n, err := s.DeleteExpiredAccessTokenRevocations(testCtx, now+300_000); err != nil || n != 1 {
		t.Fatalf("revocation purged at expiry: %d, %v", n, err)
	}

	// A redemption that issued no refresh token revokes its access token only.
	if err := s.RedeemAuthCode(testCtx, sessionsTestRealm, "r2", "", now, now+300_000); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAuthCodeGrant(testCtx, sessionsTestRealm, "r2", now+3); err != nil {
		t.Fatal(err)
	}
	if revoked, err := s.AccessTokenRevoked(testCtx, "r2"); err != nil || !revoked {
		t.Fatalf("access token of r2: revoked %t, %v", revoked, err)
	}
	if !sessionsTestTokenState(t, s, "tok-other").Live(now + 3) {
		t.Fatal("revoking a grant without family revoked another family")
	}
}

func testAuthRequestDelete(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	gone := authRequestsTestPending("gone")
	gone.ExpiresAt = now
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"), authRequestsTestPending("r2"), gone)
	mustBeErrNotFound(t, "delete in another realm", s.DeleteAuthRequest(testCtx, sessionsTestOther, "r1"))
	if err := s.DeleteAuthRequest(testCtx, sessionsTestRealm, "r1"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "deleted request", sessionsTestErr(s.GetAuthRequest(testCtx, sessionsTestRealm, "r1")))
	mustBeErrNotFound(t, "delete twice", s.DeleteAuthRequest(testCtx, sessionsTestRealm, "r1"))
	if n, err := s.DeleteExpiredAuthRequests(testCtx, now); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want the expired request only", n, err)
	}
	authRequestsTestGet(t, s, "r2")
}

func testSessionReauthenticate(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestSSO("ended", sessionsTestRealm, "alice", now-hour, now),
		sessionsTestOAuth("oa", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
	)
	if err := s.ReauthenticateSession(testCtx, sessionsTestRealm, "sso", now, []string{"pwd", "otp"}, now+1, now+2*hour); err != nil {
		t.Fatal(err)
	}
	want := sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+2*hour)
	want.AuthTime, want.AMR, want.LastAccessAt = now, []string{"pwd", "otp"}, now+1
	got, err := s.GetSession(testCtx, sessionsTestRealm, "sso")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "reauthenticated session", got, want)
	for _, tc := range []struct{ name, realm, id string }{
		{"expired session", sessionsTestRealm, "ended"},
		{"OAuth session", sessionsTestRealm, "oa"},
		{"session of another realm", sessionsTestOther, "sso"},
	} {
		mustBeErrNotFound(t, tc.name, s.ReauthenticateSession(testCtx, tc.realm, tc.id, now, []string{"pwd"}, now, now+hour))
	}
}

func testClientSessionOf(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("old", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour),
		sessionsTestOAuth("new", sessionsTestRealm, "alice", "sso", "web", now-10, now+hour),
		sessionsTestOAuth("ended", sessionsTestRealm, "alice", "sso", "cli", now-hour, now),
		sessionsTestOAuth("offline", sessionsTestRealm, "alice", "", "cli", now-hour, now+hour),
	)
	sso, err := s.GetSession(testCtx, sessionsTestRealm, "sso")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ClientSessionOf(testCtx, sso, "web", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "session of web", got, sessionsTestOAuth("new", sessionsTestRealm, "alice", "sso", "web", now-10, now+hour))
	mustBeErrNotFound(t, "expired session of cli", sessionsTestErr(s.ClientSessionOf(testCtx, sso, "cli", now)))
	foreign := *sso
	foreign.RealmID = sessionsTestOther
	mustBeErrNotFound(t, "another realm", sessionsTestErr(s.ClientSessionOf(testCtx, &foreign, "web", now)))
}

func testAuthRequestSettleOrganization(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour))
	hinted := authRequestsTestPending("hinted")
	hinted.OrgHint = "acme"
	authRequestsTestMustCreate(t, s, authRequestsTestPending("anonymous"), hinted, authRequestsTestPending("none"))
	if got := authRequestsTestGet(t, s, "hinted"); got.OrgHint != "acme" || got.Org.Made {
		t.Fatalf("hinted request %+v: want the hint kept and nothing settled", got)
	}
	acme := store.OrgChoice{Made: true, ID: "org-acme"}
	mustBeErrNotFound(t, "request nobody authenticated",
		s.SettleAuthRequestOrganization(testCtx, sessionsTestRealm, "anonymous", acme, now))
	for _, id := range []string{"hinted", "none"} {
		if err := s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, id, "alice", "sso", now-5, []string{"pwd"}, now); err != nil {
			t.Fatal(err)
		}
	}
	mustBeErrNotFound(t, "request of another realm",
		s.SettleAuthRequestOrganization(testCtx, sessionsTestOther, "hinted", acme, now))
	mustBeErrNotFound(t, "expired request",
		s.SettleAuthRequestOrganization(testCtx, sessionsTestRealm, "hinted", acme, now+hour))
	if err := s.SettleAuthRequestOrganization(testCtx, sessionsTestRealm, "hinted", acme, now); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleAuthRequestOrganization(testCtx, sessionsTestRealm, "none", store.OrgChoice{Made: true}, now); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "settled", authRequestsTestGet(t, s, "hinted").Org, acme)
	mustEqual(t, "settled on none", authRequestsTestGet(t, s, "none").Org, store.OrgChoice{Made: true})
	mustBeErrNotFound(t, "second answer",
		s.SettleAuthRequestOrganization(testCtx, sessionsTestRealm, "hinted", store.OrgChoice{Made: true, ID: "org-other"}, now))
	if err := s.SettleAuthRequestOrganization(testCtx, sessionsTestRealm, "hinted", store.OrgChoice{}, now); err == nil {
		t.Fatal("a choice not made was stored")
	}
	// Signing in again for the request settles afresh.
	if err := s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, "hinted", "alice", "sso", now-1, []string{"pwd"}, now); err != nil {
		t.Fatal(err)
	}
	if got := authRequestsTestGet(t, s, "hinted"); got.Org.Made || got.OrgHint != "acme" {
		t.Fatalf("re-authenticated request %+v: want its hint and no choice", got)
	}
}
