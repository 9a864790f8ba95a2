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
// This is not the server's flood guard (signin_guard.go): that one is in
// memory, per username and per address, for unknown users too, and
// answers 429. docs/decisions.md describes how the two meet.

// lockedError is the refusal of a user locked out by the realm's policy.
// It is the error a wrong credential of its kind gets (as: errBadCredentials
// for a password, errInvalidTOTP for a one-time code), so every caller that
// handles a wrong one answers it the same way.
type lockedError struct {
	userID string
	as     error
}

func (e *lockedError) Error() string        { return "account locked out by brute-force protection" }
func (e *lockedError) Is(target error) bool { return target == e.as }

// lockedOut tells whether err is a brute-force lockout, and of which user.
func lockedOut(err error) (userID string, ok bool) {
	var le *lockedError
	if errors.As(err, &le) {
		return le.userID, true
	}
	return "", false
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

// bruteForcePasswordRight forgets the user's failures after a right
// password, unless a second factor is still to be checked (a TOTP code or
// a security key's assertion): then its success forgets them, so that
// knowing the password does not wipe out a count of wrong codes or
// refused assertions. An enrolment step checks nothing, so it keeps
// nothing. Without failures on record it costs one read.
func (a *App) bruteForcePasswordRight(ctx context.Context, realm *store.Realm, user *store.User) error {
	if !realm.BruteForceEnabled {
		return nil
	}
	if _, err := a.store.GetLoginFailure(ctx, realm.ID, user.ID); errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if pending, err := a.needsSecondFactor(ctx, realm, user.ID); err != nil || pending != "" && pending != store.StepTOTPSetup {
		return err
	}
	return a.store.ClearLoginFailures(ctx, realm.ID, user.ID)
}

// wrongCredential is a random value no password or code equals, for
// checking in place of what a locked user sent.
func wrongCredential() string { return "locked:" + rand.Text() }

// bruteForceTarget finds the user a login names (findLoginUser: by email
// when it holds an @) and whether the realm's policy locks that user out:
// the one lookup both the lockout and the credential check use, so that
// they never disagree on whom a login names. nil for an unknown login;
// never locked when the realm has no brute-force protection.
func (a *App) bruteForceTarget(ctx context.Context, realm *store.Realm, login string) (*store.User, bool, error) {
	user, err := a.findLoginUser(ctx, realm, login)
	if err != nil || user == nil {
		return nil, false, err
	}
	locked, err := a.bruteForceLocked(ctx, realm, user)
	return user, locked, err
}

// checkCredentialsGuarded authenticates the user a login names
// (bruteForceTarget) by password, under the sign-in flood guard
// (signin_guard.go) and the realm's brute-force policy. Failed attempts,
// a disabled account's included, count per account and per address. A
// locked user's attempt is checked with a wrong password instead, so it
// takes as long, meets the flood guard the same way, and fails as a
// wrong password does, with a *lockedError (an errBadCredentials) whose
// reason is user_temporarily_disabled. Other failures of known users are
// counted toward the lockout; a success forgets them, unless a second
// factor is still to come (bruteForcePasswordRight). A disabled account's
// errUserDisabled comes with the user, for the event. From a guarded
// address only the right password of an enabled, unlocked user passes:
// every refusal there is a *throttledError, answered guardedAnswerTime
// after the attempt began, whatever it was.
func (a *App) checkCredentialsGuarded(ctx context.Context, realm *store.Realm, login, password, ip string) (*store.User, error) {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := a.guardSignIn(a.loginThrottle, address, accounts)
	var user *store.User
	if err == nil {
		user, err = a.checkAdmittedCredentials(ctx, g, realm, login, password, ip)
	}
	if err != nil {
		a.holdRefusal(ctx, g)
	}
	return user, err
}

// checkAdmittedCredentials is checkCredentialsGuarded past the address's
// limits.
func (a *App) checkAdmittedCredentials(ctx context.Context, g *signInGuard, realm *store.Realm, login, password, ip string) (*store.User, error) {
	target, locked, err := a.bruteForceTarget(ctx, realm, login)
	if err != nil {
		return nil, err
	}
	if err := g.admit(loginAccountKey(realm, target, login), loginLimitPerUser); err != nil {
		return nil, err
	}
	if locked {
		password = wrongCredential()
	}
	refusal, err := a.checkPassword(ctx, g, realm, target, password)
	if err != nil {
		return nil, err
	}
	if refusal == nil {
		if err := g.succeeded(ctx); err != nil {
			return nil, err
		}
		if err := a.bruteForcePasswordRight(ctx, realm, target); err != nil {
			return nil, err
		}
		return target, nil
	}
	switch {
	case locked:
		refusal = &lockedError{userID: target.ID, as: errBadCredentials}
	case target != nil && errors.Is(refusal, errBadCredentials):
		if err := a.bruteForceFailed(ctx, realm, target, ip); err != nil {
			return nil, err
		}
	}
	if err := g.failed(ctx, target != nil, refusal); !errors.Is(err, errUserDisabled) {
		return nil, err
	}
	return target, errUserDisabled // the user for the event only
}

// checkUserPassword checks the password of a user already known, as a
// signed-in user's confirmations need (the account's password change,
// deletion and TOTP removal): under the sign-in flood guard, per account
// and per address, as sign-ins are, and the realm's brute-force policy.
// It answers nil, errBadCredentials (a *lockedError for a locked user,
// whatever was typed, checked against a wrong value so that it costs the
// same), or a *throttledError (every refusal from a guarded address).
func (a *App) checkUserPassword(ctx context.Context, realm *store.Realm, user *store.User, password, ip string) error {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := a.guardSignIn(a.loginThrottle, address, accounts)
	if err == nil {
		err = g.admit(loginAccountKey(realm, user, user.Username), loginLimitPerUser)
	}
	if err != nil {
		return err
	}
	locked, err := a.bruteForceLocked(ctx, realm, user)
	if err != nil {
		return err
	}
	if locked {
		password = wrongCredential()
	}
	hash := user.PasswordHash
	if hash == "" {
		hash = dummyArgon2Hash // as long as a wrong password takes
	}
	ok, err := a.verifyPasswordWithin(ctx, hash, password, g.hashWait(a))
	if errors.Is(err, errHashBusy) && g.guarded {
		return g.busy()
	} else if err != nil && !errors.Is(err, errBadHash) {
		return err
	}
	if !ok || user.PasswordHash == "" {
		var refusal error = errBadCredentials
		if locked {
			refusal = &lockedError{userID: user.ID, as: errBadCredentials}
		} else if err := a.bruteForceFailed(ctx, realm, user, ip); err != nil {
			return err
		}
		return g.failed(ctx, true, refusal)
	}
	if err := g.succeeded(ctx); err != nil {
		return err
	}
	return a.bruteForceSucceeded(ctx, realm, user)
}

// checkOneTimeCode checks a code of the user's second factor: a TOTP code,
// whose time step it uses up, or, when recovery, a recovery code, which it
// spends. It is under the sign-in flood guard, with a count of the user's
// codes of its own and the address's counts, and under the realm's
// brute-force policy: a locked user's code is not checked (a wrong one
// is, in its place) and is refused as a wrong code, with a *lockedError.
// It answers nil, errInvalidTOTP, or a *throttledError (every refusal
// from a guarded address).
func (a *App) checkOneTimeCode(ctx context.Context, realm *store.Realm, user *store.User, code string, recovery bool, ip string) error {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := a.guardSignIn(a.loginThrottle, address, accounts)
	if err == nil {
		err = g.admit(totpThrottleKey(realm, user.ID), loginLimitPerUser)
	}
	if err != nil {
		return err
	}
	locked, err := a.bruteForceLocked(ctx, realm, user)
	if err != nil {
		return err
	}
	if locked {
		code = wrongCredential()
	}
	if recovery {
		err = a.useRecoveryCode(ctx, realm, user.ID, code)
	} else {
		err = a.verifyTOTP(ctx, realm, user.ID, code)
	}
	if errors.Is(err, errInvalidTOTP) {
		var refusal error = errInvalidTOTP
		if locked {
			refusal = &lockedError{userID: user.ID, as: errInvalidTOTP}
		} else if err := a.bruteForceFailed(ctx, realm, user, ip); err != nil {
			return err
		}
		return g.failed(ctx, true, refusal)
	} else if err != nil {
		return err
	}
	if err := g.succeeded(ctx); err != nil {
		return err
	}
	return a.bruteForceSucceeded(ctx, realm, user)
}
