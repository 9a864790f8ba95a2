package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// stepUpSuite is the conformance tests of step-up: a second step that
// raises an existing SSO session instead of following a password.
func stepUpSuite() []subTest {
	return []subTest{
		{"StepUpStep", testStepUpStep},
	}
}

func testStepUpStep(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	alice := sessionsTestSSO("s-alice", sessionsTestRealm, "alice", sessionsTestNow-10, sessionsTestNow+sessionsTestHour)
	alice.AMR = []string{"pwd"}
	bob := sessionsTestSSO("s-bob", sessionsTestRealm, "bob", sessionsTestNow-10, sessionsTestNow+sessionsTestHour)
	ended := sessionsTestSSO("s-ended", sessionsTestRealm, "alice", sessionsTestNow-20, sessionsTestNow-1)
	oauth := sessionsTestOAuth("s-oauth", sessionsTestRealm, "alice", "s-alice", "web", sessionsTestNow-5, sessionsTestNow+sessionsTestHour)
	sessionsTestMustCreate(t, s, alice, bob, ended, oauth)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("ar1"))
	step := &store.AuthRequestStep{AuthRequestID: "ar1", UserID: "alice", Pending: store.StepTOTP, BrowserHash: store.HashToken("cookie"),
		PasswordAt: alice.AuthTime, SSOSessionID: alice.ID}
	// Only an active SSO session of the step's own user is raised.
	for _, sid := range []string{"nope", bob.ID, ended.ID, oauth.ID} {
		bad := *step
		bad.SSOSessionID = sid
		if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, &bad, sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("step-up of session %s: %v, want ErrNotFound", sid, err)
		}
	}
	if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, step, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAuthRequestStep(testCtx, sessionsTestRealm, "ar1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "step-up step", got, step)
	// A password for the same request replaces it with an ordinary step.
	plain := &store.AuthRequestStep{AuthRequestID: "ar1", UserID: "alice", Pending: store.StepTOTP, BrowserHash: store.HashToken("cookie"),
		PasswordAt: sessionsTestNow}
	if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, plain, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetAuthRequestStep(testCtx, sessionsTestRealm, "ar1"); err != nil || got.SSOSessionID != "" {
		t.Fatalf("step after a password: %+v, %v", got, err)
	}
	// The step ends with the session it would raise.
	if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, step, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteSession(testCtx, sessionsTestRealm, alice.ID, store.SessionSSO, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetAuthRequestStep(testCtx, sessionsTestRealm, "ar1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("step-up step after its session ended: %v, want ErrNotFound", err)
	}
}
