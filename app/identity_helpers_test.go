package app

import (
	"context"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
)

// retuneIdentity rebuilds a's identity core (and the relying parties
// that keep its books) as New does, with tune's
// changes to what it works with: a test's shorter answer times, longer
// hash waits, hash slots of its own. A throttle tune sets replaces the
// app's sign-in throttle too. Call it before the test's requests: the
// admin login's throttle is read back from the store afresh.
func retuneIdentity(t testing.TB, a *App, tune func(*identity.Deps)) {
	t.Helper()
	adminThrottle, err := identity.NewStoredThrottle(context.Background(), a.store, a.now)
	if err != nil {
		t.Fatal(err)
	}
	d := a.identityDeps(adminThrottle)
	tune(&d)
	a.loginThrottle = d.Throttle
	a.id = identity.New(d)
	a.webauthn = webauthnrp.New(webauthnrp.Deps{Store: a.store, Core: a.id, BaseURL: a.cfg.BaseURL, Now: a.now, Log: a.log})
	// The routes hold the account module: it takes the new core in place.
	*a.account = *account.New(accountDeps(a))
}

// fastGuardedAnswers answers refusals from a guarded address at once, or
// nearly: the tests need not wait the second a real one waits.
func fastGuardedAnswers(t testing.TB, a *App) {
	t.Helper()
	retuneIdentity(t, a, func(d *identity.Deps) { d.GuardedAnswerTime = 10 * time.Millisecond })
}

// noSignInThrottle turns the flood guard's count off: a zero window
// forgets every failure at once, so that what a test sees is the realm's
// lockout.
func noSignInThrottle(t testing.TB, a *App) {
	t.Helper()
	retuneIdentity(t, a, func(d *identity.Deps) { d.Throttle = identity.NewThrottle(a.now, 0) })
}

// busyHashSlots gives a's core n hash slots of the test's, and a hash wait
// of a millisecond: the test fills the slots to make every hash wait in
// vain.
func busyHashSlots(t testing.TB, a *App, n int) chan struct{} {
	t.Helper()
	slots := make(chan struct{}, n)
	retuneIdentity(t, a, func(d *identity.Deps) { d.HashSlots, d.HashWait = slots, time.Millisecond })
	return slots
}
