package app

import (
	"net/http"
	"testing"
	"time"
)

func TestAccountAPIDeletion(t *testing.T) {
	e := newAccountEnv(t)
	tok := e.token("alice", codeflowPassword).AccessToken
	status := func() map[string]any {
		t.Helper()
		r := e.api(http.MethodGet, "/delete-account", tok, nil)
		mustStatus(t, r, http.StatusOK)
		return r.object(t)
	}
	if got := status(); len(got) != 1 || got["scheduled"] != false {
		t.Fatalf("status before %v", got)
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no password", map[string]any{}, 400, "invalid_field", "currentPassword"},
		{"wrong password", map[string]any{"currentPassword": "wrong password!"}, 400, "invalid_field", "currentPassword"},
		{"unknown field", map[string]any{"password": codeflowPassword}, 400, "unknown_field", "password"},
		{"no body", "", 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, e.api(http.MethodPost, "/delete-account", tok, tc.body), tc.status, tc.code, tc.field)
		})
	}
	mustError(t, e.api(http.MethodPost, "/cancel-delete-account", tok, nil), http.StatusNotFound, "not_found", "")

	asked := e.clock.now().UnixMilli()
	r := e.api(http.MethodPost, "/delete-account", tok, map[string]any{"currentPassword": codeflowPassword})
	mustStatus(t, r, http.StatusAccepted)
	want := map[string]any{"scheduled": true, "requestedAt": float64(asked), "deleteAt": float64(asked + 7*24*time.Hour.Milliseconds())}
	if got := r.object(t); !mapsEqual(got, want) {
		t.Fatalf("scheduled %v, want %v", got, want)
	}
	if got := status(); !mapsEqual(got, want) {
		t.Fatalf("status %v, want %v", got, want)
	}
	if got := e.api(http.MethodGet, "/", tok, nil).object(t)["deletion"]; !mapsEqual(got.(map[string]any), want) {
		t.Fatalf("account's deletion %v", got)
	}
	// During the window the user can still sign in; asking again moves
	// nothing; cancelling does.
	e.clock.advance(time.Hour)
	tok = e.token("alice", codeflowPassword).AccessToken
	mustError(t, e.api(http.MethodPost, "/delete-account", tok, map[string]any{"currentPassword": codeflowPassword}),
		http.StatusConflict, "conflict", "")
	if got := status(); !mapsEqual(got, want) {
		t.Fatalf("status after a second request %v, want %v", got, want)
	}
	r = e.api(http.MethodPost, "/cancel-delete-account", tok, nil)
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); len(got) != 1 || got["scheduled"] != false {
		t.Fatalf("after cancel %v", got)
	}
	if got := status(); got["scheduled"] != false {
		t.Fatalf("status after cancel %v", got)
	}
	ev := e.loginEvents(e.aliceID)
	for _, typ := range []string{"DELETE_ACCOUNT_SCHEDULED", "DELETE_ACCOUNT_CANCELLED"} {
		if hasEvent(ev, typ) == nil {
			t.Fatalf("no %s in %+v", typ, ev)
		}
	}
	// A cancelled deletion never happens.
	e.clock.advance(8 * 24 * time.Hour)
	e.app.account.DeleteDueAccounts(t.Context())
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID, nil), http.StatusOK)
}

func TestAccountDeletionJob(t *testing.T) {
	e := newAccountEnv(t)
	bob := e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})["id"].(string)
	carol := e.createUser("acme", map[string]any{"username": "carol", "password": codeflowPassword})["id"].(string)
	schedule := func(user string) {
		t.Helper()
		tok := e.token(user, codeflowPassword).AccessToken
		mustStatus(t, e.api(http.MethodPost, "/delete-account", tok, map[string]any{"currentPassword": codeflowPassword}), http.StatusAccepted)
	}
	schedule("alice")
	schedule("bob")
	e.clock.advance(time.Hour)
	schedule("carol") // an hour later: still in its window when the others are due

	userStatus := func(id string) int {
		return e.admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil).Status
	}
	e.clock.advance(7*24*time.Hour - time.Hour - time.Millisecond)
	e.app.account.DeleteDueAccounts(t.Context())
	for _, id := range []string{e.aliceID, bob, carol} {
		if s := userStatus(id); s != http.StatusOK {
			t.Fatalf("user %s deleted before the window ended: %d", id, s)
		}
	}
	e.clock.advance(time.Millisecond)
	e.app.account.DeleteDueAccounts(t.Context())
	for id, want := range map[string]int{e.aliceID: http.StatusNotFound, bob: http.StatusNotFound, carol: http.StatusOK} {
		if s := userStatus(id); s != want {
			t.Fatalf("user %s: %d, want %d", id, s, want)
		}
	}
	// Deleted as the admin API deletes: sessions and all go with the user.
	sessions, err := e.store.ListUserSessions(t.Context(), mustRealmID(t, e.testServer, "acme"), e.aliceID, 0)
	if err != nil || len(sessions) != 0 {
		t.Fatalf("sessions of a deleted user %v, %v", sessions, err)
	}
	if _, err := e.cfg.PasswordCredentialsToken(t.Context(), "alice", codeflowPassword); err == nil {
		t.Fatal("a deleted user signs in")
	}
	d := hasEvent(e.loginEvents(e.aliceID), "DELETE_ACCOUNT")
	if d == nil || d.Details["username"] != "alice" {
		t.Fatalf("DELETE_ACCOUNT event %+v", d)
	}
	e.clock.advance(time.Hour)
	e.app.account.DeleteDueAccounts(t.Context())
	if s := userStatus(carol); s != http.StatusNotFound {
		t.Fatalf("carol after her window: %d", s)
	}
	// A second run finds nothing to do.
	e.app.account.DeleteDueAccounts(t.Context())
}

// mapsEqual compares decoded JSON objects.
func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
