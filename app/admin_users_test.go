package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// userKeys are every field a user representation may have.
var userKeys = []string{"id", "username", "email", "firstName", "lastName", "enabled", "emailVerified", "requirePasswordReset", "createdTimestamp"}

// mustNoPassword fails if a response shows a password or a hash.
func mustNoPassword(t testing.TB, what string, r *testResponse, plaintexts ...string) {
	t.Helper()
	for _, p := range append(plaintexts, "$argon2", `"password"`, `"passwordHash"`, `"credentials"`) {
		if bytes.Contains(r.Body, []byte(p)) {
			t.Fatalf("%s shows %q: %s", what, p, r.Body)
		}
	}
}

func usersPath(realm string) string { return "/admin/realms/" + realm + "/users" }

func userPath(realm, id string) string { return usersPath(realm) + "/" + id }

func (s *testServer) getUserJSON(realm, id string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodGet, userPath(realm, id), nil)
	mustStatus(s.t, r, http.StatusOK)
	mustNoPassword(s.t, "GET user", r)
	return r.object(s.t)
}

// listUsers runs a list query and returns total and the usernames shown.
func (s *testServer) listUsers(realm, query string) (int, []string) {
	s.t.Helper()
	r := s.admin(http.MethodGet, usersPath(realm)+query, nil)
	mustStatus(s.t, r, http.StatusOK)
	var body struct {
		Total *int             `json:"total"`
		Users []map[string]any `json:"users"`
	}
	r.decode(s.t, &body)
	if body.Total == nil || body.Users == nil {
		s.t.Fatalf("list %s: want {total, users}, got %s", query, r.Body)
	}
	names := make([]string, len(body.Users))
	for i, u := range body.Users {
		names[i], _ = u["username"].(string)
	}
	return *body.Total, names
}

// passwordHash is a user's stored hash and when it was set, as the store
// returns them: "" and 0 for a user without a password.
func (s *testServer) passwordHash(userID string) (hash string, changedAt int64) {
	s.t.Helper()
	realms, err := s.store.ListRealms(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	for _, r := range realms {
		u, err := s.store.GetUser(context.Background(), r.ID, userID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			s.t.Fatalf("read user %s: %v", userID, err)
		}
		return u.PasswordHash, u.PasswordChangedAt
	}
	s.t.Fatalf("no user %s in any realm", userID)
	return "", 0
}

// mustArgon2id checks a hash is an argon2id PHC string of our parameters.
func mustArgon2id(t testing.TB, hash string) {
	t.Helper()
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" || parts[3] != "m=19456,t=2,p=1" {
		t.Fatalf("hash %q is not an argon2id PHC string", hash)
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) != 16 || len(key) != 32 {
		t.Fatalf("hash %q: salt %d bytes (%v), key %d bytes (%v)", hash, len(salt), err1, len(key), err2)
	}
}

func TestUserCreate(t *testing.T) {
	s := newTestServer(t, fixedClock)
	s.createRealm("acme")
	const pw = "correct horse battery"
	r := s.admin(http.MethodPost, usersPath("acme"), map[string]any{
		"username": "  Alice.Smith ", "email": "Alice@Example.COM", "firstName": "Alice", "lastName": "Smith",
		"password": pw,
	})
	mustStatus(t, r, http.StatusCreated)
	mustNoPassword(t, "create", r, pw)
	got := r.object(t)
	id, _ := got["id"].(string)
	if len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("id %v is not a UUID", got["id"])
	}
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000/admin/realms/acme/users/"+id {
		t.Fatalf("Location %q", loc)
	}
	mustEqualJSON(t, "created user", got, map[string]any{
		"id": id, "username": "alice.smith", "email": "alice@example.com", "firstName": "Alice", "lastName": "Smith",
		"enabled": true, "emailVerified": false, "requirePasswordReset": false, "createdTimestamp": testEpoch.UnixMilli(),
	})
	mustEqualJSON(t, "user on GET", s.getUserJSON("acme", id), got)
	hash, changed := s.passwordHash(id)
	mustArgon2id(t, hash)
	if strings.Contains(hash, pw) || changed != testEpoch.UnixMilli() {
		t.Fatalf("stored hash %q changed at %v", hash, changed)
	}

	// Flags are taken as given; optional fields left out are absent.
	r = s.admin(http.MethodPost, usersPath("acme"), map[string]any{
		"username": "bo", "enabled": false, "emailVerified": true, "requirePasswordReset": true,
	})
	mustStatus(t, r, http.StatusCreated)
	bo := r.object(t)
	mustEqualJSON(t, "created user with flags", bo, map[string]any{
		"id": bo["id"], "username": "bo", "enabled": false, "emailVerified": true, "requirePasswordReset": true,
		"createdTimestamp": testEpoch.UnixMilli(),
	})
	if hash, _ := s.passwordHash(bo["id"].(string)); hash != "" {
		t.Fatalf("user created without password has hash %q", hash)
	}
	for k := range got {
		if !slices.Contains(userKeys, k) {
			t.Fatalf("unexpected user field %q", k)
		}
	}
	// Null optional fields mean their defaults.
	r = s.admin(http.MethodPost, usersPath("acme"), map[string]any{
		"username": "carl", "email": nil, "firstName": nil, "lastName": nil, "enabled": nil,
		"emailVerified": nil, "requirePasswordReset": nil, "password": nil,
	})
	mustStatus(t, r, http.StatusCreated)
	carl := r.object(t)
	mustEqualJSON(t, "created user with nulls", carl, map[string]any{
		"id": carl["id"], "username": "carl", "enabled": true, "emailVerified": false, "requirePasswordReset": false,
		"createdTimestamp": testEpoch.UnixMilli(),
	})
}

func TestUserCreateInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	with := func(k string, v any) map[string]any { return map[string]any{"username": "bob", k: v} }
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"missing username", map[string]any{"email": "bob@example.com"}, nil, 400, "invalid_field", "username"},
		{"null username", with("username", nil), nil, 400, "invalid_field", "username"},
		{"empty username", with("username", ""), nil, 400, "invalid_field", "username"},
		{"1 char", with("username", "b"), nil, 400, "invalid_field", "username"},
		{"1 char after trim", with("username", "  b  "), nil, 400, "invalid_field", "username"},
		{"space inside", with("username", "bob smith"), nil, 400, "invalid_field", "username"},
		{"tab inside", with("username", "bob\tsmith"), nil, 400, "invalid_field", "username"},
		{"256 chars", with("username", strings.Repeat("b", 256)), nil, 400, "invalid_field", "username"},
		{"username number", with("username", 42), nil, 400, "invalid_field", "username"},
		{"bad email", with("email", "not-an-email"), nil, 400, "invalid_field", "email"},
		{"email with name", with("email", "Bob <bob@example.com>"), nil, 400, "invalid_field", "email"},
		{"email number", with("email", 5), nil, 400, "invalid_field", "email"},
		{"password 7 chars", with("password", "1234567"), nil, 400, "invalid_field", "password"},
		{"password 7 runes", with("password", "ééééééé"), nil, 400, "invalid_field", "password"},
		{"empty password", with("password", ""), nil, 400, "invalid_field", "password"},
		{"password 257 chars", with("password", strings.Repeat("p", 257)), nil, 400, "invalid_field", "password"},
		{"password number", with("password", 12345678), nil, 400, "invalid_field", "password"},
		{"enabled string", with("enabled", "yes"), nil, 400, "invalid_field", "enabled"},
		{"emailVerified string", with("emailVerified", "true"), nil, 400, "invalid_field", "emailVerified"},
		{"requirePasswordReset number", with("requirePasswordReset", 1), nil, 400, "invalid_field", "requirePasswordReset"},
		{"firstName 256 chars", with("firstName", strings.Repeat("f", 256)), nil, 400, "invalid_field", "firstName"},
		{"lastName control char", with("lastName", "Smith\n"), nil, 400, "invalid_field", "lastName"},
		{"unknown field", with("role", "admin"), nil, 400, "unknown_field", "role"},
		{"id", with("id", "6f1c7a43-0000-4000-8000-000000000000"), nil, 400, "unknown_field", "id"},
		{"createdTimestamp", with("createdTimestamp", 1), nil, 400, "unknown_field", "createdTimestamp"},
		{"empty credentials", with("credentials", []any{}), nil, 400, "invalid_field", "credentials"},
		{"malformed", `{"username":"bob"`, nil, 400, "invalid_json", ""},
		{"array", `[{"username":"bob"}]`, nil, 400, "invalid_json", ""},
		{"empty body", "", nil, 400, "invalid_json", ""},
		{"trailing data", `{"username":"bob"} 1`, nil, 400, "invalid_json", ""},
		{"text/plain", `{"username":"bob"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		{"over 1 MiB", `{"username":"bob","firstName":"` + strings.Repeat("f", 1<<20) + `"}`, nil, 413, "payload_too_large", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, usersPath("acme"), c.body, c.headers...), c.status, c.code, c.field)
		})
	}
	if total, names := s.listUsers("acme", ""); total != 0 {
		t.Fatalf("rejected creates left users %v", names)
	}
}

func TestUserCreateUnknownRealm(t *testing.T) {
	s := newTestServer(t)
	mustError(t, s.admin(http.MethodPost, usersPath("nope"), map[string]any{"username": "bob"}), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodGet, usersPath("nope"), nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodGet, userPath("nope", "6f1c7a43-0000-4000-8000-000000000000"), nil), http.StatusNotFound, "not_found", "")
}

func TestUserPasswordLength(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "strict", "passwordMinLength": 12}), http.StatusCreated)

	// Exactly 8 characters is enough by default.
	mustStatus(t, s.admin(http.MethodPost, usersPath("acme"), map[string]any{"username": "eight", "password": "12345678"}), http.StatusCreated)
	// The realm's longer minimum applies.
	r := s.admin(http.MethodPost, usersPath("strict"), map[string]any{"username": "bob", "password": "elevenchars"})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "password")
	if !strings.Contains(r.object(t)["error_description"].(string), "12") {
		t.Fatalf("description does not name the minimum: %s", r.Body)
	}
	mustStatus(t, s.admin(http.MethodPost, usersPath("strict"), map[string]any{"username": "bob", "password": "twelve-chars"}), http.StatusCreated)
	if total, names := s.listUsers("strict", ""); total != 1 || !slices.Equal(names, []string{"bob"}) {
		t.Fatalf("strict realm users %d %v", total, names)
	}
}

func TestUserCreateDuplicates(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	bob := s.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.com"})

	r := s.admin(http.MethodPost, usersPath("acme"), map[string]any{"username": "BOB"})
	mustError(t, r, http.StatusConflict, "conflict", "username")
	r = s.admin(http.MethodPost, usersPath("acme"), map[string]any{"username": " Bob "})
	mustError(t, r, http.StatusConflict, "conflict", "username")
	r = s.admin(http.MethodPost, usersPath("acme"), map[string]any{"username": "robert", "email": "BOB@Example.com"})
	mustError(t, r, http.StatusConflict, "conflict", "email")
	if total, names := s.listUsers("acme", ""); total != 1 || !slices.Equal(names, []string{"bob"}) {
		t.Fatalf("users after conflicts %d %v", total, names)
	}
	mustEqualJSON(t, "bob after conflicts", s.getUserJSON("acme", bob["id"].(string)), bob)

	// Users without email do not collide; another realm is separate.
	s.createUser("acme", map[string]any{"username": "noemail1"})
	s.createUser("acme", map[string]any{"username": "noemail2"})
	s.createUser("other", map[string]any{"username": "bob", "email": "bob@example.com"})
}

func TestUserCreateDuplicateUsernameContainingEmail(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "emailbot"})
	r := s.admin(http.MethodPost, usersPath("acme"), map[string]any{"username": "emailbot"})
	mustError(t, r, http.StatusConflict, "conflict", "username")
}

func TestUserListPaging(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	var all []string
	for i := 59; i >= 0; i-- { // created in reverse: the list must sort
		s.createUser("acme", map[string]any{"username": fmt.Sprintf("user%02d", i)})
	}
	for i := range 60 {
		all = append(all, fmt.Sprintf("user%02d", i))
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"", all[:50]},
		{"?skip=0", all[:50]},
		{"?skip=50", all[50:]},
		{"?skip=10&limit=5", all[10:15]},
		{"?limit=1", all[:1]},
		{"?limit=60", all},
		{"?limit=1000", all},
		{"?skip=59&limit=10", all[59:]},
		{"?skip=60", []string{}},
		{"?skip=1000", []string{}},
	}
	for _, c := range cases {
		total, names := s.listUsers("acme", c.query)
		if total != 60 || !slices.Equal(names, c.want) {
			t.Fatalf("list %q: total %d users %v, want 60 %v", c.query, total, names, c.want)
		}
	}
	// Users are shown whole.
	r := s.admin(http.MethodGet, usersPath("acme")+"?limit=1", nil)
	var body struct{ Users []map[string]any }
	r.decode(t, &body)
	mustEqualJSON(t, "listed user", body.Users[0], s.getUserJSON("acme", body.Users[0]["id"].(string)))
}

func TestUserListInvalidParameters(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	cases := []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=-1", "limit"}, {"limit=1001", "limit"}, {"limit=abc", "limit"},
		{"limit=1.5", "limit"}, {"skip=-1", "skip"}, {"skip=abc", "skip"},
		{"enabled=maybe", "enabled"}, {"enabled=1", "enabled"}, {"exact=maybe", "exact"},
	}
	for _, c := range cases {
		r := s.admin(http.MethodGet, usersPath("acme")+"?"+c.query, nil)
		mustError(t, r, http.StatusBadRequest, "invalid_parameter", c.field)
	}
}

func TestUserListEmpty(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	r := s.admin(http.MethodGet, usersPath("acme"), nil)
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "empty list", r.object(t), map[string]any{"total": 0, "users": []any{}})
}

func TestUserListFilters(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	for _, u := range []map[string]any{
		{"username": "carol", "email": "carol@example.com", "firstName": "Carol", "lastName": "Smith-Jones"},
		{"username": "bob", "email": "bob@corp.test", "firstName": "Robert", "lastName": "Brown", "enabled": false},
		{"username": "alice", "email": "alice@example.com", "firstName": "Alice", "lastName": "Anderson"},
		{"username": "a_b", "firstName": "Under"},
		{"username": "axb", "email": "axb@corp.test"},
		{"username": "50%off", "firstName": "Percent"},
		{"username": "50xoff"},
	} {
		s.createUser("acme", u)
	}
	// A user of another realm never shows up.
	s.createUser("other", map[string]any{"username": "alice2", "email": "alice2@example.com", "firstName": "Alice"})
	everyone := []string{"50%off", "50xoff", "a_b", "alice", "axb", "bob", "carol"}
	cases := []struct {
		query url.Values
		want  []string
	}{
		{url.Values{}, everyone},
		{url.Values{"search": {"ALI"}}, []string{"alice"}},
		{url.Values{"search": {"example.com"}}, []string{"alice", "carol"}},
		{url.Values{"search": {"robert"}}, []string{"bob"}},
		{url.Values{"search": {"BROWN"}}, []string{"bob"}},
		{url.Values{"search": {"smith-j"}}, []string{"carol"}},
		{url.Values{"search": {"percent"}}, []string{"50%off"}},
		{url.Values{"search": {"corp.test"}}, []string{"axb", "bob"}},
		{url.Values{"search": {"a_b"}}, []string{"a_b"}},
		{url.Values{"search": {"_"}}, []string{"a_b"}},
		{url.Values{"search": {"50%"}}, []string{"50%off"}},
		{url.Values{"search": {"%"}}, []string{"50%off"}},
		{url.Values{"search": {`\`}}, []string{}},
		{url.Values{"search": {"zzz"}}, []string{}},
		{url.Values{"username": {"a"}}, []string{"a_b", "alice", "axb", "carol"}},
		{url.Values{"username": {"ALI"}}, []string{"alice"}},
		{url.Values{"username": {"_"}}, []string{"a_b"}},
		{url.Values{"username": {"alice"}, "exact": {"true"}}, []string{"alice"}},
		{url.Values{"username": {"ALICE"}, "exact": {"true"}}, []string{"alice"}},
		{url.Values{"username": {"ali"}, "exact": {"true"}}, []string{}},
		{url.Values{"username": {"ali"}, "exact": {"false"}}, []string{"alice"}},
		{url.Values{"email": {"example"}}, []string{"alice", "carol"}},
		{url.Values{"email": {"Smith"}}, []string{}},
		{url.Values{"email": {"ALICE@EXAMPLE.COM"}, "exact": {"true"}}, []string{"alice"}},
		{url.Values{"email": {"alice@example"}, "exact": {"true"}}, []string{}},
		{url.Values{"exact": {"true"}}, everyone},
		{url.Values{"enabled": {"false"}}, []string{"bob"}},
		{url.Values{"enabled": {"true"}}, []string{"50%off", "50xoff", "a_b", "alice", "axb", "carol"}},
		{url.Values{"search": {"corp.test"}, "enabled": {"true"}}, []string{"axb"}},
		{url.Values{"search": {"example"}, "enabled": {"false"}}, []string{}},
		{url.Values{"username": {"a"}, "search": {"example"}}, []string{"alice", "carol"}},
	}
	for _, c := range cases {
		q := "?" + c.query.Encode()
		total, names := s.listUsers("acme", q)
		if total != len(c.want) || !slices.Equal(names, c.want) {
			t.Fatalf("list %s: total %d users %v, want %d %v", q, total, names, len(c.want), c.want)
		}
	}
	// The total counts every match, not the page.
	total, names := s.listUsers("acme", "?search=a&limit=2&skip=1")
	if total != 4 || !slices.Equal(names, []string{"alice", "axb"}) {
		t.Fatalf("paged search: total %d users %v", total, names)
	}
}

func TestUserSearchNonASCIICaseInsensitive(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "emile", "firstName": "Émile", "lastName": "Zoë"})
	for _, q := range []string{"Émile", "émile", "ZOË"} {
		total, names := s.listUsers("acme", "?search="+url.QueryEscape(q))
		if total != 1 || !slices.Equal(names, []string{"emile"}) {
			t.Fatalf("search %q: total %d users %v, want emile", q, total, names)
		}
	}
}

func TestUserGet(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	u := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.com"})
	mustEqualJSON(t, "GET user", s.getUserJSON("acme", u["id"].(string)), u)
	for _, id := range []string{"6f1c7a43-0000-4000-8000-000000000000", "not-a-uuid", strings.ToUpper(u["id"].(string))} {
		mustError(t, s.admin(http.MethodGet, userPath("acme", id), nil), http.StatusNotFound, "not_found", "")
	}
}

// userUpdateCases change a user; want is the change to its representation
// (nil deletes a field).
var userUpdateCases = []struct {
	name string
	body map[string]any
	want map[string]any
}{
	{"firstName", map[string]any{"firstName": "Alicia"}, map[string]any{"firstName": "Alicia"}},
	{"username lowercased", map[string]any{"username": " ALICIA "}, map[string]any{"username": "alicia"}},
	{"email lowercased", map[string]any{"email": "Alicia@Example.COM"}, map[string]any{"email": "alicia@example.com"}},
	{"flags", map[string]any{"enabled": true, "emailVerified": false, "requirePasswordReset": false},
		map[string]any{"enabled": true, "emailVerified": false, "requirePasswordReset": false}},
	{"empty strings clear", map[string]any{"lastName": "", "email": ""}, map[string]any{"lastName": nil, "email": nil}},
	{"empty body", map[string]any{}, map[string]any{}},
	{"nulls reset", map[string]any{
		"username": nil, "email": nil, "firstName": nil, "lastName": nil, "enabled": nil,
		"emailVerified": nil, "requirePasswordReset": nil,
	}, map[string]any{
		"email": nil, "firstName": nil, "lastName": nil, "enabled": true, "emailVerified": false, "requirePasswordReset": false,
	}},
}

// aliceFields is a user with every field away from its default.
func aliceFields() map[string]any {
	return map[string]any{
		"username": "alice", "email": "alice@example.com", "firstName": "Alice", "lastName": "Anderson",
		"enabled": false, "emailVerified": true, "requirePasswordReset": true,
	}
}

func TestUserUpdate(t *testing.T) {
	s := newTestServer(t)
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for i, c := range userUpdateCases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				realm := fmt.Sprintf("%s-%d", strings.ToLower(method), i)
				s.createRealm(realm)
				before := s.createUser(realm, aliceFields())
				id := before["id"].(string)
				r := s.admin(method, userPath(realm, id), c.body)
				mustStatus(t, r, http.StatusOK)
				mustNoPassword(t, method, r)
				want := cloneMap(before, c.want)
				mustEqualJSON(t, "updated user", r.object(t), want)
				mustEqualJSON(t, "user on GET", s.getUserJSON(realm, id), want)
			})
		}
	}
}

func TestUserUpdateKeepsPassword(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	u := s.createUser("acme", map[string]any{"username": "alice", "password": "alice-password"})
	id := u["id"].(string)
	before, changed := s.passwordHash(id)
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		r := s.admin(method, userPath("acme", id), map[string]any{"firstName": method, "requirePasswordReset": true})
		mustStatus(t, r, http.StatusOK)
		mustNoPassword(t, method, r, "alice-password")
	}
	after, changedAfter := s.passwordHash(id)
	if after != before || changedAfter != changed {
		t.Fatalf("profile update changed the password: %v -> %v", before, after)
	}
}

func TestUserUpdateRejected(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	alice := s.createUser("acme", aliceFields())
	s.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.com"})
	id := alice["id"].(string)
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"password", `{"firstName":"x","password":"new-password-1"}`, nil, 400, "unknown_field", "password"},
		{"id", `{"id":"6f1c7a43-0000-4000-8000-000000000000"}`, nil, 400, "unknown_field", "id"},
		{"createdTimestamp", `{"createdTimestamp":1}`, nil, 400, "unknown_field", "createdTimestamp"},
		{"credentials", `{"credentials":[]}`, nil, 400, "unknown_field", "credentials"},
		{"case-changed name", `{"Username":"x"}`, nil, 400, "unknown_field", "Username"},
		{"username 1 char", `{"firstName":"x","username":"a"}`, nil, 400, "invalid_field", "username"},
		{"username space", `{"username":"a b"}`, nil, 400, "invalid_field", "username"},
		{"username empty", `{"username":""}`, nil, 400, "invalid_field", "username"},
		{"username number", `{"username":5}`, nil, 400, "invalid_field", "username"},
		{"bad email", `{"email":"nope"}`, nil, 400, "invalid_field", "email"},
		{"enabled string", `{"enabled":"yes"}`, nil, 400, "invalid_field", "enabled"},
		{"emailVerified number", `{"emailVerified":1}`, nil, 400, "invalid_field", "emailVerified"},
		{"firstName control", `{"firstName":"a\u0000b"}`, nil, 400, "invalid_field", "firstName"},
		{"username taken", `{"firstName":"x","username":"BOB"}`, nil, 409, "conflict", "username"},
		{"email taken", `{"firstName":"x","email":"Bob@Example.com"}`, nil, 409, "conflict", "email"},
		{"malformed", `{"firstName":`, nil, 400, "invalid_json", ""},
		{"array", `[]`, nil, 400, "invalid_json", ""},
		{"empty", ``, nil, 400, "invalid_json", ""},
		{"text/plain", `{"firstName":"x"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
	}
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for _, c := range cases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				mustError(t, s.admin(method, userPath("acme", id), c.body, c.headers...), c.status, c.code, c.field)
				mustEqualJSON(t, "user after rejected update", s.getUserJSON("acme", id), alice)
			})
		}
		mustError(t, s.admin(method, userPath("acme", "6f1c7a43-0000-4000-8000-000000000000"), `{"firstName":"x"}`), http.StatusNotFound, "not_found", "")
		mustError(t, s.admin(method, userPath("nope", id), `{"firstName":"x"}`), http.StatusNotFound, "not_found", "")
	}
}

