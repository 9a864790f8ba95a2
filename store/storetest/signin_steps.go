package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// signInStepSuite is the conformance tests of what the sign-in's email
// code and terms steps keep.
func signInStepSuite() []subTest {
	return []subTest{
		{"SignInEmailCodeUse", testSignInEmailCodeUse},
		{"SignInEmailCodeAttempts", testSignInEmailCodeAttempts},
		{"SignInEmailCodeLimits", testSignInEmailCodeLimits},
		{"SignInEmailCodeStale", testSignInEmailCodeStale},
		{"TermsAcceptance", testTermsAcceptance},
	}
}

const (
	emailCodeTestMinute = int64(60 * 1000)
	emailCodeTestMax    = 5
)

var emailCodeTestLimits = store.EmailCodeLimits{FlowGap: emailCodeTestMinute / 2, UserWindow: 15 * emailCodeTestMinute, UserMax: 5}

func emailCodeTest(id, flow, user, code string, sentAt int64) *store.SignInEmailCode {
	return &store.SignInEmailCode{ID: id, RealmID: sessionsTestRealm, FlowID: flow, UserID: user, CodeHash: store.HashToken(code),
		SentAt: sentAt, ExpiresAt: sentAt + 5*emailCodeTestMinute}
}

func emailCodeMustIssue(t *testing.T, s *store.Store, codes ...*store.SignInEmailCode) {
	t.Helper()
	for _, c := range codes {
		if err := s.IssueSignInEmailCode(testCtx, c, emailCodeTestLimits); err != nil {
			t.Fatalf("issue code %s: %v", c.ID, err)
		}
	}
}

func emailCodeUse(s *store.Store, flow, code string, now int64) error {
	return s.UseSignInEmailCode(testCtx, sessionsTestRealm, flow, store.HashToken(code), now, emailCodeTestMax)
}

func testSignInEmailCodeUse(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	emailCodeMustIssue(t, s, emailCodeTest("c1", "f1", "alice", "111111", now), emailCodeTest("c2", "f2", "bob", "222222", now))
	live, err := s.LiveSignInEmailCode(testCtx, sessionsTestRealm, "f1", now)
	if err != nil || live.ID != "c1" || live.UserID != "alice" || live.Attempts != 0 {
		t.Fatalf("live code of f1: %+v, %v", live, err)
	}
	// Another flow's code, another realm's flow: not this flow's code.
	if err := emailCodeUse(s, "f1", "222222", now); !errors.Is(err, store.ErrCodeMismatch) {
		t.Fatalf("another flow's code: %v, want ErrCodeMismatch", err)
	}
	mustBeErrNotFound(t, "another realm", s.UseSignInEmailCode(testCtx, sessionsTestOther, "f1", store.HashToken("111111"), now, emailCodeTestMax))
	if err := emailCodeUse(s, "f1", "111111", now); err != nil {
		t.Fatalf("the right code: %v", err)
	}
	// A code works once.
	mustBeErrNotFound(t, "the code used twice", emailCodeUse(s, "f1", "111111", now))
	mustBeErrNotFound(t, "live after use", sessionsTestErr(s.LiveSignInEmailCode(testCtx, sessionsTestRealm, "f1", now)))
	// An expired code does not work.
	mustBeErrNotFound(t, "expired", emailCodeUse(s, "f2", "222222", now+5*emailCodeTestMinute))
	// A newer code voids the one before it.
	emailCodeMustIssue(t, s, emailCodeTest("c3", "f2", "bob", "333333", now+emailCodeTestMinute))
	if err := emailCodeUse(s, "f2", "222222", now+emailCodeTestMinute); !errors.Is(err, store.ErrCodeMismatch) {
		t.Fatalf("the code a newer one replaced: %v, want ErrCodeMismatch", err)
	}
	if err := emailCodeUse(s, "f2", "333333", now+emailCodeTestMinute); err != nil {
		t.Fatalf("the newer code: %v", err)
	}
	// A code of a user of another realm is not stored.
	other := emailCodeTest("c4", "f3", "carol", "444444", now)
	mustBeErrNotFound(t, "a user of another realm", s.IssueSignInEmailCode(testCtx, other, emailCodeTestLimits))
}

func testSignInEmailCodeAttempts(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	emailCodeMustIssue(t, s, emailCodeTest("c1", "f1", "alice", "111111", now))
	for i := 1; i <= emailCodeTestMax; i++ {
		if err := emailCodeUse(s, "f1", "000000", now); !errors.Is(err, store.ErrCodeMismatch) {
			t.Fatalf("wrong code %d: %v, want ErrCodeMismatch", i, err)
		}
		if i < emailCodeTestMax {
			if live, err := s.LiveSignInEmailCode(testCtx, sessionsTestRealm, "f1", now); err != nil || live.Attempts != i {
				t.Fatalf("after %d wrong codes: %+v, %v", i, live, err)
			}
		}
	}
	// Five wrong codes void it: the right one no longer works.
	mustBeErrNotFound(t, "the right code after too many wrong", emailCodeUse(s, "f1", "111111", now))
}

