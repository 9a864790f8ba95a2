package store

import (
	"testing"
)

// pendingLoginSuite is the conformance tests of the sign-in lookups and
// of sign-ins waiting for a required step.
func pendingLoginSuite() []suiteTest {
	return []suiteTest{
		{"UserByEmail", suiteUserByEmail},
		{"PendingLoginSave", suitePendingLoginSave},
		{"PendingLoginDelete", suitePendingLoginDelete},
		{"PendingLoginCascades", suitePendingLoginCascades},
	}
}

func suiteUserByEmail(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	suiteMustCreateUser(t, s, suiteUser("dora", sessionsTestRealm, "dora", "dora@example.test"))
	suiteMustCreateUser(t, s, suiteUser("dora2", sessionsTestOther, "dora", "dora@example.test"))
	for _, email := range []string{"dora@example.test", "DORA@Example.TEST", " dora@example.test "} {
		u, err := s.GetUserByEmail(suiteCtx, sessionsTestRealm, email)
		if err != nil || u.ID != "dora" {
			t.Fatalf("%q: %+v, %v", email, u, err)
		}
	}
	// alice and bob have no email: the empty address names none of them.
	for _, email := range []string{"", " ", "nobody@example.test", "dora"} {
		sessionsTestMustNotFind(t, "email "+email, sessionsTestErr(s.GetUserByEmail(suiteCtx, sessionsTestRealm, email)))
	}
	if u, err := s.GetUserByEmail(suiteCtx, sessionsTestOther, "dora@example.test"); err != nil || u.ID != "dora2" {
		t.Fatalf("other realm: %+v, %v", u, err)
	}
}

func pendingLoginsTest(id, user string) *PendingLogin {
	return &PendingLogin{AuthRequestID: id, RealmID: sessionsTestRealm, UserID: user, Action: ActionUpdatePassword,
		BrowserHash: HashToken("browser-" + id), RememberMe: true, AMR: []string{"pwd", "hwk"}, CreatedAt: sessionsTestNow}
}

func suitePendingLoginSave(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour))
	expired := authRequestsTestPending("expired")
	expired.ExpiresAt = now
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"), expired)
	authRequestsTestIssued(t, s, "done")
	authenticated := authRequestsTestPending("authenticated")
	authRequestsTestMustCreate(t, s, authenticated)
	if err := s.AuthenticateAuthRequest(suiteCtx, sessionsTestRealm, "authenticated", "alice", "sso", now, []string{"pwd"}, now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *PendingLogin
	}{
		{"expired request", pendingLoginsTest("expired", "alice")},
		{"answered request", pendingLoginsTest("done", "alice")},
		{"authenticated request", pendingLoginsTest("authenticated", "alice")},
		{"unknown request", pendingLoginsTest("nope", "alice")},
		{"user of another realm", pendingLoginsTest("r1", "carol")},
		{"unknown user", pendingLoginsTest("r1", "ghost")},
		{"request of another realm", func() *PendingLogin { p := pendingLoginsTest("r1", "alice"); p.RealmID = sessionsTestOther; return p }()},
	} {
		sessionsTestMustNotFind(t, tc.name, s.SavePendingLogin(suiteCtx, tc.p, now))
	}
	sessionsTestMustNotFind(t, "nothing saved", sessionsTestErr(s.GetPendingLogin(suiteCtx, sessionsTestRealm, "r1")))

	p := pendingLoginsTest("r1", "alice")
	if err := s.SavePendingLogin(suiteCtx, p, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetPendingLogin(suiteCtx, sessionsTestRealm, "r1")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "pending login", got, p)
	sessionsTestMustNotFind(t, "from another realm", sessionsTestErr(s.GetPendingLogin(suiteCtx, sessionsTestOther, "r1")))

	// A second sign-in on the same request replaces the first.
	q := pendingLoginsTest("r1", "bob")
	q.RememberMe, q.BrowserHash, q.CreatedAt, q.AMR = false, HashToken("another browser"), now+1, []string{"pwd", "otp"}
	if err := s.SavePendingLogin(suiteCtx, q, now); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetPendingLogin(suiteCtx, sessionsTestRealm, "r1"); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "replaced pending login", got, q)

}

func suitePendingLoginDelete(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"))
	if err := s.SavePendingLogin(suiteCtx, pendingLoginsTest("r1", "alice"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	sessionsTestMustNotFind(t, "another user's step", s.DeletePendingLogin(suiteCtx, sessionsTestRealm, "r1", "bob"))
	sessionsTestMustNotFind(t, "from another realm", s.DeletePendingLogin(suiteCtx, sessionsTestOther, "r1", "alice"))
	if err := s.DeletePendingLogin(suiteCtx, sessionsTestRealm, "r1", "alice"); err != nil {
		t.Fatal(err)
	}
	sessionsTestMustNotFind(t, "deleted twice", s.DeletePendingLogin(suiteCtx, sessionsTestRealm, "r1", "alice"))
	sessionsTestMustNotFind(t, "deleted", sessionsTestErr(s.GetPendingLogin(suiteCtx, sessionsTestRealm, "r1")))
}

// A pending step ends with its request and with its user.
func suitePendingLoginCascades(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("r1"), authRequestsTestPending("r2"))
	for _, p := range []*PendingLogin{pendingLoginsTest("r1", "alice"), pendingLoginsTest("r2", "bob")} {
		if err := s.SavePendingLogin(suiteCtx, p, sessionsTestNow); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeleteExpiredAuthRequests(suiteCtx, sessionsTestNow+sessionsTestHour); err != nil || n != 2 {
		t.Fatalf("expired requests deleted: %d, %v", n, err)
	}
	sessionsTestMustNotFind(t, "step of an expired request", sessionsTestErr(s.GetPendingLogin(suiteCtx, sessionsTestRealm, "r1")))

	authRequestsTestMustCreate(t, s, authRequestsTestPending("r3"))
	if err := s.SavePendingLogin(suiteCtx, pendingLoginsTest("r3", "bob"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(suiteCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatal(err)
	}
	sessionsTestMustNotFind(t, "step of a deleted user", sessionsTestErr(s.GetPendingLogin(suiteCtx, sessionsTestRealm, "r3")))
}
