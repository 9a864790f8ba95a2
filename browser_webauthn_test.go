package main

// Browser tests of WebAuthn: Chromium's virtual authenticator (the DevTools
// WebAuthn domain) stands in for a passkey-capable device, and the pages'
// own script (assets/static/webauthn.js) runs the ceremonies. WebAuthn
// needs a domain, so the server runs with base URL http://localhost:PORT.

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// newLocalhostBrowserEnv is newBrowserEnv with the base URL on localhost
// rather than 127.0.0.1 (the server still listens on loopback).
func newLocalhostBrowserEnv(t *testing.T) *browserEnv {
	t.Helper()
	chromium, axe := browserNeeds(t)
	db := filepath.Join(t.TempDir(), "idenplane.db")
	stdout := newCLILog()
	var srv *cliServer
	for attempt := 1; ; attempt++ {
		addr := cliFreeAddr(t)
		_, port, _ := strings.Cut(addr, ":")
		srv = &cliServer{t: t, db: db, base: "http://localhost:" + port, stdout: stdout, stderr: newCLILog(),
			done: make(chan struct{})}
		srv.cmd = exec.Command(cliBinary, "serve", "--addr", addr, "--base-url", srv.base, "--db", db)
		srv.cmd.Dir = filepath.Dir(db)
		srv.cmd.Env = cliEnv("IDENPLANE_ADMIN_API_KEY=" + cliAPIKey)
		srv.cmd.Stdout, srv.cmd.Stderr = srv.stdout, srv.stderr
		srv.cmd.WaitDelay = 10 * time.Second
		if err := srv.cmd.Start(); err != nil {
			t.Fatalf("start server: %v", err)
		}
		s := srv
		go func() {
			_ = s.cmd.Wait()
			close(s.done)
		}()
		t.Cleanup(func() {
			if !s.exited() {
				_ = s.cmd.Process.Kill()
				<-s.done
			}
			if t.Failed() {
				t.Logf("server %s stderr:\n%s", s.base, s.stderr)
			}
		})
		err := srv.waitReady()
		if err == nil {
			break
		}
		if attempt >= 3 || !strings.Contains(srv.stderr.String(), "address already in use") {
			t.Fatalf("server did not become ready: %v\nstderr:\n%s", err, srv.stderr)
		}
	}
	srv.must(http.MethodGet, "/health/ready", "", nil, http.StatusOK)
	return &browserEnv{t: t, srv: srv, chromium: chromium, axe: string(axe)}
}

// passkeyDevice gives the tab a virtual platform authenticator that keeps
// passkeys (resident keys) and verifies its user, as a phone or laptop
// with a fingerprint reader does.
func (b *browserTab) passkeyDevice() {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		b.t.Fatalf("WebAuthn.enable: %v", err)
	}
	_, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2,
			Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		b.t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
}

// signOut ends the browser's SSO session through the logout page.
func (b *browserTab) signOut(realm string) {
	b.t.Helper()
	b.open("", b.e.issuer(realm)+"/protocol/openid-connect/logout")
	b.click("", "Sign out")
	if h := b.heading(); h != "You are signed out" {
		b.t.Fatalf("after signing out: heading %q at %s", h, b.location())
	}
}

// TestBrowserPasskey: a user adds a passkey on the account page, signs out,
// and signs in with the passkey alone, back at the application with an ID
// token; then signs in with the password, and the passkey is the second
// factor.
func TestBrowserPasskey(t *testing.T) {
	e := newLocalhostBrowserEnv(t)
	aliceID := browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	b := e.browser()
	b.passkeyDevice()

	// Signed in to the account, alice adds a passkey.
	b.open("", e.issuer("acme")+"/account/")
	b.fill("Username or email", "alice")
	b.fill("Password", browserPassword)
	b.click("", "Sign in")
	if h := b.heading(); h != "Your account" {
		t.Fatalf("after signing in: heading %q at %s, want the account page", h, b.location())
	}
	b.click("webauthn-account", "Passkeys and security keys")
	b.mustShow("You have no passkeys or security keys yet.")
	b.fill("Name of the key", "Laptop")
	b.click("webauthn-added", "Register security key")
	b.mustShow("The key was added.", "Laptop")
	var status struct {
		Factors  []string `json:"factors"`
		WebAuthn []struct {
			Name string `json:"name"`
		} `json:"webauthn"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+aliceID+"/mfa/status", nil, http.StatusOK, &status)
	if !slices.Contains(status.Factors, "webauthn") || len(status.WebAuthn) != 1 || status.WebAuthn[0].Name != "Laptop" {
		t.Fatalf("MFA status %+v, want the passkey Laptop", status)
	}
	b.signOut("acme")

	// Passkey first: no username, no password.
	verifier := oauth2.GenerateVerifier()
	b.open("webauthn-login", rp.config.AuthCodeURL("state-p", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-p")))
	if h := b.heading(); h != "Sign in" {
		t.Fatalf("heading %q at %s, want the login page", h, b.location())
	}
	b.click("", "Sign in with a passkey")
	back := cb.wait()
	if back.Get("state") != "state-p" || back.Get("code") == "" {
		t.Fatalf("redirect back %v, want a code", back)
	}
	tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-p")
	if idt.Subject != aliceID {
		t.Fatalf("ID token subject %s, want alice %s", idt.Subject, aliceID)
	}
	if amr := claimStrings(claims["amr"]); !slices.Equal(amr, []string{"hwk", "mfa"}) {
		t.Fatalf("amr %v, want hwk and mfa: a device-bound key that verified its user", claims["amr"])
	}
	b.signOut("acme")

	// The password now asks for the passkey as the second factor.
	verifier = oauth2.GenerateVerifier()
	b.open("", rp.config.AuthCodeURL("state-2", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-2")))
	b.fill("Username or email", "alice")
	b.fill("Password", browserPassword)
	b.click("webauthn-step", "Sign in")
	if h := b.heading(); h != "Use your security key" {
		t.Fatalf("after the password: heading %q at %s, want the security key's step", h, b.location())
	}
	b.click("", "Use security key")
	back = cb.wait()
	tok, err = rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	_, claims = rp.verify(tok, "nonce-2")
	if amr := claimStrings(claims["amr"]); !slices.Equal(amr, []string{"pwd", "hwk"}) {
		t.Fatalf("amr %v, want pwd and hwk", claims["amr"])
	}
}

func claimStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}
