package saml_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestSSO(t *testing.T) {
	e := newIdP(t)
	for _, tc := range []struct {
		name string
		o    spOptions
	}{
		{"redirect binding, unsigned request", spOptions{}},
		{"redirect binding, signed request", spOptions{sign: true}},
		{"POST binding, unsigned request", spOptions{binding: crewsaml.HTTPPostBinding}},
		{"POST binding, signed request", spOptions{binding: crewsaml.HTTPPostBinding, sign: true}},
		{"signed assertion only", spOptions{register: map[string]any{"signResponses": false, "signAssertions": true}}},
		{"signed response only", spOptions{register: map[string]any{"signResponses": true, "signAssertions": false}}},
		{"encrypted assertion", spOptions{register: map[string]any{"encryptAssertions": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := newSP(t, e, tc.o)
			b := newBrowser(t)
			got := mustSignedIn(t, b.visit(sp.url+"/app", testPassword))
			if got.NameID == "" {
				t.Fatal("no NameID")
			}
			// Signed in now: the next sign-in at another SP needs no password.
			other := newSP(t, e, spOptions{})
			mustSignedIn(t, b.visit(other.url+"/app", ""))
		})
	}
}

func TestSSONameIDFormats(t *testing.T) {
	e := newIdP(t)
	nameIDs := func(format crewsaml.NameIDFormat) (first, again, other string) {
		t.Helper()
		s := newSP(t, e, spOptions{nameIDFormat: format})
		b := newBrowser(t)
		first = mustSignedIn(t, b.visit(s.url+"/app", testPassword)).NameID
		again = mustSignedIn(t, newBrowser(t).visit(s.url+"/app", testPassword)).NameID // another SSO session
		otherSP := newSP(t, e, spOptions{nameIDFormat: format})
		other = mustSignedIn(t, b.visit(otherSP.url+"/app", "")).NameID
		return first, again, other
	}
	if a, b, c := nameIDs(crewsaml.EmailAddressNameIDFormat); a != "alice@example.test" || b != a || c != a {
		t.Fatalf("email NameIDs %q %q %q", a, b, c)
	}
	if a, b, c := nameIDs(crewsaml.UnspecifiedNameIDFormat); a != "alice" || b != a || c != a {
		t.Fatalf("unspecified NameIDs %q %q %q", a, b, c)
	}
	a, b, c := nameIDs(crewsaml.PersistentNameIDFormat)
	if a != b || a == c || strings.Contains(a, "alice") || len(a) < 32 {
		t.Fatalf("persistent NameIDs %q (again %q, at another SP %q): want stable per SP, opaque", a, b, c)
	}
	a, b, _ = nameIDs(crewsaml.TransientNameIDFormat)
	if a == b || strings.Contains(a, "alice") {
		t.Fatalf("transient NameIDs %q and %q: want new per session, opaque", a, b)
	}

	// The SP's own format when the request leaves it to the identity
	// provider (unspecified).
	s := newSP(t, e, spOptions{nameIDFormat: crewsaml.UnspecifiedNameIDFormat,
		register: map[string]any{"nameIdFormat": string(crewsaml.EmailAddressNameIDFormat)}})
	if got := mustSignedIn(t, newBrowser(t).visit(s.url+"/app", testPassword)).NameID; got != "alice@example.test" {
		t.Fatalf("NameID %q, want the SP's configured email format", got)
	}
}

func TestSSOAttributes(t *testing.T) {
	e := newIdP(t)
	apptest.MustStatus(t, e.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "editor"}), http.StatusCreated)
	apptest.MustStatus(t, e.Admin(http.MethodPost, "/admin/realms/acme/users/"+e.alice+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"editor"}}), http.StatusOK)
	g := e.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"})
	apptest.MustStatus(t, g, http.StatusCreated)
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/users/"+e.alice+"/groups/"+g.Object(t)["id"].(string), nil),
		http.StatusOK)
	s := newSP(t, e, spOptions{register: map[string]any{"attributeStatements": map[string]any{
		"mail": "email", "uid": "username", "cn": "fullName", "givenName": "firstName", "memberOf": "groups",
		"role": "realmRoles", "nick": "attribute:nick", "webRoles": "clientRoles:web"}}})
	got := mustSignedIn(t, newBrowser(t).visit(s.url+"/app", testPassword))
	want := map[string][]string{"mail": {"alice@example.test"}, "uid": {"alice"}, "cn": {"Alice Liddell"},
		"givenName": {"Alice"}, "memberOf": {"staff"}}
	for k, v := range want {
		if !slices.Equal(got.Attributes[k], v) {
			t.Fatalf("attribute %s = %v, want %v (all: %v)", k, got.Attributes[k], v, got.Attributes)
		}
	}
	if !slices.Contains(got.Attributes["role"], "editor") {
		t.Fatalf("role attribute %v lacks editor", got.Attributes["role"])
	}
	for _, absent := range []string{"nick", "webRoles"} { // no such attribute, no such client
		if _, ok := got.Attributes[absent]; ok {
			t.Fatalf("attribute %s sent without a value: %v", absent, got.Attributes[absent])
		}
	}
}

