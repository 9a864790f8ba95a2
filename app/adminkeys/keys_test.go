package adminkeys_test

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

// A key is shown once: created with its secret, then listed and read
// without it, nor its hash; it is used at the admin API in either header
// with exactly its permissions.
func TestNamedKeyCreateListUse(t *testing.T) {
	c := newClock()
	s := newServer(t, c)
	k := createKey(t, s, map[string]any{"name": "reports", "permissions": []string{"users:read", "realm:read", "users:read"}})
	if !slices.Equal(k.Permissions, []string{"realm:read", "users:read"}) || k.State != "active" ||
		k.CreatedBy != "api-key:bootstrap" || k.CreatedAt != c.Millis() || k.ExpiresAt != 0 || k.Realm != "" {
		t.Fatalf("created %+v", k)
	}
	if !strings.HasPrefix(k.APIKey, k.Prefix) || len(k.Prefix) >= len(k.APIKey) {
		t.Fatalf("prefix %q of key %q", k.Prefix, k.APIKey)
	}
	// The secret is base64url, so it may hold "_" itself: it is all that
	// follows the ID.
	secret := strings.SplitN(k.APIKey, "_", 3)[2]

	// Only its hash is stored: the database file holds its name, not its
	// secret.
	var file []byte
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(s.DBPath + suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		file = append(file, data...)
	}
	if !bytes.Contains(file, []byte("reports")) || bytes.Contains(file, []byte(secret)) {
		t.Fatalf("the database file holds the name: %v, the secret: %v", bytes.Contains(file, []byte("reports")),
			bytes.Contains(file, []byte(secret)))
	}

	r := s.Admin(http.MethodGet, keysPath, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []keyJSON
	r.Decode(t, &list)
	if len(list) != 1 || list[0].ID != k.ID || list[0].APIKey != "" || list[0].Prefix != k.Prefix {
		t.Fatalf("list %s", r.Body)
	}
	for _, body := range [][]byte{r.Body, s.Admin(http.MethodGet, keysPath+"/"+k.ID, nil).Body} {
		if strings.Contains(string(body), secret) || strings.Contains(string(body), "apiKey") || strings.Contains(string(body), "ash") {
			t.Fatalf("a secret or a hash is shown: %s", body)
		}
	}

	for name, send := range map[string]func(*apptest.Server, string, string, string, any) *apptest.Response{
		"X-Admin-API-Key": with, "Bearer": bearer,
	} {
		apptest.MustStatus(t, send(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
		apptest.MustStatus(t, send(s, k.APIKey, http.MethodGet, "/admin/realms/beta", nil), http.StatusOK)
		mustRefuse(t, send(s, k.APIKey, http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "eve"}),
			http.StatusForbidden, "forbidden", "", "users:write")
		mustRefuse(t, send(s, k.APIKey, http.MethodGet, keysPath, nil), http.StatusForbidden, "forbidden", "", "system:manage")
		// A wrong secret of a real ID is no key.
		forged := k.APIKey[:len(k.APIKey)-len(secret)] + strings.Repeat("A", len(secret))
		mustRefuse(t, send(s, forged, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusUnauthorized,
			"unauthorized", "", "missing or invalid admin credentials")
		t.Logf("%s: used", name)
	}

	r = bearer(s, k.APIKey, http.MethodGet, "/admin/auth/me", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if me := r.Object(t); me["type"] != "api-key" || me["id"] != k.ID || me["name"] != "reports" {
		t.Fatalf("me %s", r.Body)
	}
}

// A key confined to a realm acts on that realm's routes only: another
// realm's, or a route of no realm, does not know it.
func TestNamedKeyConfinedToItsRealm(t *testing.T) {
	s := newServer(t, newClock())
	k := createKey(t, s, map[string]any{"name": "acme-sync", "permissions": []string{"users:read"}, "realm": "acme"})
	if k.Realm != "acme" {
		t.Fatalf("realm %q", k.Realm)
	}
	apptest.MustStatus(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	mustRefuse(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/beta/users", nil), http.StatusUnauthorized,
		"unauthorized", "", "acts only in its own realm")
	mustRefuse(t, bearer(s, k.APIKey, http.MethodGet, "/admin/realms", nil), http.StatusUnauthorized,
		"unauthorized", "", "acts only on that realm's routes")
	mustRefuse(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/nowhere/users", nil), http.StatusUnauthorized,
		"unauthorized", "", "")

	mustRefuse(t, s.Admin(http.MethodPost, keysPath, map[string]any{"name": "x", "permissions": []string{"users:read"},
		"realm": "nowhere"}), http.StatusBadRequest, "invalid_field", "realm", "nowhere")
}

// A key stops working at its expiry, by the server's clock.
func TestNamedKeyExpires(t *testing.T) {
	c := newClock()
	s := newServer(t, c)
	k := createKey(t, s, map[string]any{"name": "temp", "permissions": []string{"users:read"}, "expiresInDays": 1})
	if want := c.Now().Add(24 * time.Hour).UnixMilli(); k.ExpiresAt != want {
		t.Fatalf("expiresAt %d, want %d", k.ExpiresAt, want)
	}
	at := createKey(t, s, map[string]any{"name": "until", "permissions": []string{"users:read"},
		"expiresAt": c.Now().Add(time.Hour).UnixMilli()})
	c.Advance(time.Hour - time.Millisecond)
	apptest.MustStatus(t, with(s, at.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	c.Advance(time.Millisecond)
	mustRefuse(t, with(s, at.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusUnauthorized,
		"unauthorized", "", "until has expired")
	apptest.MustStatus(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	c.Advance(23 * time.Hour)
	mustRefuse(t, bearer(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusUnauthorized,
		"unauthorized", "", "temp has expired")
	if got := getKey(t, s, k.ID); got.State != "expired" {
		t.Fatalf("state %q, want expired", got.State)
	}
	mustRefuse(t, s.Admin(http.MethodPost, keysPath+"/"+k.ID+"/rotate", nil), http.StatusConflict, "invalid_state", "",
		"no longer works")
}

// A revoked key is refused at once, and stays listed, revoked.
func TestNamedKeyRevoked(t *testing.T) {
	c := newClock()
	s := newServer(t, c)
	k := createKey(t, s, map[string]any{"name": "ci", "permissions": []string{"all"}})
	apptest.MustStatus(t, bearer(s, k.APIKey, http.MethodGet, "/admin/realms", nil), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, keysPath+"/"+k.ID, nil), http.StatusNoContent)
	mustRefuse(t, bearer(s, k.APIKey, http.MethodGet, "/admin/realms", nil), http.StatusUnauthorized,
		"unauthorized", "", "ci has been revoked")
	c.Advance(time.Minute)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, keysPath+"/"+k.ID, nil), http.StatusNoContent)
	if got := getKey(t, s, k.ID); got.State != "revoked" || got.RevokedAt != c.Millis()-time.Minute.Milliseconds() {
		t.Fatalf("after revocation %+v", got)
	}
	mustRefuse(t, s.Admin(http.MethodPost, keysPath+"/"+k.ID+"/rotate", nil), http.StatusConflict, "invalid_state", "",
		"no longer works")
}

// A rotation gives a new secret; the old one works for the grace asked,
// then not; without a grace it stops at once.
func TestNamedKeyRotation(t *testing.T) {
	c := newClock()
	s := newServer(t, c)
	k := createKey(t, s, map[string]any{"name": "deploy", "permissions": []string{"users:read"}})
	old := k.APIKey
	r := s.Admin(http.MethodPost, keysPath+"/"+k.ID+"/rotate", map[string]any{"graceSeconds": 60})
	apptest.MustStatus(t, r, http.StatusOK)
	var rot keyJSON
	r.Decode(t, &rot)
	if rot.ID != k.ID || rot.APIKey == old || !strings.HasPrefix(rot.APIKey, rot.Prefix) || rot.Prefix == k.Prefix ||
		rot.RotatedAt != c.Millis() || rot.PreviousSecretValidUntil != c.Millis()+60_000 {
		t.Fatalf("rotated %s", r.Body)
	}
	users := "/admin/realms/acme/users"
	c.Advance(59 * time.Second)
	apptest.MustStatus(t, with(s, old, http.MethodGet, users, nil), http.StatusOK)
	apptest.MustStatus(t, with(s, rot.APIKey, http.MethodGet, users, nil), http.StatusOK)
	c.Advance(time.Second)
	mustRefuse(t, with(s, old, http.MethodGet, users, nil), http.StatusUnauthorized, "unauthorized", "",
		"this secret no longer works")
	apptest.MustStatus(t, bearer(s, rot.APIKey, http.MethodGet, users, nil), http.StatusOK)
	if got := getKey(t, s, k.ID); got.PreviousSecretValidUntil != 0 || got.State != "active" {
		t.Fatalf("after the grace %+v", got)
	}

	// No body: no grace.
	r = s.Admin(http.MethodPost, keysPath+"/"+k.ID+"/rotate", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	third := r.Object(t)["apiKey"].(string)
	apptest.MustError(t, with(s, rot.APIKey, http.MethodGet, users, nil), http.StatusUnauthorized, "unauthorized", "")
	apptest.MustStatus(t, with(s, third, http.MethodGet, users, nil), http.StatusOK)

	// Revoking ends a grace still running.
	r = s.Admin(http.MethodPost, keysPath+"/"+k.ID+"/rotate", map[string]any{"graceSeconds": 3600})
	apptest.MustStatus(t, r, http.StatusOK)
	apptest.MustStatus(t, with(s, third, http.MethodGet, users, nil), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, keysPath+"/"+k.ID, nil), http.StatusNoContent)
	apptest.MustError(t, with(s, third, http.MethodGet, users, nil), http.StatusUnauthorized, "unauthorized", "")

	for _, g := range []any{-1, 30*24*3600 + 1, "60"} {
		r := s.Admin(http.MethodPost, keysPath+"/"+k.ID+"/rotate", map[string]any{"graceSeconds": g})
		if r.Status != http.StatusBadRequest {
			t.Fatalf("graceSeconds %v: %d %s", g, r.Status, r.Body)
		}
	}
}

// What a key cannot be: each refusal for its own reason.
func TestNamedKeyRefusals(t *testing.T) {
	c := newClock()
	s := newServer(t, c)
	createKey(t, s, map[string]any{"name": "taken", "permissions": []string{"users:read"}})
	perms := []string{"users:read"}
	for _, tc := range []struct {
		name              string
		body              map[string]any
		status            int
		code, field, says string
	}{
		{"no name", map[string]any{"permissions": perms}, 400, "invalid_field", "name", "is required"},
		{"empty name", map[string]any{"name": "", "permissions": perms}, 400, "invalid_field", "name", "is required"},
		{"name with a line break", map[string]any{"name": "a\nb", "permissions": perms}, 400, "invalid_field", "name", "must not contain"},
		{"the bootstrap key's name", map[string]any{"name": "bootstrap", "permissions": perms}, 400, "invalid_field", "name", "bootstrap key"},
		{"no permission", map[string]any{"name": "n"}, 400, "invalid_field", "permissions", "at least one"},
		{"unknown permission", map[string]any{"name": "n", "permissions": []string{"users:read", "root"}}, 400,
			"invalid_field", "permissions", `unknown permission \"root\"`},
		{"all beside others", map[string]any{"name": "n", "permissions": []string{"all", "users:read"}}, 400,
			"invalid_field", "permissions", "stands alone"},
		{"expiry in the past", map[string]any{"name": "n", "permissions": perms, "expiresAt": c.Millis() - 1}, 400,
			"invalid_field", "expiresAt", "in the future"},
		{"expiry now", map[string]any{"name": "n", "permissions": perms, "expiresAt": c.Millis()}, 400,
			"invalid_field", "expiresAt", "in the future"},
		{"negative days", map[string]any{"name": "n", "permissions": perms, "expiresInDays": -1}, 400,
			"invalid_field", "expiresInDays", "between 1 and"},
		{"both expiries", map[string]any{"name": "n", "permissions": perms, "expiresInDays": 1,
			"expiresAt": c.Millis() + 1000}, 400, "invalid_field", "expiresInDays", "not both"},
		{"unknown field", map[string]any{"name": "n", "permissions": perms, "secret": "mine"}, 400, "unknown_field", "secret", ""},
		{"a realm's key with a system permission", map[string]any{"name": "n", "realm": "acme",
			"permissions": []string{"users:read", "system:manage"}}, 400, "invalid_field", "permissions", "no system permission"},
		{"a realm's key with every permission", map[string]any{"name": "n", "realm": "acme", "permissions": []string{"all"}},
			400, "invalid_field", "permissions", "no system permission"},
		{"duplicate name", map[string]any{"name": "taken", "permissions": perms}, 409, "conflict", "name", `named \"taken\" exists`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustRefuse(t, s.Admin(http.MethodPost, keysPath, tc.body), tc.status, tc.code, tc.field, tc.says)
		})
	}
	unknown := "0123456789abcdef"
	mustRefuse(t, s.Admin(http.MethodGet, keysPath+"/"+unknown, nil), 404, "not_found", "", unknown)
	mustRefuse(t, s.Admin(http.MethodPost, keysPath+"/"+unknown+"/rotate", nil), 404, "not_found", "", unknown)
	mustRefuse(t, s.Admin(http.MethodDelete, keysPath+"/"+unknown, nil), 404, "not_found", "", unknown)
	r := s.Admin(http.MethodGet, keysPath, nil)
	if n := len(strings.Split(string(r.Body), `"id"`)) - 1; n != 1 {
		t.Fatalf("a refusal made a key: %s", r.Body)
	}
}

// Nobody makes or rotates a key holding a permission they lack: a key
// with system:manage and users:read makes a key of users:read, not one of
// users:write nor "all", and rotates neither the bootstrap-made key of
// more.
func TestNamedKeyGrantsNothingItsCallerLacks(t *testing.T) {
	s := newServer(t, newClock())
	admin := createKey(t, s, map[string]any{"name": "key-admin", "permissions": []string{"system:manage", "users:read"}})
	wide := createKey(t, s, map[string]any{"name": "wide", "permissions": []string{"users:read", "users:write"}})

	mustRefuse(t, with(s, admin.APIKey, http.MethodPost, keysPath, map[string]any{"name": "more",
		"permissions": []string{"users:read", "users:write"}}), http.StatusForbidden, "forbidden", "",
		"more holds the permission users:write: it cannot be made by a caller that does not hold it")
	mustRefuse(t, with(s, admin.APIKey, http.MethodPost, keysPath, map[string]any{"name": "everything",
		"permissions": []string{"all"}}), http.StatusForbidden, "forbidden", "", "the permission system:read")
	mustRefuse(t, with(s, admin.APIKey, http.MethodPost, keysPath+"/"+wide.ID+"/rotate", nil), http.StatusForbidden,
		"forbidden", "", "wide holds the permission users:write: it cannot be rotated")
	apptest.MustStatus(t, with(s, wide.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)

	r := with(s, admin.APIKey, http.MethodPost, keysPath, map[string]any{"name": "less", "permissions": []string{"users:read"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	if by := r.Object(t)["createdBy"]; by != "api-key:key-admin" {
		t.Fatalf("createdBy %v", by)
	}
	apptest.MustStatus(t, with(s, admin.APIKey, http.MethodPost, keysPath+"/"+r.Object(t)["id"].(string)+"/rotate", nil),
		http.StatusOK)
}

// An admin event names the key that acted: its kind, ID and name.
func TestNamedKeyNamedInAdminEvents(t *testing.T) {
	s := newServer(t, newClock())
	k := createKey(t, s, map[string]any{"name": "provisioner", "permissions": []string{"users:write"}, "realm": "acme"})
	r := bearer(s, k.APIKey, http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice"})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "bob"}),
		http.StatusCreated)

	r = s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=USER", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var events []struct {
		AuthDetails struct {
			Type, UserID, Username string
		} `json:"authDetails"`
		Representation map[string]any `json:"representation"`
	}
	r.Decode(t, &events)
	if len(events) != 2 {
		t.Fatalf("events %s", r.Body)
	}
	who := map[string]string{}
	for _, e := range events {
		a := e.AuthDetails
		who[e.Representation["username"].(string)] = a.Type + " " + a.UserID + " " + a.Username
	}
	if want := "api-key " + k.ID + " provisioner"; who["alice"] != want {
		t.Fatalf("alice created by %q, want %q", who["alice"], want)
	}
	if want := "api-key  bootstrap"; who["bob"] != want {
		t.Fatalf("bob created by %q, want %q", who["bob"], want)
	}
}

// A key's last use is recorded to the minute: not a write per request.
func TestNamedKeyLastUse(t *testing.T) {
	c := newClock()
	s := newServer(t, c)
	k := createKey(t, s, map[string]any{"name": "poller", "permissions": []string{"users:read"}})
	if got := getKey(t, s, k.ID); got.LastUsedAt != 0 {
		t.Fatalf("never used, lastUsedAt %d", got.LastUsedAt)
	}
	first := c.Millis()
	apptest.MustStatus(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	c.Advance(59 * time.Second)
	apptest.MustStatus(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	if got := getKey(t, s, k.ID); got.LastUsedAt != first {
		t.Fatalf("lastUsedAt %d, want the first use %d", got.LastUsedAt, first)
	}
	c.Advance(time.Second)
	apptest.MustStatus(t, with(s, k.APIKey, http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	if got := getKey(t, s, k.ID); got.LastUsedAt != c.Millis() {
		t.Fatalf("lastUsedAt %d, want %d", got.LastUsedAt, c.Millis())
	}
}
