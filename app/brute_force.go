package app

import (
	"context"
	"crypto/rand"
	"errors"
	"strconv"

	"github.com/idenplane/idenplane/store"
)

// Brute-force protection, the realm's policy: failed checks of a user's
// password (or one-time code) are counted per user; maxLoginFailures of
// them lock the user out for lockoutDuration seconds, and after
// permanentLockoutAfter such lockouts the next one lasts until an admin
// unlocks the user. failureResetTime seconds without a failure forget the
// count. A locked user is answered exactly as a wrong password is; only
// the LOGIN_ERROR event (user_temporarily_disabled) tells them apart.
//
// This is not the server's flood guard (a.loginThrottle): that one is in
// memory, per username and per address, for unknown users too, and
// answers 429. docs/decisions.md describes how the two meet.

// lockedError is the refusal of a user locked out by the realm's policy.
// It is an errBadCredentials, so every caller that handles a wrong
// password answers it the same way.
type lockedError struct{ userID string }

func (e *lockedError) Error() string        { return "account locked out by brute-force protection" }
func (e *lockedError) Is(target error) bool { return target == errBadCredentials }

// lockedOut tells whether err is a brute-force lockout, and of which user.
func lockedOut(err error) (userID string, ok bool) {
	var le *lockedError
	if errors.As(err, &le) {
		return le.userID, true
	}
	return "", false
}

// loginFailureReason is loginErrorReason with lockouts told apart from
// wrong passwords, which they are answered as.
func loginFailureReason(err error) string {
	if _, ok := lockedOut(err); ok {
		return "user_temporarily_disabled"
	}
	return loginErrorReason(err)
}

func bruteForcePolicy(realm *store.Realm) store.LoginFailurePolicy {
	return store.LoginFailurePolicy{
		MaxFailures:    realm.MaxLoginFailures,
		LockoutMillis:  int64(realm.LockoutDuration) * 1000,
		ResetMillis:    int64(realm.FailureResetTime) * 1000,
		PermanentAfter: realm.PermanentLockoutAfter,
	}
}

// bruteForceLocked says whether the realm's policy locks the user out now.
// Call it before checking a credential; when it says yes, check a value
// known to be wrong instead (wrongCredential), so that the attempt costs
// what a wrong one does, and answer as for a wrong one.
func (a *App) bruteForceLocked(ctx context.Context, realm *store.Realm, user *store.User) (bool, error) {
	if !realm.BruteForceEnabled {
		return false, nil
	}
	return a.store.LoginLock(ctx, realm.ID, user.ID, a.now().UnixMilli())
}

// bruteForceFailed counts a failed check of the user's password or
// one-time code from ip. When it starts a lockout, a LOGIN_ERROR event
// with error user_temporarily_disabled records it (the caller records the
// failed attempt itself, as usual).
func (a *App) bruteForceFailed(ctx context.Context, realm *store.Realm, user *store.User, ip string) error {
	if !realm.BruteForceEnabled {
		return nil
	}
	f, locked, err := a.store.RecordLoginFailure(ctx, realm.ID, user.ID, ip, a.now().UnixMilli(), bruteForcePolicy(realm))
	if err != nil || !locked {
		return err
	}
	lockout := "temporary"
	if f.Permanent() {
		lockout = "permanent"
	}
	a.log.WarnContext(ctx, "user locked out", "realm", realm.Name, "user", user.ID, "lockout", lockout)
	a.loginEvent(ctx, realm, store.LoginEvent{Type: "LOGIN_ERROR", UserID: user.ID, IPAddress: ip, Error: "user_temporarily_disabled",
		Details: map[string]string{"username": user.Username, "lockout": lockout,
			"temporary_lockouts": strconv.Itoa(f.TemporaryLockouts)}})
	return nil
}

// bruteForceSucceeded forgets the user's failures after a successful
// sign-in. It writes only when there is something to forget, so a
// sign-in without earlier failures costs one read.
func (a *App) bruteForceSucceeded(ctx context.Context, realm *store.Realm, user *store.User) error {
	if !realm.BruteForceEnabled {
		return nil
	}
	if _, err := a.store.GetLoginFailure(ctx, realm.ID, user.ID); errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return a.store.ClearLoginFailures(ctx, realm.ID, user.ID)
}

// wrongCredential is a random value no password or code equals, for
// checking in place of what a locked user sent.
func wrongCredential() string { return "locked:" + rand.Text() }

// bruteForceTarget finds the user a sign-in names and whether the realm's
// policy locks that user out; nil (not locked) for an unknown username or
// when the realm has no brute-force protection.
func (a *App) bruteForceTarget(ctx context.Context, realm *store.Realm, username string) (*store.User, bool, error) {
	if !realm.BruteForceEnabled {
		return nil, false, nil
	}
	user, err := a.store.GetUserByUsername(ctx, realm.ID, username)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	locked, err := a.bruteForceLocked(ctx, realm, user)
	return user, locked, err
}

// checkCredentialsGuarded is checkCredentials under the realm's
// brute-force policy. A locked user's attempt is checked with a wrong
// password instead, so it takes as long, meets the flood guard the same
// way, and fails as a wrong password does, with a *lockedError (an
// errBadCredentials) whose reason is user_temporarily_disabled. Failures
// of known users are counted; a success forgets them.
func (a *App) checkCredentialsGuarded(ctx context.Context, realm *store.Realm, username, password, ip string) (*store.User, error) {
	target, locked, err := a.bruteForceTarget(ctx, realm, username)
	if err != nil {
		return nil, err
	}
	if locked {
		if _, err := a.checkCredentials(ctx, realm, username, wrongCredential(), ip); !errors.Is(err, errBadCredentials) {
			return nil, err // throttled, or the server's failure: as for anyone
		}
		return nil, &lockedError{userID: target.ID}
	}
	user, err := a.checkCredentials(ctx, realm, username, password, ip)
	switch {
	case err == nil:
		if err := a.bruteForceSucceeded(ctx, realm, user); err != nil {
			return nil, err
		}
	case errors.Is(err, errBadCredentials) && target != nil:
		if err := a.bruteForceFailed(ctx, realm, target, ip); err != nil {
			return nil, err
		}
	}
	return user, err
}
