package app

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Admin create and reset apply the whole policy, with one 400 on the
// password field naming every unmet rule.
func TestAdminUsersPasswordPolicy(t *testing.T) {
	s := newTestServer(t)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "passwordMinLength": 10,
		"passwordRequireUppercase": true, "passwordRequireDigits": true, "passwordRequireSpecialChars": true}), http.StatusCreated)
	users := "/admin/realms/acme/users"
	for _, c := range []struct {
		name, password, want string
	}{
		{"weak", "weak", "password: must be at least 10 characters; must contain an uppercase letter, a digit, a special character"},
		{"one class short", "Longenough1", "password: must contain a special character"},
		{"the username", "Alice.Liddell-1", "password: must not be the username"},
	} {
		r := s.admin(http.MethodPost, users, map[string]any{"username": "alice.liddell-1", "password": c.password})
		mustError(t, r, http.StatusBadRequest, "invalid_field", "password")
		if got := r.object(t)["error_description"]; got != c.want {
			t.Errorf("create, %s: %q, want %q", c.name, got, c.want)
		}
	}
	if r := s.admin(http.MethodGet, users+"?username=alice", nil); !strings.Contains(string(r.Body), `"total":0`) {
		t.Fatalf("a refused create stored a user: %s", r.Body)
	}
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice1@example.test", "password": "Str0ng-enough"})
	reset := users + "/" + alice["id"].(string) + "/reset-password"
	for _, c := range []struct {
		name, password, want string
	}{
		{"weak", "weak", "password: must be at least 10 characters; must contain an uppercase letter, a digit, a special character"},
		{"the email", "Alice1@Example.Test", "password: must not be the email address"},
	} {
		r := s.admin(http.MethodPut, reset, map[string]any{"password": c.password})
		mustError(t, r, http.StatusBadRequest, "invalid_field", "password")
		if got := r.object(t)["error_description"]; got != c.want {
			t.Errorf("reset, %s: %q, want %q", c.name, got, c.want)
		}
	}
	mustStatus(t, s.admin(http.MethodPut, reset, map[string]any{"password": "An0ther-strong"}), http.StatusNoContent)
}

// The realm remembers passwordHistoryCount passwords, the current one
// included: those are refused, the one before them is accepted again.
func TestPasswordHistory(t *testing.T) {
	clock := &codeflowClock{}
	clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newTestServer(t, func(c *Config) { c.Now = clock.now })
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "passwordHistoryCount": 3}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "once", "passwordHistoryCount": 1}), http.StatusCreated)
	s.createRealm("free")
	id := s.createUser("acme", map[string]any{"username": "alice", "password": "password-1"})["id"].(string)
	reset := func(realm, id, password string) *testResponse {
		t.Helper()
		clock.advance(time.Minute)
		return s.admin(http.MethodPut, "/admin/realms/"+realm+"/users/"+id+"/reset-password", map[string]any{"password": password})
	}
	refused := func(r *testResponse, want string) {
		t.Helper()
		mustError(t, r, http.StatusBadRequest, "invalid_field", "password")
		if got := r.object(t)["error_description"]; got != want {
			t.Fatalf("%q, want %q", got, want)
		}
	}
	for _, p := range []string{"password-2", "password-3", "password-4"} {
		mustStatus(t, reset("acme", id, p), http.StatusNoContent)
	}
	// The last three: the current one and the two before.
	for _, p := range []string{"password-4", "password-3", "password-2"} {
		refused(reset("acme", id, p), "password: must not be one of the last 3 passwords")
	}
	mustStatus(t, reset("acme", id, "password-1"), http.StatusNoContent)
	// The window moves: now password-4, -3 and -1 are the last three.
	refused(reset("acme", id, "password-4"), "password: must not be one of the last 3 passwords")
	mustStatus(t, reset("acme", id, "password-2"), http.StatusNoContent)
	// The store keeps only what the policy needs: the two before the current.
	realm, err := s.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if hashes, err := s.store.PasswordHistory(t.Context(), realm.ID, id, 100); err != nil || len(hashes) != 2 {
		t.Fatalf("history %v %v, want two hashes", hashes, err)
	}
	// The change time is the reset's.
	if u, err := s.store.GetUser(t.Context(), realm.ID, id); err != nil || u.PasswordChangedAt != clock.now().UnixMilli() {
		t.Fatalf("user %+v %v, want password_changed_at %d", u, err, clock.now().UnixMilli())
	}

	// passwordHistoryCount 1: only the current password is refused.
	bob := s.createUser("once", map[string]any{"username": "bob", "password": "password-1"})["id"].(string)
	refused(reset("once", bob, "password-1"), "password: must not be the current password")
	mustStatus(t, reset("once", bob, "password-2"), http.StatusNoContent)
	mustStatus(t, reset("once", bob, "password-1"), http.StatusNoContent)
	// Without a history, even the current one may be set again.
	carol := s.createUser("free", map[string]any{"username": "carol", "password": "password-1"})["id"].(string)
	mustStatus(t, reset("free", carol, "password-1"), http.StatusNoContent)
}
