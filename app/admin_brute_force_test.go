package app

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// bruteTestLockedUsers lists acme's locked users, with an optional query.
func bruteTestLockedUsers(t *testing.T, s *testServer, query string) []map[string]any {
	t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/acme/brute-force/locked-users"+query, nil)
	mustStatus(t, r, http.StatusOK)
	var out []map[string]any
	r.decode(t, &out)
	return out
}

func TestAdminBruteForce(t *testing.T) {
	e := newBruteEnv(t, nil)
	start := e.clock.now()
	bob, err := e.store.GetUserByUsername(t.Context(), e.realmID, "bob")
	if err != nil {
		t.Fatal(err)
	}
	bobID := bob.ID
	if got := bruteTestLockedUsers(t, e.testServer, ""); len(got) != 0 {
		t.Fatalf("locked users before any failure: %v", got)
	}
	// alice locked now, bob a minute later; bob's lockout ends later, so he comes first.
	for range 3 {
		e.mustRefuse("alice's failure", "alice", "wrong password")
	}
	e.clock.advance(time.Minute)
	for range 3 {
		e.mustRefuse("bob's failure", "bob", "wrong password")
	}
	got := bruteTestLockedUsers(t, e.testServer, "")
	want := []map[string]any{
		{"userId": bobID, "username": "bob", "numFailures": 3.0, "lastFailure": float64(start.Add(time.Minute).UnixMilli()),
			"lastIPFailure": "192.0.2.1", "lockedUntil": float64(start.Add(21 * time.Minute).UnixMilli()), "permanent": false,
			"temporaryLockouts": 1.0},
		{"userId": e.aliceID, "username": "alice", "numFailures": 3.0, "lastFailure": float64(start.UnixMilli()),
			"lastIPFailure": "192.0.2.1", "lockedUntil": float64(start.Add(20 * time.Minute).UnixMilli()), "permanent": false,
			"temporaryLockouts": 1.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("locked users\n got %v\nwant %v", got, want)
	}
	if page := bruteTestLockedUsers(t, e.testServer, "?first=1&max=1"); len(page) != 1 || page[0]["username"] != "alice" {
		t.Fatalf("second page %v", page)
	}
	mustError(t, e.admin(http.MethodGet, "/admin/realms/acme/brute-force/locked-users?max=0", nil), http.StatusBadRequest, "invalid_parameter", "max")
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/nope/brute-force/locked-users", nil), http.StatusNotFound)

	// unlock, and its alias.
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/brute-force/users/"+e.aliceID+"/unlock", nil), http.StatusNoContent)
	if got := bruteTestLockedUsers(t, e.testServer, ""); len(got) != 1 || got[0]["username"] != "bob" {
		t.Fatalf("locked users after alice's unlock: %v", got)
	}
	e.mustSignIn("alice after the unlock", "alice")
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/brute-force/users/"+bobID, nil), http.StatusNoContent)
	if got := bruteTestLockedUsers(t, e.testServer, ""); len(got) != 0 {
		t.Fatalf("locked users after bob's unlock: %v", got)
	}
	e.mustSignIn("bob after the unlock", "bob")
	// Unlocking a user who is not locked is fine; an unknown user is not.
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/brute-force/users/"+bobID+"/unlock", nil), http.StatusNoContent)
	for _, path := range []string{"/brute-force/users/nobody/unlock", "/brute-force/users/nobody"} {
		mustError(t, e.admin(http.MethodPost, "/admin/realms/acme"+path, nil), http.StatusNotFound, "not_found", "")
	}
	mustStatus(t, e.request(http.MethodPost, "/admin/realms/acme/brute-force/users/"+bobID+"/unlock", nil), http.StatusUnauthorized)
	mustStatus(t, e.request(http.MethodGet, "/admin/realms/acme/brute-force/locked-users", nil), http.StatusUnauthorized)

	// The unlocks are admin events. (The alias is named by its method, as
	// every POST without an action segment is: CREATE.)
	var paths []string
	for _, ev := range eventsTestAdminEvents(e.testServer, "acme", "?resourceType=BRUTE_FORCE") {
		if strings.HasSuffix(ev.ResourcePath, "/unlock") && ev.OperationType != "ACTION" {
			t.Errorf("unlock recorded as %s", ev.OperationType)
		}
		paths = append(paths, ev.ResourcePath)
	}
	wantPaths := []string{
		"brute-force/users/" + bobID + "/unlock",
		"brute-force/users/" + bobID,
		"brute-force/users/" + e.aliceID + "/unlock",
	}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Fatalf("admin events %q, want %q", paths, wantPaths)
	}
}
