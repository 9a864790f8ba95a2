package app

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var orgInvitationLink = regexp.MustCompile(`https?://[^\s"<]+/invitations/[A-Za-z0-9_-]+`)

// orgInvite invites email to the organization acme-corp of the account
// environment and returns the path and query of the mailed link.
func orgInvite(e *accountEnv, email, role string) string {
	e.t.Helper()
	mustStatus(e.t, e.admin(http.MethodPost, "/admin/realms/acme/organizations/acme-corp/invitations",
		map[string]any{"email": email, "role": role}), http.StatusCreated)
	mails, err := e.store.DueEmails(e.t.Context(), time.Now().Add(24*time.Hour).UnixMilli(), 100)
	if err != nil {
		e.t.Fatal(err)
	}
	link := ""
	for _, m := range mails {
		if m.Recipient == email {
			link = orgInvitationLink.FindString(m.TextBody)
		}
	}
	u, err := url.Parse(link)
	if err != nil || link == "" {
		e.t.Fatalf("no invitation link mailed to %s: %v", email, err)
	}
	return u.RequestURI()
}

func orgMemberRoles(e *accountEnv) string {
	e.t.Helper()
	r := e.admin(http.MethodGet, "/admin/realms/acme/organizations/acme-corp/members", nil)
	mustStatus(e.t, r, http.StatusOK)
	var list []struct{ Username, Role string }
	r.decode(e.t, &list)
	var out []string
	for _, m := range list {
		out = append(out, m.Username+":"+m.Role)
	}
	return strings.Join(out, " ")
}

// The mailed link, opened signed out, signs in and comes back to the
// invitation, which the form accepts once.
func TestOrgInvitationPage(t *testing.T) {
	e := newAccountEnv(t)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations",
		map[string]any{"slug": "acme-corp", "name": "Acme Corp"}), http.StatusCreated)
	link := orgInvite(e, "alice@example.test", "admin")

	b := e.browser()
	p := e.signInAt(b, link, "alice", codeflowPassword)
	if p.status != http.StatusOK || !strings.Contains(string(p.body), "Acme Corp") || !strings.Contains(string(p.body), "admin") {
		t.Fatalf("invitation page %d: %s", p.status, p.body)
	}
	joined := b.submit(p, nil)
	if joined.status != http.StatusOK || !strings.Contains(string(joined.body), "You are now a member") {
		t.Fatalf("after accepting %d: %s", joined.status, joined.body)
	}
	if got := orgMemberRoles(e); got != "alice:admin" {
		t.Errorf("members %q", got)
	}
	// The link is spent: the page says so.
	again := b.get(e.url + link)
	if again.status != http.StatusBadRequest || !strings.Contains(string(again.body), "already been used") {
		t.Errorf("the used link %d: %s", again.status, again.body)
	}
	// A form posted without its CSRF token does nothing.
	link = orgInvite(e, "alice2@example.test", "member")
	forged := b.post(e.url+link, url.Values{"csrf": {"forged"}})
	if forged.status < 400 {
		t.Errorf("a forged form was accepted: %d", forged.status)
	}
}

// The page answers an API caller in JSON, and accepts for it.
func TestOrgInvitationPageAPI(t *testing.T) {
	e := newAccountEnv(t)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations",
		map[string]any{"slug": "acme-corp", "name": "Acme Corp"}), http.StatusCreated)
	link := orgInvite(e, "alice@example.test", "member")
	invitation := link[strings.LastIndex(link, "/")+1:]
	tok := e.token("alice", codeflowPassword).AccessToken

	r := e.api(http.MethodGet, "/organizations/acme-corp/invitations/"+invitation, tok, nil)
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["organization"] != "acme-corp" || got["role"] != "member" || got["email"] != "alice@example.test" {
		t.Errorf("invitation %v", got)
	}
	mustError(t, e.api(http.MethodGet, "/organizations/acme-corp/invitations/forged", tok, nil), 400, "invalid_token", "token")
	mustError(t, e.api(http.MethodGet, "/organizations/other/invitations/"+invitation, tok, nil), 400, "invalid_token", "token")
	mustStatus(t, e.api(http.MethodPost, "/organizations/acme-corp/invitations/"+invitation, tok, nil), http.StatusOK)
	mustError(t, e.api(http.MethodPost, "/organizations/acme-corp/invitations/"+invitation, tok, nil), 400, "invalid_token", "token")
	if got := orgMemberRoles(e); got != "alice:member" {
		t.Errorf("members %q", got)
	}
}
