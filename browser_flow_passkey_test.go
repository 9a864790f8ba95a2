package main

// Browser tests of the sign-in through an authentication flow with
// passkeys: Chromium's virtual authenticator (browser_webauthn_test.go)
// answers the ceremonies the flow's pages bring, through the pages' own
// script.

import (
	"net/http"
	"slices"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserFlowStep is a step of a flow as a test binds it, with what the
// person does on its page. A test's flow is a list of them: a step added
// to the sign-in (the realm's terms) is one more entry.
type browserFlowStep struct {
	def  map[string]any
	pass func(b *browserTab)
}

var (
	browserUsernameStep = browserFlowStep{def: map[string]any{"kind": "username", "requirement": "required"},
		pass: func(b *browserTab) {
			b.t.Helper()
			if h := b.heading(); h != "Sign in" {
				b.t.Fatalf("heading %q at %s, want the username step", h, b.location())
			}
			b.fill("Username or email", "alice")
			b.click("", "Sign in")
		}}
	browserPasskeyStep = browserFlowStep{def: map[string]any{"kind": "passkey", "requirement": "required"},
		pass: func(b *browserTab) {
			b.t.Helper()
			b.mustShow("Sign in with a passkey")
			b.click("", "Sign in with a passkey")
		}}
	browserTermsStep = browserFlowStep{def: map[string]any{"kind": "terms", "requirement": "required"},
		pass: func(b *browserTab) {
			b.t.Helper()
			b.mustShow("Terms and conditions", browserTermsText)
			b.click("", "Accept")
		}}
)

// browserTermsText is acme's terms, which its terms steps show.
const browserTermsText = "Be excellent to each other."

// browserBindFlow makes a browser flow of acme with steps and binds client
// web to it, in place of the flow it followed.
func browserBindFlow(e *browserEnv, alias string, steps ...browserFlowStep) {
	e.t.Helper()
	defs := make([]map[string]any, len(steps))
	for i, s := range steps {
		defs[i] = s.def
	}
	var flow struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": alias, "usage": "browser", "steps": defs},
		http.StatusCreated, &flow)
	e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+flow.ID+"/assign-client/web", map[string]any{"usage": "browser"},
		http.StatusNoContent, nil)
}

// browserFlowID is the ID of acme's flow of alias.
func browserFlowID(e *browserEnv, alias string) string {
	e.t.Helper()
	var flows []struct {
		ID    string `json:"id"`
		Alias string `json:"alias"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme/auth-flows", nil, http.StatusOK, &flows)
	for _, f := range flows {
		if f.Alias == alias {
			return f.ID
		}
	}
	e.t.Fatalf("no flow %s in %v", alias, flows)
	return ""
}

// browserFlowSignIn signs in to rp through the steps of the flow bound to
// it, and answers the ID token's claims.
func browserFlowSignIn(e *browserEnv, b *browserTab, rp *browserRP, cb *browserCallback, steps ...browserFlowStep) map[string]any {
	e.t.Helper()
	verifier := oauth2.GenerateVerifier()
	b.open("", rp.config.AuthCodeURL("state-f", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-f")))
	for _, s := range steps {
		s.pass(b)
	}
	back := cb.wait()
	if back.Get("state") != "state-f" || back.Get("code") == "" {
		e.t.Fatalf("redirect back %v, want a code", back)
	}
	tok, err := rp.config.Exchange(e.t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	_, claims := rp.verify(tok, "nonce-f")
	return claims
}

// TestFlowChromiumUsernamePasskey: alice adds a passkey on the account
// page; then the client, bound to a flow of a username, a passkey and the
// realm's terms, gets her signed in by the username, the passkey's
// assertion and her accepting the terms, its ID token saying a
// device-bound key that verified its user; bound to a flow of a passkey
// alone, by the passkey without a username; and bound to the first flow
// again, without the terms she accepted.
func TestFlowChromiumUsernamePasskey(t *testing.T) {
	e := newLocalhostBrowserEnv(t)
	aliceID := browserAcme(e)
	cb := newBrowserCallback(t)
	rp := e.relyingParty("acme", "web", browserCodeClient(e, cb, nil), cb.url, "openid")

	b := e.browser()
	b.passkeyDevice()
	b.open("", e.issuer("acme")+"/account/")
	b.fill("Username or email", "alice")
	b.fill("Password", browserPassword)
	b.click("", "Sign in")
	b.open("", e.issuer("acme")+"/account/webauthn/credentials")
	b.fill("Name of the key", "Laptop")
	b.click("", "Register security key")
	b.mustShow("The key was added.", "Laptop")
	b.signOut("acme")
	e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"termsText": browserTermsText, "termsVersion": "2026-11"},
		http.StatusOK, nil)

	for _, flow := range []struct {
		alias string
		bind  bool
		steps []browserFlowStep // as the person meets them
	}{
		{"username-passkey-terms", true, []browserFlowStep{browserUsernameStep, browserPasskeyStep, browserTermsStep}},
		{"passkey", true, []browserFlowStep{browserPasskeyStep}},
		{"username-passkey-terms-again", false, []browserFlowStep{browserUsernameStep, browserPasskeyStep}},
	} {
		if flow.bind {
			browserBindFlow(e, flow.alias, flow.steps...)
		} else {
			e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+browserFlowID(e, "username-passkey-terms")+"/assign-client/web",
				map[string]any{"usage": "browser"}, http.StatusNoContent, nil)
		}
		claims := browserFlowSignIn(e, b, rp, cb, flow.steps...)
		if claims["sub"] != aliceID {
			t.Fatalf("%s: signed in as %v, want alice %s", flow.alias, claims["sub"], aliceID)
		}
		if amr := claimStrings(claims["amr"]); !slices.Equal(amr, []string{"hwk", "mfa"}) {
			t.Fatalf("%s: amr %v, want hwk and mfa: a device-bound passkey that verified its user", flow.alias, claims["amr"])
		}
		b.signOut("acme")
	}
}
