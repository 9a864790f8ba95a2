package app

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/sessions"
)

// The whole flow for a public client (a single-page app): PKCE, the login
// page, the code, tokens checked by go-oidc, single sign-on on the next
// request, and a refresh.
func TestCodeFlowPublicClient(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("spa", map[string]any{"clientType": "PUBLIC"})
	cfg := e.oauth2Config("spa", "", "openid", "phone")
	ctx := t.Context()
	b := e.browser()

	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1"),
		oauth2.SetAuthURLParam("login_hint", "alice"))
	p := b.get(authURL)
	if p.status != http.StatusFound {
		t.Fatalf("authorization: status %d, want a redirect to the login page; body %s", p.status, p.body)
	}
	login := p.location(t)
	if login.Path != "/realms/acme/login" || login.Query().Get("authRequestID") == "" {
		t.Fatalf("redirected to %s, want the login page with an authRequestID", login)
	}
	page := b.get(login.String())
	if page.status != http.StatusOK {
		t.Fatalf("login page: status %d; body %s", page.status, page.body)
	}
	form := page.form(t)
	if form.fields.Get("username") != "alice" || form.fields.Get("authRequestID") != login.Query().Get("authRequestID") ||
		form.fields.Get("csrf") == "" || !form.fields.Has("password") {
		t.Fatalf("login form %v: want the login_hint, the request, a CSRF token and a password field", form.fields)
	}
	checkPageCSP(t, page.header, true)

	done := b.submit(page, map[string]string{"password": codeflowPassword})
	if done.status != http.StatusSeeOther {
		t.Fatalf("login: status %d, want 303; body %s", done.status, done.body)
	}
	cookie := codeflowSetCookie(t, done, "idenplane_sso_acme")
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/realms/acme/"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("SSO cookie %q lacks %s", cookie, attr)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("SSO cookie %q is Secure on a plain-HTTP server", cookie)
	}
	back := e.redirectedBack(done)
	if back.Get("state") != "state-1" || back.Get("code") == "" {
		t.Fatalf("redirect back %v, want a code and state-1", back)
	}

	tok, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Fatalf("token %+v", tok)
	}
	idt, idClaims := e.verifyIDToken(tok, "spa", "nonce-1")
	if idt.Subject != e.aliceID {
		t.Fatalf("ID token subject %s, want alice %s", idt.Subject, e.aliceID)
	}
	for claim, want := range map[string]any{"azp": "spa", "acr": "1", "preferred_username": "alice",
		"email": "alice@example.test", "given_name": "Alice"} {
		if idClaims[claim] != want {
			t.Errorf("ID token %s = %v, want %v", claim, idClaims[claim], want)
		}
	}
	if amr, _ := idClaims["amr"].([]any); len(amr) != 1 || amr[0] != "pwd" {
		t.Errorf("ID token amr %v", idClaims["amr"])
	}
	authTime, _ := idClaims["auth_time"].(float64)
	if int64(authTime) != e.clock.now().Unix() {
		t.Errorf("auth_time %v, want the login time %d", idClaims["auth_time"], e.clock.now().Unix())
	}
	header, access := jwtParts(t, tok.AccessToken)
	if header["typ"] != "at+jwt" || access["sid"] != idClaims["sid"] || access["sub"] != e.aliceID ||
		!strings.Contains(access["scope"].(string), "phone") {
		t.Fatalf("access token %v %v; ID token sid %v", header, access, idClaims["sid"])
	}

	// The sid is the SSO session's ID; the client's OAuth session is under it.
	listed := e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil)
	var reps []sessions.SessionRep
	listed.decode(t, &reps)
	sso, oauth := codeflowSessionKinds(reps)
	if len(sso) != 1 || sso[0].ID != idClaims["sid"] || len(oauth) != 1 || oauth[0].ParentID != sso[0].ID ||
		oauth[0].ClientID != "spa" {
		t.Fatalf("sessions %s, want the SSO session %v and spa's session under it", listed.Body, idClaims["sid"])
	}
	if strings.Contains(cookie, sso[0].ID) {
		t.Fatal("the SSO cookie holds the session ID that tokens carry as sid")
	}

	// Next time the browser's SSO session answers at once, with a code.
	verifier2 := oauth2.GenerateVerifier()
	again := b.get(cfg.AuthCodeURL("state-2", oauth2.S256ChallengeOption(verifier2), oidc.Nonce("nonce-2")))
	back = e.redirectedBack(again)
	if back.Get("state") != "state-2" || back.Get("code") == "" {
		t.Fatalf("SSO redirect back %v", back)
	}
	tok2, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier2))
	if err != nil {
		t.Fatalf("exchange after SSO: %v", err)
	}
	_, idClaims2 := e.verifyIDToken(tok2, "spa", "nonce-2")
	if idClaims2["sid"] != idClaims["sid"] || idClaims2["auth_time"] != idClaims["auth_time"] {
		t.Fatalf("SSO ID token sid %v auth_time %v, want the session's %v %v",
			idClaims2["sid"], idClaims2["auth_time"], idClaims["sid"], idClaims["auth_time"])
	}

	// A refresh rotates the refresh token and brings a new ID token, without nonce.
	refreshed, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if refreshed.RefreshToken == "" || refreshed.RefreshToken == tok.RefreshToken || refreshed.AccessToken == tok.AccessToken {
		t.Fatalf("refresh did not rotate: %+v", refreshed)
	}
	_, refreshedClaims := e.verifyIDToken(refreshed, "spa", "")
	if refreshedClaims["sid"] != idClaims["sid"] || refreshedClaims["auth_time"] != idClaims["auth_time"] {
		t.Fatalf("refreshed ID token %v", refreshedClaims)
	}
}

