package app

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// orgSelectEnv is the code flow's realm with organizations acme and bank,
// which alice belongs to (owner, member), off (disabled; alice an admin),
// other (alice no member), and carol, a member of acme only.
type orgSelectEnv struct {
	*codeflowEnv
	orgIDs map[string]string
	cfg    *oauth2.Config
}

func newOrgSelectEnv(t *testing.T) *orgSelectEnv {
	t.Helper()
	e := &orgSelectEnv{codeflowEnv: newCodeflowEnv(t), orgIDs: map[string]string{}}
	carol := e.createUser("acme", map[string]any{"username": "carol", "email": "carol@example.test", "password": codeflowPassword})
	for _, o := range []struct {
		slug, name string
		enabled    bool
	}{{"acme-corp", "Acme Corp", true}, {"bank", "Big Bank", true}, {"off", "Off Ltd", false}, {"other", "Other Inc", true}} {
		r := e.admin(http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": o.slug, "name": o.name, "enabled": o.enabled})
		mustStatus(t, r, http.StatusCreated)
		e.orgIDs[o.slug] = r.object(t)["id"].(string)
	}
	for _, m := range []struct{ org, user, role string }{
		{"acme-corp", e.aliceID, "owner"}, {"bank", e.aliceID, "member"}, {"off", e.aliceID, "admin"},
		{"acme-corp", carol["id"].(string), "member"},
	} {
		mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations/"+m.org+"/members",
			map[string]any{"userId": m.user, "role": m.role}), http.StatusCreated)
	}
	e.cfg = e.oauth2Config("web", e.client("web", nil), "openid", "organization")
	return e
}

// claim is the organization claim of the access and ID tokens, which must
// agree, and of the tokens of a refresh that follows.
func (e *orgSelectEnv) claim(code string) any {
	e.t.Helper()
	tok, err := e.cfg.Exchange(e.t.Context(), code)
	if err != nil {
		e.t.Fatal(err)
	}
	_, access := jwtParts(e.t, tok.AccessToken)
	_, id := jwtParts(e.t, tok.Extra("id_token").(string))
	if !reflect.DeepEqual(access["organization"], id["organization"]) {
		e.t.Fatalf("access token claim %v, ID token claim %v", access["organization"], id["organization"])
	}
	refreshed, err := e.refresh(e.cfg, tok.RefreshToken)
	if err != nil {
		e.t.Fatal(err)
	}
	_, again := jwtParts(e.t, refreshed.AccessToken)
	if !reflect.DeepEqual(access["organization"], again["organization"]) {
		e.t.Fatalf("claim %v after the refresh, %v before", again["organization"], access["organization"])
	}
	info := e.request(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, "Authorization: Bearer "+refreshed.AccessToken)
	mustStatus(e.t, info, http.StatusOK)
	if got := info.object(e.t)["organization"]; !reflect.DeepEqual(got, access["organization"]) {
		e.t.Fatalf("userinfo claim %v, token claim %v", got, access["organization"])
	}
	return access["organization"]
}

func (e *orgSelectEnv) want(slug, role string) any {
	return map[string]any{slug: map[string]any{"id": e.orgIDs[slug], "role": role}}
}

// authURL is an authorization request of web with more parameters.
func (e *orgSelectEnv) authURL(extra ...string) string {
	opts := []oauth2.AuthCodeOption{}
	for i := 0; i+1 < len(extra); i += 2 {
		opts = append(opts, oauth2.SetAuthURLParam(extra[i], extra[i+1]))
	}
	return e.cfg.AuthCodeURL("st", opts...)
}

// signInToChoice signs alice in from u, unless the browser's SSO session
// spares it, and returns the page the sign-in stops at, which must be the
// organization choice.
func (e *orgSelectEnv) signInToChoice(b *codeflowBrowser, u string) *codeflowPage {
	e.t.Helper()
	p := b.follow(e.url, u)
	if p.status == http.StatusOK && strings.Contains(string(p.body), `name="password"`) {
		p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
		if p.status/100 == 3 {
			p = b.follow(e.url, p.location(e.t).String())
		}
	}
	if p.status != http.StatusOK || p.url.Path != "/realms/acme"+pathOrgSelect {
		e.t.Fatalf("at %s with status %d, want the organization choice; body %s", p.url, p.status, p.body)
	}
	return p
}

// The hint, the only membership or no organization scope settle the claim
// without a question; so does a hint the user is no member of, which
// settles on none.
func TestOrgSelectSettledWithoutAsking(t *testing.T) {
	e := newOrgSelectEnv(t)
	noScope := e.oauth2Config("web", "", "openid")
	for _, tc := range []struct {
		name, user string
		url        string
		want       any
	}{
		{"hint organization", "alice", e.authURL("organization", "acme-corp"), e.want("acme-corp", "owner")},
		{"hint kc_org", "alice", e.authURL("kc_org", "bank"), e.want("bank", "member")},
		{"hint in capitals", "alice", e.authURL("kc_org", "BANK"), e.want("bank", "member")},
		{"hint both the same", "alice", e.authURL("organization", "bank", "kc_org", "bank"), e.want("bank", "member")},
		{"hint of a non-member", "alice", e.authURL("organization", "other"), nil},
		{"hint of a disabled organization", "alice", e.authURL("organization", "off"), nil},
		{"hint of an unknown organization", "alice", e.authURL("organization", "nope"), nil},
		{"one membership", "carol", e.authURL(), e.want("acme-corp", "member")},
		{"one membership, another's hint", "carol", e.authURL("organization", "bank"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			back := e.signIn(e.browser(), tc.url, tc.user)
			if got := e.claim(back.Get("code")); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("claim %v, want %v", got, tc.want)
			}
		})
	}
	// Without the organization scope nothing is asked and nothing claimed.
	back := e.signIn(e.browser(), noScope.AuthCodeURL("st"), "alice")
	tok, err := e.cfg.Exchange(t.Context(), back.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if _, claims := jwtParts(t, tok.AccessToken); claims["organization"] != nil {
		t.Errorf("claim without the scope: %v", claims["organization"])
	}
}

