package store

import (
	"errors"
	"testing"
)

// actionTokenSuite is the conformance tests of single-use mailed tokens.
func actionTokenSuite() []suiteTest {
	return []suiteTest{
		{"ActionTokenSingleUse", suiteActionTokenSingleUse},
		{"ActionTokenRefused", suiteActionTokenRefused},
		{"ActionTokenNewestOnly", suiteActionTokenNewestOnly},
	}
}

// actionTestFixture gives alice an email and returns a fresh token of hers.
func actionTestFixture(t *testing.T, s *Store) *ActionToken {
	t.Helper()
	sessionsTestFixture(t, s)
	alice, err := s.GetUser(suiteCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	alice.Email = "alice@example.test"
	if err := s.UpdateUser(suiteCtx, alice); err != nil {
		t.Fatal(err)
	}
	tok := &ActionToken{Hash: HashToken("t1"), RealmID: sessionsTestRealm, UserID: "alice", Kind: ActionVerifyEmail,
		Email: "alice@example.test", CreatedAt: sessionsTestNow, ExpiresAt: sessionsTestNow + 12*sessionsTestHour}
	if err := s.CreateActionToken(suiteCtx, tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

func suiteActionTokenSingleUse(t *testing.T, s *Store) {
	tok := actionTestFixture(t, s)
	got, err := s.ConsumeActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, sessionsTestNow+1)
	if err != nil {
		t.Fatal(err)
	}
	want := *tok
	want.UsedAt = sessionsTestNow + 1
	suiteMustEqual(t, "consumed token", got, &want)
	if _, err := s.ConsumeActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, sessionsTestNow+2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second use: %v, want ErrNotFound", err)
	}
}

func suiteActionTokenRefused(t *testing.T, s *Store) {
	actionTestFixture(t, s)
	now := sessionsTestNow
	for _, tc := range []struct {
		name, realm, token, kind string
		at                       int64
	}{
		{"unknown", sessionsTestRealm, "nope", ActionVerifyEmail, now},
		{"other realm", sessionsTestOther, "t1", ActionVerifyEmail, now},
		{"other kind", sessionsTestRealm, "t1", ActionResetPassword, now},
		{"expired", sessionsTestRealm, "t1", ActionVerifyEmail, now + 12*sessionsTestHour},
	} {
		if _, err := s.ConsumeActionToken(suiteCtx, tc.realm, HashToken(tc.token), tc.kind, tc.at); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}
	// A changed email voids the link sent to the old one.
	alice, err := s.GetUser(suiteCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	alice.Email = "alice@new.test"
	if err := s.UpdateUser(suiteCtx, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsumeActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after an email change: %v, want ErrNotFound", err)
	}
	if err := s.CreateActionToken(suiteCtx, &ActionToken{Hash: []byte("raw"), RealmID: sessionsTestRealm, UserID: "alice",
		Kind: ActionVerifyEmail, Email: "a@b.test"}); err == nil {
		t.Fatal("a token stored unhashed was accepted")
	}
	n, err := s.DeleteExpiredActionTokens(suiteCtx, now+12*sessionsTestHour)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d expired tokens, %v; want 1", n, err)
	}
}

func suiteActionTokenNewestOnly(t *testing.T, s *Store) {
	tok := actionTestFixture(t, s)
	second := *tok
	second.Hash = HashToken("t2")
	if err := s.CreateActionToken(suiteCtx, &second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsumeActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, sessionsTestNow); !errors.Is(err, ErrNotFound) {
		t.Fatalf("superseded token: %v, want ErrNotFound", err)
	}
	if _, err := s.ConsumeActionToken(suiteCtx, sessionsTestRealm, HashToken("t2"), ActionVerifyEmail, sessionsTestNow); err != nil {
		t.Fatalf("newest token: %v", err)
	}
}
