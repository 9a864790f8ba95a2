package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// userSuite is the conformance tests of users.
func userSuite() []subTest {
	return []subTest{
		{"UserCreateGet", testUserCreateGet},
		{"UserUnknownRealm", testUserUnknownRealm},
		{"UserMissing", testUserMissing},
		{"UserUniqueness", testUserUniqueness},
		{"UserList", testUserList},
		{"UserSearchUnicodeCase", testUserSearchUnicodeCase},
		{"UserSetPassword", testUserSetPassword},
		{"UserReplacePasswordHash", testUserReplacePasswordHash},
		{"UserUpdateKeepsPassword", testUserUpdateKeepsPassword},
		{"UserDelete", testUserDelete},
	}
}

func testUserCreateGet(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := testUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "alice@acme.test")
	u.EmailVerified, u.RequirePasswordReset = true, true
	u.PasswordHash, u.PasswordChangedAt = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", 1_700_000_000_500
	mustCreateUser(t, s, u)
	got, err := s.GetUser(testCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "user", got, u)
	got, err = s.GetUserByUsername(testCtx, realm.ID, "ALICE")
	if err != nil {
		t.Fatalf("GetUserByUsername is not case-insensitive: %v", err)
	}
	mustEqual(t, "user by username", got, u)

	// A user without a password has an empty hash and no change time.
	bob := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000002", realm.ID, "bob", ""))
	got, err = s.GetUser(testCtx, realm.ID, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "user without password", got, bob)
}

func testUserUnknownRealm(t *testing.T, s *store.Store) {
	err := s.CreateUser(testCtx, testUser("a0000000-0000-4000-8000-000000000001", "99999999-9999-4999-8999-999999999999", "alice", ""))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CreateUser in an unknown realm: %v, want ErrNotFound", err)
	}
	if errors.Is(err, store.ErrConflict) {
		t.Fatalf("foreign key failure reported as a conflict: %v", err)
	}
}

func testUserMissing(t *testing.T, s *store.Store) {
	acme := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := mustCreateRealm(t, s, testRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	u := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", acme.ID, "alice", ""))
	const missing = "f0000000-0000-4000-8000-000000000000"

	if _, err := s.GetUser(testCtx, acme.ID, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetUser missing: %v", err)
	}
	if _, err := s.GetUserByUsername(testCtx, acme.ID, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetUserByUsername missing: %v", err)
	}
	// A user is only found through its own realm.
	if _, err := s.GetUser(testCtx, other.ID, u.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetUser through another realm: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUserByUsername(testCtx, other.ID, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetUserByUsername through another realm: %v, want ErrNotFound", err)
	}
	ghost := testUser(missing, acme.ID, "ghost", "")
	if err := s.UpdateUser(testCtx, ghost); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateUser missing: %v", err)
	}
	if err := s.SetUserPassword(testCtx, acme.ID, missing, "h", 1, false); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetUserPassword missing: %v", err)
	}
	if err := s.DeleteUser(testCtx, acme.ID, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteUser missing: %v", err)
	}
	// Writes through the wrong realm touch nothing.
	moved := *u
	moved.RealmID, moved.FirstName = other.ID, "Hijacked"
	if err := s.UpdateUser(testCtx, &moved); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateUser through another realm: %v", err)
	}
	if err := s.SetUserPassword(testCtx, other.ID, u.ID, "h", 1, false); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetUserPassword through another realm: %v", err)
	}
	if err := s.DeleteUser(testCtx, other.ID, u.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteUser through another realm: %v", err)
	}
	got, err := s.GetUser(testCtx, acme.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "user after writes through another realm", got, u)
}

func testUserUniqueness(t *testing.T, s *store.Store) {
	acme := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := mustCreateRealm(t, s, testRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", acme.ID, "alice", "alice@acme.test"))

	for _, c := range []struct {
		name string
		u    *store.User
	}{
		{"same username", testUser("a0000000-0000-4000-8000-000000000002", acme.ID, "alice", "")},
		{"same email", testUser("a0000000-0000-4000-8000-000000000003", acme.ID, "alicia", "alice@acme.test")},
		{"same id", testUser("a0000000-0000-4000-8000-000000000001", other.ID, "zed", "")},
	} {
		if err := s.CreateUser(testCtx, c.u); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("%s: %v, want ErrConflict", c.name, err)
		}
	}
	// Empty emails never collide.
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000004", acme.ID, "bob", ""))
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000005", acme.ID, "carol", ""))
	// Another realm may reuse both username and email.
	mustCreateUser(t, s, testUser("b0000000-0000-4000-8000-000000000001", other.ID, "alice", "alice@acme.test"))

	// Updates are held to the same rules.
	bob, err := s.GetUser(testCtx, acme.ID, "a0000000-0000-4000-8000-000000000004")
	if err != nil {
		t.Fatal(err)
	}
	bob.Username = "alice"
	mustBeErrConflict(t, "update to a taken username", s.UpdateUser(testCtx, bob))
	bob.Username, bob.Email = "bob", "alice@acme.test"
	mustBeErrConflict(t, "update to a taken email", s.UpdateUser(testCtx, bob))
	_, total, err := s.ListUsers(testCtx, acme.ID, store.UserFilter{Limit: 100})
	if err != nil || total != 3 {
		t.Fatalf("acme has %d users (%v), want 3", total, err)
	}
}

