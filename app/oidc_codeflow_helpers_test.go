package app

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/net/html"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/sessions"
)

// The code flow's tests drive it as clients and browsers do: clients with
// golang.org/x/oauth2 and coreos/go-oidc, browsers with a cookie jar,
// reading the forms of the pages they get.

const (
	codeflowRedirect = "https://app.example.test/callback"
	codeflowPassword = "correct horse battery"
)

// codeflowClock is the server's clock, which tests move forward.
type codeflowClock struct{ ns atomic.Int64 }

func (c *codeflowClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *codeflowClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// codeflowEnv is a server with realm acme, its user alice, and a clock;
// opts adjust its Config.
type codeflowEnv struct {
	*oidcTestServer
	t        *testing.T
	clock    *codeflowClock
	provider *oidc.Provider
	aliceID  string
}

func newCodeflowEnv(t *testing.T, opts ...func(*Config)) *codeflowEnv {
	t.Helper()
	clock := &codeflowClock{}
	clock.ns.Store(time.Now().UnixNano())
	s := newOIDCTestServer(t, append([]func(*Config){func(c *Config) { c.Now = clock.now }}, opts...)...)
	s.createRealm("acme")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test",
		"firstName": "Alice", "lastName": "Liddell", "password": codeflowPassword})
	provider, err := oidc.NewProvider(t.Context(), s.issuer("acme"))
	if err != nil {
		t.Fatal(err)
	}
	return &codeflowEnv{oidcTestServer: s, t: t, clock: clock, provider: provider, aliceID: alice["id"].(string)}
}

// client makes a client of acme: by default confidential, with the code
// and refresh grants and codeflowRedirect; fields override. It returns
// the secret, "" for a public client.
func (e *codeflowEnv) client(clientID string, fields map[string]any) string {
	e.t.Helper()
	body := map[string]any{"clientId": clientID, "redirectUris": []string{codeflowRedirect},
		"grantTypes": []string{"authorization_code", "refresh_token"}}
	maps.Copy(body, fields)
	r := e.admin(http.MethodPost, "/admin/realms/acme/clients", body)
	mustStatus(e.t, r, http.StatusCreated)
	secret, _ := r.object(e.t)["secret"].(string)
	return secret
}

func (e *codeflowEnv) oauth2Config(clientID, secret string, scopes ...string) *oauth2.Config {
	return &oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: e.provider.Endpoint(),
		RedirectURL: codeflowRedirect, Scopes: scopes}
}

// verifyIDToken checks an ID token's signature (through the published
// keys), issuer, audience and expiry, and its nonce.
func (e *codeflowEnv) verifyIDToken(tok *oauth2.Token, clientID, nonce string) (*oidc.IDToken, map[string]any) {
	e.t.Helper()
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		e.t.Fatalf("no id_token in the token response")
	}
	idt, err := e.provider.VerifierContext(e.t.Context(), &oidc.Config{ClientID: clientID, Now: e.clock.now}).Verify(e.t.Context(), raw)
	if err != nil {
		e.t.Fatalf("verify ID token: %v", err)
	}
	if idt.Nonce != nonce {
		e.t.Fatalf("ID token nonce %q, want %q", idt.Nonce, nonce)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		e.t.Fatalf("at_hash: %v", err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		e.t.Fatal(err)
	}
	return idt, claims
}

// introspect asks a confidential client of acme whether token is active.
func (e *codeflowEnv) introspect(clientID, secret, token string) map[string]any {
	e.t.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(token),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic(clientID, secret))
	mustStatus(e.t, r, http.StatusOK)
	return r.object(e.t)
}

func codeflowBasic(id, secret string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return "Authorization: " + req.Header.Get("Authorization")
}

// tokenRequest posts a form to acme's token endpoint and returns the
// status and the decoded JSON body.
func (e *codeflowEnv) tokenRequest(form url.Values, headers ...string) (int, map[string]any) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		append([]string{"Content-Type: application/x-www-form-urlencoded"}, headers...)...)
	return r.Status, r.object(e.t)
}

// codeflowMustOAuthError checks a token endpoint error: status and code.
func codeflowMustOAuthError(t *testing.T, status int, body map[string]any, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || body["error"] != wantCode {
		t.Fatalf("status %d body %v, want %d %s", status, body, wantStatus, wantCode)
	}
}

// codeflowMustRetrieveError checks an error of golang.org/x/oauth2.
func codeflowMustRetrieveError(t *testing.T, err error, wantCode string) {
	t.Helper()
	re, ok := err.(*oauth2.RetrieveError)
	if !ok || re.ErrorCode != wantCode {
		t.Fatalf("error %v, want %s", err, wantCode)
	}
}

// codeflowBrowser is a browser: cookies kept, redirects shown to the test
// rather than followed.
type codeflowBrowser struct {
	t      *testing.T
	client *http.Client
}

func (e *codeflowEnv) browser() *codeflowBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &codeflowBrowser{t: e.t, client: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// codeflowPage is one response a browser got.
type codeflowPage struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL // where it was fetched from
}

// location is where a redirect points, resolved.
func (p *codeflowPage) location(t *testing.T) *url.URL {
	t.Helper()
	loc, err := p.url.Parse(p.header.Get("Location"))
	if err != nil || p.header.Get("Location") == "" {
		t.Fatalf("status %d without a usable Location; body %s", p.status, p.body)
	}
	return loc
}

