package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// signInFlowSuite is the conformance tests of the sign-in's flows.
func signInFlowSuite() []subTest {
	return []subTest{
		{"SignInFlowCreateGet", testSignInFlowCreateGet},
		{"SignInFlowAdvance", testSignInFlowAdvance},
		{"SignInFlowRefused", testSignInFlowRefused},
		{"SignInFlowDelete", testSignInFlowDelete},
		{"SignInFlowOf", testSignInFlowOf},
	}
}

func signInFlowTest(id string) *store.SignInFlow {
	return &store.SignInFlow{ID: id, RealmID: sessionsTestRealm, Requester: "oidc", RequesterID: "request-" + id,
		DefinitionID: "browser", Wants: []byte(`{"prompt":["login"]}`), BrowserHash: store.HashToken("browser-" + id),
		CreatedAt: sessionsTestNow, ExpiresAt: sessionsTestNow + sessionsTestHour}
}

func signInFlowMustCreate(t *testing.T, s *store.Store, flows ...*store.SignInFlow) {
	t.Helper()
	for _, f := range flows {
		if err := s.CreateSignInFlow(testCtx, f); err != nil {
			t.Fatalf("create flow %s: %v", f.ID, err)
		}
	}
}

func testSignInFlowCreateGet(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	known := signInFlowTest("known")
	known.UserID, known.AMR, known.Passed = "alice", []string{"pwd"}, []int{0}
	signInFlowMustCreate(t, s, signInFlowTest("f1"), known)
	got, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "known", sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != "alice" || got.Requester != "oidc" || got.RequesterID != "request-known" || got.DefinitionID != "browser" ||
		string(got.Wants) != `{"prompt":["login"]}` || !slices.Equal(got.AMR, []string{"pwd"}) || !slices.Equal(got.Passed, []int{0}) ||
		got.Step != 0 || string(got.BrowserHash) != string(store.HashToken("browser-known")) || got.ExpiresAt != sessionsTestNow+sessionsTestHour {
		t.Fatalf("flow read back as %+v", got)
	}
	if got, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow); err != nil || got.UserID != "" || len(got.Passed) != 0 {
		t.Fatalf("flow without a user: %+v, %v", got, err)
	}
	// Another realm's, an expired and an unknown flow are not found.
	mustBeErrNotFound(t, "other realm", sessionsTestErr(s.GetSignInFlow(testCtx, sessionsTestOther, "f1", sessionsTestNow)))
	mustBeErrNotFound(t, "expired", sessionsTestErr(s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow+sessionsTestHour)))
	mustBeErrNotFound(t, "unknown", sessionsTestErr(s.GetSignInFlow(testCtx, sessionsTestRealm, "nope", sessionsTestNow)))
}

func testSignInFlowAdvance(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	signInFlowMustCreate(t, s, signInFlowTest("f1"))
	f, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	stale := *f
	f.UserID, f.AMR, f.Passed, f.Wants = "alice", []string{"pwd"}, []int{0}, []byte(`{"rememberMe":true}`)
	if err := s.AdvanceSignInFlow(testCtx, f, sessionsTestNow); err != nil || f.Step != 1 {
		t.Fatalf("advance: step %d, %v", f.Step, err)
	}
	// A writer that read step 0 too finds the flow moved on, and changes
	// nothing.
	stale.Passed = []int{3}
	if err := s.AdvanceSignInFlow(testCtx, &stale, sessionsTestNow); !errors.Is(err, store.ErrConflict) || stale.Step != 0 {
		t.Fatalf("stale advance: step %d, %v; want ErrConflict", stale.Step, err)
	}
	got, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow)
	if err != nil || got.Step != 1 || got.UserID != "alice" || !slices.Equal(got.Passed, []int{0}) || !slices.Equal(got.AMR, []string{"pwd"}) ||
		string(got.Wants) != `{"rememberMe":true}` {
		t.Fatalf("after advance: %+v, %v", got, err)
	}
	got.AMR, got.Passed = append(got.AMR, "otp"), append(got.Passed, 4)
	if err := s.AdvanceSignInFlow(testCtx, got, sessionsTestNow); err != nil || got.Step != 2 {
		t.Fatalf("second advance: step %d, %v", got.Step, err)
	}
}

