package orgs_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const e2eRedirect = "https://app.example.test/cb"

// e2e is one live server with the realm acme, its application app and its
// organization acme-corp, mailing through a real SMTP server; upstream is a
// second realm of the same server.
type e2e struct {
	t         *testing.T
	s         *apptest.Server
	base      string
	smtp      *apptest.SMTPServer
	appSecret string
}

func newE2E(t *testing.T, dnsAddr string) *e2e {
	t.Helper()
	smtp := apptest.StartSMTPServer(t, &apptest.SMTPServer{}, nil, false, false)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	s, base := realapp.Live(t, func(c *app.Config) { c.OutboundAllowed, c.DNSResolver = loopback, dnsAddr })
	e := &e2e{t: t, s: s, base: base, smtp: smtp}
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme", map[string]any{"registrationAllowed": true,
		"smtpHost": smtp.Host, "smtpPort": smtp.Port, "smtpFrom": "noreply@acme.test"}), http.StatusOK)
	r := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "app",
		"redirectUris": []string{e2eRedirect}, "grantTypes": []string{"authorization_code"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	e.appSecret = r.Object(t)["secret"].(string)
	createOrg(s, map[string]any{"slug": "acme-corp", "name": "Acme Corp", "domains": []any{map[string]any{"name": "corp.test"}}})
	return e
}

func (e *e2e) issuer(realm string) string { return e.base + "/realms/" + realm }

// authorize is app's authorization URL asking for the organization scope.
func (e *e2e) authorize() string {
	q := url.Values{"client_id": {"app"}, "redirect_uri": {e2eRedirect}, "response_type": {"code"},
		"scope": {"openid organization"}, "state": {"st"}, "nonce": {"nc"}}
	return e.issuer("acme") + "/protocol/openid-connect/auth?" + q.Encode()
}

