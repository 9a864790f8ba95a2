package main

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserOrgMember is a member as the organization's member list shows it.
type browserOrgMember struct {
	Username string `json:"username"`
	Role     string `json:"role"`
}

// invite invites email to the organization slug of acme with role and
// returns the link of the mail that arrives.
func (e *browserEnv) invite(box *browserMailbox, slug, email, role string) string {
	e.t.Helper()
	e.admin(http.MethodPost, "/admin/realms/acme/organizations/"+slug+"/invitations",
		map[string]any{"email": email, "role": role}, http.StatusCreated, nil)
	m := box.next()
	if m.to != email && !strings.Contains(m.to, "<"+email+">") {
		e.t.Fatalf("invitation mailed to %q, want %s", m.to, email)
	}
	var links []string
	for _, l := range browserLinkRE.FindAllString(m.text, -1) {
		if u, err := url.Parse(l); err == nil && strings.HasPrefix(u.Path, "/realms/acme/account/organizations/"+slug+"/invitations/") {
			links = append(links, l)
		}
	}
	if len(links) == 0 {
		e.t.Fatalf("invitation mail %q without its link:\n%s", m.subject, m.text)
	}
	return links[0]
}

// members lists the organization's members as username:role.
func (e *browserEnv) members(slug string) map[string]string {
	e.t.Helper()
	var list []browserOrgMember
	e.admin(http.MethodGet, "/admin/realms/acme/organizations/"+slug+"/members", nil, http.StatusOK, &list)
	out := map[string]string{}
	for _, m := range list {
		out[m.Username] = m.Role
	}
	return out
}

// TestBrowserOrganizations: a person opens the invitation mailed to them,
// signs in, accepts and is a member; a new person registers from the
// invitation's sign-in and accepts; a member of two organizations signing
// in to an application that asks for the organization scope chooses one,
// and the application's tokens carry that one.
func TestBrowserOrganizations(t *testing.T) {
	e := newBrowserEnv(t)
	box := newBrowserMailbox(t)
	settings := box.realmSettings()
	settings["displayName"], settings["registrationAllowed"] = "Acme", true
	e.realm("acme", settings)
	aliceID := e.user("acme", map[string]any{"username": "alice", "email": "alice@example.test", "emailVerified": true,
		"firstName": "Alice", "lastName": "Liddell", "password": browserPassword})
	orgIDs := map[string]string{}
	for _, o := range []struct{ slug, name string }{{"acme-corp", "Acme Corp"}, {"bank", "Big Bank"}} {
		var rep struct {
			ID string `json:"id"`
		}
		e.admin(http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": o.slug, "name": o.name}, http.StatusCreated, &rep)
		orgIDs[o.slug] = rep.ID
	}

	// alice: the mailed link, the sign-in, the invitation, accepted.
	b := e.browser()
	if status := b.open("", e.invite(box, "acme-corp", "alice@example.test", "admin")); status != http.StatusOK {
		t.Fatalf("invitation link: status %d at %s", status, b.location())
	}
	if status := b.signIn("org-invitation", "alice", browserPassword); status != http.StatusOK {
		t.Fatalf("after signing in: status %d at %s", status, b.location())
	}
	if h := b.heading(); h != "Join an organization" {
		t.Fatalf("after signing in: heading %q at %s, want the invitation", h, b.location())
	}
	b.mustShow("Acme Corp", "admin")
	if status := b.click("", "Accept the invitation"); status != http.StatusOK {
		t.Fatalf("accepting: status %d at %s", status, b.location())
	}
	b.mustShow("You are now a member of the organization.")
	if got := e.members("acme-corp"); !reflect.DeepEqual(got, map[string]string{"alice": "admin"}) {
		t.Fatalf("members of acme-corp %v, want alice as admin", got)
	}

	// grace, new here: from the invitation's sign-in to the register page,
	// then the invitation, accepted.
	g := e.browser()
	g.open("", e.invite(box, "bank", "grace@example.test", "member"))
	g.click("", "Create an account")
	g.fill("Username", "grace")
	g.fill("Email", "grace@example.test")
	g.fill("Password", browserPassword)
	g.fill("Confirm password", browserPassword)
	if status := g.click("", "Create account"); status != http.StatusOK || g.heading() != "Join an organization" {
		t.Fatalf("after registering: status %d, heading %q at %s; want the invitation", status, g.heading(), g.location())
	}
	g.mustShow("Big Bank", "member")
	g.click("", "Accept the invitation")
	g.mustShow("You are now a member of the organization.")
	if got := e.members("bank"); !reflect.DeepEqual(got, map[string]string{"grace": "member"}) {
		t.Fatalf("members of bank %v, want grace", got)
	}

	// alice, now also of bank, signs in to an application asking for the
	// organization scope and chooses bank.
	e.admin(http.MethodPost, "/admin/realms/acme/organizations/bank/members", map[string]any{"userId": aliceID, "role": "owner"},
		http.StatusCreated, nil)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, map[string]any{"clientId": "shop", "name": "The Shop"})
	rp := e.relyingParty("acme", "shop", secret, cb.url, "openid", "organization")
	verifier := oauth2.GenerateVerifier()
	a := e.browser()
	a.open("", rp.config.AuthCodeURL("state-org", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-org")))
	if status := a.signIn("org-select", "alice", browserPassword); status != http.StatusOK {
		t.Fatalf("after signing in: status %d at %s", status, a.location())
	}
	if h := a.heading(); h != "Sign in for which organization?" {
		t.Fatalf("after signing in: heading %q at %s, want the organization choice", h, a.location())
	}
	a.mustShow("The Shop", "Acme Corp", "Big Bank", "Role: admin", "Role: owner")
	if _, err := a.tryClick("", "Big Bank"); err != nil || !strings.HasPrefix(a.location(), cb.url+"?") {
		t.Fatalf("choosing did not lead back to the application: %v (page %s)", err, a.location())
	}
	back := cb.wait()
	if back.Get("state") != "state-org" || back.Get("code") == "" {
		t.Fatalf("redirect back %v", back)
	}
	tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	_, claims := rp.verify(tok, "nonce-org")
	want := map[string]any{"bank": map[string]any{"id": orgIDs["bank"], "role": "owner"}}
	if !reflect.DeepEqual(claims["organization"], want) {
		t.Fatalf("ID token organization claim %v, want %v", claims["organization"], want)
	}
}
