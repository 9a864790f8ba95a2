package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

// pendingLoginSuite is the conformance tests of the sign-in lookups and
// of sign-ins waiting for a required step.
func pendingLoginSuite() []subTest {
	return []subTest{
		{"UserByEmail", testUserByEmail},
		{"PendingLoginSave", testPendingLoginSave},
		{"PendingLoginDelete", testPendingLoginDelete},
		{"PendingLoginCascades", testPendingLoginCascades},
	}
}

func testUserByEmail(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	mustCreateUser(t, s, testUser("dora", sessionsTestRealm, "dora", "dora@example.test"))
	mustCreateUser(t, s, testUser("dora2", sessionsTestOther, "dora", "dora@example.test"))
	for _, email := range []string{"dora@example.test", "DORA@Example.TEST", " dora@example.test "} {
		u, err := s.GetUserByEmail(testCtx, sessionsTestRealm, email)
		if err != nil || u.ID != "dora" {
			t.Fatalf("%q: %+v, %v", email, u, err)
		}
	}
	// alice and bob have no email: the empty address names none of them.
	for _, email := range []string{"", " ", "nobody@example.test", "dora"} {
		mustBeErrNotFound(t, "email "+email, sessionsTestErr(s.GetUserByEmail(testCtx, sessionsTestRealm, email)))
	}
	if u, err := s.GetUserByEmail(testCtx, sessionsTestOther, "dora@example.test"); err != nil || u.ID != "dora2" {
		t.Fatalf("other realm: %+v, %v", u, err)
	}
}

func pendingLoginsTest(id, user string) *store.PendingLogin {
	return &store.PendingLogin{AuthRequestID: id, RealmID: sessionsTestRealm, UserID: user, Action: store.ActionUpdatePassword,
		BrowserHash: store.HashToken("browser-" + id), RememberMe: true, AMR: []string{"pwd", "hwk"}, CreatedAt: sessionsTestNow}
}

func testPendingLoginSave(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour))
	expired := authRequestsTestPending("expired")
	expired.ExpiresAt = now
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"), expired)
	authRequestsTestIssued(t, s, "done")
	authenticated := authRequestsTestPending("authenticated")
	authRequestsTestMustCreate(t, s, authenticated)
	if err := s.AuthenticateAuthRequest(testCtx, sessionsTestRealm, "authenticated", "alice", "sso", now, []string{"pwd"}, now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *store.PendingLogin
	}{
		{"expired request", pendingLoginsTest("expired", "alice")},
		{"answered request", pendingLoginsTest("done", "alice")},
		{"authenticated request", pendingLoginsTest("authenticated", "alice")},
		{"unknown request", pendingLoginsTest("nope", "alice")},
		{"user of another realm", pendingLoginsTest("r1", "carol")},
		{"unknown user", pendingLoginsTest("r1", "ghost")},
		{"request of another realm", func() *store.PendingLogin {
			p := pendingLoginsTest("r1", "alice")
			p.RealmID = sessionsTestOther
			return p
		}()},
	} {
		mustBeErrNotFound(t, tc.name, s.SavePendingLogin(testCtx, tc.p, now))
	}
	mustBeErrNotFound(t, "nothing saved", sessionsTestErr(s.GetPendingLogin(testCtx, sessionsTestRealm, "r1")))

	p := pendingLoginsTest("r1", "alice")
	if err := s.SavePendingLogin(testCtx, p, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetPendingLogin(testCtx, sessionsTestRealm, "r1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "pending login", got, p)
	mustBeErrNotFound(t, "from another realm", sessionsTestErr(s.GetPendingLogin(testCtx, sessionsTestOther, "r1")))

	// A second sign-in on the same request replaces the first.
	q := pendingLoginsTest("r1", "bob")
	q.RememberMe, q.BrowserHash, q.CreatedAt, q.AMR = false, store.HashToken("another browser"), now+1, []string{"pwd", "otp"}
	if err := s.SavePendingLogin(testCtx, q, now); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetPendingLogin(testCtx, sessionsTestRealm, "r1"); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "replaced pending login", got, q)

}

func testPendingLoginDelete(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"))
	if err := s.SavePendingLogin(testCtx, pendingLoginsTest("r1", "alice"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "another user's step", s.DeletePendingLogin(testCtx, sessionsTestRealm, "r1", "bob"))
	mustBeErrNotFound(t, "from another realm", s.DeletePendingLogin(testCtx, sessionsTestOther, "r1", "alice"))
	if err := s.DeletePendingLogin(testCtx, sessionsTestRealm, "r1", "alice"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "deleted twice", s.DeletePendingLogin(testCtx, sessionsTestRealm, "r1", "alice"))
	mustBeErrNotFound(t, "deleted", sessionsTestErr(s.GetPendingLogin(testCtx, sessionsTestRealm, "r1")))
}

// A pending step ends with its request and with its user.
func testPendingLoginCascades(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"), authRequestsTestPending("r2"))
	for _, p := range []*store.PendingLogin{pendingLoginsTest("r1", "alice"), pendingLoginsTest("r2", "bob")} {
		if err := s.SavePendingLogin(testCtx, p, sessionsTestNow); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeleteExpiredAuthRequests(testCtx, sessionsTestNow+sessionsTestHour); err != nil || n != 2 {
		t.Fatalf("expired requests deleted: %d, %v", n, err)
	}
	mustBeErrNotFound(t, "step of an expired request", sessionsTestErr(s.GetPendingLogin(testCtx, sessionsTestRealm, "r1")))

	authRequestsTestMustCreate(t, s, authRequestsTestPending("r3"))
	if err := s.SavePendingLogin(testCtx, pendingLoginsTest("r3", "bob"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "step of a deleted user", sessionsTestErr(s.GetPendingLogin(testCtx, sessionsTestRealm, "r3")))
}
