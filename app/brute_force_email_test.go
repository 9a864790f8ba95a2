package app

import (
	"errors"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// A sign-in by email address meets the lockout of the user the address
// belongs to, as the password check does: not of a user whose username
// happens to be that address.

func TestBruteForceEmailLoginPasswordGrant(t *testing.T) {
	e := newBruteEnv(t, nil)
	dora := e.createUser("acme", map[string]any{"username": "dora", "email": "dora@example.test", "password": codeflowPassword})
	// A username that is dora's address: the login names dora, not this one.
	other := e.createUser("acme", map[string]any{"username": "dora@example.test", "password": codeflowPassword})
	for range 3 {
		e.mustRefuse("wrong password by email", "dora@example.test", "wrong password")
	}
	if f := e.failures(dora["id"].(string)); f.Failures != 3 || f.LockedUntil == 0 {
		t.Fatalf("dora's record %+v, want 3 failures and a lockout", f)
	}
	if _, err := e.store.GetLoginFailure(t.Context(), e.realmID, other["id"].(string)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failures landed on the user named like the address: %v", err)
	}
	e.mustRefuse("right password by email, locked", "dora@example.test", codeflowPassword)
	e.mustRefuse("right password by username, locked", "dora", codeflowPassword)
}

func TestBruteForceEmailLoginPage(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.lockAfterThree()
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	for _, password := range []string{"wrong password", "wrong password", "wrong password", codeflowPassword} {
		page = b.submit(page, map[string]string{"username": "alice@example.test", "password": password})
		mustPage(t, page, http.StatusUnauthorized, "Invalid username or password.")
		if loginSSOCookie(page) != "" {
			t.Fatalf("signed in with %q", password)
		}
	}
	if n := e.aliceFailures(); n != 3 {
		t.Fatalf("%d failures on record, want 3", n)
	}
}
