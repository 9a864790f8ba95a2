package identity

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// AssertionCheck is the bookkeeping around the check of one WebAuthn
// assertion: the flood guard and the realm's brute-force policy, as for
// every other credential. The ceremony itself (go-webauthn) is
// app/identity/webauthnrp's, which reports to it what it finds:
//
//	check, err := core.StartAssertion(realm, ip) // the address's limits
//	... once the key's user is known:
//	locked, err := check.Locked(ctx, user)      // refuse uncounted if so
//	err = check.Admit(user)                     // the user's own limit
//	... each refusal:  return check.Refused(ctx, user, counted, event, refusal)
//	... the success:   err = check.Succeeded(ctx, user)
type AssertionCheck struct {
	c     *Core
	g     *signInGuard
	realm *store.Realm
	ip    string
}

// StartAssertion starts the check of an assertion from ip: a
// *ThrottledError while the address's failures against existing accounts
// are past their limit.
func (c *Core) StartAssertion(realm *store.Realm, ip string) (*AssertionCheck, error) {
	address, accounts := signInAddressKeys(realm.ID, ip)
	g, err := guardSignIn(c.throttle, address, accounts)
	if err != nil {
		return nil, err
	}
	return &AssertionCheck{c: c, g: g, realm: realm, ip: ip}, nil
}

// Locked says whether the realm's policy locks user out now: the
// assertion is then refused, uncounted.
func (a *AssertionCheck) Locked(ctx context.Context, user *store.User) (bool, error) {
	return a.c.bruteForceLocked(ctx, a.realm, user)
}

// Admit checks the user's own limit of second-factor failures (it shares
// the count of the user's one-time codes); a *ThrottledError past it.
func (a *AssertionCheck) Admit(user *store.User) error {
	return a.g.admit(totpThrottleKey(a.realm, user.ID), LoginLimitPerUser)
}

// Refused counts a refused assertion, records event (the LOGIN_ERROR
// that tells why), and says what to answer: refusal, or from a guarded
// address a *ThrottledError. user is the key's user once known (nil
// before); counted says the refusal is a failed check of the user's key,
// which the realm's lockout counts, rather than a refusal before any
// check. A lockout the count starts is recorded before event.
func (a *AssertionCheck) Refused(ctx context.Context, user *store.User, counted bool, event store.LoginEvent, refusal error) error {
	if user != nil && counted {
		if err := a.c.bruteForceFailed(ctx, a.realm, user, a.ip); err != nil {
			return err
		}
	}
	a.c.loginEvent(ctx, a.realm, event)
	// The user's own count runs once admitted: the uncounted refusals
	// come before.
	return a.g.failed(ctx, user != nil, refusal)
}

// Succeeded forgets the user's failures after an accepted assertion.
func (a *AssertionCheck) Succeeded(ctx context.Context, user *store.User) error {
	if err := a.g.succeeded(ctx); err != nil {
		return err
	}
	return a.c.bruteForceSucceeded(ctx, a.realm, user)
}
