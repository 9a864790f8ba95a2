package impersonation_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/store"
)

const redirect = "https://app.example.test/cb"

// live is one server over HTTP with the realm acme (impersonation on), its
// application app, its user alice, and a named admin key that may
// impersonate; its clock runs ahead of the wall clock by skew.
type live struct {
	t      *testing.T
	s      *apptest.Server
	base   string
	secret string // app's
	key    string // the admin key's secret
	keyID  string
	alice  string // her user ID
	skew   *atomic.Int64
}

func newLive(t *testing.T) *live {
	t.Helper()
	skew := &atomic.Int64{}
	s, base := realapp.Live(t, func(c *app.Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	l := &live{t: t, s: s, base: base, skew: skew}
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme", map[string]any{"impersonationEnabled": true}), http.StatusOK)
	r := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "app",
		"redirectUris": []string{redirect}, "grantTypes": []string{"authorization_code", "refresh_token"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	l.secret = r.Object(t)["secret"].(string)
	l.alice = s.CreateUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})["id"].(string)
	l.keyID, l.key = l.adminKey("support", authz.UsersRead, authz.UsersImpersonate, authz.EventsRead)
	return l
}

// adminKey makes a named admin API key holding perms: its ID and secret.
func (l *live) adminKey(name string, perms ...authz.Permission) (id, secret string) {
	l.t.Helper()
	names := make([]string, len(perms))
	for i, p := range perms {
		names[i] = string(p)
	}
	r := l.s.Admin(http.MethodPost, "/admin/api-keys", map[string]any{"name": name, "permissions": names})
	apptest.MustStatus(l.t, r, http.StatusCreated)
	o := r.Object(l.t)
	return o["id"].(string), o["apiKey"].(string)
}

// impersonate posts the impersonation of user with key, from browser b.
func (l *live) impersonate(b *apptest.Browser, key, user string) *apptest.Page {
	l.t.Helper()
	req, err := http.NewRequest(http.MethodPost, l.base+"/admin/realms/acme/users/"+user+"/impersonate", nil)
	if err != nil {
		l.t.Fatal(err)
	}
	req.Header.Set("X-Admin-API-Key", key)
	return b.Send(req)
}

func (l *live) end(body map[string]any) *apptest.Response {
	l.t.Helper()
	return l.s.Request(http.MethodPost, "/admin/realms/acme/impersonation/end", body, "X-Admin-API-Key: "+l.key)
}

func (l *live) issuer() string { return l.base + "/realms/acme" }

// tokens runs app's authorization code flow in b and verifies the tokens
// with acme's published keys.
func (l *live) tokens(b *apptest.Browser, scope string) (tok *oauth2.Token, id, access map[string]any) {
	l.t.Helper()
	q := url.Values{"client_id": {"app"}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {scope}, "state": {"st"}, "nonce": {"nc"}}
	p := b.Follow(b.Get(l.issuer()+"/protocol/openid-connect/auth?"+q.Encode()), l.base)
	if p.Status/100 != 3 || !strings.HasPrefix(p.Location(l.t).String(), redirect+"?") {
		l.t.Fatalf("expected the redirect to app without a sign-in, got %d at %s: %s", p.Status, p.URL, p.Body)
	}
	ctx := oidc.ClientContext(l.t.Context(), http.DefaultClient)
	provider, err := oidc.NewProvider(ctx, l.issuer())
	if err != nil {
		l.t.Fatal(err)
	}
	cfg := oauth2.Config{ClientID: "app", ClientSecret: l.secret, Endpoint: provider.Endpoint(), RedirectURL: redirect}
	if tok, err = cfg.Exchange(ctx, p.Location(l.t).Query().Get("code")); err != nil {
		l.t.Fatalf("redeem the code: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: "app"}).Verify(ctx, raw)
	if err != nil {
		l.t.Fatalf("ID token: %v", err)
	}
	at, err := provider.Verifier(&oidc.Config{SkipClientIDCheck: true}).Verify(ctx, tok.AccessToken)
	if err != nil {
		l.t.Fatalf("access token: %v", err)
	}
	if err := idt.Claims(&id); err != nil {
		l.t.Fatal(err)
	}
	if err := at.Claims(&access); err != nil {
		l.t.Fatal(err)
	}
	return tok, id, access
}

// refresh trades a refresh token at app's token endpoint: the status and
// the answer.
func (l *live) refresh(token string) (int, map[string]any) {
	l.t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {"app"}, "client_secret": {l.secret}}
	r := l.s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded")
	var out map[string]any
	_ = json.Unmarshal(r.Body, &out)
	return r.Status, out
}

// introspect answers whether app's introspection finds token active.
func (l *live) introspect(token string) map[string]any {
	l.t.Helper()
	form := url.Values{"token": {token}, "client_id": {"app"}, "client_secret": {l.secret}}
	r := l.s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded")
	apptest.MustStatus(l.t, r, http.StatusOK)
	return r.Object(l.t)
}

func (l *live) loginEvents(typ store.EventType) []store.LoginEvent {
	l.t.Helper()
	r := l.s.Admin(http.MethodGet, "/admin/realms/acme/events?type="+string(typ), nil)
	apptest.MustStatus(l.t, r, http.StatusOK)
	var out []store.LoginEvent
	r.Decode(l.t, &out)
	return out
}

func mustAct(t *testing.T, what string, claims map[string]any, sub, username string) {
	t.Helper()
	act, _ := claims["act"].(map[string]any)
	if act["sub"] != sub || act["preferred_username"] != username {
		t.Fatalf("%s act = %v, want sub %s, preferred_username %s", what, claims["act"], sub, username)
	}
}

func mustMarked(t *testing.T, e store.LoginEvent, sub, username string) {
	t.Helper()
	if e.Details["impersonator"] != sub || e.Details["impersonator_username"] != username {
		t.Fatalf("%s event details %v, want impersonator %s (%s)", e.Type, e.Details, sub, username)
	}
}

func TestImpersonationSignsTheAdministratorInAsTheUser(t *testing.T) {
	l := newLive(t)
	b := apptest.NewBrowser(t)
	p := l.impersonate(b, l.key, l.alice)
	if p.Status != http.StatusOK {
		t.Fatalf("impersonate: %d %s", p.Status, p.Body)
	}
	var rep struct {
		Redirect  string `json:"redirect"`
		SameRealm *bool  `json:"sameRealm"`
	}
	if err := json.Unmarshal(p.Body, &rep); err != nil || rep.Redirect != l.issuer()+"/account" || rep.SameRealm == nil || *rep.SameRealm {
		t.Fatalf("answer %s", p.Body)
	}

	// The redirect lands on alice's account page, signed in by the cookie.
	account := b.Follow(b.Get(rep.Redirect), l.base)
	if account.Status != http.StatusOK || !strings.Contains(string(account.Body), "alice") {
		t.Fatalf("account page %d at %s: %s", account.Status, account.URL, account.Body)
	}
	// It lists the impersonation, going on, and who does it.
	if body := string(account.Body); !strings.Contains(body, "support") || !strings.Contains(body, "impersonation-active") {
		t.Fatalf("account page without the impersonation: %s", body)
	}

	// A code flow through the cookie: both tokens name the administrator.
	tok, id, access := l.tokens(b, "openid")
	if id["sub"] != l.alice || access["sub"] != l.alice {
		t.Fatalf("tokens of %v / %v, want alice", id["sub"], access["sub"])
	}
	mustAct(t, "ID token", id, l.keyID, "support")
	mustAct(t, "access token", access, l.keyID, "support")
	mustAct(t, "introspection", l.introspect(tok.AccessToken), l.keyID, "support")
	info := l.s.Request(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, "Authorization: Bearer "+tok.AccessToken)
	apptest.MustStatus(t, info, http.StatusOK)
	mustAct(t, "userinfo", info.Object(t), l.keyID, "support")

	// A refresh keeps the mark.
	status, refreshed := l.refresh(tok.RefreshToken)
	if status != http.StatusOK {
		t.Fatalf("refresh %d %v", status, refreshed)
	}
	var claims map[string]any
	parts := strings.Split(refreshed["access_token"].(string), ".")
	if raw, err := jwtPart(parts[1]); err != nil || json.Unmarshal(raw, &claims) != nil {
		t.Fatalf("refreshed access token %v", err)
	}
	mustAct(t, "refreshed access token", claims, l.keyID, "support")

	// The events say who acted: the start, the code's redemption.
	starts := l.loginEvents(store.EventImpersonate)
	if len(starts) != 1 || starts[0].UserID != l.alice || starts[0].SessionID != id["sid"] {
		t.Fatalf("IMPERSONATE events %+v", starts)
	}
	mustMarked(t, starts[0], l.keyID, "support")
	codes := l.loginEvents("CODE_TO_TOKEN")
	if len(codes) != 1 {
		t.Fatalf("CODE_TO_TOKEN events %+v", codes)
	}
	mustMarked(t, codes[0], l.keyID, "support")
	r := l.s.Admin(http.MethodGet, "/admin/realms/acme/admin-events", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var all, admin []struct {
		OperationType, ResourceType, ResourcePath string
		Representation                            json.RawMessage
	}
	r.Decode(t, &all)
	for _, e := range all {
		if e.OperationType == "ACTION" {
			admin = append(admin, e)
		}
	}
	if len(admin) != 1 || admin[0].ResourceType != "USER" || admin[0].ResourcePath != "users/"+l.alice+"/impersonate" ||
		!strings.Contains(string(admin[0].Representation), `"impersonatorUsername":"support"`) {
		t.Fatalf("admin events %+v", admin)
	}

	// The end: the session, its refresh token and its access token are over.
	apptest.MustStatus(t, l.end(map[string]any{"sessionId": id["sid"]}), http.StatusNoContent)
	if got := l.introspect(tok.AccessToken); got["active"] != false {
		t.Fatalf("access token after the end: %v", got)
	}
	if status, out := l.refresh(refreshed["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("refresh after the end: %d %v", status, out)
	}
	if page := b.Follow(b.Get(rep.Redirect), l.base); page.Status == http.StatusOK && strings.Contains(string(page.Body), "alice@example.test") {
		t.Fatalf("account page still signed in after the end")
	}
	ends := l.loginEvents(store.EventImpersonateEnd)
	if len(ends) != 1 || ends[0].SessionID != id["sid"] {
		t.Fatalf("IMPERSONATE_END events %+v", ends)
	}
	mustMarked(t, ends[0], l.keyID, "support")
	// Nothing is left to end.
	apptest.MustError(t, l.end(map[string]any{"userId": l.alice}), http.StatusNotFound, string(apperr.CodeNotFound), "")
}

func TestImpersonationEndsAtItsLifetime(t *testing.T) {
	l := newLive(t)
	apptest.MustStatus(t, l.s.Admin(http.MethodPut, "/admin/realms/acme", map[string]any{"impersonationLifetime": 120}), http.StatusOK)
	b := apptest.NewBrowser(t)
	if p := l.impersonate(b, l.key, l.alice); p.Status != http.StatusOK {
		t.Fatalf("impersonate: %d %s", p.Status, p.Body)
	}
	tok, _, _ := l.tokens(b, "openid")
	// Refreshed within the lifetime, the session slides no further than it.
	l.skew.Store(int64(100 * time.Second))
	status, refreshed := l.refresh(tok.RefreshToken)
	if status != http.StatusOK {
		t.Fatalf("refresh within the lifetime: %d %v", status, refreshed)
	}
	l.skew.Store(int64(121 * time.Second))
	if status, out := l.refresh(refreshed["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("refresh after the lifetime: %d %v", status, out)
	}
	if got := l.introspect(refreshed["access_token"].(string)); got["active"] != false {
		t.Fatalf("access token after the lifetime: %v", got)
	}
	// The account page lists it as over; the user's own sign-in is needed.
	q := url.Values{"client_id": {"app"}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {"openid"}}
	if p := b.Follow(b.Get(l.issuer()+"/protocol/openid-connect/auth?"+q.Encode()), l.base); p.Status != http.StatusOK {
		t.Fatalf("after the lifetime the browser should meet the sign-in page, got %d at %s", p.Status, p.URL)
	}
}

// An offline token would outlive the session: an impersonation's grant
// keeps its refresh token in the session, which its end ends.
func TestImpersonationHoldsNoOfflineToken(t *testing.T) {
	l := newLive(t)
	b := apptest.NewBrowser(t)
	if p := l.impersonate(b, l.key, l.alice); p.Status != http.StatusOK {
		t.Fatalf("impersonate: %d %s", p.Status, p.Body)
	}
	tok, id, _ := l.tokens(b, "openid offline_access")
	apptest.MustStatus(t, l.end(map[string]any{"sessionId": id["sid"]}), http.StatusNoContent)
	if status, out := l.refresh(tok.RefreshToken); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("refresh of the offline_access grant after the end: %d %v", status, out)
	}
}

func TestImpersonationRefusals(t *testing.T) {
	l := newLive(t)
	s := l.s
	disabled := s.CreateUser("acme", map[string]any{"username": "dora", "enabled": false})["id"].(string)
	owner := s.CreateUser("acme", map[string]any{"username": "olga"})["id"].(string)
	r := s.Admin(http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": "corp", "name": "Corp"})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/organizations/corp/members",
		map[string]any{"userId": owner, "role": "owner"}), http.StatusCreated)
	_, lacking := l.adminKey("reader", authz.UsersRead, authz.UsersWrite)
	_, orgsToo := l.adminKey("org-support", authz.UsersImpersonate, authz.OrgsRead, authz.OrgsWrite)
	s.CreateRealm("closed")
	closedUser := s.CreateUser("closed", map[string]any{"username": "carl"})["id"].(string)
	// A user of the administrators' realm, as every administrator is.
	administrator := s.CreateUser("idenplane-admin", map[string]any{"username": "root"})["id"].(string)

	for _, c := range []struct {
		name, key, path string
		status          int
		code            apperr.Code
	}{
		{"realm setting off", l.key, "/admin/realms/closed/users/" + closedUser, http.StatusForbidden, apperr.CodeImpersonationDisabled},
		{"caller lacks users:impersonate", lacking, "/admin/realms/acme/users/" + l.alice, http.StatusForbidden, apperr.CodeForbidden},
		{"user not found", l.key, "/admin/realms/acme/users/nobody", http.StatusNotFound, apperr.CodeNotFound},
		{"user disabled", l.key, "/admin/realms/acme/users/" + disabled, http.StatusConflict, apperr.CodeUserDisabled},
		{"user holds organizations:write", l.key, "/admin/realms/acme/users/" + owner, http.StatusForbidden, apperr.CodePrivilegedUser},
		{"an administrator", apptest.APIKey, "/admin/realms/idenplane-admin/users/" + administrator, http.StatusForbidden, apperr.CodePrivilegedUser},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.Request(http.MethodPost, c.path+"/impersonate", nil, "X-Admin-API-Key: "+c.key)
			apptest.MustError(t, r, c.status, string(c.code), "")
			if r.Header.Get("Set-Cookie") != "" {
				t.Fatalf("a refusal set a cookie: %s", r.Header.Get("Set-Cookie"))
			}
		})
	}
	// The owner is impersonated by a caller holding what she holds.
	apptest.MustStatus(t, s.Request(http.MethodPost, "/admin/realms/acme/users/"+owner+"/impersonate", nil,
		"X-Admin-API-Key: "+orgsToo), http.StatusOK)
	if got := l.loginEvents(store.EventImpersonate); len(got) != 1 || got[0].UserID != owner {
		t.Fatalf("only the allowed impersonation is recorded: %+v", got)
	}
	// The end needs one of its two keys.
	apptest.MustError(t, l.end(map[string]any{}), http.StatusBadRequest, string(apperr.CodeInvalidField), "sessionId")
	apptest.MustError(t, l.end(map[string]any{"sessionId": "x", "userId": "y"}), http.StatusBadRequest, string(apperr.CodeInvalidField), "sessionId")
	apptest.MustStatus(t, l.end(map[string]any{"userId": owner}), http.StatusNoContent)
}

func jwtPart(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
