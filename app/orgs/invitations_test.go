package orgs_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/orgs"
)

// clock is a settable clock for the server under test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// newMailServer starts the server on a clock with the realm acme, which
// sends mail (to the outbox: no worker runs in tests).
func newMailServer(t *testing.T) (*apptest.Server, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	s := realapp.New(t, func(cfg *app.Config) { cfg.Now = c.now })
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme",
		map[string]any{"smtpHost": "mail.acme.test", "smtpFrom": "noreply@acme.test"}), http.StatusOK)
	return s, c
}

var invitationLink = regexp.MustCompile(`https?://[^\s"<]+/invitations/[A-Za-z0-9_-]+`)

// mailedInvitation finds the last invitation mailed to, and returns the
// link and its token.
func mailedInvitation(t *testing.T, s *apptest.Server, to string) (link, token string) {
	t.Helper()
	mails, err := s.Store.DueEmails(context.Background(), time.Now().Add(time.Hour).UnixMilli(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mails {
		if m.Recipient == to {
			link = invitationLink.FindString(m.TextBody)
		}
	}
	if link == "" {
		t.Fatalf("no invitation mailed to %s", to)
	}
	return link, link[strings.LastIndex(link, "/")+1:]
}

func invite(s *apptest.Server, slug string, body map[string]any) orgs.InvitationRep {
	s.T.Helper()
	r := s.Admin(http.MethodPost, orgsPath+"/"+slug+"/invitations", body)
	apptest.MustStatus(s.T, r, http.StatusCreated)
	var inv orgs.InvitationRep
	r.Decode(s.T, &inv)
	return inv
}

// userToken signs a user in with the password grant of the client web.
func userToken(t *testing.T, s *apptest.Server, secret, username, password string) string {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}}
	r := s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("web:"+secret)))
	apptest.MustStatus(t, r, http.StatusOK)
	return r.Object(t)["access_token"].(string)
}

func accept(s *apptest.Server, slug, token, accessToken string) *apptest.Response {
	s.T.Helper()
	return s.Request(http.MethodPost, orgsPath+"/"+slug+"/invitations/"+token+"/accept", nil, "Authorization: Bearer "+accessToken)
}