func testSignInEmailCodeLimits(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	emailCodeMustIssue(t, s, emailCodeTest("c1", "f1", "alice", "111111", now))
	// Another code for the flow within the gap is refused, saying when.
	var limited *store.SendLimitedError
	err := s.IssueSignInEmailCode(testCtx, emailCodeTest("c2", "f1", "alice", "222222", now+emailCodeTestLimits.FlowGap-1), emailCodeTestLimits)
	if !errors.As(err, &limited) || limited.RetryAt != now+emailCodeTestLimits.FlowGap {
		t.Fatalf("a second code within the gap: %v, want retry at %d", err, now+emailCodeTestLimits.FlowGap)
	}
	if err := emailCodeUse(s, "f1", "111111", now); err != nil {
		t.Fatalf("the refused code voided the first: %v", err)
	}
	// The user's cap counts every flow's codes within the window.
	for i := 1; i < emailCodeTestLimits.UserMax; i++ {
		emailCodeMustIssue(t, s, emailCodeTest(fmt.Sprintf("u%d", i), fmt.Sprintf("f%d", i+1), "alice", "333333", now+int64(i)))
	}
	err = s.IssueSignInEmailCode(testCtx, emailCodeTest("over", "f9", "alice", "999999", now+emailCodeTestMinute), emailCodeTestLimits)
	if !errors.As(err, &limited) || limited.RetryAt != now+emailCodeTestLimits.UserWindow {
		t.Fatalf("a code over the user's cap: %v, want retry at %d", err, now+emailCodeTestLimits.UserWindow)
	}
	// Another user is not held by alice's cap; alice is, once the window
	// has passed her first code, free again.
	emailCodeMustIssue(t, s, emailCodeTest("bob", "fb", "bob", "555555", now+emailCodeTestMinute),
		emailCodeTest("later", "f9", "alice", "666666", now+emailCodeTestLimits.UserWindow))
}

func testSignInEmailCodeStale(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	emailCodeMustIssue(t, s, emailCodeTest("old", "f1", "alice", "111111", now), emailCodeTest("new", "f2", "bob", "222222", now+10))
	if n, err := s.DeleteStaleSignInEmailCodes(testCtx, now+1); err != nil || n != 1 {
		t.Fatalf("stale codes deleted: %d, %v", n, err)
	}
	if _, err := s.LiveSignInEmailCode(testCtx, sessionsTestRealm, "f2", now+10); err != nil {
		t.Fatalf("a fresh code went with the stale: %v", err)
	}
	// A code goes with its user.
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "user deleted", sessionsTestErr(s.LiveSignInEmailCode(testCtx, sessionsTestRealm, "f2", now+10)))
}

func testTermsAcceptance(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	mustBeErrNotFound(t, "before acceptance", sessionsTestErr(s.TermsAcceptedAt(testCtx, sessionsTestRealm, "alice", "v1")))
	if err := s.AcceptTerms(testCtx, sessionsTestRealm, "alice", "v1", now); err != nil {
		t.Fatal(err)
	}
	// Accepting again keeps the first time.
	if err := s.AcceptTerms(testCtx, sessionsTestRealm, "alice", "v1", now+1); err != nil {
		t.Fatal(err)
	}
	if at, err := s.TermsAcceptedAt(testCtx, sessionsTestRealm, "alice", "v1"); err != nil || at != now {
		t.Fatalf("accepted at %d, %v; want %d", at, err, now)
	}
	// Each version is accepted on its own; each user for themselves.
	mustBeErrNotFound(t, "another version", sessionsTestErr(s.TermsAcceptedAt(testCtx, sessionsTestRealm, "alice", "v2")))
	mustBeErrNotFound(t, "another user", sessionsTestErr(s.TermsAcceptedAt(testCtx, sessionsTestRealm, "bob", "v1")))
	mustBeErrNotFound(t, "another realm", sessionsTestErr(s.TermsAcceptedAt(testCtx, sessionsTestOther, "alice", "v1")))
	mustBeErrNotFound(t, "a user of another realm", s.AcceptTerms(testCtx, sessionsTestRealm, "carol", "v1", now))
	if err := s.AcceptTerms(testCtx, sessionsTestRealm, "alice", "v2", now+2); err != nil {
		t.Fatal(err)
	}
	got, err := s.UserTermsAcceptances(testCtx, sessionsTestRealm, "alice")
	if want := []store.TermsAcceptance{{Version: "v2", AcceptedAt: now + 2}, {Version: "v1", AcceptedAt: now}}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("alice's acceptances %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.UserTermsAcceptances(testCtx, sessionsTestRealm, "bob"); err != nil || len(got) != 0 {
		t.Fatalf("bob's acceptances %+v, %v; want none", got, err)
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "user deleted", sessionsTestErr(s.TermsAcceptedAt(testCtx, sessionsTestRealm, "alice", "v1")))
}

// testRaceSignInEmailCodeUse: the same code submitted at once (a double
// click, a replayed form) passes once.
func testRaceSignInEmailCodeUse(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	emailCodeMustIssue(t, s, emailCodeTest("c1", "f1", "alice", "111111", sessionsTestNow))
	errs := race(raceWriters, func(int) error { return emailCodeUse(s, "f1", "111111", sessionsTestNow) })
	raceTestOneWins(t, "uses of one code", errs, store.ErrNotFound)
}

// testRaceSignInEmailCodeIssue: codes asked for one flow at once are
// mailed once.
func testRaceSignInEmailCodeIssue(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	errs := race(raceWriters, func(i int) error {
		return s.IssueSignInEmailCode(testCtx, emailCodeTest(fmt.Sprintf("c%d", i), "f1", "alice", "111111", sessionsTestNow), emailCodeTestLimits)
	})
	var limited *store.SendLimitedError
	sent := 0
	for i, err := range errs {
		switch {
		case err == nil:
			sent++
		case !errors.As(err, &limited):
			t.Fatalf("issue %d: %v, want a SendLimitedError", i, err)
		}
	}
	if sent != 1 {
		t.Fatalf("%d codes issued at once for one flow, want 1", sent)
	}
}
