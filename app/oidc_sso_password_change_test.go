package app

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// An administrator who requires a new password gets it at the user's next
// sign-in, even one an SSO session would otherwise have answered silently.
func TestSSOSessionYieldsToRequiredPasswordChange(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("web", nil)
	cfg := e.oauth2Config("web", "", "openid")
	authURL := func(opts ...oauth2.AuthCodeOption) string {
		return cfg.AuthCodeURL("st", append(opts, oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))...)
	}
	b := e.browser()
	if back := e.signIn(b, authURL(), "alice"); back.Get("code") == "" {
		t.Fatalf("first sign-in: %v", back)
	}
	// The SSO session answers the next request without a form.
	if back := e.redirectedBack(b.follow(e.url, authURL())); back.Get("code") == "" {
		t.Fatalf("SSO sign-in: %v", back)
	}

	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID,
		map[string]any{"requirePasswordReset": true}), http.StatusOK)

	// prompt=none cannot ask for the new password.
	if back := e.redirectedBack(b.follow(e.url, authURL(oauth2.SetAuthURLParam("prompt", "none")))); back.Get("error") != "login_required" {
		t.Fatalf("prompt=none: %v, want login_required", back)
	}
	// Otherwise the login page, whose password leads to the change.
	p := b.follow(e.url, authURL())
	if p.status != http.StatusOK || !strings.Contains(p.url.Path, "/login") {
		t.Fatalf("status %d at %s, want the login page", p.status, p.url)
	}
	p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location(t).Path, "/change-password") {
		t.Fatalf("after the password: status %d Location %q, want the change-password page", p.status, p.header.Get("Location"))
	}
}
