package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
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
