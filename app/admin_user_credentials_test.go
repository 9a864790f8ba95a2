package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// One passkey goes by its ID, the others and the authenticator app stay;
// an ID that is none of the user's is a 404, whoever's it is.
func TestAdminRemovesOnePasskey(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	realmID := s.web().Realm("acme").ID
	bob := s.createUser("acme", map[string]any{"username": "bob"})["id"].(string)
	eve := s.createUser("acme", map[string]any{"username": "eve"})["id"].(string)
	for _, k := range []struct{ id, user string }{{"bob-1", bob}, {"bob-2", bob}, {"eve-1", eve}} {
		if err := s.store.AddWebAuthnCredential(t.Context(), &store.WebAuthnCredential{ID: k.id, RealmID: realmID, UserID: k.user,
			Name: k.id, CredentialID: []byte(k.id), Data: []byte(`{}`), CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	base := "/admin/realms/acme/users/" + bob + "/mfa/webauthn/"
	mustError(t, s.admin(http.MethodDelete, base+"eve-1", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, base+"none", nil), http.StatusNotFound, "not_found", "")
	mustStatus(t, s.admin(http.MethodDelete, base+"bob-1", nil), http.StatusNoContent)
	mustError(t, s.admin(http.MethodDelete, base+"bob-1", nil), http.StatusNotFound, "not_found", "")
	for user, want := range map[string]int{bob: 1, eve: 1} {
		keys, err := s.store.WebAuthnCredentials(t.Context(), realmID, user)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != want {
			t.Errorf("user %s has %d keys, want %d", user, len(keys), want)
		}
	}
}

// The reset mail is refused for a user it cannot reach or should not
// reach, each for its reason, and queued otherwise.
func TestAdminSendsTheResetMail(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	path := func(id string) string { return "/admin/realms/acme/users/" + id + "/reset-password-email" }
	noMail := s.createUser("acme", map[string]any{"username": "nomail"})["id"].(string)
	off := s.createUser("acme", map[string]any{"username": "off", "email": "off@example.test", "enabled": false})["id"].(string)
	bob := s.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})["id"].(string)
	r := s.admin(http.MethodPut, path(noMail), nil)
	mustError(t, r, http.StatusBadRequest, "invalid_request", "")
	if !strings.Contains(string(r.Body), "no email address") {
		t.Fatalf("a user without an address: %s", r.Body)
	}
	mustError(t, s.admin(http.MethodPut, path(off), nil), http.StatusConflict, "invalid_state", "")
	r = s.admin(http.MethodPut, path(bob), nil)
	mustError(t, r, http.StatusBadRequest, "invalid_request", "")
	if !strings.Contains(string(r.Body), "no sender address") {
		t.Fatalf("a realm without mail: %s", r.Body)
	}
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"smtpHost": "127.0.0.1", "smtpPort": 1,
		"smtpFrom": "id@example.test"}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPut, path(bob), nil), http.StatusNoContent)
	mustError(t, s.admin(http.MethodPut, path("nobody"), nil), http.StatusNotFound, "not_found", "")
}
