package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// attributeForm is the form of the user's page at path that changes the
// attribute name, or for "" the one that adds an attribute.
func attributeForm(c *console, path, name string) *apptest.Form {
	c.f.t.Helper()
	for _, form := range c.get(path).Forms(c.f.t) {
		if strings.HasSuffix(form.Action, "/attributes") && form.Fields.Get("name") == name {
			return form
		}
	}
	c.f.t.Fatalf("no form of the attribute %q on %s", name, path)
	return nil
}

// putAttributes gives the user attrs with the user's PUT, the rest of
// the representation as read.
func putAttributes(f *fixture, realm, user string, attrs map[string]any) {
	f.t.Helper()
	rep := f.api("/admin/realms/" + realm + "/users/" + user)
	delete(rep, "id")
	delete(rep, "createdTimestamp")
	rep["attributes"] = attrs
	apptest.MustStatus(f.t, f.srv.Admin(http.MethodPut, "/admin/realms/"+realm+"/users/"+user, rep), http.StatusOK)
}

// giveFactors gives the user an authenticator app and two passkeys,
// {realm}-key-1 and {realm}-key-2, as their enrolment stores them.
func giveFactors(f *fixture, realm, user string) {
	f.t.Helper()
	ctx, st := context.Background(), f.srv.Store
	realmID := f.srv.Realm(realm).ID
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
	totp := &store.Credential{ID: realm + "-totp", RealmID: realmID, UserID: user, Type: store.CredentialTOTP, Label: "phone",
		Secret: []byte("0123456789abcdef0123"), CreatedAt: created}
	if err := st.BeginCredential(ctx, totp); err != nil {
		f.t.Fatal(err)
	}
	if err := st.ConfirmCredential(ctx, realmID, totp.ID, 1, nil, created); err != nil {
		f.t.Fatal(err)
	}
	for i, name := range []string{"YubiKey", "Laptop"} {
		id := realm + "-key-" + string(rune('1'+i))
		if err := st.AddWebAuthnCredential(ctx, &store.WebAuthnCredential{ID: id, RealmID: realmID, UserID: user, Name: name,
			CredentialID: []byte(realm + id), Data: []byte(`{}`), CreatedAt: created}); err != nil {
			f.t.Fatal(err)
		}
	}
}

// linkIdentity links the user to an account at the realm's identity
// provider corp, as a first sign-in through it does.
func linkIdentity(f *fixture, realm, user string) {
	f.t.Helper()
	apptest.MustStatus(f.t, f.srv.Admin(http.MethodPost, "/admin/realms/"+realm+"/identity-providers", map[string]any{"alias": "corp",
		"providerType": "oauth2", "clientId": "c", "clientSecret": "s", "authorizationUrl": "https://idp.example.test/auth",
		"tokenUrl": "https://idp.example.test/token", "userinfoUrl": "https://idp.example.test/me"}), http.StatusCreated)
	realmID := f.srv.Realm(realm).ID
	idp, err := f.srv.Store.GetIdentityProvider(context.Background(), realmID, "corp")
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.srv.Store.CreateFederatedIdentity(context.Background(), &store.FederatedIdentity{ProviderID: idp.ID, UserID: user,
		RealmID: realmID, Subject: "corp-42", Username: "bob.corp", Email: "bob@corp.example", CreatedAt: time.Now().UnixMilli()}); err != nil {
		f.t.Fatal(err)
	}
}

// A user's page lists their second factors one by one and their linked
// identities; a linked identity is unlinked after a confirmation, as the
// API's DELETE does.
func TestConsoleUnlinksAnIdentity(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	user := f.srv.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})["id"].(string)
	giveFactors(f, "acme", user)
	linkIdentity(f, "acme", user)
	page := "/console/realms/acme/users/" + user
	body := string(c.get(page).Body)
	for _, want := range []string{"YubiKey", "Laptop", "phone", "bob.corp", "bob@corp.example", page + "/identities/corp/unlink",
		page + "/passkeys/acme-key-2/remove", page + "/totp/remove"} {
		if !strings.Contains(body, want) {
			t.Errorf("the user's page lacks %q", want)
		}
	}
	confirm := c.get(page + "/identities/corp/unlink")
	if !strings.Contains(string(confirm.Body), "Unlink the account of bob at corp?") {
		t.Fatalf("the confirmation: %s", confirm.Body)
	}
	p := c.submit(page+"/identities/corp/unlink", page+"/identities/corp/unlink", nil)
	if loc := p.Location(t); loc.Path != page || loc.Query().Get("done") != "console.done.identityUnlinked" {
		t.Fatalf("after the unlink: %d %s", p.Status, loc)
	}
	var links []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/users/"+user+"/federated-identity", nil).Decode(t, &links)
	if len(links) != 0 {
		t.Fatalf("linked identities left: %v", links)
	}
	if !strings.Contains(string(c.get(page+"?done=console.done.identityUnlinked").Body), "The linked identity is removed.") {
		t.Fatal("the page does not say what was done")
	}
}

// The reset mail goes through the API's PUT .../reset-password-email:
// refused at the form while the realm cannot send mail, queued once it
// can.
func TestConsoleSendsThePasswordResetMail(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	user := f.srv.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})["id"].(string)
	page := "/console/realms/acme/users/" + user
	p := c.submit(page, page+"/password/mail", nil)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(string(p.Body), `role="alert"`) ||
		!strings.Contains(string(p.Body), "smtp") {
		t.Fatalf("a realm without mail: %d %s", p.Status, p.Body)
	}
	apptest.MustStatus(t, f.srv.Admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"smtpHost": "127.0.0.1", "smtpPort": 1,
		"smtpFrom": "id@example.test"}), http.StatusOK)
	apptest.MustStatus(t, f.srv.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}),
		http.StatusOK)
	p = c.submit(page, page+"/password/mail", nil)
	if loc := p.Location(t); loc.Path != page || loc.Query().Get("done") != "console.done.resetMailSent" {
		t.Fatalf("after the mail: %d %s", p.Status, p.Body)
	}
	var events []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/events?"+url.Values{"type": {"SEND_RESET_PASSWORD"}}.Encode(), nil).Decode(t, &events)
	if len(events) != 1 || events[0]["userId"] != user {
		t.Fatalf("SEND_RESET_PASSWORD events: %v", events)
	}
}