func testUserList(t *testing.T, s *store.Store) {
	acme := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := mustCreateRealm(t, s, testRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	// Created out of order; listed by username.
	for i, spec := range []struct{ username, email, first string }{
		{"dave", "dave@acme.test", "David"},
		{"alice", "alice@wonder.test", "Alice"},
		{"carol", "", "Carol"},
		{"bob_smith", "bob@acme.test", "Robert"},
		{"erin", "erin@acme.test", "Erin"},
		{"bob", "bobby@other.test", "Bob"},
	} {
		u := testUser(fmt.Sprintf("a0000000-0000-4000-8000-00000000000%d", i), acme.ID, spec.username, spec.email)
		u.FirstName = spec.first
		u.Enabled = spec.username != "carol" && spec.username != "erin"
		mustCreateUser(t, s, u)
	}
	mustCreateUser(t, s, testUser("b0000000-0000-4000-8000-000000000001", other.ID, "alice2", "alice@acme.test"))

	names := func(users []*store.User) []string {
		out := []string{}
		for _, u := range users {
			out = append(out, u.Username)
		}
		return out
	}
	enabled, disabled := true, false
	for _, c := range []struct {
		name  string
		f     store.UserFilter
		want  []string
		total int
	}{
		{"all", store.UserFilter{Limit: 100}, []string{"alice", "bob", "bob_smith", "carol", "dave", "erin"}, 6},
		{"first page", store.UserFilter{Limit: 2}, []string{"alice", "bob"}, 6},
		{"second page", store.UserFilter{Skip: 2, Limit: 2}, []string{"bob_smith", "carol"}, 6},
		{"last page", store.UserFilter{Skip: 4, Limit: 2}, []string{"dave", "erin"}, 6},
		{"past the end", store.UserFilter{Skip: 10, Limit: 2}, []string{}, 6},
		{"search username", store.UserFilter{Search: "bob", Limit: 100}, []string{"bob", "bob_smith"}, 2},
		{"search email", store.UserFilter{Search: "wonder", Limit: 100}, []string{"alice"}, 1},
		{"search first name any case", store.UserFilter{Search: "ROBERT", Limit: 100}, []string{"bob_smith"}, 1},
		{"search last name", store.UserFilter{Search: "last", Limit: 100}, []string{"alice", "bob", "bob_smith", "carol", "dave", "erin"}, 6},
		{"search underscore is literal", store.UserFilter{Search: "_", Limit: 100}, []string{"bob_smith"}, 1},
		{"search percent is literal", store.UserFilter{Search: "%", Limit: 100}, []string{}, 0},
		{"search paged", store.UserFilter{Search: "acme.test", Skip: 1, Limit: 1}, []string{"dave"}, 3},
		{"username substring", store.UserFilter{Username: "bo", Limit: 100}, []string{"bob", "bob_smith"}, 2},
		{"username exact", store.UserFilter{Username: "BOB", Exact: true, Limit: 100}, []string{"bob"}, 1},
		{"email substring", store.UserFilter{Email: "acme", Limit: 100}, []string{"bob_smith", "dave", "erin"}, 3},
		{"email exact", store.UserFilter{Email: "bob@acme.test", Exact: true, Limit: 100}, []string{"bob_smith"}, 1},
		{"email exact no partial", store.UserFilter{Email: "acme.test", Exact: true, Limit: 100}, []string{}, 0},
		{"enabled", store.UserFilter{Enabled: &enabled, Limit: 100}, []string{"alice", "bob", "bob_smith", "dave"}, 4},
		{"disabled", store.UserFilter{Enabled: &disabled, Limit: 100}, []string{"carol", "erin"}, 2},
		{"combined", store.UserFilter{Search: "acme", Enabled: &enabled, Limit: 1}, []string{"bob_smith"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			users, total, err := s.ListUsers(testCtx, acme.ID, c.f)
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "usernames", names(users), c.want)
			if total != c.total {
				t.Fatalf("total %d, want %d", total, c.total)
			}
			for _, u := range users {
				if u.RealmID != acme.ID {
					t.Fatalf("user %s of realm %s listed in acme", u.Username, u.RealmID)
				}
			}
		})
	}

	all, err := s.AllUsers(testCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "AllUsers", names(all), []string{"alice", "bob", "bob_smith", "carol", "dave", "erin"})
}

