package identity

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// With bruteForceEnabled false the lockout neither counts nor locks,
// whichever check calls it: a record from when it was on is ignored.
func TestBruteForceDisabledCountsNothing(t *testing.T) {
	e := newTestEnv(t)
	e.realm.BruteForceEnabled = false
	alice := e.user("alice", "alice password")
	if err := e.core.bruteForceFailed(t.Context(), e.realm, alice, testIP); err != nil {
		t.Fatal(err)
	}
	if f := e.failures(alice); f.Failures != 0 {
		t.Fatalf("counted with protection off: %+v", f)
	}
	if _, _, err := e.store.RecordLoginFailure(t.Context(), e.realm.ID, alice.ID, testIP, e.clock.Now().UnixMilli(),
		store.LoginFailurePolicy{MaxFailures: 1, LockoutMillis: 3600_000}); err != nil {
		t.Fatal(err)
	}
	if locked, err := e.core.bruteForceLocked(t.Context(), e.realm, alice); err != nil || locked {
		t.Fatalf("locked with protection off: %v %v", locked, err)
	}
	if user, err := e.core.CheckCredentials(t.Context(), e.realm, "alice", "alice password", testIP); err != nil || user.ID != alice.ID {
		t.Fatalf("sign-in with an old lockout on record: %v %v", user, err)
	}
}

// Every check counts toward one lockout per user: wrong passwords, wrong
// one-time codes; a locked user's right password and code are refused as
// wrong ones, uncounted.
func TestBruteForceAcrossChecks(t *testing.T) {
	e := newTestEnv(t)
	alice := e.user("alice", "alice password")
	if _, err := e.core.CheckCredentials(t.Context(), e.realm, "alice", "wrong", testIP); !errors.Is(err, ErrBadCredentials) {
		t.Fatal(err)
	}
	if err := e.core.CheckUserPassword(t.Context(), e.realm, alice, "wrong", testIP); !errors.Is(err, ErrBadCredentials) {
		t.Fatal(err)
	}
	if err := e.core.CheckOneTimeCode(t.Context(), e.realm, alice, "000000", false, testIP); !errors.Is(err, ErrInvalidTOTP) {
		t.Fatal(err)
	}
	if f := e.failures(alice); f.Failures != 3 || f.LockedUntil == 0 {
		t.Fatalf("record %+v, want three failures and a lockout", f)
	}
	if _, err := e.core.CheckCredentials(t.Context(), e.realm, "alice", "alice password", "192.0.2.2"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("locked, right password: %v", err)
	} else if id, locked := LockedOut(err); !locked || id != alice.ID {
		t.Fatalf("locked, right password: %v, want a *LockedError", err)
	}
	if err := e.core.CheckUserPassword(t.Context(), e.realm, alice, "alice password", "192.0.2.2"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("locked, confirmation: %v", err)
	}
	if f := e.failures(alice); f.Failures != 3 {
		t.Fatalf("a locked user's attempts counted: %+v", f)
	}
}