func TestSSOForceAuthn(t *testing.T) {
	e := newIdP(t)
	first := newSP(t, e, spOptions{})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(first.url+"/app", testPassword))
	forced := newSP(t, e, spOptions{forceAuthn: true})
	p := b.visit(forced.url+"/app", "")
	if !strings.Contains(p.body, `name="password"`) {
		t.Fatalf("ForceAuthn with a session did not ask for the password again: %d %s", p.status, p.url)
	}
	mustSignedIn(t, b.visit(forced.url+"/app", testPassword))
}

func TestIDPInitiatedSSO(t *testing.T) {
	e := newIdP(t)
	off := newSP(t, e, spOptions{})
	on := newSP(t, e, spOptions{register: map[string]any{"idpInitiatedSso": true}})
	on.mw.ServiceProvider.AllowIDPInitiated = true
	on.mw.ServiceProvider.DefaultRedirectURI = "/app"
	b := newBrowser(t)

	// Off unless the SP allows it; an unknown ID is as unknown.
	for _, id := range []string{off.id, "not-a-uuid", "00000000-0000-4000-8000-000000000000"} {
		p := b.get(e.base + "/realms/acme/protocol/saml/clients/" + id)
		if p.status != http.StatusNotFound || strings.Contains(p.body, "SAMLResponse") {
			t.Fatalf("IdP-initiated sign-in to %s: %d %.200s", id, p.status, p.body)
		}
	}
	if p := b.get(e.base + "/realms/acme/protocol/saml/clients/" + on.id + "?RelayState=" + strings.Repeat("x", 81)); p.status != http.StatusBadRequest {
		t.Fatalf("RelayState over 80 bytes: %d", p.status)
	}
	// Without a session, through the sign-in; then at once.
	mustSignedIn(t, b.visit(e.base+"/realms/acme/protocol/saml/clients/"+on.id, testPassword))
	p := b.get(e.base + "/realms/acme/protocol/saml/clients/" + on.id + "?RelayState=landing")
	f := p.postForm()
	if f == nil || f.action != on.url+"/saml/acs" || f.values.Get("RelayState") != "landing" {
		t.Fatalf("a signed-in browser is not posted to the ACS at once: %d %.300s", p.status, p.body)
	}
}

func TestSSOEvents(t *testing.T) {
	e := newIdP(t)
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
	s := newSP(t, e, spOptions{})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(s.url+"/app", testPassword))
	req := s.authnRequest(t)
	passive := true
	req.IsPassive = &passive
	apptest.MustStatus(t, e.Request(http.MethodGet, s.redirect(t, req, "", ""), nil), http.StatusOK) // NoPassive: no cookie here
	p := b.visit(s.url+"/logout", "")
	if p.status != http.StatusOK {
		t.Fatalf("logout: %d %.200s", p.status, p.body)
	}
	var events []map[string]any
	e.Admin(http.MethodGet, "/admin/realms/acme/events", nil).Decode(t, &events)
	seen := map[string]bool{}
	for _, ev := range events {
		d, _ := ev["details"].(map[string]any)
		if d["protocol"] == "saml" && ev["clientId"] == s.url+"/saml/metadata" {
			seen[ev["type"].(string)] = true
		}
	}
	for _, typ := range []string{"LOGIN", "LOGIN_ERROR", "LOGOUT"} {
		if !seen[typ] {
			t.Fatalf("no SAML %s event of the SP in %v", typ, events)
		}
	}
}
