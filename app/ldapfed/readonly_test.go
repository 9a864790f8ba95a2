package ldapfed_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// A READ_ONLY directory owns its users' profiles; every directory owns
// its users' passwords. Each write path refuses, naming the field.
func TestDirectoryOwnsProfileAndPassword(t *testing.T) {
	for _, mode := range []string{"READ_ONLY", "IMPORT"} {
		t.Run(mode, func(t *testing.T) {
			e := newSignInEnv(t, nil)
			createProvider(t, e.s, with(directoryProvider("corp", e.d), "syncMode", mode))
			bearer := e.accessToken("ann", "ann-pw")
			ann := e.user("ann")
			userPath := "/admin/realms/acme/users/" + ann.ID
			readOnly := mode == "READ_ONLY"
			scimToken := e.s.Admin(http.MethodPost, "/admin/realms/acme/scim/tokens", map[string]any{"name": "provisioning"})
			apptest.MustStatus(t, scimToken, http.StatusCreated)
			scim := func(body map[string]any) *apptest.Response {
				return e.s.Request(http.MethodPatch, "/scim/v2/acme/Users/"+ann.ID, body,
					"Authorization: Bearer "+scimToken.Object(t)["token"].(string), "Content-Type: application/scim+json")
			}
			scimPatch := func(path string, value any) map[string]any {
				return map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"},
					"Operations": []map[string]any{{"op": "replace", "path": path, "value": value}}}
			}

			profileWrites := []struct {
				name, field string
				send        func() *apptest.Response
			}{
				{"admin PUT email", "email", func() *apptest.Response {
					return e.s.Admin(http.MethodPut, userPath, map[string]any{"email": "x@example.org"})
				}},
				{"admin PATCH name", "firstName", func() *apptest.Response {
					return e.s.Admin(http.MethodPatch, userPath, map[string]any{"firstName": "Mallory"})
				}},
				{"admin PUT username", "username", func() *apptest.Response {
					return e.s.Admin(http.MethodPut, userPath, map[string]any{"username": "ann2"})
				}},
				{"account profile", "lastName", func() *apptest.Response {
					return e.s.Request(http.MethodPost, "/realms/acme/account/profile", map[string]any{"lastName": "Other"},
						bearer, "Accept: application/json")
				}},
			}
			for _, w := range profileWrites {
				r := w.send()
				if readOnly {
					apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", w.field)
				} else if r.Status != http.StatusOK && r.Status != http.StatusNoContent {
					t.Fatalf("%s in IMPORT mode: %d %s", w.name, r.Status, r.Body)
				}
			}
			// SCIM, a provisioning client's write: a SCIM error (RFC 7644
			// §3.12) naming the field the directory owns.
			r := scim(scimPatch("name.givenName", "Mallory"))
			if readOnly {
				apptest.MustStatus(t, r, http.StatusBadRequest)
				if !strings.Contains(string(r.Body), "firstName") || !strings.Contains(string(r.Body), "urn:ietf:params:scim:api:messages:2.0:Error") {
					t.Fatalf("SCIM PATCH of a READ_ONLY user: %s", r.Body)
				}
			} else {
				apptest.MustStatus(t, r, http.StatusOK)
			}
			if readOnly {
				if u := e.user("ann"); u.Email != ann.Email || u.FirstName != ann.FirstName || u.LastName != ann.LastName {
					t.Fatalf("a refused write changed ann: %+v", u)
				}
				// The flags stay the realm's to change.
				apptest.MustStatus(t, e.s.Admin(http.MethodPatch, userPath, map[string]any{"requirePasswordReset": false,
					"emailVerified": false}), http.StatusOK)
			}
			// The password is the directory's in both modes.
			apptest.MustError(t, e.s.Admin(http.MethodPut, userPath+"/reset-password", map[string]any{"password": "a long new password 1"}),
				http.StatusBadRequest, "invalid_field", "password")
			r = e.s.Request(http.MethodPost, "/realms/acme/account/password", map[string]any{"currentPassword": "ann-pw",
				"newPassword": "a long new password 1", "confirmation": "a long new password 1"}, bearer, "Accept: application/json")
			apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", "password")
			r = scim(scimPatch("password", "a long new password 1"))
			apptest.MustStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(string(r.Body), "password") || !strings.Contains(string(r.Body), "urn:ietf:params:scim:api:messages:2.0:Error") {
				t.Fatalf("SCIM password of a directory user: %s", r.Body)
			}
			e.mustSignIn("ann", "ann-pw")
			// A sign-in brings the directory's profile back.
			if u := e.user("ann"); u.Email != "ann@example.org" || u.FirstName != "Ann" || u.LastName != "Lee" {
				t.Fatalf("after a sign-in: %+v", u)
			}
		})
	}
}
