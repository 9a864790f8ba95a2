package app

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// newGuardEnv is a bruteEnv whose guarded refusals are answered at once.
func newGuardEnv(t *testing.T) *bruteEnv {
	t.Helper()
	e := newBruteEnv(t, nil)
	fastGuardedAnswers(t, e.app)
	return e
}

// grantFrom is grant with extra headers (an X-Forwarded-For).
func (e *bruteEnv) grantFrom(username, password string, headers ...string) (int, map[string]any) {
	e.t.Helper()
	return e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}},
		append([]string{codeflowBasic("cli", e.secret)}, headers...)...)
}

// guessNames fails n password grants with invented usernames.
func (e *bruteEnv) guessNames(n int, headers ...string) {
	e.t.Helper()
	for i := range n {
		if status, body := e.grantFrom(fmt.Sprintf("nobody%d", i), "a guess", headers...); status != http.StatusBadRequest {
			e.t.Fatalf("guess %d: %d %v, want 400", i, status, body)
		}
	}
}

// mustHoldOff checks the flood guard's answer to the password grant.
func (e *bruteEnv) mustHoldOff(what, username, password string, headers ...string) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}}.Encode(),
		append([]string{"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", e.secret)}, headers...)...)
	want := map[string]any{"error": "invalid_grant", "error_description": "too many failed sign-ins; try again later"}
	if got := r.object(e.t); r.Status != http.StatusTooManyRequests || !reflect.DeepEqual(got, want) {
		e.t.Fatalf("%s: %d %v, want 429 %v", what, r.Status, got, want)
	}
	if wait, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || wait < 1 {
		e.t.Fatalf("%s: Retry-After %q", what, r.Header.Get("Retry-After"))
	}
}

// Twenty invented usernames from one address hold up the guesser, not a
// real user's right password from that address; a wrong password there
// reads as an unknown name; the per-account protections hold.
func TestPasswordGrantGuardedAddress(t *testing.T) {
	e := newGuardEnv(t)
	e.guessNames(identity.LoginLimitPerIP)

	e.mustHoldOff("another invented name", "nobody-else", "a guess")
	e.mustHoldOff("a real user's wrong password", "bob", "wrong password")
	e.mustSignIn("a real user's right password", "alice")

	// The realm's lockout still counts and holds: bob's third wrong
	// password locks him out, and then his right one is refused too.
	e.mustHoldOff("bob's second wrong password", "bob", "wrong password")
	e.mustHoldOff("bob's third wrong password", "bob", "wrong password")
	if f := e.failures(mustUserID(t, e, "bob")); f.LockedUntil == 0 {
		t.Fatalf("bob not locked out after three wrong passwords: %+v", f)
	}
	e.mustHoldOff("a locked user's right password", "bob", codeflowPassword)
	e.mustSignIn("another user, again", "alice")

	// The guesser is held off for the window; once it has passed, its
	// guesses are answered as anyone's again.
	e.clock.advance(10 * time.Minute)
	e.mustHoldOff("a guess ten minutes on", "nobody-later", "a guess")
	e.clock.advance(6 * time.Minute)
	if status, body := e.grantFrom("nobody-later", "a guess"); status != http.StatusBadRequest {
		t.Fatalf("a guess once the window has passed: %d %v, want 400", status, body)
	}
}

func mustUserID(t *testing.T, e *bruteEnv, username string) string {
	t.Helper()
	u, err := e.store.GetUserByUsername(t.Context(), e.realmID, username)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// Password spraying, one password across many real accounts, is held to
// twenty failures per address as before: past them every attempt from
// the address waits, even a right password. Behind a trusted proxy that
// address is the sprayer's alone, however it writes X-Forwarded-For.
func TestPasswordGrantSprayingHeldOff(t *testing.T) {
	e := newGuardEnv(t)
	for i := range identity.LoginLimitPerIP {
		e.createUser("acme", map[string]any{"username": fmt.Sprintf("user%02d", i), "password": codeflowPassword})
	}
	spray := func(password string, headers ...string) {
		t.Helper()
		for i := range identity.LoginLimitPerIP {
			if status, body := e.grantFrom(fmt.Sprintf("user%02d", i), password, headers...); status != http.StatusBadRequest {
				t.Fatalf("spraying user%02d: %d %v, want 400", i, status, body)
			}
		}
	}

	t.Run("one address", func(t *testing.T) {
		spray("Spring2026!")
		e.mustHoldOff("the next sprayed account", "alice", "Spring2026!")
		e.mustHoldOff("a right password from the sprayer's address", "alice", codeflowPassword)
		e.mustHoldOff("an invented name", "nobody", "a guess")
	})

	e.clock.advance(16 * time.Minute)
	e.mustSignIn("once the window has passed", "alice")
	e.app.cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")} // the test requests' peer
	const sprayer, other = "X-Forwarded-For: 203.0.113.66", "X-Forwarded-For: 203.0.113.7"

	t.Run("behind a trusted proxy", func(t *testing.T) {
		spray("Summer2026!", sprayer)
		e.mustHoldOff("the sprayer's right password", "alice", codeflowPassword, sprayer)
		// What the proxy forwards for a sprayer that writes a header of
		// its own: its address is still the rightmost.
		e.mustHoldOff("the sprayer, spoofing", "alice", codeflowPassword, "X-Forwarded-For: 203.0.113.99, 203.0.113.66")
		if status, body := e.grantFrom("alice", codeflowPassword, other); status != http.StatusOK {
			t.Fatalf("another client behind the proxy: %d %v", status, body)
		}
	})

	t.Run("behind an untrusted proxy", func(t *testing.T) {
		e.app.cfg.TrustedProxies = nil
		spray("Autumn2026!", sprayer)
		e.mustHoldOff("everyone shares the proxy's address", "alice", codeflowPassword, other)
	})
}

// On the device page, the same.
func TestDevicePageGuardedAddress(t *testing.T) {
	e := deviceEnv(t)
	fastGuardedAnswers(t, e.app)
	for i := range identity.LoginLimitPerIP {
		p, _ := e.deviceApprove(map[string]string{"username": fmt.Sprintf("nobody%d", i)})
		mustDeviceRefused(t, p, http.StatusBadRequest, enMsg(deviceMsgBadLogin))
	}
	p, _ := e.deviceApprove(map[string]string{"username": "nobody-else"})
	mustDeviceRefused(t, p, http.StatusTooManyRequests, enMsg(deviceMsgThrottled))
	p, _ = e.deviceApprove(map[string]string{"password": "wrong password!"})
	mustDeviceRefused(t, p, http.StatusTooManyRequests, enMsg(deviceMsgThrottled))
	p, userCode := e.deviceApprove(nil)
	mustPage(t, p, http.StatusOK, enMsg("device.approved.title"))
	if s := e.deviceStatus(userCode); s != store.DeviceApproved {
		t.Fatalf("device %s", s)
	}
}

// A guarded address's invented names cost no password hash: with every
// hash slot taken they are still answered as before, and a real user's
// check that finds no slot is answered the same way, not with a 503 that
// would tell the two apart.
func TestGuardedAddressHashesNoInventedName(t *testing.T) {
	e := newGuardEnv(t)
	e.guessNames(identity.LoginLimitPerIP)
	slots := busyHashSlots(t, e.app, 2)
	for range cap(slots) {
		slots <- struct{}{}
	}
	e.mustHoldOff("an invented name, every slot taken", "nobody-else", "a guess")
	e.mustHoldOff("a real user, every slot taken", "alice", codeflowPassword)
	for range cap(slots) {
		<-slots
	}
	e.mustSignIn("a real user, slots free", "alice")
}