// A member of several organizations chooses one after the password; the
// tokens of that authorization and of its refreshes carry that one.
func TestOrgSelectAsks(t *testing.T) {
	e := newOrgSelectEnv(t)
	for _, tc := range []struct {
		choose, role string
	}{{"bank", "member"}, {"acme-corp", "owner"}} {
		t.Run(tc.choose, func(t *testing.T) {
			b := e.browser()
			p := e.signInToChoice(b, e.authURL())
			f := p.form(t)
			if got := f.buttons["organization"]; !reflect.DeepEqual(got, []string{"acme-corp", "bank"}) {
				t.Fatalf("choices %v, want acme-corp and bank (not the disabled one, nor another's)", got)
			}
			if !strings.Contains(string(p.body), "Big Bank") || strings.Contains(string(p.body), "Off Ltd") {
				t.Errorf("page %s", p.body)
			}
			back := e.redirectedBack(b.submit(p, map[string]string{"organization": tc.choose}))
			if got := e.claim(back.Get("code")); !reflect.DeepEqual(got, e.want(tc.choose, tc.role)) {
				t.Errorf("claim %v, want %s", got, tc.choose)
			}
		})
	}
	// Signed in already, the SSO session asks again for a new authorization
	// with no password; prompt=none cannot ask, and says so.
	b := e.browser()
	p := e.signInToChoice(b, e.authURL())
	e.redirectedBack(b.submit(p, map[string]string{"organization": "bank"}))
	silent := e.redirectedBack(b.follow(e.url, e.authURL("prompt", "none")))
	if silent.Get("error") != "interaction_required" || silent.Get("state") != "st" {
		t.Errorf("prompt=none answered %v, want interaction_required", silent)
	}
	p = e.signInToChoice(b, e.authURL())
	back := e.redirectedBack(b.submit(p, map[string]string{"organization": "acme-corp"}))
	if got := e.claim(back.Get("code")); !reflect.DeepEqual(got, e.want("acme-corp", "owner")) {
		t.Errorf("claim %v after the SSO choice", got)
	}
}

// The choice form refuses what is not one of the user's choices, a
// missing or forged CSRF token, another browser, and a second answer.
func TestOrgSelectRefusals(t *testing.T) {
	e := newOrgSelectEnv(t)
	b := e.browser()
	p := e.signInToChoice(b, e.authURL())
	id := p.form(t).fields.Get("authRequestID")
	action := e.issuer("acme") + pathOrgSelect
	for _, tc := range []struct {
		name       string
		set        map[string]string
		wantStatus int
		wantText   string
	}{
		{"not a member", map[string]string{"organization": "other"}, http.StatusBadRequest, "not a member of that organization"},
		{"disabled organization", map[string]string{"organization": "off"}, http.StatusBadRequest, "not a member of that organization"},
		{"no choice", nil, http.StatusBadRequest, "not a member of that organization"},
		{"CSRF token missing", map[string]string{"organization": "bank", "csrf": ""}, http.StatusForbidden, ""},
		{"CSRF token forged", map[string]string{"organization": "bank", "csrf": "forged"}, http.StatusForbidden, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := b.submit(p, tc.set)
			if got.status != tc.wantStatus || !strings.Contains(string(got.body), tc.wantText) {
				t.Fatalf("status %d, want %d with %q; body %s", got.status, tc.wantStatus, tc.wantText, got.body)
			}
			ar, err := e.store.GetAuthRequest(t.Context(), e.realmID(), id)
			if err != nil || ar.Org.Made || ar.Done {
				t.Fatalf("request after a refused answer: %+v, %v", ar, err)
			}
		})
	}
	// Another browser, signed in as alice too, cannot answer this one's.
	other := e.browser()
	q := e.signInToChoice(other, e.authURL())
	forged := url.Values{"authRequestID": {id}, "csrf": {q.form(t).fields.Get("csrf")}, "organization": {"bank"}}
	if got := other.post(action, forged); got.status != http.StatusForbidden {
		t.Errorf("another browser's answer: %d %s", got.status, got.body)
	}
	back := e.redirectedBack(b.submit(p, map[string]string{"organization": "bank"}))
	if got := e.claim(back.Get("code")); !reflect.DeepEqual(got, e.want("bank", "member")) {
		t.Errorf("claim %v", got)
	}
	if again := b.submit(p, map[string]string{"organization": "acme-corp"}); again.status != http.StatusBadRequest {
		t.Errorf("a second answer: %d %s", again.status, again.body)
	}
	// Two hints naming different organizations are the client's mistake.
	bad := e.redirectedBack(b.follow(e.url, e.authURL("organization", "bank", "kc_org", "acme-corp")))
	if bad.Get("error") != "invalid_request" {
		t.Errorf("conflicting hints answered %v", bad)
	}
}
