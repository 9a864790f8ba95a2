package saml_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestSingleLogout(t *testing.T) {
	e := newIdP(t)
	for _, tc := range []struct {
		name                string
		initiator, receiver spOptions
	}{
		{"signing SPs", spOptions{sign: true}, spOptions{sign: true}},
		{"unsigning SPs", spOptions{}, spOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second := newSP(t, e, tc.initiator), newSP(t, e, tc.receiver)
			bystander := newSP(t, e, spOptions{}) // never signed in to: not told
			b := newBrowser(t)
			mustSignedIn(t, b.visit(first.url+"/app", testPassword))
			atSecond := mustSignedIn(t, b.visit(second.url+"/app", ""))

			p := b.visit(first.url+"/logout", "")
			if p.status != http.StatusOK || !strings.Contains(p.body, "logged out; RelayState=sp-state") {
				t.Fatalf("the logout did not come back to the SP that asked: %d %s %.300s", p.status, p.url, p.body)
			}
			second.mu.Lock()
			got := second.logoutRequests
			second.mu.Unlock()
			if len(got) != 1 || got[0].NameID == nil || got[0].NameID.Value != atSecond.NameID || got[0].SessionIndex == nil ||
				got[0].SessionIndex.Value == "" {
				t.Fatalf("the second SP got %+v, want one LogoutRequest for %s", got, atSecond.NameID)
			}
			if len(bystander.logoutRequests) != 0 {
				t.Fatal("an SP the user never signed in to was told")
			}
			// The SSO session is gone: signing in again asks for the password.
			if p := b.visit(bystander.url+"/app", ""); !strings.Contains(p.body, `name="password"`) {
				t.Fatalf("still signed in after the logout: %d %s", p.status, p.url)
			}
			var sessions []map[string]any
			e.Admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil).Decode(t, &sessions)
			if len(sessions) != 0 {
				t.Fatalf("sessions left: %v", sessions)
			}
		})
	}
}

func TestSingleLogoutRefusals(t *testing.T) {
	e := newIdP(t)
	signing := newSP(t, e, spOptions{sign: true})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(signing.url+"/app", testPassword))
	// An unsigned LogoutRequest of an SP with a certificate ends nothing.
	method := signing.mw.ServiceProvider.SignatureMethod
	signing.mw.ServiceProvider.SignatureMethod = ""
	u, err := signing.mw.ServiceProvider.MakeRedirectLogoutRequest("alice", "")
	signing.mw.ServiceProvider.SignatureMethod = method
	if err != nil {
		t.Fatal(err)
	}
	p := b.get(u.String())
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "unsigned") {
		t.Fatalf("unsigned LogoutRequest: %d %.300s", p.status, p.body)
	}
	var sessions []map[string]any
	e.Admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil).Decode(t, &sessions)
	if len(sessions) != 1 {
		t.Fatalf("sessions after a refused logout: %v", sessions)
	}
	// A LogoutResponse nobody awaits.
	r := e.Request(http.MethodGet, ssoPath+"?SAMLResponse="+deflated([]byte(
		`<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="x" Version="2.0"/>`))+"&RelayState=nope", nil)
	mustRefusedPage(t, r, http.StatusBadRequest, "unknown, expired or already finished")
	apptest.MustStatus(t, r, http.StatusBadRequest)
}

func TestSAMLSessionsListed(t *testing.T) {
	e := newIdP(t)
	first, second := newSP(t, e, spOptions{}), newSP(t, e, spOptions{})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(first.url+"/app", testPassword))
	mustSignedIn(t, b.visit(second.url+"/app", ""))
	want := []any{first.url + "/saml/metadata", second.url + "/saml/metadata"}
	for _, path := range []string{"/admin/realms/acme/users/" + e.alice + "/sessions", "/admin/realms/acme/sessions"} {
		var sessions []map[string]any
		r := e.Admin(http.MethodGet, path, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &sessions)
		found := false
		for _, s := range sessions {
			if s["type"] == "sso" {
				found = true
				if got, _ := s["samlServiceProviders"].([]any); !slices.Equal(got, want) {
					t.Fatalf("%s: samlServiceProviders %v, want %v", path, got, want)
				}
			}
		}
		if !found {
			t.Fatalf("%s: no SSO session in %s", path, r.Body)
		}
	}
}
