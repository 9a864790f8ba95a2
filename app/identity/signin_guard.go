package identity

import (
	"context"
	"time"

	"github.com/idenplane/idenplane/store"
)

// The sign-in flood guard: the per-account and per-address limits every
// check of a password, one-time code or security key shares (the login
// page, the password grant, the device page, the TOTP step, the account's
// confirmations, WebAuthn, the admin login). It is not the realm's
// brute-force lockout (brute_force.go), which is policy kept per user in
// the database.
//
// Three counts, each failures in a sliding 15 minutes:
//   - the account's (LoginLimitPerUser): past it, that account's
//     attempts are refused with 429 before any check;
//   - the address's failures against existing accounts
//     (LoginLimitPerIP): past it, every attempt from the address is
//     refused before any check. This is the bound on guessing real
//     accounts from one address, spraying one password across many of
//     them included: at most that many such checks fail per window;
//   - all the address's failures, unknown names included
//     (LoginLimitPerIP): past it the address is guarded. Its attempts are
//     still checked, but only the right credential of an existing,
//     enabled, unlocked account passes; every other outcome is a 429 and
//     keeps counting. So a client that guesses invented names holds up
//     no one else's right password from its address, and learns nothing
//     from the answers: a wrong password and an unknown name get the same
//     429. Where a login names the account (passwords), an unknown name
//     is not checked there, so that guessing names costs no password
//     hash, and every refusal is answered GuardedAnswerTime after the
//     attempt began, which hides that it was not (holdRefusal).
//
// docs/decisions.md has the attacker's view of it.

// Failed sign-ins allowed per throttle window per account and per
// address (for each of the address's two counts).
const (
	LoginLimitPerUser = 5
	LoginLimitPerIP   = 20
)

// DefaultGuardedAnswerTime is when, after it began, an attempt from a
// guarded address that does not pass is answered: well past a password
// check, so that one checked and one not take the same time.
const DefaultGuardedAnswerTime = time.Second

// signInAddressKeys are the throttle keys of the sign-in failures from one
// address in a realm: all of them, and those against existing accounts.
func signInAddressKeys(realmID, ip string) (address, accounts string) {
	return "realm:" + realmID + ":ip:" + ip, "realm:" + realmID + ":ip-accounts:" + ip
}

// signInGuard is the flood guard's say on one credential check.
type signInGuard struct {
	counter  FailureCounter
	address  string // every failure from the address
	accounts string // the address's failures against existing accounts
	account  string // the account's failures; "" until admitted
	guarded  bool   // the address is past its limit: only a right credential passes
	began    time.Time
}

// guardSignIn is the flood guard before a credential check from the
// address whose keys are given: a *ThrottledError while the address's
// failures against existing accounts are past their limit; a guarded
// check while all its failures are. The guard is returned either way.
func guardSignIn(fc FailureCounter, address, accounts string) (*signInGuard, error) {
	g := &signInGuard{counter: fc, address: address, accounts: accounts, began: time.Now()}
	g.guarded = fc.Wait(address, LoginLimitPerIP) > 0
	if wait := fc.Wait(accounts, LoginLimitPerIP); wait > 0 {
		return g, &ThrottledError{Wait: wait}
	}
	return g, nil
}

// admit checks the account's own limit, once the account is known; its
// failures count from then on.
func (g *signInGuard) admit(account string, limit int) error {
	g.account = account
	if wait := g.counter.Wait(account, limit); wait > 0 {
		return &ThrottledError{Wait: wait}
	}
	return nil
}

// failed counts a failed check, against an existing account when known,
// and says what to answer: err, or from a guarded address a
// *ThrottledError.
func (g *signInGuard) failed(ctx context.Context, known bool, err error) error {
	keys := []string{g.address}
	if known {
		keys = append(keys, g.accounts)
	}
	// A guarded address's unknown names are not kept by name: each gets
	// the same answer anyway, and keeping them would let one client
	// grow the throttle as fast as it can send names.
	if g.account != "" && (known || !g.guarded) {
		keys = append(keys, g.account)
	}
	if rerr := g.counter.Record(ctx, keys...); rerr != nil {
		return rerr
	}
	if g.guarded {
		return &ThrottledError{Wait: g.counter.Wait(g.address, LoginLimitPerIP)}
	}
	return err
}

// busy answers a guarded check that found no hash slot in time: as a
// refusal, uncounted (the server was busy, nobody failed).
func (g *signInGuard) busy() error {
	return &ThrottledError{Wait: HashRetryAfter}
}

// succeeded forgets the account's failures after a right credential.
func (g *signInGuard) succeeded(ctx context.Context) error {
	return g.counter.Forget(ctx, g.account)
}

// hashWait is how long the check's password hash may wait for a slot:
// from a guarded address, short enough that the check ends well within
// the guarded answer time.
func (g *signInGuard) hashWait(c *Core) time.Duration {
	if g.guarded {
		return min(c.hashWait, c.guardedAnswerTime/2)
	}
	return c.hashWait
}

// holdRefusal delays a refusal from a guarded address until
// the guarded answer time after the attempt began (or the client leaves).
func (c *Core) holdRefusal(ctx context.Context, g *signInGuard) {
	if g == nil || !g.guarded {
		return
	}
	t := time.NewTimer(time.Until(g.began.Add(c.guardedAnswerTime)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// totpThrottleKey is the throttle key of a user's second-factor failures:
// its own, so that a right password (which clears the password count)
// does not clear it.
func totpThrottleKey(realm *store.Realm, userID string) string {
	return "realm:" + realm.ID + ":totp:" + userID
}
