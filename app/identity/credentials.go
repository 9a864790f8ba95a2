package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Why a user's credentials were refused. The first covers an unknown
// user, a wrong password and an account that cannot sign in by password,
// so that the answer never tells whether a user exists. The login page
// answers a disabled account as it does the first: only the LOGIN_ERROR
// event tells them apart.
var (
	ErrBadCredentials = errors.New("invalid username or password")
	ErrUserDisabled   = errors.New("account disabled")
)

// ThrottledError: too many failed sign-ins for this user or address. Wait
// is how long before the next attempt may pass.
type ThrottledError struct{ Wait time.Duration }

func (e *ThrottledError) Error() string { return "too many failed sign-ins" }

// loginAccountKey is the throttle key of the failed sign-ins of one
// account: a known user by ID, so that its username and its email count
// together, and anything else by what was typed.
func loginAccountKey(realm *store.Realm, user *store.User, login string) string {
	if user != nil {
		return "realm:" + realm.ID + ":user-id:" + user.ID
	}
	return "realm:" + realm.ID + ":user:" + strings.ToLower(login)
}

// ForgetFailedSignIns forgets the flood guard's count of the user's failed
// sign-ins: after a password reset, the failures before it no longer
// count against the account.
func (c *Core) ForgetFailedSignIns(realm *store.Realm, user *store.User) {
	c.throttle.Reset(loginAccountKey(realm, user, ""))
}

// FindLoginUser is the user a login names, or nil: by email when it holds
// an @, as Keycloak does, so a username that is someone's address cannot
// capture that person's sign-in; by username otherwise or failing that.
func (c *Core) FindLoginUser(ctx context.Context, realm *store.Realm, login string) (*store.User, error) {
	if strings.Contains(login, "@") {
		u, err := c.store.GetUserByEmail(ctx, realm.ID, login)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return u, err
		}
	}
	u, err := c.store.GetUserByUsername(ctx, realm.ID, login)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

// bruteForceTarget finds the user a login names (FindLoginUser: by email
// when it holds an @) and whether the realm's policy locks that user out:
// the one lookup both the lockout and the credential check use, so that
// they never disagree on whom a login names. nil for an unknown login;
// never locked when the realm has no brute-force protection.
func (c *Core) bruteForceTarget(ctx context.Context, realm *store.Realm, login string) (*store.User, bool, error) {
	user, err := c.FindLoginUser(ctx, realm, login)
	if err != nil || user == nil {
		return nil, false, err
	}
	locked, err := c.bruteForceLocked(ctx, realm, user)
	return user, locked, err
}

// CheckCredentials authenticates the user a login names by password,
// asking the credential sources (sources.go), under the sign-in flood
// guard (signin_guard.go) and the realm's brute-force policy. ip is the
// client's address. Failed attempts, a disabled account's included,
// count per account and per address. A locked user's attempt is checked
// with a wrong password instead, so it takes as long, meets the flood
// guard the same way, and fails as a wrong password does, with a
// *LockedError (an ErrBadCredentials) whose reason is
// user_temporarily_disabled. Other failures of known users are counted
// toward the lockout; a success forgets them, unless a second factor is
// still to come (bruteForcePasswordRight). A disabled account's
// ErrUserDisabled comes with the user, for the event. From a guarded
// address only the right password of an enabled, unlocked user passes:
// every refusal there is a *ThrottledError, answered GuardedAnswerTime
// after the attempt began, whatever it was.
func (c *Core) CheckCredentials(ctx context.Context, realm *store.Realm, login, password, ip string) (*store.User, error) {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := guardSignIn(c.throttle, address, accounts)
	var user *store.User
	if err == nil {
		user, err = c.checkAdmittedCredentials(ctx, g, realm, login, password, ip)
	}
	if err != nil {
		c.holdRefusal(ctx, g)
	}
	return user, err
}

// checkAdmittedCredentials is CheckCredentials past the address's limits.
func (c *Core) checkAdmittedCredentials(ctx context.Context, g *signInGuard, realm *store.Realm, login, password, ip string) (*store.User, error) {
	target, locked, err := c.bruteForceTarget(ctx, realm, login)
	if err != nil {
		return nil, err
	}
	if err := g.admit(loginAccountKey(realm, target, login), LoginLimitPerUser); err != nil {
		return nil, err
	}
	if locked {
		password = wrongCredential()
	}
	user, known, refusal, err := c.checkPassword(ctx, g, PasswordAttempt{Realm: realm, Login: login, Password: password, User: target})
	if err != nil {
		return nil, err
	}
	// A user a source names that the login did not is held to the realm's
	// lockout as the login's own is; its password is checked already.
	if !locked && user != nil && (target == nil || user.ID != target.ID) {
		if locked, err = c.bruteForceLocked(ctx, realm, user); err != nil {
			return nil, err
		}
	}
	if refusal == nil && !locked {
		if err := g.succeeded(ctx); err != nil {
			return nil, err
		}
		if err := c.bruteForcePasswordRight(ctx, realm, user); err != nil {
			return nil, err
		}
		// A migrated user's foreign hash becomes argon2id in this sign-in.
		if err := c.UpgradeHash(ctx, realm, user, password); err != nil {
			return nil, err
		}
		return user, nil
	}
	switch {
	case locked:
		refusal = &LockedError{UserID: user.ID, as: ErrBadCredentials}
	case user != nil && errors.Is(refusal, ErrBadCredentials):
		if err := c.bruteForceFailed(ctx, realm, user, ip); err != nil {
			return nil, err
		}
	}
	if err := g.failed(ctx, known, refusal); !errors.Is(err, ErrUserDisabled) {
		return nil, err
	}
	return user, ErrUserDisabled // the user for the event only
}