// tokens redeems the code of p, app's redirect, and verifies the ID and
// access tokens with acme's published keys: their claims.
func (e *e2e) tokens(p *apptest.Page) (id, access map[string]any) {
	e.t.Helper()
	if p.Status/100 != 3 || !strings.HasPrefix(p.Location(e.t).String(), e2eRedirect+"?") {
		e.t.Fatalf("expected the redirect to app, got %d at %s to %q: %s", p.Status, p.URL, p.Header.Get("Location"), p.Body)
	}
	loc := p.Location(e.t)
	if loc.Query().Get("state") != "st" || loc.Query().Get("code") == "" {
		e.t.Fatalf("redirect %s", loc)
	}
	ctx := oidc.ClientContext(e.t.Context(), http.DefaultClient)
	provider, err := oidc.NewProvider(ctx, e.issuer("acme"))
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := oauth2.Config{ClientID: "app", ClientSecret: e.appSecret, Endpoint: provider.Endpoint(), RedirectURL: e2eRedirect}
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"))
	if err != nil {
		e.t.Fatalf("redeem the code: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: "app"}).Verify(ctx, raw)
	if err != nil {
		e.t.Fatalf("ID token: %v", err)
	}
	// The access token is a JWT signed by the same keys; its audience is
	// not app's to check.
	at, err := provider.Verifier(&oidc.Config{SkipClientIDCheck: true}).Verify(ctx, tok.AccessToken)
	if err != nil {
		e.t.Fatalf("access token: %v", err)
	}
	if err := idt.Claims(&id); err != nil {
		e.t.Fatal(err)
	}
	if err := at.Claims(&access); err != nil {
		e.t.Fatal(err)
	}
	return id, access
}

// mustBeMember checks the organization claim of both tokens.
func mustBeMember(t *testing.T, id, access map[string]any, role string) {
	t.Helper()
	for name, claims := range map[string]map[string]any{"ID": id, "access": access} {
		org, _ := claims["organization"].(map[string]any)
		m, _ := org["acme-corp"].(map[string]any)
		if m["role"] != role || m["id"] == "" || m["id"] == nil {
			t.Errorf("%s token organization claim %v, want acme-corp as %s", name, claims["organization"], role)
		}
	}
}

// The whole of an organization's life for its people: an invitation by
// email, through a real SMTP server, to someone without an account, who
// registers on the hosted page, accepts on the invitation page and signs
// in to an application with the organization in both tokens; then someone
// of the organization's verified domain who signs in at its provider, a
// second realm of the server, and comes back a member.
func TestOrganizationEndToEnd(t *testing.T) {
	d := startDNS(t)
	e := newE2E(t, d.addr)
	s := e.s

	// Invited by email: the mail goes out through SMTP.
	invite(s, "acme-corp", map[string]any{"email": "carol@example.test", "role": "member"})
	m := e.smtp.WaitFor(t, "carol@example.test")
	link := invitationLink.FindString(m.Text(t))
	if !strings.HasPrefix(link, e.issuer("acme")+"/account/organizations/acme-corp/invitations/") {
		t.Fatalf("invitation link %q in %s", link, m.Data)
	}

	// The link, opened signed out, leads to the sign-in page, whose
	// register link creates the account and comes back to the invitation.
	b := apptest.NewBrowser(t)
	login := b.Follow(b.Get(link), e.base)
	var register string
	for _, l := range login.Links(t) {
		if strings.Contains(l, "/registration") || strings.Contains(l, "/register") {
			register = l
		}
	}
	if login.Status != http.StatusOK || register == "" {
		t.Fatalf("expected the sign-in page with a register link, got %d at %s: %s", login.Status, login.URL, login.Body)
	}
	form := b.Get(register)
	if form.Status != http.StatusOK || len(form.Forms(t)) == 0 {
		t.Fatalf("register page %d: %s", form.Status, form.Body)
	}
	invitation := b.Follow(b.Submit(form.Forms(t)[0], map[string]string{"username": "carol", "email": "carol@example.test",
		"firstName": "Carol", "lastName": "Jones", "password": "correct horse 1", "confirm": "correct horse 1"}), e.base)
	if invitation.Status != http.StatusOK || !strings.Contains(string(invitation.Body), "Acme Corp") ||
		!strings.HasPrefix(invitation.URL.String(), link) {
		t.Fatalf("expected the invitation page after registering, got %d at %s: %s", invitation.Status, invitation.URL, invitation.Body)
	}
	joined := b.Follow(b.Submit(invitation.Forms(t)[0], nil), e.base)
	if joined.Status != http.StatusOK || !strings.Contains(string(joined.Body), "You are now a member") {
		t.Fatalf("after accepting %d: %s", joined.Status, joined.Body)
	}
	if got := members(s, "acme-corp", ""); len(got) != 1 || got[0] != "carol:member" {
		t.Fatalf("members %v", got)
	}

	// Signed in to app with scope organization: the claim is in both tokens.
	id, access := e.tokens(b.Follow(b.Get(e.authorize()), e.base))
	mustBeMember(t, id, access, "member")
	if id["preferred_username"] != "carol" {
		t.Errorf("ID token of %v", id["preferred_username"])
	}

	// The organization verifies corp.test and connects its provider: the
	// realm upstream of the same server, found by discovery.
	c := initiate(s, "acme-corp", "corp.test")
	d.publish(c.RecordName, c.RecordValue)
	apptest.MustStatus(t, verify(s, "acme-corp", "corp.test"), http.StatusOK)
	s.CreateRealm("upstream")
	s.CreateUser("upstream", map[string]any{"username": "dave", "email": "dave@corp.test", "emailVerified": true,
		"firstName": "Dave", "lastName": "Lane", "password": "upstream horse 1"})
	up := s.Admin(http.MethodPost, "/admin/realms/upstream/clients", map[string]any{"clientId": "acme-broker",
		"redirectUris": []string{e.issuer("acme") + "/broker/corp/callback"}, "grantTypes": []string{"authorization_code"}})
	apptest.MustStatus(t, up, http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "corp",
		"providerType": "oidc", "issuer": e.issuer("upstream"), "clientId": "acme-broker", "clientSecret": up.Object(t)["secret"],
		"trustEmail": true}), http.StatusCreated)
	createConnection(s, "acme-corp", map[string]any{"identityProvider": "corp", "domain": "corp.test", "autoJoin": true})

	// Dave types his email at app's sign-in page and no password: corp's
	// sign-in page, then back to app a member.
	b = apptest.NewBrowser(t)
	login = b.Follow(b.Get(e.authorize()), e.base)
	p := b.Submit(login.Forms(t)[0], map[string]string{"username": "dave@corp.test"})
	upLogin := b.Follow(p, e.base)
	if upLogin.Status != http.StatusOK || !strings.HasPrefix(upLogin.URL.String(), e.issuer("upstream")+"/") {
		t.Fatalf("expected upstream's sign-in page, got %d at %s: %s", upLogin.Status, upLogin.URL, upLogin.Body)
	}
	back := b.Follow(b.Submit(upLogin.Forms(t)[0], map[string]string{"username": "dave", "password": "upstream horse 1"}), e.base)
	id, access = e.tokens(back)
	mustBeMember(t, id, access, "member")
	if id["email"] != "dave@corp.test" {
		t.Errorf("ID token of %v", id["email"])
	}
	if got := members(s, "acme-corp", ""); len(got) != 2 || got[0] != "carol:member" || got[1] != "dave:member" {
		t.Errorf("members %v", got)
	}
}
