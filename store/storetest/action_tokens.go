package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// actionTokenSuite is the conformance tests of single-use mailed tokens.
func actionTokenSuite() []subTest {
	return []subTest{
		{"ActionTokenSingleUse", testActionTokenSingleUse},
		{"ActionTokenRefused", testActionTokenRefused},
		{"ActionTokenNewestOnly", testActionTokenNewestOnly},
	}
}

// actionTestFixture gives alice an email and returns a fresh token of hers.
func actionTestFixture(t *testing.T, s *store.Store) *store.ActionToken {
	t.Helper()
	sessionsTestFixture(t, s)
	alice, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	alice.Email = "alice@example.test"
	if err := s.UpdateUser(testCtx, alice); err != nil {
		t.Fatal(err)
	}
	tok := &store.ActionToken{Hash: store.HashToken("t1"), RealmID: sessionsTestRealm, UserID: "alice", Kind: store.ActionVerifyEmail,
		Email: "alice@example.test", CreatedAt: sessionsTestNow, ExpiresAt: sessionsTestNow + 12*sessionsTestHour}
	if err := s.CreateActionToken(testCtx, tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

func testActionTokenSingleUse(t *testing.T, s *store.Store) {
	tok := actionTestFixture(t, s)
	got, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, sessionsTestNow+1)
	if err != nil {
		t.Fatal(err)
	}
	want := *tok
	want.UsedAt = sessionsTestNow + 1
	mustEqual(t, "consumed token", got, &want)
	if _, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, sessionsTestNow+2); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second use: %v, want ErrNotFound", err)
	}
}

func testActionTokenRefused(t *testing.T, s *store.Store) {
	actionTestFixture(t, s)
	now := sessionsTestNow
	for _, tc := range []struct {
		name, realm, token, kind string
		at                       int64
	}{
		{"unknown", sessionsTestRealm, "nope", store.ActionVerifyEmail, now},
		{"other realm", sessionsTestOther, "t1", store.ActionVerifyEmail, now},
		{"other kind", sessionsTestRealm, "t1", store.ActionResetPassword, now},
		{"expired", sessionsTestRealm, "t1", store.ActionVerifyEmail, now + 12*sessionsTestHour},
	} {
		if _, err := s.ConsumeActionToken(testCtx, tc.realm, store.HashToken(tc.token), tc.kind, tc.at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}
	// A changed email voids the link sent to the old one.
	alice, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	alice.Email = "alice@new.test"
	if err := s.UpdateUser(testCtx, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after an email change: %v, want ErrNotFound", err)
	}
	if err := s.CreateActionToken(testCtx, &store.ActionToken{Hash: []byte("raw"), RealmID: sessionsTestRealm, UserID: "alice",
		Kind: store.ActionVerifyEmail, Email: "a@b.test"}); err == nil {
		t.Fatal("a token stored unhashed was accepted")
	}
	n, err := s.DeleteExpiredActionTokens(testCtx, now+12*sessionsTestHour)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d expired tokens, %v; want 1", n, err)
	}
}

func testActionTokenNewestOnly(t *testing.T, s *store.Store) {
	tok := actionTestFixture(t, s)
	second := *tok
	second.Hash = store.HashToken("t2")
	if err := s.CreateActionToken(testCtx, &second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("superseded token: %v, want ErrNotFound", err)
	}
	if _, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t2"), store.ActionVerifyEmail, sessionsTestNow); err != nil {
		t.Fatalf("newest token: %v", err)
	}
}
