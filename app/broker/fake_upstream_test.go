package broker_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
)

// fakeUpstream is an OpenID Connect provider, or one shaped like GitHub's
// OAuth and API (no ID token), served by the test, whose answers the test
// bends: a token signed by a key it does not publish, a wrong issuer,
// audience or nonce, an expired token, a refusal, a token endpoint that
// never answers.
type fakeUpstream struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	key       *rsa.PrivateKey // published at /jwks as kid
	kid       string
	codes     map[string]fakeGrant
	signWith  *rsa.PrivateKey        // when set, tokens are signed with it (same kid) instead
	claims    func(c map[string]any) // bends the ID token's claims
	noIDToken bool                   // the token response has no id_token
	deny      bool                   // /auth answers error=access_denied
	hang      chan struct{}          // when set, /token waits on it
	user      map[string]any         // GitHub's /user
	emails    []map[string]any       // GitHub's /user/emails
	seen      []url.Values           // the authorization requests received
}

type fakeGrant struct{ nonce, challenge, method string }

const fakeClientID = "fake-client"

func newFakeUpstream(t *testing.T) *fakeUpstream {
	f := &fakeUpstream{t: t, codes: map[string]fakeGrant{}}
	f.rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth", f.authorize)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /jwks", f.jwks)
	mux.HandleFunc("GET /user", f.githubUser)
	mux.HandleFunc("GET /user/emails", f.githubEmails)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.mu.Lock()
		if f.hang != nil {
			close(f.hang)
			f.hang = nil
		}
		f.mu.Unlock()
		f.srv.Close()
	})
	return f
}

// rotate makes a new signing key, the only one published.
func (f *fakeUpstream) rotate() {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key, f.kid = key, base64.RawURLEncoding.EncodeToString(key.N.Bytes()[:8])
}

func (f *fakeUpstream) set(change func(f *fakeUpstream)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeUpstream) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.seen = append(f.seen, q)
	deny := f.deny
	code := base64.RawURLEncoding.EncodeToString([]byte(time.Now().String()))
	f.codes[code] = fakeGrant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), method: q.Get("code_challenge_method")}
	f.mu.Unlock()
	back := url.Values{"state": {q.Get("state")}}
	if deny {
		back.Set("error", "access_denied")
		back.Set("error_description", "the user said no")
	} else {
		back.Set("code", code)
	}
	http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
}

func (f *fakeUpstream) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hang := f.hang
	f.mu.Unlock()
	if hang != nil {
		<-hang
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g, known := f.codes[r.PostForm.Get("code")]
	delete(f.codes, r.PostForm.Get("code"))
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	w.Header().Set("Content-Type", "application/json")
	if !known || id != fakeClientID || secret != "fake-secret" || g.method != "S256" ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	out := map[string]any{"access_token": "at-" + r.PostForm.Get("code"), "token_type": "Bearer", "expires_in": 300}
	if !f.noIDToken {
		now := time.Now()
		claims := map[string]any{"iss": f.srv.URL, "sub": "up-123", "aud": fakeClientID, "iat": now.Unix(),
			"exp": now.Add(5 * time.Minute).Unix(), "nonce": g.nonce, "preferred_username": "bob",
			"email": "bob@example.test", "email_verified": true, "given_name": "Bob", "family_name": "Builder",
			"groups": []string{"builders", "other"}, "dept": "construction"}
		if f.claims != nil {
			f.claims(claims)
		}
		key := f.key
		if f.signWith != nil {
			key = f.signWith
		}
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: f.kid}},
			(&jose.SignerOptions{}).WithType("JWT"))
		if err != nil {
			f.t.Error(err)
			return
		}
		raw, err := jwt.Signed(signer).Claims(claims).Serialize()
		if err != nil {
			f.t.Error(err)
			return
		}
		out["id_token"] = raw
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeUpstream) jwks(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &f.key.PublicKey, KeyID: f.kid, Algorithm: "RS256", Use: "sig"}}}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

func (f *fakeUpstream) bearer(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer at-") {
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	return true
}

func (f *fakeUpstream) githubUser(w http.ResponseWriter, r *http.Request) {
	if f.bearer(w, r) {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(f.user)
	}
}

func (f *fakeUpstream) githubEmails(w http.ResponseWriter, r *http.Request) {
	if f.bearer(w, r) {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(f.emails)
	}
}

// newFakeEnv is acme brokering to the fake upstream as provider corp.
func newFakeEnv(t *testing.T, f *fakeUpstream, provider map[string]any, opts ...func(*app.Config)) *env {
	t.Helper()
	s, base := liveServer(t, true, opts...)
	e := &env{t: t, s: s, base: base, fake: f}
	createRealm(s, downstreamName)
	created := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "app",
		"redirectUris": []string{appRedirect}, "grantTypes": []string{"authorization_code"}})
	apptest.MustStatus(t, created, http.StatusCreated)
	e.appSecret = created.Object(t)["secret"].(string)
	body := map[string]any{"alias": "corp", "providerType": "oidc", "issuer": f.srv.URL, "clientId": fakeClientID,
		"clientSecret": "fake-secret", "authorizationUrl": f.srv.URL + "/auth", "tokenUrl": f.srv.URL + "/token",
		"jwksUrl": f.srv.URL + "/jwks"}
	for k, v := range provider {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	createProvider(s, downstreamName, body)
	return e
}

// fakeSignIn runs a sign-in of app through the fake upstream, which asks
// nothing, and returns where it ended.
func (e *env) fakeSignIn(b *apptest.Browser) *apptest.Page {
	e.t.Helper()
	return b.Follow(b.Get(e.authorize(url.Values{"kc_idp_hint": {"corp"}})), e.base, e.fake.srv.URL)
}
