package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserGitHub is a server shaped like GitHub's OAuth and API, on
// loopback: its authorization endpoint signs "octocat" in at once.
func browserGitHub(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {"gh-code"}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("code") != "gh-code" || r.FormValue("code_verifier") == "" {
			http.Error(w, `{"error":"bad_verification_code"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"gho_test","token_type":"bearer","scope":"read:user,user:email"}`))
	})
	answer := func(v any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer gho_test" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}
	}
	mux.HandleFunc("GET /api/user", answer(map[string]any{"id": 583231, "login": "octocat", "name": "Mona Octocat"}))
	mux.HandleFunc("GET /api/user/emails", answer([]map[string]any{{"email": "mona@example.test", "primary": true, "verified": true}}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestBrowserBrokerSignIn: in Chromium, the sign-in page's GitHub button
// leads through a GitHub-shaped provider on loopback (which the server may
// call because IDENPLANE_OUTBOUND_ALLOW says so) and back to the
// application with a code, for a user created at that first sign-in.
func TestBrowserBrokerSignIn(t *testing.T) {
	chromium, axe := browserNeeds(t)
	srv := cliStartServer(t, filepath.Join(t.TempDir(), "idenplane.db"), "IDENPLANE_ADMIN_API_KEY="+cliAPIKey,
		"IDENPLANE_OUTBOUND_ALLOW=127.0.0.0/8")
	srv.must(http.MethodGet, "/health/ready", "", nil, http.StatusOK)
	e := &browserEnv{t: t, srv: srv, chromium: chromium, axe: string(axe)}
	gh := browserGitHub(t)

	e.realm("acme", map[string]any{"displayName": "Acme"})
	e.admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "github", "providerType": "github",
		"clientId": "gh-client", "clientSecret": "gh-secret", "trustEmail": true,
		"authorizationUrl": gh.URL + "/login/oauth/authorize", "tokenUrl": gh.URL + "/login/oauth/access_token",
		"userinfoUrl": gh.URL + "/api/user"}, http.StatusCreated, nil)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, map[string]any{"clientId": "shop", "name": "The Shop"})
	rp := e.relyingParty("acme", "shop", secret, cb.url, "openid", "email")

	verifier := oauth2.GenerateVerifier()
	b := e.browser()
	if status := b.open("broker-login", rp.config.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier),
		oidc.Nonce("nonce-1"))); status != http.StatusOK {
		t.Fatalf("login page: status %d at %s", status, b.location())
	}
	b.mustShow("Or sign in with", "Sign in with GitHub")
	// The button's icon loads under the page's policy, from the server,
	// and is a decoration: the text names the provider.
	icon := browserEval[struct {
		Loaded bool   `json:"loaded"`
		Src    string `json:"src"`
		Alt    string `json:"alt"`
	}](b, "provider icon", `(() => {
		const a = [...document.querySelectorAll('nav.providers a')].find(a => a.textContent.trim() === 'Sign in with GitHub');
		const i = a && a.querySelector('img');
		if (!i) return {loaded: false, src: '', alt: 'none'};
		return i.decode().then(() => i.naturalWidth > 0, () => false).then(loaded => ({loaded, src: i.src, alt: i.getAttribute('alt')}));
	})()`)
	if !icon.Loaded || icon.Alt != "" || !strings.HasPrefix(icon.Src, srv.base+"/assets/idp/github.") {
		t.Fatalf("GitHub button icon %+v", icon)
	}
	b.click("", "Sign in with GitHub")
	back := cb.wait()
	if back.Get("state") != "state-1" || back.Get("code") == "" || back.Has("error") {
		t.Fatalf("redirect back %v, want a code and state-1", back)
	}
	tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	_, claims := rp.verify(tok, "nonce-1")
	amr, _ := claims["amr"].([]any)
	if claims["preferred_username"] != "octocat" || claims["email"] != "mona@example.test" || !slices.Contains(amr, any("fed")) {
		t.Fatalf("claims %v", claims)
	}
}