func testUserSearchUnicodeCase(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := testUser("a0000000-0000-4000-8000-000000000001", realm.ID, "emile", "")
	u.FirstName, u.LastName = "Émile", "Ørsted"
	mustCreateUser(t, s, u)
	for _, q := range []string{"Émile", "émile", "ÉMILE", "ørsted", "ØRSTED"} {
		users, total, err := s.ListUsers(testCtx, realm.ID, store.UserFilter{Search: q, Limit: 10})
		if err != nil || total != 1 || len(users) != 1 {
			t.Errorf("search %q: %d users (%v), want emile", q, total, err)
		}
	}
}

func testUserSetPassword(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", ""))
	if err := s.SetUserPassword(testCtx, realm.ID, u.ID, "hash-1", 5000, true); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetUser(testCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *u
	want.PasswordHash, want.PasswordChangedAt, want.RequirePasswordReset = "hash-1", 5000, true
	mustEqual(t, "user after SetUserPassword", got, &want)

	if err := s.SetUserPassword(testCtx, realm.ID, u.ID, "hash-2", 6000, false); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetUser(testCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.PasswordHash, want.PasswordChangedAt, want.RequirePasswordReset = "hash-2", 6000, false
	mustEqual(t, "user after a second SetUserPassword", got, &want)
}

// A foreign hash made argon2id keeps the password's age and reset flag,
// and a replacement of a hash that has changed meanwhile is refused.
func testUserReplacePasswordHash(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := testUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "")
	u.PasswordHash, u.PasswordChangedAt, u.RequirePasswordReset = "bcrypt-hash", 4000, true
	mustCreateUser(t, s, u)
	if err := s.ReplacePasswordHash(testCtx, realm.ID, u.ID, "other-hash", "argon-hash"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ReplacePasswordHash of a changed hash: %v, want ErrNotFound", err)
	}
	if err := s.ReplacePasswordHash(testCtx, realm.ID, u.ID, "bcrypt-hash", "argon-hash"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetUser(testCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *u
	want.PasswordHash = "argon-hash"
	mustEqual(t, "user after ReplacePasswordHash", got, &want)
}

func testUserUpdateKeepsPassword(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := testUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "alice@acme.test")
	u.PasswordHash, u.PasswordChangedAt = "stored-hash", 4000
	mustCreateUser(t, s, u)

	upd := &store.User{
		ID: u.ID, RealmID: realm.ID, Username: "alicia", Email: "alicia@acme.test", FirstName: "A", LastName: "L",
		Enabled: false, EmailVerified: true, RequirePasswordReset: true,
		PasswordHash: "stale-hash", PasswordChangedAt: 1, CreatedAt: 42,
	}
	if err := s.UpdateUser(testCtx, upd); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetUser(testCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *upd
	want.PasswordHash, want.PasswordChangedAt, want.CreatedAt = "stored-hash", 4000, u.CreatedAt
	mustEqual(t, "user after UpdateUser", got, &want)

	// An update with no hash at all does not clear it either.
	upd.PasswordHash, upd.PasswordChangedAt = "", 0
	if err := s.UpdateUser(testCtx, upd); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetUser(testCtx, realm.ID, u.ID)
	if err != nil || got.PasswordHash != "stored-hash" || got.PasswordChangedAt != 4000 {
		t.Fatalf("password after an update without one: %+v, %v", got, err)
	}
}

func testUserDelete(t *testing.T, s *store.Store) {
	realm := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "alice@acme.test"))
	keep := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000002", realm.ID, "bob", ""))
	if err := s.DeleteUser(testCtx, realm.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUser(testCtx, realm.ID, u.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted user: %v", err)
	}
	mustBeErrNotFound(t, "second delete", s.DeleteUser(testCtx, realm.ID, u.ID))
	if _, err := s.GetUser(testCtx, realm.ID, keep.ID); err != nil {
		t.Fatalf("the other user went too: %v", err)
	}
	// Username and email are free again.
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000003", realm.ID, "alice", "alice@acme.test"))
}