func testSignInFlowRefused(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	signInFlowMustCreate(t, s, signInFlowTest("f1"))
	// A user of another realm, in a new flow or an advanced one.
	other := signInFlowTest("other")
	other.UserID = "nobody"
	mustBeErrNotFound(t, "create with unknown user", s.CreateSignInFlow(testCtx, other))
	f, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	f.UserID = "nobody"
	mustBeErrNotFound(t, "advance to unknown user", s.AdvanceSignInFlow(testCtx, f, sessionsTestNow))
	// An expired flow does not move.
	f.UserID = "alice"
	mustBeErrNotFound(t, "advance expired", s.AdvanceSignInFlow(testCtx, f, sessionsTestNow+sessionsTestHour))
	// Neither a flow with no browser nor one wanting other than JSON.
	bad := signInFlowTest("bad")
	bad.BrowserHash = []byte("short")
	if err := s.CreateSignInFlow(testCtx, bad); err == nil {
		t.Fatal("a flow with a short browser hash was stored")
	}
	bad = signInFlowTest("bad")
	bad.Wants = []byte("{not json")
	if err := s.CreateSignInFlow(testCtx, bad); err == nil {
		t.Fatal("a flow wanting what is not JSON was stored")
	}
	// The same id twice is a conflict.
	if err := s.CreateSignInFlow(testCtx, signInFlowTest("f1")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the same flow twice: %v", err)
	}
}

func testSignInFlowDelete(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	expired := signInFlowTest("expired")
	expired.ExpiresAt = sessionsTestNow
	signInFlowMustCreate(t, s, signInFlowTest("f1"), signInFlowTest("f2"), expired)
	if err := s.DeleteSignInFlow(testCtx, sessionsTestRealm, "f1"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "deleted", sessionsTestErr(s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow)))
	mustBeErrNotFound(t, "delete twice", s.DeleteSignInFlow(testCtx, sessionsTestRealm, "f1"))
	mustBeErrNotFound(t, "delete in another realm", s.DeleteSignInFlow(testCtx, sessionsTestOther, "f2"))
	if n, err := s.DeleteExpiredSignInFlows(testCtx, sessionsTestNow); err != nil || n != 1 {
		t.Fatalf("expired flows deleted: %d, %v", n, err)
	}
	if _, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f2", sessionsTestNow); err != nil {
		t.Fatalf("a live flow went with the expired: %v", err)
	}
	// A flow goes with its user.
	f := signInFlowTest("alice")
	f.UserID = "alice"
	signInFlowMustCreate(t, s, f)
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "user deleted", sessionsTestErr(s.GetSignInFlow(testCtx, sessionsTestRealm, "alice", sessionsTestNow)))
}

// testRaceSignInFlowStep: two submits of the same step at once (a double
// click, a replayed form): exactly one moves the flow on.
func testRaceSignInFlowStep(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	signInFlowMustCreate(t, s, signInFlowTest("f1"))
	read, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	errs := race(raceWriters, func(i int) error {
		f := *read
		f.UserID, f.Passed = "alice", []int{i}
		return s.AdvanceSignInFlow(testCtx, &f, sessionsTestNow)
	})
	raceTestOneWins(t, "one submit of a step at once", errs, store.ErrConflict)
	got, err := s.GetSignInFlow(testCtx, sessionsTestRealm, "f1", sessionsTestNow)
	if err != nil || got.Step != 1 || len(got.Passed) != 1 {
		t.Fatalf("after the race: %+v, %v", got, err)
	}
}

func testSignInFlowOf(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	older, newer, saml := signInFlowTest("older"), signInFlowTest("newer"), signInFlowTest("saml")
	older.RequesterID, newer.RequesterID, newer.CreatedAt = "request-1", "request-1", older.CreatedAt+1
	saml.Requester, saml.RequesterID = "saml", "request-1"
	signInFlowMustCreate(t, s, older, newer, saml, signInFlowTest("f1"))
	if got, err := s.SignInFlowOf(testCtx, sessionsTestRealm, "oidc", "request-1", sessionsTestNow); err != nil || got.ID != "newer" {
		t.Fatalf("the flow of request-1: %+v, %v; want the newer", got, err)
	}
	if got, err := s.SignInFlowOf(testCtx, sessionsTestRealm, "saml", "request-1", sessionsTestNow); err != nil || got.ID != "saml" {
		t.Fatalf("the SAML flow of request-1: %+v, %v", got, err)
	}
	mustBeErrNotFound(t, "other realm", sessionsTestErr(s.SignInFlowOf(testCtx, sessionsTestOther, "oidc", "request-1", sessionsTestNow)))
	mustBeErrNotFound(t, "expired", sessionsTestErr(s.SignInFlowOf(testCtx, sessionsTestRealm, "oidc", "request-1", sessionsTestNow+sessionsTestHour)))
	mustBeErrNotFound(t, "unknown", sessionsTestErr(s.SignInFlowOf(testCtx, sessionsTestRealm, "oidc", "request-2", sessionsTestNow)))
}