// browserUpstream is a second `idenplane serve`, on its own port and so
// another origin, with a realm "upstream" that acme of e brokers to as
// provider "corp": its users alice and bob, and the client acme signs in
// with.
func browserUpstream(e *browserEnv) *browserEnv {
	e.t.Helper()
	srv := cliStartServer(e.t, filepath.Join(e.t.TempDir(), "upstream.db"), "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	srv.must(http.MethodGet, "/health/ready", "", nil, http.StatusOK)
	up := &browserEnv{t: e.t, srv: srv, chromium: e.chromium, axe: e.axe}
	up.realm("upstream", map[string]any{"displayName": "Upstream"})
	for _, name := range []string{"alice", "bob"} {
		up.user("upstream", map[string]any{"username": name, "email": name + "@upstream.test", "emailVerified": true,
			"firstName": name, "lastName": "Upstream", "password": browserPassword})
	}
	secret := up.client("upstream", map[string]any{"clientId": "acme-broker",
		"redirectUris": []string{e.issuer("acme") + "/broker/corp/callback"}, "grantTypes": []string{"authorization_code"}})
	e.admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "corp", "providerType": "oidc",
		"displayName": "Corp", "issuer": up.issuer("upstream"), "clientId": "acme-broker", "clientSecret": secret},
		http.StatusCreated, nil)
	return up
}

// TestBrowserBrokerSecondServer: acme brokers to a realm of another
// Idenplane, on another origin, in Chromium, which holds every redirect
// that follows a form post to the posting page's form-action. The sign-in
// page's provider button leads to the upstream's sign-in page, whose form
// answers with a redirect to acme's callback, which redirects on to the
// application: the application gets a code. And the account's Link
// button, a form post, answers with a redirect to the upstream's origin;
// signing in there links the upstream account.
func TestBrowserBrokerSecondServer(t *testing.T) {
	chromium, axe := browserNeeds(t)
	srv := cliStartServer(t, filepath.Join(t.TempDir(), "idenplane.db"), "IDENPLANE_ADMIN_API_KEY="+cliAPIKey,
		"IDENPLANE_OUTBOUND_ALLOW=127.0.0.0/8")
	srv.must(http.MethodGet, "/health/ready", "", nil, http.StatusOK)
	e := &browserEnv{t: t, srv: srv, chromium: chromium, axe: string(axe)}
	e.realm("acme", map[string]any{"displayName": "Acme"})
	lindaID := e.user("acme", map[string]any{"username": "linda", "email": "linda@example.test", "emailVerified": true,
		"firstName": "Linda", "lastName": "Local", "password": browserPassword})
	up := browserUpstream(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, map[string]any{"clientId": "shop", "name": "The Shop"})
	rp := e.relyingParty("acme", "shop", secret, cb.url, "openid", "email")

	t.Run("provider button", func(t *testing.T) {
		verifier := oauth2.GenerateVerifier()
		b := e.browser()
		b.open("", rp.config.AuthCodeURL("state-up", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-up")))
		b.click("", "Sign in with Corp")
		if loc := b.location(); !strings.HasPrefix(loc, up.issuer("upstream")+"/") {
			t.Fatalf("the button led to %s, want the upstream's sign-in page", loc)
		}
		b.fill("Username or email", "alice")
		b.fill("Password", browserPassword)
		if _, err := b.tryClick("", "Sign in"); err != nil || !strings.HasPrefix(b.location(), cb.url+"?") {
			t.Fatalf("the upstream sign-in did not reach the application: %v (page %s)", err, b.location())
		}
		back := cb.wait()
		if back.Get("state") != "state-up" || back.Get("code") == "" {
			t.Fatalf("redirect back %v, want a code and state-up", back)
		}
		tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		_, claims := rp.verify(tok, "nonce-up")
		amr, _ := claims["amr"].([]any)
		if claims["preferred_username"] != "alice" || claims["email"] != "alice@upstream.test" || !slices.Contains(amr, any("fed")) {
			t.Fatalf("claims %v", claims)
		}
	})

	t.Run("link form", func(t *testing.T) {
		b := e.browser()
		b.open("", e.issuer("acme")+"/account/linked-accounts")
		b.signIn("", "linda", browserPassword)
		if loc := b.location(); loc != e.issuer("acme")+"/account/linked-accounts" {
			t.Fatalf("after signing in the browser is at %s", loc)
		}
		if _, err := b.tryClick("", "Link"); err != nil || !strings.HasPrefix(b.location(), up.issuer("upstream")+"/") {
			t.Fatalf("the Link form did not reach the upstream's sign-in page: %v (page %s)", err, b.location())
		}
		b.signIn("", "bob", browserPassword)
		if loc := b.location(); !strings.HasPrefix(loc, e.issuer("acme")+"/account/linked-accounts?") {
			t.Fatalf("after the upstream sign-in the browser is at %s", loc)
		}
		b.mustShow("The account is linked.", "Linked as bob")
		var links []map[string]any
		e.admin(http.MethodGet, "/admin/realms/acme/users/"+lindaID+"/federated-identity", nil, http.StatusOK, &links)
		if len(links) != 1 || links[0]["identityProvider"] != "corp" || links[0]["userName"] != "bob" {
			t.Fatalf("linda's links %v", links)
		}
	})
}