func TestInvitations(t *testing.T) {
	s, c := newMailServer(t)
	secret, _ := passwordClient(t, s)
	createOrg(s, map[string]any{"slug": "acme-corp", "name": "Acme Corp"})

	inv := invite(s, "acme-corp", map[string]any{"email": "Alice@Example.test", "role": "admin"})
	if inv.Email != "alice@example.test" || inv.Role != "admin" || inv.ID == "" ||
		inv.ExpiresTimestamp != c.t.Add(7*24*time.Hour).UnixMilli() || inv.CreatedTimestamp != c.t.UnixMilli() {
		t.Errorf("invitation %+v", inv)
	}
	link, token := mailedInvitation(t, s, "alice@example.test")
	if want := apptest.BaseURL + "/realms/acme/account/organizations/acme-corp/invitations/"; !strings.HasPrefix(link, want) || len(token) != 43 {
		t.Errorf("link %s", link)
	}
	r := s.Admin(http.MethodGet, orgsPath+"/acme-corp/invitations", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if strings.Contains(string(r.Body), token) {
		t.Error("the listing shows the token")
	}
	var pending []orgs.InvitationRep
	if r.Decode(t, &pending); len(pending) != 1 || pending[0].ID != inv.ID {
		t.Errorf("pending %+v", pending)
	}

	alice := userToken(t, s, secret, "alice", "correct horse 1")
	r = accept(s, "acme-corp", token, alice)
	apptest.MustStatus(t, r, http.StatusOK)
	var m orgs.MemberRep
	if r.Decode(t, &m); m.Username != "alice" || m.Role != "admin" {
		t.Errorf("accepted as %+v", m)
	}
	if got := members(s, "acme-corp", ""); !slices.Equal(got, []string{"alice:admin"}) {
		t.Errorf("members %v", got)
	}
	// Used: refused, and no longer pending.
	apptest.MustError(t, accept(s, "acme-corp", token, alice), 400, "invalid_token", "token")
	// The link is a credential: the events that recorded its use name the
	// route's variable, never the token.
	for _, events := range []string{"/admin/realms/acme/admin-events", "/admin/realms/acme/events"} {
		r = s.Admin(http.MethodGet, events, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		if strings.Contains(string(r.Body), token) {
			t.Errorf("%s holds the invitation's token: %s", events, r.Body)
		}
	}
	r = s.Admin(http.MethodGet, orgsPath+"/acme-corp/invitations", nil)
	if r.Decode(t, &pending); len(pending) != 0 {
		t.Errorf("pending after use %+v", pending)
	}

	// Expired: refused, and not listed.
	s.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": "correct horse 2"})
	invite(s, "acme-corp", map[string]any{"email": "bob@example.test", "expiresIn": 600})
	_, bobsToken := mailedInvitation(t, s, "bob@example.test")
	c.t = c.t.Add(601 * time.Second)
	bob := userToken(t, s, secret, "bob", "correct horse 2")
	r = accept(s, "acme-corp", bobsToken, bob)
	apptest.MustError(t, r, 400, "invalid_token", "token")
	if !strings.Contains(string(r.Body), "expired") {
		t.Errorf("expiry not said: %s", r.Body)
	}
	r = s.Admin(http.MethodGet, orgsPath+"/acme-corp/invitations", nil)
	if r.Decode(t, &pending); len(pending) != 0 {
		t.Errorf("pending after expiry %+v", pending)
	}
}

func TestInvitationsBadInput(t *testing.T) {
	s, _ := newMailServer(t)
	secret, alice := passwordClient(t, s)
	createOrg(s, map[string]any{"slug": "acme-corp", "name": "Acme Corp"})
	createOrg(s, map[string]any{"slug": "other", "name": "Other"})
	createOrg(s, map[string]any{"slug": "off", "name": "Off", "enabled": false})
	addMember(s, "other", alice, "member")
	s.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": "correct horse 2"})
	invite(s, "acme-corp", map[string]any{"email": "carol@example.test"})
	_, carolsToken := mailedInvitation(t, s, "carol@example.test")
	invite(s, "acme-corp", map[string]any{"email": "alice@example.test"})
	_, alicesInvitation := mailedInvitation(t, s, "alice@example.test")

	for _, tc := range []struct {
		name        string
		slug        string
		body        any
		status      int
		code, field string
	}{
		{"unknown organization", "nope", map[string]any{"email": "x@example.test"}, 404, "not_found", ""},
		{"no email", "acme-corp", map[string]any{"role": "member"}, 400, "invalid_field", "email"},
		{"not an email", "acme-corp", map[string]any{"email": "alice"}, 400, "invalid_field", "email"},
		{"email with a name", "acme-corp", map[string]any{"email": "Alice <alice@example.test>"}, 400, "invalid_field", "email"},
		{"unknown role", "acme-corp", map[string]any{"email": "x@example.test", "role": "boss"}, 400, "invalid_field", "role"},
		{"too short", "acme-corp", map[string]any{"email": "x@example.test", "expiresIn": 10}, 400, "invalid_field", "expiresIn"},
		{"too long", "acme-corp", map[string]any{"email": "x@example.test", "expiresIn": 31 * 86400}, 400, "invalid_field", "expiresIn"},
		{"already a member", "other", map[string]any{"email": "ALICE@example.test"}, 409, "conflict", "email"},
		{"disabled organization", "off", map[string]any{"email": "x@example.test"}, 400, "invalid_request", ""},
		{"unknown field", "acme-corp", map[string]any{"email": "x@example.test", "token": "x"}, 400, "unknown_field", "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, orgsPath+"/"+tc.slug+"/invitations", tc.body), tc.status, tc.code, tc.field)
		})
	}

	aliceAT := userToken(t, s, secret, "alice", "correct horse 1")
	bobAT := userToken(t, s, secret, "bob", "correct horse 2")
	for _, tc := range []struct {
		name, slug, token, bearer string
		status                    int
		code, field               string
	}{
		{"unknown token", "acme-corp", "forged", aliceAT, 400, "invalid_token", "token"},
		{"another organization's token", "other", alicesInvitation, aliceAT, 400, "invalid_token", "token"},
		{"another person's invitation", "acme-corp", carolsToken, bobAT, 403, "forbidden", ""},
		{"no access token", "acme-corp", alicesInvitation, "", 401, "unauthorized", ""},
		{"forged access token", "acme-corp", alicesInvitation, "a.b.c", 401, "invalid_token", ""},
		{"unknown organization", "nope", alicesInvitation, aliceAT, 400, "invalid_token", "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.bearer != "" {
				headers = append(headers, "Authorization: Bearer "+tc.bearer)
			}
			r := s.Request(http.MethodPost, orgsPath+"/"+tc.slug+"/invitations/"+tc.token+"/accept", nil, headers...)
			apptest.MustError(t, r, tc.status, tc.code, tc.field)
			if tc.status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("no Bearer challenge: %v", r.Header)
			}
		})
	}
	// None of it was used.
	apptest.MustStatus(t, accept(s, "acme-corp", alicesInvitation, aliceAT), http.StatusOK)

	// A realm that cannot send mail cannot invite.
	s.CreateRealm("quiet")
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/quiet/organizations", map[string]any{"slug": "q", "name": "Q"}), http.StatusCreated)
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/quiet/organizations/q/invitations",
		map[string]any{"email": "x@example.test"}), 400, "invalid_request", "")
	r := s.Admin(http.MethodGet, "/admin/realms/quiet/organizations/q/invitations", nil)
	if apptest.MustStatus(t, r, http.StatusOK); strings.TrimSpace(string(r.Body)) != "[]" {
		t.Errorf("an invitation that was not mailed was kept: %s", r.Body)
	}
}
