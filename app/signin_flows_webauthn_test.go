package app

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/descope/virtualwebauthn"
)

var (
	flowTestUsername    = map[string]any{"kind": "username", "requirement": "required"}
	flowTestPasskey     = map[string]any{"kind": "passkey", "requirement": "required"}
	flowTestSecurityKey = map[string]any{"kind": "webauthn", "requirement": "required"}
)

// flowTestKeyPage reads a flow's passkey or security key page: its form,
// and the options of the ceremony the page brings (data-public-key),
// which the page's script answers.
func flowTestKeyPage(t *testing.T, p *codeflowPage) (*codeflowForm, []byte) {
	t.Helper()
	f := webauthnForm(t, p, "authenticate")
	m := regexp.MustCompile(`data-public-key="([^"]*)"`).FindSubmatch(p.body)
	if m == nil || f.fields.Get("ceremonyId") == "" || f.fields.Get("csrf") == "" {
		t.Fatalf("a key's page without its ceremony: status %d body %s", p.status, p.body)
	}
	return f, []byte(html.UnescapeString(string(m[1])))
}

// flowTestAssert posts the key page p's form with k's answer to its
// ceremony.
func (e *accountEnv) flowTestAssert(b *codeflowBrowser, p *codeflowPage, k *webauthnKey) *codeflowPage {
	e.t.Helper()
	f, opts := flowTestKeyPage(e.t, p)
	return webauthnSubmit(b, p, f, f.fields.Get("ceremonyId"), e.assertWith(k, opts, ""), nil)
}

// A flow of a username then a passkey: the username names the user, whose
// keys the passkey page asks for; a request that is no assertion, or
// answers a used ceremony, gets the page again, never a 500; the key
// signs in with the AMR of a passkey.
func TestFlowUsernamePasskey(t *testing.T) {
	e := newWebAuthnEnv(t)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "Laptop")
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "username-then-passkey", flowTestUsername, flowTestPasskey)

	b := e.browser()
	page := e.flowTestStart(b, cfg.AuthCodeURL("s"))
	if f := page.form(t); !f.fields.Has("username") || f.fields.Has("password") {
		t.Fatalf("the username step's form %v, want a username and no password", f.fields)
	}
	mustPage(t, b.submit(page, map[string]string{"username": " "}), http.StatusBadRequest, "Enter your username or email.")
	keyPage := e.flowTestNext(b, b.submit(page, map[string]string{"username": "alice"}))
	f, opts := flowTestKeyPage(t, keyPage)
	if !strings.Contains(string(opts), `"allowCredentials":[{`) || !strings.Contains(string(opts), `"userVerification":"required"`) {
		t.Fatalf("a named user's passkey options %s, want the user's keys and user verification", opts)
	}

	// Not an assertion: the page again, with a new ceremony.
	bad := webauthnSubmit(b, keyPage, f, f.fields.Get("ceremonyId"), []byte("{not json"), nil)
	mustPage(t, bad, http.StatusBadRequest, "The security key or passkey was not accepted.")
	again, _ := flowTestKeyPage(t, bad)
	if again.fields.Get("ceremonyId") == f.fields.Get("ceremonyId") {
		t.Fatal("the page came back with the used ceremony")
	}
	// The ceremony the bad request used is gone.
	mustPage(t, webauthnSubmit(b, keyPage, f, f.fields.Get("ceremonyId"), e.assertWith(key, opts, ""), nil),
		http.StatusBadRequest, "That took too long or was already used.")
	if errs := e.codeflowEnv.loginEvents("LOGIN_ERROR"); len(errs) != 1 || errs[0].Details["reason"] != "webauthn_invalid_response" ||
		errs[0].ClientID != "web" {
		t.Fatalf("LOGIN_ERROR events %+v, want one of the request that was no assertion", errs)
	}

	claims := e.totpExchange(cfg, e.redirectedBack(e.flowTestAssert(b, bad, key)))
	if claims["sub"] != e.aliceID {
		t.Fatalf("signed in as %v, want alice", claims["sub"])
	}
	totpMustAMR(t, claims, "hwk", "mfa")
}