// checkPassword asks the credential sources about an attempt and says
// whom the deciding answer names (nil for nobody), whether a source knew
// the login, and why the attempt is refused: ErrBadCredentials (no source
// knew the login, the password is wrong, the account cannot sign in by
// password, a registration is awaiting approval or rejected),
// ErrUserDisabled (the right password of a disabled account), or nil.
func (c *Core) checkPassword(ctx context.Context, g *signInGuard, at PasswordAttempt) (user *store.User, known bool, refusal, err error) {
	at.Guarded, at.guard = g.guarded, g
	answer, err := c.askSources(ctx, at)
	if err != nil {
		return nil, false, nil, err
	}
	switch answer.Verdict {
	case NotMine:
		return nil, false, ErrBadCredentials, nil
	case WrongPassword:
		return answer.User, true, ErrBadCredentials, nil
	}
	user = answer.User
	status, err := c.store.UserStatus(ctx, at.Realm.ID, user.ID)
	if err != nil {
		return nil, false, nil, err
	}
	switch {
	case status != store.UserActive:
		// Said as a wrong password is: the answer says nothing about the
		// account.
		return user, true, ErrBadCredentials, nil
	case !user.Enabled:
		return user, true, ErrUserDisabled, nil
	}
	return user, true, nil, nil
}

// CheckUserPassword checks the password of a user already known, as a
// signed-in user's confirmations need (the account's password change,
// deletion and TOTP removal): through the credential sources, under the
// sign-in flood guard, per account and per address, as sign-ins are, and
// the realm's brute-force policy. It answers nil, ErrBadCredentials (a
// *LockedError for a locked user, whatever was typed, checked against a
// wrong value so that it costs the same), or a *ThrottledError (every
// refusal from a guarded address).
func (c *Core) CheckUserPassword(ctx context.Context, realm *store.Realm, user *store.User, password, ip string) error {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := guardSignIn(c.throttle, address, accounts)
	if err == nil {
		err = g.admit(loginAccountKey(realm, user, user.Username), LoginLimitPerUser)
	}
	if err != nil {
		return err
	}
	locked, err := c.bruteForceLocked(ctx, realm, user)
	if err != nil {
		return err
	}
	if locked {
		password = wrongCredential()
	}
	answer, err := c.askSources(ctx, PasswordAttempt{Realm: realm, Login: user.Username, Password: password, User: user,
		Guarded: g.guarded, guard: g})
	if err != nil {
		return err
	}
	if answer.Verdict != RightPassword || answer.User.ID != user.ID {
		var refusal error = ErrBadCredentials
		if locked {
			refusal = &LockedError{UserID: user.ID, as: ErrBadCredentials}
		} else if err := c.bruteForceFailed(ctx, realm, user, ip); err != nil {
			return err
		}
		return g.failed(ctx, true, refusal)
	}
	if err := g.succeeded(ctx); err != nil {
		return err
	}
	if err := c.UpgradeHash(ctx, realm, user, password); err != nil {
		return err
	}
	return c.bruteForceSucceeded(ctx, realm, user)
}

// CheckOneTimeCode checks a code of the user's second factor: a TOTP code,
// whose time step it uses up, or, when recovery, a recovery code, which it
// spends. It is under the sign-in flood guard, with a count of the user's
// codes of its own and the address's counts, and under the realm's
// brute-force policy: a locked user's code is not checked (a wrong one
// is, in its place) and is refused as a wrong code, with a *LockedError.
// It answers nil, ErrInvalidTOTP, or a *ThrottledError (every refusal
// from a guarded address).
func (c *Core) CheckOneTimeCode(ctx context.Context, realm *store.Realm, user *store.User, code string, recovery bool, ip string) error {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := guardSignIn(c.throttle, address, accounts)
	if err == nil {
		err = g.admit(totpThrottleKey(realm, user.ID), LoginLimitPerUser)
	}
	if err != nil {
		return err
	}
	locked, err := c.bruteForceLocked(ctx, realm, user)
	if err != nil {
		return err
	}
	if locked {
		code = wrongCredential()
	}
	if recovery {
		err = c.useRecoveryCode(ctx, realm, user.ID, code)
	} else {
		err = c.verifyTOTP(ctx, realm, user.ID, code)
	}
	if errors.Is(err, ErrInvalidTOTP) {
		var refusal error = ErrInvalidTOTP
		if locked {
			refusal = &LockedError{UserID: user.ID, as: ErrInvalidTOTP}
		} else if err := c.bruteForceFailed(ctx, realm, user, ip); err != nil {
			return err
		}
		return g.failed(ctx, true, refusal)
	} else if err != nil {
		return err
	}
	if err := g.succeeded(ctx); err != nil {
		return err
	}
	return c.bruteForceSucceeded(ctx, realm, user)
}
