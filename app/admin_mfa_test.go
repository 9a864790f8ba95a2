package app

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/identity"
)

func TestAdminMFA(t *testing.T) {
	e := newCodeflowEnv(t)
	e.eventsOn()
	bob := e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})["id"].(string)
	status := func(id string) map[string]any {
		t.Helper()
		r := e.admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/mfa/status", nil)
		mustStatus(t, r, http.StatusOK)
		return r.object(t)
	}
	off := map[string]any{"enabled": false, "required": false, "factors": []any{}, "recoveryCodesRemaining": 0.0}
	if got := status(e.aliceID); !reflect.DeepEqual(got, off) {
		t.Fatalf("status without a factor: %v, want %v", got, off)
	}

	e.totpAlign()
	e.totpEnrol(e.aliceID)
	e.totpEnrol(bob)
	enrolledAt := float64(e.clock.now().UnixMilli())
	on := map[string]any{"enabled": true, "required": false, "factors": []any{"totp"}, "recoveryCodesRemaining": 10.0,
		"totp": map[string]any{"userLabel": "Authenticator app", "createdDate": enrolledAt}}
	if got := status(e.aliceID); !reflect.DeepEqual(got, on) {
		t.Fatalf("status with TOTP: %v, want %v", got, on)
	}

	r := e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/mfa/totp", nil)
	mustStatus(t, r, http.StatusNoContent)
	if got := status(e.aliceID); !reflect.DeepEqual(got, off) {
		t.Fatalf("status after removing TOTP: %v, want %v", got, off)
	}
	// Removing what is not there is done already.
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/mfa/totp", nil), http.StatusNoContent)
	if got := status(bob); got["enabled"] != true {
		t.Fatalf("bob's status after alice's removal: %v", got)
	}
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+bob+"/mfa", nil), http.StatusNoContent)
	if got := status(bob); !reflect.DeepEqual(got, off) {
		t.Fatalf("status after an MFA reset: %v, want %v", got, off)
	}

	// The realm's requirement shows.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
	if got := status(bob); got["required"] != true || got["enabled"] != false {
		t.Fatalf("status under mfaRequired: %v", got)
	}

	// Admin events record the removals on the user; the user's events
	// show TOTP removed by an admin.
	var deletes []adminEventRep
	for _, ev := range eventsTestAdminEvents(e.testServer, "acme", "?operationType=DELETE&resourceType=USER") {
		if ev.ResourceType == "USER" {
			deletes = append(deletes, ev)
		}
	}
	paths := []string{}
	for _, ev := range deletes {
		paths = append(paths, ev.ResourcePath)
	}
	want := []string{"users/" + bob + "/mfa", "users/" + e.aliceID + "/mfa/totp", "users/" + e.aliceID + "/mfa/totp"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("admin DELETE events on users: %v, want %v", paths, want)
	}
	removed := e.loginEvents("REMOVE_TOTP")
	if len(removed) != 2 || removed[0].UserID != bob || removed[1].UserID != e.aliceID || removed[0].Details["by"] != "admin" {
		t.Fatalf("REMOVE_TOTP events %+v: want one each for bob and alice, by an admin", removed)
	}

	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/admin/realms/acme/users/00000000-0000-4000-8000-000000000000/mfa/status"},
		{http.MethodDelete, "/admin/realms/acme/users/00000000-0000-4000-8000-000000000000/mfa"},
		{http.MethodDelete, "/admin/realms/acme/users/00000000-0000-4000-8000-000000000000/mfa/totp"},
		{http.MethodGet, "/admin/realms/nope/users/" + e.aliceID + "/mfa/status"},
		{http.MethodDelete, "/admin/realms/nope/users/" + e.aliceID + "/mfa"},
	} {
		mustError(t, e.admin(tc.method, tc.path, nil), http.StatusNotFound, "not_found", "")
	}
	mustError(t, e.request(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/mfa", nil), http.StatusUnauthorized, "unauthorized", "")
}

// TOTP is never exported; a realm replaced by an import keeps the second
// factors of the users it keeps by ID, and they still sign in with them.
func TestRealmImportKeepsTOTP(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.totpAlign()
	totpSecret, recovery := e.totpEnrol(e.aliceID)

	for _, q := range []string{"?includeUsers=true", "?includeUsers=true&includeSecrets=true"} {
		export := e.admin(http.MethodGet, "/admin/realms/acme/export"+q, nil)
		mustStatus(t, export, http.StatusOK)
		for _, leak := range []string{totpSecret, "totp", recovery[0]} {
			if strings.Contains(strings.ToLower(string(export.Body)), strings.ToLower(leak)) {
				t.Fatalf("export%s contains %q", q, leak)
			}
		}
		mustStatus(t, e.admin(http.MethodPost, "/admin/realms/import?overwrite=true", export.Body), http.StatusCreated)
	}
	var status mfaStatusRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/mfa/status", nil).decode(t, &status)
	if !status.Enabled || status.RecoveryCodesRemaining != identity.RecoveryCodeCount {
		t.Fatalf("status after import: %+v", status)
	}
	e.clock.advance(totpTestStep)
	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	e.redirectedBack(b.submit(page, map[string]string{"code": totpTestCode(t, totpSecret, e.clock.now())}))
}