// codeflowSetCookie returns the Set-Cookie line of the named cookie.
func codeflowSetCookie(t *testing.T, p *codeflowPage, name string) string {
	t.Helper()
	i := slices.IndexFunc(p.header.Values("Set-Cookie"), func(c string) bool { return strings.HasPrefix(c, name+"=") })
	if i < 0 {
		t.Fatalf("no %s cookie set; Set-Cookie %v", name, p.header.Values("Set-Cookie"))
	}
	return p.header.Values("Set-Cookie")[i]
}

// A confidential client may use PKCE; once it sent a challenge, the
// verifier is checked at the token endpoint like a public client's.
func TestCodeFlowConfidentialClient(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	ctx := t.Context()
	b := e.browser()

	// Without PKCE: the secret is the proof.
	back := e.signIn(b, cfg.AuthCodeURL("s1", oidc.Nonce("n1")), "alice")
	tok, err := cfg.Exchange(ctx, back.Get("code"))
	if err != nil {
		t.Fatalf("exchange without PKCE: %v", err)
	}
	e.verifyIDToken(tok, "web", "n1")

	// With a challenge, a missing or wrong verifier fails, with the secret right.
	verifier := oauth2.GenerateVerifier()
	for _, tc := range []struct {
		name string
		opts []oauth2.AuthCodeOption
	}{
		{"no verifier", nil},
		{"wrong verifier", []oauth2.AuthCodeOption{oauth2.VerifierOption(oauth2.GenerateVerifier())}},
	} {
		back := e.signIn(b, cfg.AuthCodeURL("s2", oauth2.S256ChallengeOption(verifier)), "alice")
		_, err := cfg.Exchange(ctx, back.Get("code"), tc.opts...)
		codeflowMustRetrieveError(t, err, "invalid_grant")
	}
	back = e.signIn(b, cfg.AuthCodeURL("s3", oauth2.S256ChallengeOption(verifier)), "alice")
	if _, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier)); err != nil {
		t.Fatalf("exchange with the right verifier: %v", err)
	}
	// A verifier for a request that had no challenge is refused too.
	back = e.signIn(b, cfg.AuthCodeURL("s4"), "alice")
	_, err = cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	codeflowMustRetrieveError(t, err, "invalid_grant")
	// And a wrong secret is the client's failure, not the grant's.
	back = e.signIn(b, cfg.AuthCodeURL("s5"), "alice")
	wrong := *cfg
	wrong.ClientSecret = "wrong"
	_, err = wrong.Exchange(ctx, back.Get("code"))
	codeflowMustRetrieveError(t, err, "invalid_client")
}

