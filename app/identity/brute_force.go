package identity

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
// This is not the server's flood guard (signin_guard.go): that one is in
// memory, per username and per address, for unknown users too, and
// answers 429. docs/decisions.md describes how the two meet.

// LockedError is the refusal of a user locked out by the realm's policy.
// It is the error a wrong credential of its kind gets (as:
// ErrBadCredentials for a password, ErrInvalidTOTP for a one-time code),
// so every caller that handles a wrong one answers it the same way.
type LockedError struct {
	UserID string
	as     error
}

func (e *LockedError) Error() string        { return "account locked out by brute-force protection" }
func (e *LockedError) Is(target error) bool { return target == e.as }

// LockedOut tells whether err is a brute-force lockout, and of which user.
func LockedOut(err error) (userID string, ok bool) {
	var le *LockedError
	if errors.As(err, &le) {
		return le.UserID, true
	}
	return "", false
}

// BruteForcePolicy is the realm's brute-force settings as the store
// counts by them.
func BruteForcePolicy(realm *store.Realm) store.LoginFailurePolicy {
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
func (c *Core) bruteForceLocked(ctx context.Context, realm *store.Realm, user *store.User) (bool, error) {
	if !realm.BruteForceEnabled {
		return false, nil
	}
	return c.store.LoginLock(ctx, realm.ID, user.ID, c.now().UnixMilli())
}

// bruteForceFailed counts a failed check of the user's password or
// one-time code from ip. When it starts a lockout, a LOGIN_ERROR event
// with error user_temporarily_disabled records it (the caller records the
// failed attempt itself, as usual).
func (c *Core) bruteForceFailed(ctx context.Context, realm *store.Realm, user *store.User, ip string) error {
	if !realm.BruteForceEnabled {
		return nil
	}
	f, locked, err := c.store.RecordLoginFailure(ctx, realm.ID, user.ID, ip, c.now().UnixMilli(), BruteForcePolicy(realm))
	if err != nil || !locked {
		return err
	}
	lockout := "temporary"
	if f.Permanent() {
		lockout = "permanent"
	}
	c.log.WarnContext(ctx, "user locked out", "realm", realm.Name, "user", user.ID, "lockout", lockout)
	c.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, IPAddress: ip, Error: "user_temporarily_disabled",
		Details: map[string]string{"username": user.Username, "lockout": lockout,
			"temporary_lockouts": strconv.Itoa(f.TemporaryLockouts)}})
	return nil
}

// bruteForceSucceeded forgets the user's failures after a successful
// sign-in. It writes only when there is something to forget, so a
// sign-in without earlier failures costs one read.
func (c *Core) bruteForceSucceeded(ctx context.Context, realm *store.Realm, user *store.User) error {
	if !realm.BruteForceEnabled {
		return nil
	}
	if _, err := c.store.GetLoginFailure(ctx, realm.ID, user.ID); errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return c.store.ClearLoginFailures(ctx, realm.ID, user.ID)
}

// bruteForcePasswordRight forgets the user's failures after a right
// password, unless a second factor is still to be checked (a TOTP code or
// a security key's assertion): then its success forgets them, so that
// knowing the password does not wipe out a count of wrong codes or
// refused assertions. An enrolment step checks nothing, so it keeps
// nothing. Without failures on record it costs one read.
func (c *Core) bruteForcePasswordRight(ctx context.Context, realm *store.Realm, user *store.User) error {
	if !realm.BruteForceEnabled {
		return nil
	}
	if _, err := c.store.GetLoginFailure(ctx, realm.ID, user.ID); errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if pending, err := c.NeedsSecondFactor(ctx, realm, user.ID); err != nil || pending != "" && pending != store.StepTOTPSetup {
		return err
	}
	return c.store.ClearLoginFailures(ctx, realm.ID, user.ID)
}

// wrongCredential is a random value no password or code equals, for
// checking in place of what a locked user sent.
func wrongCredential() string { return "locked:" + rand.Text() }
