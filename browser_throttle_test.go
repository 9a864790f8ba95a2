package main

// Browser tests of what repeated wrong passwords on the login page lead
// to: the server's flood guard, answered with 429 and a message, and the
// realm's brute-force lockout of the user.

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// browserEvent is a login event as the admin API lists it.
type browserEvent struct {
	Type    string            `json:"type"`
	UserID  string            `json:"userId"`
	Error   string            `json:"error"`
	Details map[string]string `json:"details"`
}

// TestBrowserLoginThrottled: five wrong passwords for one account are
// each refused as such; the sixth attempt is held off with 429, a
// Retry-After and a message saying why, and so is the right password
// until the window passes.
func TestBrowserLoginThrottled(t *testing.T) {
	e := newBrowserEnv(t)
	e.realm("acme", map[string]any{"displayName": "Acme", "eventsEnabled": true})
	e.user("acme", map[string]any{"username": "alice", "email": "alice@example.test", "emailVerified": true,
		"password": browserPassword})
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-t", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	for i := 1; i <= 5; i++ {
		if status := b.signIn("", "alice", "wrong password "+strconv.Itoa(i)); status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: status %d, want 401", i, status)
		}
		b.mustShow("Invalid username or password.")
	}
	b.fill("Username or email", "alice")
	b.fill("Password", "wrong password 6")
	resp := b.clickResponse("login-throttled", "Sign in")
	if resp.Status != http.StatusTooManyRequests {
		t.Fatalf("sixth wrong password: status %d, want 429", resp.Status)
	}
	if ra, _ := resp.Headers["Retry-After"].(string); ra == "" {
		t.Errorf("429 without Retry-After; headers %v", resp.Headers)
	}
	const message = "Too many failed sign-ins. Try again later."
	if alerts := b.alerts(); !slices.Contains(alerts, message) {
		t.Errorf("alerts %q, want %q", alerts, message)
	}
	if h := b.heading(); h != "Sign in" || b.value("Username or email") != "alice" {
		t.Errorf("throttled: heading %q, username %q; want the login page with the username kept", h, b.value("Username or email"))
	}
	// The right password is held off too.
	if status := b.signIn("", "alice", browserPassword); status != http.StatusTooManyRequests {
		t.Fatalf("right password while throttled: status %d, want 429", status)
	}

	// Stored: each attempt's LOGIN_ERROR, the throttled ones told apart.
	// (The event that records the start of a brute-force lockout is no
	// attempt of its own.)
	var events []browserEvent
	e.admin(http.MethodGet, "/admin/realms/acme/events?type=LOGIN_ERROR", nil, http.StatusOK, &events)
	var reasons []string
	for _, ev := range events {
		if ev.Details["lockout"] == "" {
			reasons = append(reasons, ev.Error)
		}
	}
	slices.Sort(reasons)
	want := []string{"invalid_user_credentials", "invalid_user_credentials", "invalid_user_credentials",
		"invalid_user_credentials", "invalid_user_credentials", "user_temporarily_disabled", "user_temporarily_disabled"}
	if !slices.Equal(reasons, want) {
		t.Errorf("LOGIN_ERROR reasons %q, want %q", reasons, want)
	}
	var logins []browserEvent
	e.admin(http.MethodGet, "/admin/realms/acme/events?type=LOGIN", nil, http.StatusOK, &logins)
	if len(logins) != 0 {
		t.Errorf("LOGIN events %+v while throttled", logins)
	}
}

// TestBrowserLoginLockout: the realm's brute-force protection counts the
// login page's wrong passwords: after maxLoginFailures of them the user
// is locked out, listed as such, and even the right password is refused
// as a wrong one.
func TestBrowserLoginLockout(t *testing.T) {
	e := newBrowserEnv(t)
	e.realm("acme", map[string]any{"displayName": "Acme", "maxLoginFailures": 3})
	aliceID := e.user("acme", map[string]any{"username": "alice", "email": "alice@example.test", "emailVerified": true,
		"password": browserPassword})
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-l", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	for i := 1; i <= 3; i++ {
		if status := b.signIn("", "alice", "wrong password "+strconv.Itoa(i)); status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: status %d, want 401", i, status)
		}
	}
	var locked []struct {
		UserID      string `json:"userId"`
		NumFailures int    `json:"numFailures"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme/brute-force/locked-users", nil, http.StatusOK, &locked)
	if len(locked) != 1 || locked[0].UserID != aliceID {
		t.Fatalf("locked users %+v, want alice after 3 wrong passwords on the login page", locked)
	}
	if status := b.signIn("", "alice", browserPassword); status != http.StatusUnauthorized {
		t.Fatalf("right password while locked out: status %d at %s, want 401", status, b.location())
	}
	if !strings.Contains(b.text(), "Invalid username or password.") {
		t.Errorf("a locked user is not answered as a wrong password")
	}
}