// The username step never tells a login that names nobody who may sign
// in from a user's: each moves on to the passkey page; there, a key of
// anyone but the user named is refused.
func TestFlowUsernameRevealsNothing(t *testing.T) {
	e := newWebAuthnEnv(t)
	aliceKey := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, aliceKey, "Laptop")
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	e.createUser("acme", map[string]any{"username": "carol", "enabled": false})
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "username-then-passkey", flowTestUsername, flowTestPasskey)

	pages := map[string]*codeflowPage{}
	for _, login := range []string{"alice", "bob", "carol", "nobody"} {
		b := e.browser()
		p := b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": login})
		pages[login] = e.flowTestNext(b, p)
		flowTestKeyPage(t, pages[login])
		if login == "bob" {
			// Bob has no key: the page is a passkey sign-in's, as for
			// nobody, and alice's passkey is not bob's.
			refused := e.flowTestAssert(b, pages[login], aliceKey)
			mustPage(t, refused, http.StatusUnauthorized, "The security key or passkey was not accepted.")
			flowTestKeyPage(t, refused)
		}
	}
	if ev := hasEvent(e.loginEvents(e.aliceID), "LOGIN_ERROR"); ev == nil || ev.Details["reason"] != "webauthn_other_user" {
		t.Fatalf("LOGIN_ERROR %+v, want alice's key refused as another user's", ev)
	}
}

// A flow of a passkey alone: any passkey of the realm, which must verify
// its user; a synced one says swk.
func TestFlowPasskeyOnly(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	synced := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{BackupEligible: true, BackupState: true})
	noPIN := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(token, synced, "Phone")
	e.registerKey(token, noPIN, "Key")
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "passkeys", flowTestPasskey)

	b := e.browser()
	page := e.flowTestStart(b, cfg.AuthCodeURL("s"))
	mustPage(t, page, http.StatusOK, "Sign in with a passkey", `<script src="/assets/webauthn.`)
	if _, opts := flowTestKeyPage(t, page); strings.Contains(string(opts), `"allowCredentials":[{`) {
		t.Fatalf("a passkey sign-in's options %s name keys", opts)
	}
	refused := e.flowTestAssert(b, page, noPIN)
	mustPage(t, refused, http.StatusUnauthorized, "The security key or passkey was not accepted.")
	claims := e.totpExchange(cfg, e.redirectedBack(e.flowTestAssert(b, refused, synced)))
	totpMustAMR(t, claims, "swk", "mfa")
}

// A security key after the password is the second factor: its presence is
// enough, and another user's key is refused.
func TestFlowPasswordAndSecurityKey(t *testing.T) {
	e := newWebAuthnEnv(t)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "Key")
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	bobKey := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("bob", codeflowPassword).AccessToken, bobKey, "Bob's key")
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-key", flowTestPassword, flowTestSecurityKey)

	b := e.browser()
	p := b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword})
	keyPage := e.flowTestNext(b, p)
	mustPage(t, keyPage, http.StatusOK, "Use your security key")
	if _, opts := flowTestKeyPage(t, keyPage); !strings.Contains(string(opts), `"userVerification":"discouraged"`) {
		t.Fatalf("second-factor options %s", opts)
	}
	refused := e.flowTestAssert(b, keyPage, bobKey)
	mustPage(t, refused, http.StatusUnauthorized, "The security key or passkey was not accepted.")
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(e.flowTestAssert(b, refused, key))), "pwd", "hwk")

	// A user without a key cannot pass the step: a page says so.
	e.createUser("acme", map[string]any{"username": "carol", "password": codeflowPassword})
	b = e.browser()
	p = b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "carol", "password": codeflowPassword})
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "administrator") {
		t.Fatalf("a user without a key: status %d, want 403 and a page saying what to do", p.status)
	}
}

// The built-in browser flow asks after the password for the second factor
// the user set up, as the sign-in without a flow does: a user with a
// security key and no authenticator app gives the key; a user with none
// is signed in by the password.
func TestFlowBuiltInSecondFactor(t *testing.T) {
	e := newWebAuthnEnv(t)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "Key")
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	r := e.admin(http.MethodPost, "/admin/realms/acme/auth-flows/seed-defaults", nil)
	mustStatus(t, r, http.StatusOK)
	var seeded []struct{ ID, Alias string }
	r.decode(t, &seeded)
	var browserID string
	for _, f := range seeded {
		if f.Alias == "browser" {
			browserID = f.ID
		}
	}
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+browserID+"/assign-client/web", nil), http.StatusNoContent)

	b := e.browser()
	keyPage := e.flowTestNext(b, b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword}))
	mustPage(t, keyPage, http.StatusOK, "Use your security key")
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(e.flowTestAssert(b, keyPage, key))), "pwd", "hwk")

	b = e.browser()
	p := b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "bob", "password": codeflowPassword})
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(p)), "pwd")
}
