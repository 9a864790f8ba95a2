package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"
	"github.com/idenplane/idenplane/app/account"
)

// Registering or removing a second factor needs an authentication at most
// five minutes old: an older token is refused with
// reauthentication_required, an older browser sign-in is sent to sign in
// again (prompt=login) and back.

func mustReauthRequired(t *testing.T, what string, r *testResponse) {
	t.Helper()
	mustError(t, r, http.StatusUnauthorized, "reauthentication_required", "")
	if !strings.Contains(r.object(t)["error_description"].(string), "prompt=login") {
		t.Fatalf("%s: description %q does not say how to sign in again", what, r.Body)
	}
	if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_user_authentication"`) {
		t.Fatalf("%s: WWW-Authenticate %q", what, h)
	}
}

func TestReauthBearer(t *testing.T) {
	e := newWebAuthnEnv(t, map[string]any{"accessTokenLifespan": 3600})
	old := e.token("alice", codeflowPassword).AccessToken

	// Five minutes on, the token still serves, except for the factors.
	e.clock.advance(5*time.Minute + time.Second)
	mustStatus(t, e.api(http.MethodGet, "/webauthn/credentials", old, nil), http.StatusOK)
	bearer := "Authorization: Bearer " + old
	mustReauthRequired(t, "TOTP setup", e.api(http.MethodGet, "/totp-setup", old, nil))
	mustReauthRequired(t, "TOTP confirm", e.api(http.MethodPost, "/totp-setup", old, map[string]any{"code": "123456"}))
	mustReauthRequired(t, "WebAuthn options", e.request(http.MethodPost, webauthnPath("register/options"), nil, bearer))
	mustReauthRequired(t, "WebAuthn verify", e.request(http.MethodPost, webauthnPath("register/verify"),
		map[string]any{"ceremonyId": "x", "credential": map[string]any{}}, bearer))

	// Signed in again: the new token may.
	fresh := e.token("alice", codeflowPassword).AccessToken
	mustStatus(t, e.api(http.MethodGet, "/totp-setup", fresh, nil), http.StatusOK)
	cred := e.registerKey(fresh, newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{}), "key")
	mustReauthRequired(t, "WebAuthn delete", e.api(http.MethodDelete, "/webauthn/credentials/"+cred["id"].(string), old, nil))
	mustStatus(t, e.api(http.MethodDelete, "/webauthn/credentials/"+cred["id"].(string), fresh, nil), http.StatusNoContent)
}

func TestReauthPages(t *testing.T) {
	e := newWebAuthnEnv(t)
	b := e.browser()
	e.signIn(b)
	keys := e.url + "/realms/acme/account/webauthn/credentials"
	mustPage(t, b.get(keys), http.StatusOK, `data-webauthn="register"`)
	mustPage(t, b.get(e.url+"/realms/acme/account/totp-setup"), http.StatusOK, `name="code"`)

	e.clock.advance(5*time.Minute + time.Second)
	// The keys' page offers to sign in again instead of the registration.
	p := b.get(keys)
	mustPage(t, p, http.StatusOK, enMsg("account.webauthn.reauth"), `href="`+keys+`/add"`)
	if strings.Contains(string(p.body), `data-webauthn="register"`) {
		t.Fatal("registration form on a page signed in more than five minutes ago")
	}
	// The TOTP setup sends the browser to sign in again, and back.
	p = b.get(e.url + "/realms/acme/account/totp-setup")
	if p.status != http.StatusFound {
		t.Fatalf("old sign-in at the TOTP setup: status %d, want 302 to sign in again; body %s", p.status, p.body)
	}
	if to := p.location(t); to.Path != "/realms/acme/protocol/openid-connect/auth" || to.Query().Get("prompt") != "login" ||
		to.Query().Get("client_id") != account.ConsoleClientID {
		t.Fatalf("sent to %s, want the account console's sign-in with prompt=login", to)
	}
	login := b.follow(e.url, p.location(t).String())
	mustPage(t, login, http.StatusOK, `name="password"`) // asked again, though signed in
	back := b.submit(login, map[string]string{"username": "alice", "password": codeflowPassword})
	if back.status != http.StatusSeeOther {
		t.Fatalf("login: status %d; body %s", back.status, back.body)
	}
	landed := b.get(back.location(t).String())
	mustRedirectTo(t, landed, http.StatusSeeOther, "/realms/acme/account/totp-setup")
	mustPage(t, b.get(e.url+"/realms/acme/account/totp-setup"), http.StatusOK, `name="code"`)
	mustPage(t, b.get(keys), http.StatusOK, `data-webauthn="register"`)

	// So does the keys' page's link.
	e.clock.advance(5*time.Minute + time.Second)
	p = b.get(keys + "/add")
	if p.status != http.StatusFound || p.location(t).Query().Get("prompt") != "login" {
		t.Fatalf("old sign-in at the add link: status %d Location %q", p.status, p.header.Get("Location"))
	}
}