func TestUserDelete(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.com"})
	s.createUser("acme", map[string]any{"username": "bob"})
	id := alice["id"].(string)

	r := s.admin(http.MethodDelete, userPath("acme", id), nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with body %q", r.Body)
	}
	mustError(t, s.admin(http.MethodGet, userPath("acme", id), nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, userPath("acme", id), nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, userPath("nope", id), nil), http.StatusNotFound, "not_found", "")
	if total, names := s.listUsers("acme", ""); total != 1 || !slices.Equal(names, []string{"bob"}) {
		t.Fatalf("users after delete %d %v", total, names)
	}
	// The username and email are free again.
	again := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.com"})
	if again["id"] == id {
		t.Fatalf("re-created user reuses id %s", id)
	}
}

func TestUserResetPassword(t *testing.T) {
	s := newTestServer(t, fixedClock)
	realm := s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "strict", "passwordMinLength": 12}), http.StatusCreated)
	u := s.createUser("acme", map[string]any{"username": "alice", "requirePasswordReset": true})
	strictUser := s.createUser("strict", map[string]any{"username": "bob"})
	id := u["id"].(string)
	path := userPath("acme", id) + "/reset-password"
	if hash, _ := s.passwordHash(id); hash != "" {
		t.Fatalf("user without password has hash %q", hash)
	}

	r := s.admin(http.MethodPut, path, map[string]any{"password": "first-password"})
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with body %q", r.Body)
	}
	first, changed := s.passwordHash(id)
	mustArgon2id(t, first)
	if changed != testEpoch.UnixMilli() {
		t.Fatalf("password_changed_at %v", changed)
	}
	stored, err := s.store.GetUser(context.Background(), realm["id"].(string), id)
	if err != nil || stored.PasswordHash != first {
		t.Fatalf("store user %v %v", stored, err)
	}
	if ok, err := s.app.id.VerifyPassword(context.Background(), first, "first-password"); !ok || err != nil {
		t.Fatalf("stored hash does not verify the new password: %v %v", ok, err)
	}
	// A plain reset clears the required change.
	if got := s.getUserJSON("acme", id)["requirePasswordReset"]; got != false {
		t.Fatalf("requirePasswordReset %v after plain reset", got)
	}

	r = s.admin(http.MethodPut, path, map[string]any{"password": "second-password", "temporary": true})
	mustStatus(t, r, http.StatusNoContent)
	second, _ := s.passwordHash(id)
	mustArgon2id(t, second)
	if second == first {
		t.Fatal("hash unchanged after reset")
	}
	if got := s.getUserJSON("acme", id)["requirePasswordReset"]; got != true {
		t.Fatalf("requirePasswordReset %v after temporary reset", got)
	}

	cases := []struct {
		name    string
		path    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"missing password", path, `{}`, nil, 400, "invalid_field", "password"},
		{"only temporary", path, `{"temporary":true}`, nil, 400, "invalid_field", "password"},
		{"null password", path, `{"password":null}`, nil, 400, "invalid_field", "password"},
		{"short", path, `{"password":"short"}`, nil, 400, "invalid_field", "password"},
		{"7 chars", path, `{"password":"1234567"}`, nil, 400, "invalid_field", "password"},
		{"too long", path, `{"password":"` + strings.Repeat("p", 257) + `"}`, nil, 400, "invalid_field", "password"},
		{"number", path, `{"password":12345678}`, nil, 400, "invalid_field", "password"},
		{"temporary string", path, `{"password":"third-password","temporary":"yes"}`, nil, 400, "invalid_field", "temporary"},
		{"unknown field", path, `{"password":"third-password","value":"x"}`, nil, 400, "unknown_field", "value"},
		{"realm minimum", userPath("strict", strictUser["id"].(string)) + "/reset-password", `{"password":"elevenchars"}`, nil, 400, "invalid_field", "password"},
		{"malformed", path, `{"password":`, nil, 400, "invalid_json", ""},
		{"empty body", path, ``, nil, 400, "invalid_json", ""},
		{"text/plain", path, `{"password":"third-password"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		{"unknown user", userPath("acme", "6f1c7a43-0000-4000-8000-000000000000") + "/reset-password", `{"password":"third-password"}`, nil, 404, "not_found", ""},
		{"unknown realm", userPath("nope", id) + "/reset-password", `{"password":"third-password"}`, nil, 404, "not_found", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPut, c.path, c.body, c.headers...), c.status, c.code, c.field)
			if hash, _ := s.passwordHash(id); hash != second {
				t.Fatalf("rejected reset changed the hash")
			}
		})
	}
	mustError(t, s.admin(http.MethodPost, path, map[string]any{"password": "third-password"}), http.StatusMethodNotAllowed, "method_not_allowed", "")
	if hash, _ := s.passwordHash(id); hash != second {
		t.Fatal("POST reset-password changed the hash")
	}
	if hash, _ := s.passwordHash(strictUser["id"].(string)); hash != "" {
		t.Fatal("rejected reset set a hash in the strict realm")
	}

	// temporary:false clears the required change again.
	mustStatus(t, s.admin(http.MethodPut, path, map[string]any{"password": "third-password", "temporary": false}), http.StatusNoContent)
	if got := s.getUserJSON("acme", id)["requirePasswordReset"]; got != false {
		t.Fatalf("requirePasswordReset %v after temporary:false", got)
	}
}

func TestUserRealmIsolation(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.com"})
	id := alice["id"].(string)
	p := userPath("other", id)
	for _, r := range []*testResponse{
		s.admin(http.MethodGet, p, nil),
		s.admin(http.MethodPut, p, map[string]any{"firstName": "x"}),
		s.admin(http.MethodPatch, p, map[string]any{"firstName": "x"}),
		s.admin(http.MethodPut, p+"/reset-password", map[string]any{"password": "other-password"}),
		s.admin(http.MethodDelete, p, nil),
	} {
		mustError(t, r, http.StatusNotFound, "not_found", "")
	}
	if total, names := s.listUsers("other", "?search=alice"); total != 0 {
		t.Fatalf("other realm lists %v", names)
	}
	mustEqualJSON(t, "alice in her realm", s.getUserJSON("acme", id), alice)
	if hash, _ := s.passwordHash(id); hash != "" {
		t.Fatal("reset through another realm set a password")
	}
}

// A client's service-account user goes with the client's
// client_credentials grant, never through the users API.
func TestUserDeleteRefusesServiceAccount(t *testing.T) {
	s := newTestServer(t)
	realm := s.createRealm("acme")
	ctx := t.Context()
	client := &store.Client{ID: uuid.NewString(), RealmID: realm["id"].(string), ClientID: "app",
		ClientType: "CONFIDENTIAL", Enabled: true, CreatedAt: 1}
	if err := s.store.CreateClient(ctx, client); err != nil {
		t.Fatal(err)
	}
	sa := &store.User{ID: uuid.NewString(), RealmID: client.RealmID, Username: "service-account-app", Enabled: true,
		CreatedAt: 1, ServiceAccountClientID: client.ID}
	if err := s.store.CreateUser(ctx, sa); err != nil {
		t.Fatal(err)
	}
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+sa.ID, nil), http.StatusBadRequest, "invalid_request", "")
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/users/"+sa.ID, nil), http.StatusOK)

	// Service accounts are not listed among the realm's people.
	var page struct {
		Total int `json:"total"`
	}
	s.admin(http.MethodGet, "/admin/realms/acme/users", nil).decode(t, &page)
	if page.Total != 0 {
		t.Fatalf("service account listed: total %d", page.Total)
	}
}

// TestUserCreateKeycloakCredentials: a Keycloak script's credentials array
// gives the first password; a temporary one asks for a change.
func TestUserCreateKeycloakCredentials(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli",
		"clientType": "PUBLIC", "grantTypes": []string{"password"}}), http.StatusCreated)
	grant := func(username, password string) *testResponse {
		return s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=password&client_id=cli&username="+username+"&password="+password,
			"Content-Type: application/x-www-form-urlencoded")
	}
	cred := func(typ, value string, temporary bool) []map[string]any {
		return []map[string]any{{"type": typ, "value": value, "temporary": temporary}}
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "kc",
		"credentials": cred("password", "a-long-enough-password", false)}), http.StatusCreated)
	mustStatus(t, grant("kc", "a-long-enough-password"), http.StatusOK)
	r := s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "temp",
		"credentials": cred("password", "a-long-enough-password", true)})
	mustStatus(t, r, http.StatusCreated)
	if r.object(t)["requirePasswordReset"] != true {
		t.Fatalf("a temporary password asks for no change: %s", r.Body)
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"both", map[string]any{"username": "b1", "password": "a-long-enough-password", "credentials": cred("password", "a-long-enough-password", false)}, "credentials"},
		{"otp", map[string]any{"username": "b2", "credentials": cred("otp", "123456", false)}, "credentials[0].type"},
		{"empty value", map[string]any{"username": "b3", "credentials": cred("password", "", false)}, "credentials[0].value"},
		{"two", map[string]any{"username": "b4", "credentials": append(cred("password", "x", false), cred("password", "y", false)...)}, "credentials"},
		{"too short", map[string]any{"username": "b5", "credentials": cred("password", "short", false)}, "password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/users", tc.body), http.StatusBadRequest, "invalid_field", tc.field)
		})
	}
}

// TestUserSearchPrefix: Keycloak's "foo*" finds the users whose username,
// email, first or last name begin so, case aside; "*foo*" a part
// anywhere, as a plain search does.
func TestUserSearchPrefix(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	for _, u := range []map[string]any{
		{"username": "alice", "email": "alice@example.com"},
		{"username": "bob", "email": "ali.bob@corp.test"},
		{"username": "carol", "firstName": "Alicia"},
		{"username": "dave", "lastName": "Aliyev"},
		{"username": "erin", "email": "erin@ali.test"},
		{"username": "emile", "firstName": "Élise"},
	} {
		s.createUser("acme", u)
	}
	for _, c := range []struct {
		search string
		want   []string
	}{
		{"ali*", []string{"alice", "bob", "carol", "dave"}},
		{"ALI*", []string{"alice", "bob", "carol", "dave"}},
		{"*ali*", []string{"alice", "bob", "carol", "dave", "erin"}},
		{"ali", []string{"alice", "bob", "carol", "dave", "erin"}},
		{"éli*", []string{"emile"}},
		{"ÉLI*", []string{"emile"}},
		{"zz*", []string{}},
	} {
		total, names := s.listUsers("acme", "?search="+url.QueryEscape(c.search))
		if total != len(c.want) || !slices.Equal(names, c.want) {
			t.Errorf("search %q: total %d users %v, want %v", c.search, total, names, c.want)
		}
	}
}