// response_mode fragment puts the response in the fragment; form_post
// hands it over in a page whose form posts to the redirect URI.
func TestCodeFlowResponseModes(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()

	p := b.follow(e.url, cfg.AuthCodeURL("frag-state", oauth2.SetAuthURLParam("response_mode", "fragment")))
	p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
	loc := p.location(t)
	frag, err := url.ParseQuery(loc.Fragment)
	if err != nil || loc.RawQuery != "" || frag.Get("code") == "" || frag.Get("state") != "frag-state" {
		t.Fatalf("fragment response %s", loc)
	}

	p = b.get(cfg.AuthCodeURL("post-state", oauth2.SetAuthURLParam("response_mode", "form_post")))
	if p.status != http.StatusOK {
		t.Fatalf("form_post response: status %d; body %s", p.status, p.body)
	}
	form := p.form(t)
	if form.action != codeflowRedirect || form.method != http.MethodPost || form.fields.Get("state") != "post-state" ||
		form.fields.Get("code") == "" {
		t.Fatalf("form_post form %+v", form)
	}
	// The policy admits the page's one script by its hash, and no
	// form-action: the application may redirect on after the post.
	csp := p.header.Get("Content-Security-Policy")
	nonce := cspNonce.FindStringSubmatch(csp)
	if got := cspDirectives(t, csp); nonce == nil || !maps.Equal(got, map[string]string{"default-src": "'none'",
		"script-src": formPostScriptHash, "style-src": "'self' " + nonce[0], "img-src": "'self' data: https:",
		"base-uri": "'none'", "frame-ancestors": "'none'"}) {
		t.Fatalf("form_post CSP %q", csp)
	}
	if _, err := cfg.Exchange(t.Context(), form.fields.Get("code")); err != nil {
		t.Fatalf("exchange of the form_post code: %v", err)
	}

	// Errors go back the same way.
	p = b.get(cfg.AuthCodeURL("err-state", oauth2.SetAuthURLParam("response_mode", "fragment"),
		oauth2.SetAuthURLParam("scope", "nope")))
	loc = p.location(t)
	if frag, _ := url.ParseQuery(loc.Fragment); frag.Get("error") != "invalid_scope" || frag.Get("state") != "err-state" {
		t.Fatalf("fragment error %s", loc)
	}
}

// Protocol and page paths of an unknown or disabled realm are 404.
func TestCodeFlowUnknownRealm(t *testing.T) {
	e := newCodeflowEnv(t)
	e.createRealm("off")
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/off", map[string]any{"enabled": false}), http.StatusOK)
	for _, realm := range []string{"off", "nope"} {
		for _, path := range []string{"/protocol/openid-connect/auth?client_id=x", "/login?authRequestID=x", "/consent?authRequestID=x"} {
			if r := e.request(http.MethodGet, "/realms/"+realm+path, nil); r.Status != http.StatusNotFound {
				t.Errorf("GET %s in realm %s: %d, want 404", path, realm, r.Status)
			}
		}
		r := e.request(http.MethodPost, "/realms/"+realm+"/protocol/openid-connect/token",
			"grant_type=password&client_id=x&username=a&password=b", "Content-Type: application/x-www-form-urlencoded")
		if r.Status != http.StatusNotFound {
			t.Errorf("password grant in realm %s: %d, want 404", realm, r.Status)
		}
	}
}

func TestCodeFlowDiscovery(t *testing.T) {
	e := newCodeflowEnv(t)
	var doc struct {
		Grants []string `json:"grant_types_supported"`
		Auth   string   `json:"authorization_endpoint"`
	}
	if err := e.provider.Claims(&doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"authorization_code", "refresh_token", "password", "client_credentials"} {
		if !slices.Contains(doc.Grants, g) {
			t.Errorf("grant_types_supported %v lacks %s", doc.Grants, g)
		}
	}
	if doc.Auth != e.issuer("acme")+"/protocol/openid-connect/auth" {
		t.Errorf("authorization_endpoint %s", doc.Auth)
	}
}