// codeflowAccept is what a browser accepts when it loads a page (Chromium's).
const codeflowAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

func (b *codeflowBrowser) do(req *http.Request) *codeflowPage {
	b.t.Helper()
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", codeflowAccept)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &codeflowPage{status: resp.StatusCode, header: resp.Header, body: body, url: req.URL}
}

func (b *codeflowBrowser) get(u string) *codeflowPage {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *codeflowBrowser) post(u string, form url.Values) *codeflowPage {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// follow GETs u and follows redirects while they stay on the server, and
// returns the page it stops at: a page, or a redirect to elsewhere.
func (b *codeflowBrowser) follow(server, u string) *codeflowPage {
	b.t.Helper()
	p := b.get(u)
	for p.status/100 == 3 {
		next := p.location(b.t)
		if !strings.HasPrefix(next.String(), server+"/") {
			break
		}
		p = b.get(next.String())
	}
	return p
}

// codeflowForm is a form of a page, as a browser would submit it.
type codeflowForm struct {
	action  string
	method  string
	fields  url.Values // inputs with their values
	buttons url.Values // submit buttons: name to values
}

// forms parses the page's forms.
func (p *codeflowPage) forms(t *testing.T) []*codeflowForm {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	var forms []*codeflowForm
	var walk func(n *html.Node, f *codeflowForm)
	walk = func(n *html.Node, f *codeflowForm) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch n.Data {
			case "form":
				f = &codeflowForm{action: attr["action"], method: strings.ToUpper(attr["method"]), fields: url.Values{},
					buttons: url.Values{}}
				forms = append(forms, f)
			case "input":
				// A checkbox is sent only when ticked, as a browser does.
				_, checked := attr["checked"]
				if f != nil && attr["name"] != "" && (attr["type"] != "checkbox" || checked) {
					f.fields.Add(attr["name"], attr["value"])
				}
			case "button":
				if f != nil && attr["name"] != "" {
					f.buttons.Add(attr["name"], attr["value"])
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	walk(doc, nil)
	return forms
}

// form is the page's only form.
func (p *codeflowPage) form(t *testing.T) *codeflowForm {
	t.Helper()
	forms := p.forms(t)
	if len(forms) != 1 {
		t.Fatalf("page with %d forms, want 1: status %d body %s", len(forms), p.status, p.body)
	}
	return forms[0]
}

// submit posts the page's form with fields set as given ("" deletes one).
func (b *codeflowBrowser) submit(p *codeflowPage, set map[string]string) *codeflowPage {
	b.t.Helper()
	f := p.form(b.t)
	values := url.Values{}
	maps.Copy(values, f.fields)
	for k, v := range set {
		if v == "" {
			values.Del(k)
		} else {
			values.Set(k, v)
		}
	}
	action, err := p.url.Parse(f.action)
	if err != nil || f.method != http.MethodPost {
		b.t.Fatalf("form action %q method %q", f.action, f.method)
	}
	return b.post(action.String(), values)
}

// signIn runs a browser from an authorization URL to the redirect back
// to the client, signing in on the login page if it shows, and returns
// the redirect's query parameters.
func (e *codeflowEnv) signIn(b *codeflowBrowser, authURL, username string) url.Values {
	e.t.Helper()
	p := b.follow(e.url, authURL)
	if p.status == http.StatusOK {
		p = b.submit(p, map[string]string{"username": username, "password": codeflowPassword})
	}
	return e.redirectedBack(p)
}

// redirectedBack checks that p sends the browser to the client's
// redirect URI, and returns the query parameters.
func (e *codeflowEnv) redirectedBack(p *codeflowPage) url.Values {
	e.t.Helper()
	if p.status/100 != 3 {
		e.t.Fatalf("status %d, want a redirect back to the client; body %s", p.status, p.body)
	}
	loc := p.location(e.t)
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != codeflowRedirect {
		e.t.Fatalf("redirected to %s, want %s", loc, codeflowRedirect)
	}
	return loc.Query()
}

// codeflowSessionKinds splits sessions into SSO and OAuth ones: the
// listing orders by start, and the test clock often stands still.
func codeflowSessionKinds(reps []sessions.SessionRep) (sso, oauth []sessions.SessionRep) {
	for _, r := range reps {
		if r.Type == "sso" {
			sso = append(sso, r)
		} else {
			oauth = append(oauth, r)
		}
	}
	return sso, oauth
}

// codeflowTokens signs alice in at the client of cfg and redeems the code.
func (e *codeflowEnv) codeflowTokens(cfg *oauth2.Config, b *codeflowBrowser) *oauth2.Token {
	e.t.Helper()
	back := e.signIn(b, cfg.AuthCodeURL("s"), "alice")
	tok, err := cfg.Exchange(e.t.Context(), back.Get("code"))
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *codeflowEnv) refresh(cfg *oauth2.Config, refreshToken string) (*oauth2.Token, error) {
	return cfg.TokenSource(e.t.Context(), &oauth2.Token{RefreshToken: refreshToken}).Token()
}

// userSessions lists alice's sessions by the admin API.
func (e *codeflowEnv) userSessions() []sessions.SessionRep {
	e.t.Helper()
	var reps []sessions.SessionRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil).decode(e.t, &reps)
	return reps
}
