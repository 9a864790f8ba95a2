package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The suite below is in the style of dex's storage/conformance: every
// backend runs the same named subtests against a fresh store.

var storeTestKey = bytes.Repeat([]byte{0x42}, MasterKeySize)

func storeTestSchema(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	return string(b)
}

// storeTestOpen opens (or reopens) the database at path.
func storeTestOpen(t testing.TB, path string, key []byte) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{Path: path, Schema: storeTestSchema(t), MasterKey: key})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newSQLiteTestStore(t *testing.T) *Store {
	t.Helper()
	return storeTestOpen(t, filepath.Join(t.TempDir(), "idenplane.db"), storeTestKey)
}

func TestSQLiteStore(t *testing.T) {
	runStoreSuite(t, newSQLiteTestStore)
}

// suiteTest is one conformance test: it gets a fresh, empty store.
type suiteTest struct {
	name string
	run  func(t *testing.T, s *Store)
}

// runStoreSuite runs every conformance test against stores from newStore.
// Each area of the store adds its tests from its own file.
func runStoreSuite(t *testing.T, newStore func(t *testing.T) *Store) {
	tests := []suiteTest{
		{"RealmCreateGet", suiteRealmCreateGet},
		{"RealmGetMissing", suiteRealmGetMissing},
		{"RealmDuplicate", suiteRealmDuplicate},
		{"RealmListOrder", suiteRealmListOrder},
		{"RealmUpdate", suiteRealmUpdate},
		{"RealmUpdateMissing", suiteRealmUpdateMissing},
		{"RealmDeleteCascades", suiteRealmDeleteCascades},
		{"RealmSecretsRoundTrip", suiteRealmSecretsRoundTrip},
		{"UserCreateGet", suiteUserCreateGet},
		{"UserUnknownRealm", suiteUserUnknownRealm},
		{"UserMissing", suiteUserMissing},
		{"UserUniqueness", suiteUserUniqueness},
		{"UserList", suiteUserList},
		{"UserSearchUnicodeCase", suiteUserSearchUnicodeCase},
		{"UserSetPassword", suiteUserSetPassword},
		{"UserUpdateKeepsPassword", suiteUserUpdateKeepsPassword},
		{"UserDelete", suiteUserDelete},
		{"TxCommit", suiteTxCommit},
		{"TxRollback", suiteTxRollback},
		{"AdminAPIKey", suiteAdminAPIKey},
		{"AdminUsers", suiteAdminUsers},
		{"AdminTokenRevocation", suiteAdminTokenRevocation},
	}
	tests = slices.Concat(tests, clientSuite(), roleSuite(), groupSuite(), scopeSuite(), eventSuite(), sessionSuite(), keySuite(),
		deviceSuite(), authRequestSuite(), logoutSuite(), outboxSuite(), actionTokenSuite(), recoverySuite(), registrationSuite(),
		pendingLoginSuite(), accountSuite(), loginFailuresSuite(), passwordHistorySuite(), credentialsSuite(),
		webauthnSuite(), stepUpSuite(), bulkSuite(), adminLoginFailureSuite(), accessTokenSuite())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

var suiteCtx = context.Background()

// suiteRealm is a realm with every field set away from its zero value.
func suiteRealm(id, name string, createdAt int64) *Realm {
	return &Realm{
		ID: id, Name: name, DisplayName: "Display " + name, Enabled: true,
		AccessTokenLifespan: 300, RefreshTokenLifespan: 1800, OfflineTokenLifespan: 2592000,
		SMTPHost: "smtp." + name + ".test", SMTPPort: 587, SMTPUser: "mailer", SMTPPassword: "smtp-pw-" + name,
		SMTPFrom: "noreply@" + name + ".test", SMTPSecure: true,
		EmailProvider: "sendgrid", EmailProviderConfig: map[string]any{"apiKey": "key-" + name, "region": "eu", "retries": 3.0},
		PasswordMinLength: 10, PasswordRequireUppercase: true, PasswordRequireLowercase: true,
		PasswordRequireDigits: true, PasswordRequireSpecialChars: true, PasswordHistoryCount: 2,
		PasswordMaxAgeDays: 90, BruteForceEnabled: true, MaxLoginFailures: 5, LockoutDuration: 900,
		FailureResetTime: 43200, PermanentLockoutAfter: 10, RegistrationAllowed: true,
		RequireEmailVerification: true, MFARequired: true, EventsEnabled: true, EventsExpiration: 3600,
		EnabledEventTypes: []string{"LOGIN", "REFRESH_TOKEN"}, AdminEventsEnabled: true, ThemeName: "idenplane-dark",
		Theme:      map[string]any{"primaryColor": "#112233", "logoUrl": "https://" + name + ".test/logo.png"},
		LoginTheme: "high-contrast", AccountTheme: "idenplane", EmailTheme: "idenplane-dark",
		CreatedAt: createdAt,
	}
}

func suiteUser(id, realmID, username, email string) *User {
	return &User{
		ID: id, RealmID: realmID, Username: username, Email: email, FirstName: "First " + username,
		LastName: "Last", Enabled: true, CreatedAt: 1_700_000_000_000,
	}
}

func suiteMustCreateRealm(t *testing.T, s *Store, r *Realm) *Realm {
	t.Helper()
	if err := s.CreateRealm(suiteCtx, r); err != nil {
		t.Fatalf("create realm %s: %v", r.Name, err)
	}
	return r
}

func suiteMustCreateUser(t *testing.T, s *Store, u *User) *User {
	t.Helper()
	if err := s.CreateUser(suiteCtx, u); err != nil {
		t.Fatalf("create user %s: %v", u.Username, err)
	}
	return u
}

func suiteMustEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func suiteRealmCreateGet(t *testing.T, s *Store) {
	want := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	got, err := s.GetRealm(suiteCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "realm", got, want)

	// Zero values and nil maps come back as such.
	bare := &Realm{ID: "22222222-2222-4222-8222-222222222222", Name: "bare", CreatedAt: 2000}
	suiteMustCreateRealm(t, s, bare)
	got, err = s.GetRealm(suiteCtx, "bare")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "bare realm", got, bare)
}

func suiteRealmGetMissing(t *testing.T, s *Store) {
	if _, err := s.GetRealm(suiteCtx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetRealm of a missing realm: %v, want ErrNotFound", err)
	}
	if realms, err := s.ListRealms(suiteCtx); err != nil || len(realms) != 0 {
		t.Fatalf("ListRealms of an empty store: %v, %v", realms, err)
	}
}

func suiteRealmDuplicate(t *testing.T, s *Store) {
	suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	err := s.CreateRealm(suiteCtx, suiteRealm("22222222-2222-4222-8222-222222222222", "acme", 2000))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate realm name: %v, want ErrConflict", err)
	}
	err = s.CreateRealm(suiteCtx, suiteRealm("11111111-1111-4111-8111-111111111111", "other", 2000))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate realm id: %v, want ErrConflict", err)
	}
	realms, err := s.ListRealms(suiteCtx)
	if err != nil || len(realms) != 1 || realms[0].DisplayName != "Display acme" {
		t.Fatalf("realms after conflicts: %v, %v", realms, err)
	}
}

func suiteRealmListOrder(t *testing.T, s *Store) {
	// IDs sort the other way round from creation, so an order by id fails.
	for _, r := range []*Realm{
		suiteRealm("cccccccc-0000-4000-8000-000000000000", "first", 1000),
		suiteRealm("bbbbbbbb-0000-4000-8000-000000000000", "second", 2000),
		suiteRealm("aaaaaaaa-0000-4000-8000-000000000000", "third", 3000),
	} {
		suiteMustCreateRealm(t, s, r)
	}
	realms, err := s.ListRealms(suiteCtx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range realms {
		names = append(names, r.Name)
	}
	suiteMustEqual(t, "realm order", names, []string{"first", "second", "third"})
	// Listed realms are whole, secrets decrypted.
	want := suiteRealm("bbbbbbbb-0000-4000-8000-000000000000", "second", 2000)
	suiteMustEqual(t, "listed realm", realms[1], want)

	// Realms created within one millisecond still list in creation order.
	for _, r := range []*Realm{
		suiteRealm("ffffffff-0000-4000-8000-000000000000", "fourth", 4000),
		suiteRealm("eeeeeeee-0000-4000-8000-000000000000", "fifth", 4000),
		suiteRealm("00000000-0000-4000-8000-000000000000", "sixth", 4000),
	} {
		suiteMustCreateRealm(t, s, r)
	}
	realms, err = s.ListRealms(suiteCtx)
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, r := range realms {
		names = append(names, r.Name)
	}
	suiteMustEqual(t, "realm order within a millisecond", names, []string{"first", "second", "third", "fourth", "fifth", "sixth"})
}

func suiteRealmUpdate(t *testing.T, s *Store) {
	suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	upd := &Realm{
		ID: "11111111-1111-4111-8111-111111111111", Name: "renamed", DisplayName: "New", Enabled: false,
		AccessTokenLifespan: 60, RefreshTokenLifespan: 120, OfflineTokenLifespan: 240,
		SMTPHost: "mx.test", SMTPPort: 25, SMTPUser: "u2", SMTPPassword: "new-pw", SMTPFrom: "a@b.test",
		EmailProvider: "smtp", EmailProviderConfig: map[string]any{"token": "t2"},
		PasswordMinLength: 20, PasswordHistoryCount: 5, PasswordMaxAgeDays: 30, MaxLoginFailures: 9,
		LockoutDuration: 1, FailureResetTime: 2, PermanentLockoutAfter: 3, EventsExpiration: 60,
		ThemeName: "high-contrast", Theme: map[string]any{"textColor": "#000"},
		LoginTheme: "idenplane", AccountTheme: "high-contrast", EmailTheme: "idenplane",
		CreatedAt: 99999,
	}
	if err := s.UpdateRealm(suiteCtx, upd); err != nil {
		t.Fatal(err)
	}
	// Name and creation time never change through an update.
	if _, err := s.GetRealm(suiteCtx, "renamed"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update renamed the realm: %v", err)
	}
	got, err := s.GetRealm(suiteCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	want := *upd
	want.Name, want.CreatedAt = "acme", 1000
	suiteMustEqual(t, "updated realm", got, &want)

	// Clearing the secrets and the theme stores them as absent.
	want.SMTPPassword, want.EmailProviderConfig, want.Theme = "", nil, nil
	if err := s.UpdateRealm(suiteCtx, &want); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetRealm(suiteCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "cleared realm", got, &want)
}

func suiteRealmUpdateMissing(t *testing.T, s *Store) {
	err := s.UpdateRealm(suiteCtx, suiteRealm("99999999-9999-4999-8999-999999999999", "ghost", 1))
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateRealm of a missing realm: %v, want ErrNotFound", err)
	}
	if err := s.DeleteRealm(suiteCtx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteRealm of a missing realm: %v, want ErrNotFound", err)
	}
	if _, err := s.GetRealm(suiteCtx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateRealm of a missing realm created it: %v", err)
	}
}

func suiteRealmDeleteCascades(t *testing.T, s *Store) {
	acme := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := suiteMustCreateRealm(t, s, suiteRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000001", acme.ID, "alice", "alice@acme.test"))
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000002", acme.ID, "bob", ""))
	suiteMustCreateUser(t, s, suiteUser("b0000000-0000-4000-8000-000000000001", other.ID, "alice", "alice@acme.test"))

	if err := s.DeleteRealm(suiteCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRealm(suiteCtx, "acme"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted realm: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(suiteCtx, acme.ID, "a0000000-0000-4000-8000-000000000001"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("user of a deleted realm: %v, want ErrNotFound", err)
	}
	users, total, err := s.ListUsers(suiteCtx, acme.ID, UserFilter{Limit: 10})
	if err != nil || total != 0 || len(users) != 0 {
		t.Fatalf("users of the deleted realm: %d %v %v", total, users, err)
	}
	// The cascade stays inside the realm.
	if _, err := s.GetUser(suiteCtx, other.ID, "b0000000-0000-4000-8000-000000000001"); err != nil {
		t.Fatalf("user of the other realm: %v", err)
	}
	// The name is free again.
	suiteMustCreateRealm(t, s, suiteRealm("33333333-3333-4333-8333-333333333333", "acme", 3000))
	// And the deleted users' ids are free too: they were really deleted.
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000001", "33333333-3333-4333-8333-333333333333", "alice", ""))
}

func suiteRealmSecretsRoundTrip(t *testing.T, s *Store) {
	r := suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000)
	r.SMTPPassword = "p@ss wörd with \x00 nul and ünïcode"
	r.EmailProviderConfig = map[string]any{"apiKey": "k", "nested": map[string]any{"secret": "s", "n": 1.5}, "list": []any{"a", true}}
	suiteMustCreateRealm(t, s, r)
	got, err := s.GetRealm(suiteCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "smtp password", got.SMTPPassword, r.SMTPPassword)
	suiteMustEqual(t, "provider config", got.EmailProviderConfig, r.EmailProviderConfig)

	r.SMTPPassword = "rotated"
	r.EmailProviderConfig = map[string]any{"apiKey": "k2"}
	if err := s.UpdateRealm(suiteCtx, r); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetRealm(suiteCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.SMTPPassword != "rotated" || !reflect.DeepEqual(got.EmailProviderConfig, r.EmailProviderConfig) {
		t.Fatalf("secrets after update: %q %v", got.SMTPPassword, got.EmailProviderConfig)
	}
}

func suiteUserCreateGet(t *testing.T, s *Store) {
	realm := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := suiteUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "alice@acme.test")
	u.EmailVerified, u.RequirePasswordReset = true, true
	u.PasswordHash, u.PasswordChangedAt = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", 1_700_000_000_500
	suiteMustCreateUser(t, s, u)
	got, err := s.GetUser(suiteCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "user", got, u)
	got, err = s.GetUserByUsername(suiteCtx, realm.ID, "ALICE")
	if err != nil {
		t.Fatalf("GetUserByUsername is not case-insensitive: %v", err)
	}
	suiteMustEqual(t, "user by username", got, u)

	// A user without a password has an empty hash and no change time.
	bob := suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000002", realm.ID, "bob", ""))
	got, err = s.GetUser(suiteCtx, realm.ID, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "user without password", got, bob)
}

func suiteUserUnknownRealm(t *testing.T, s *Store) {
	err := s.CreateUser(suiteCtx, suiteUser("a0000000-0000-4000-8000-000000000001", "99999999-9999-4999-8999-999999999999", "alice", ""))
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("CreateUser in an unknown realm: %v, want ErrNotFound", err)
	}
	if errors.Is(err, ErrConflict) {
		t.Fatalf("foreign key failure reported as a conflict: %v", err)
	}
}

func suiteUserMissing(t *testing.T, s *Store) {
	acme := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := suiteMustCreateRealm(t, s, suiteRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	u := suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000001", acme.ID, "alice", ""))
	const missing = "f0000000-0000-4000-8000-000000000000"

	if _, err := s.GetUser(suiteCtx, acme.ID, missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetUser missing: %v", err)
	}
	if _, err := s.GetUserByUsername(suiteCtx, acme.ID, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetUserByUsername missing: %v", err)
	}
	// A user is only found through its own realm.
	if _, err := s.GetUser(suiteCtx, other.ID, u.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetUser through another realm: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUserByUsername(suiteCtx, other.ID, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetUserByUsername through another realm: %v, want ErrNotFound", err)
	}
	ghost := suiteUser(missing, acme.ID, "ghost", "")
	if err := s.UpdateUser(suiteCtx, ghost); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateUser missing: %v", err)
	}
	if err := s.SetUserPassword(suiteCtx, acme.ID, missing, "h", 1, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetUserPassword missing: %v", err)
	}
	if err := s.DeleteUser(suiteCtx, acme.ID, missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteUser missing: %v", err)
	}
	// Writes through the wrong realm touch nothing.
	moved := *u
	moved.RealmID, moved.FirstName = other.ID, "Hijacked"
	if err := s.UpdateUser(suiteCtx, &moved); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UpdateUser through another realm: %v", err)
	}
	if err := s.SetUserPassword(suiteCtx, other.ID, u.ID, "h", 1, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetUserPassword through another realm: %v", err)
	}
	if err := s.DeleteUser(suiteCtx, other.ID, u.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteUser through another realm: %v", err)
	}
	got, err := s.GetUser(suiteCtx, acme.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "user after writes through another realm", got, u)
}

func suiteUserUniqueness(t *testing.T, s *Store) {
	acme := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := suiteMustCreateRealm(t, s, suiteRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000001", acme.ID, "alice", "alice@acme.test"))

	for _, c := range []struct {
		name string
		u    *User
	}{
		{"same username", suiteUser("a0000000-0000-4000-8000-000000000002", acme.ID, "alice", "")},
		{"same email", suiteUser("a0000000-0000-4000-8000-000000000003", acme.ID, "alicia", "alice@acme.test")},
		{"same id", suiteUser("a0000000-0000-4000-8000-000000000001", other.ID, "zed", "")},
	} {
		if err := s.CreateUser(suiteCtx, c.u); !errors.Is(err, ErrConflict) {
			t.Fatalf("%s: %v, want ErrConflict", c.name, err)
		}
	}
	// Empty emails never collide.
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000004", acme.ID, "bob", ""))
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000005", acme.ID, "carol", ""))
	// Another realm may reuse both username and email.
	suiteMustCreateUser(t, s, suiteUser("b0000000-0000-4000-8000-000000000001", other.ID, "alice", "alice@acme.test"))

	// Updates are held to the same rules.
	bob, err := s.GetUser(suiteCtx, acme.ID, "a0000000-0000-4000-8000-000000000004")
	if err != nil {
		t.Fatal(err)
	}
	bob.Username = "alice"
	if err := s.UpdateUser(suiteCtx, bob); !errors.Is(err, ErrConflict) {
		t.Fatalf("update to a taken username: %v, want ErrConflict", err)
	}
	bob.Username, bob.Email = "bob", "alice@acme.test"
	if err := s.UpdateUser(suiteCtx, bob); !errors.Is(err, ErrConflict) {
		t.Fatalf("update to a taken email: %v, want ErrConflict", err)
	}
	_, total, err := s.ListUsers(suiteCtx, acme.ID, UserFilter{Limit: 100})
	if err != nil || total != 3 {
		t.Fatalf("acme has %d users (%v), want 3", total, err)
	}
}

func suiteUserList(t *testing.T, s *Store) {
	acme := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := suiteMustCreateRealm(t, s, suiteRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	// Created out of order; listed by username.
	for i, spec := range []struct{ username, email, first string }{
		{"dave", "dave@acme.test", "David"},
		{"alice", "alice@wonder.test", "Alice"},
		{"carol", "", "Carol"},
		{"bob_smith", "bob@acme.test", "Robert"},
		{"erin", "erin@acme.test", "Erin"},
		{"bob", "bobby@other.test", "Bob"},
	} {
		u := suiteUser(fmt.Sprintf("a0000000-0000-4000-8000-00000000000%d", i), acme.ID, spec.username, spec.email)
		u.FirstName = spec.first
		u.Enabled = spec.username != "carol" && spec.username != "erin"
		suiteMustCreateUser(t, s, u)
	}
	suiteMustCreateUser(t, s, suiteUser("b0000000-0000-4000-8000-000000000001", other.ID, "alice2", "alice@acme.test"))

	names := func(users []*User) []string {
		out := []string{}
		for _, u := range users {
			out = append(out, u.Username)
		}
		return out
	}
	enabled, disabled := true, false
	for _, c := range []struct {
		name  string
		f     UserFilter
		want  []string
		total int
	}{
		{"all", UserFilter{Limit: 100}, []string{"alice", "bob", "bob_smith", "carol", "dave", "erin"}, 6},
		{"first page", UserFilter{Limit: 2}, []string{"alice", "bob"}, 6},
		{"second page", UserFilter{Skip: 2, Limit: 2}, []string{"bob_smith", "carol"}, 6},
		{"last page", UserFilter{Skip: 4, Limit: 2}, []string{"dave", "erin"}, 6},
		{"past the end", UserFilter{Skip: 10, Limit: 2}, []string{}, 6},
		{"search username", UserFilter{Search: "bob", Limit: 100}, []string{"bob", "bob_smith"}, 2},
		{"search email", UserFilter{Search: "wonder", Limit: 100}, []string{"alice"}, 1},
		{"search first name any case", UserFilter{Search: "ROBERT", Limit: 100}, []string{"bob_smith"}, 1},
		{"search last name", UserFilter{Search: "last", Limit: 100}, []string{"alice", "bob", "bob_smith", "carol", "dave", "erin"}, 6},
		{"search underscore is literal", UserFilter{Search: "_", Limit: 100}, []string{"bob_smith"}, 1},
		{"search percent is literal", UserFilter{Search: "%", Limit: 100}, []string{}, 0},
		{"search paged", UserFilter{Search: "acme.test", Skip: 1, Limit: 1}, []string{"dave"}, 3},
		{"username substring", UserFilter{Username: "bo", Limit: 100}, []string{"bob", "bob_smith"}, 2},
		{"username exact", UserFilter{Username: "BOB", Exact: true, Limit: 100}, []string{"bob"}, 1},
		{"email substring", UserFilter{Email: "acme", Limit: 100}, []string{"bob_smith", "dave", "erin"}, 3},
		{"email exact", UserFilter{Email: "bob@acme.test", Exact: true, Limit: 100}, []string{"bob_smith"}, 1},
		{"email exact no partial", UserFilter{Email: "acme.test", Exact: true, Limit: 100}, []string{}, 0},
		{"enabled", UserFilter{Enabled: &enabled, Limit: 100}, []string{"alice", "bob", "bob_smith", "dave"}, 4},
		{"disabled", UserFilter{Enabled: &disabled, Limit: 100}, []string{"carol", "erin"}, 2},
		{"combined", UserFilter{Search: "acme", Enabled: &enabled, Limit: 1}, []string{"bob_smith"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			users, total, err := s.ListUsers(suiteCtx, acme.ID, c.f)
			if err != nil {
				t.Fatal(err)
			}
			suiteMustEqual(t, "usernames", names(users), c.want)
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

	all, err := s.AllUsers(suiteCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "AllUsers", names(all), []string{"alice", "bob", "bob_smith", "carol", "dave", "erin"})
}

func suiteUserSearchUnicodeCase(t *testing.T, s *Store) {
	realm := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := suiteUser("a0000000-0000-4000-8000-000000000001", realm.ID, "emile", "")
	u.FirstName, u.LastName = "Émile", "Ørsted"
	suiteMustCreateUser(t, s, u)
	for _, q := range []string{"Émile", "émile", "ÉMILE", "ørsted", "ØRSTED"} {
		users, total, err := s.ListUsers(suiteCtx, realm.ID, UserFilter{Search: q, Limit: 10})
		if err != nil || total != 1 || len(users) != 1 {
			t.Errorf("search %q: %d users (%v), want emile", q, total, err)
		}
	}
}

func suiteUserSetPassword(t *testing.T, s *Store) {
	realm := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", ""))
	if err := s.SetUserPassword(suiteCtx, realm.ID, u.ID, "hash-1", 5000, true); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetUser(suiteCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *u
	want.PasswordHash, want.PasswordChangedAt, want.RequirePasswordReset = "hash-1", 5000, true
	suiteMustEqual(t, "user after SetUserPassword", got, &want)

	if err := s.SetUserPassword(suiteCtx, realm.ID, u.ID, "hash-2", 6000, false); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetUser(suiteCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.PasswordHash, want.PasswordChangedAt, want.RequirePasswordReset = "hash-2", 6000, false
	suiteMustEqual(t, "user after a second SetUserPassword", got, &want)
}

func suiteUserUpdateKeepsPassword(t *testing.T, s *Store) {
	realm := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := suiteUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "alice@acme.test")
	u.PasswordHash, u.PasswordChangedAt = "stored-hash", 4000
	suiteMustCreateUser(t, s, u)

	upd := &User{
		ID: u.ID, RealmID: realm.ID, Username: "alicia", Email: "alicia@acme.test", FirstName: "A", LastName: "L",
		Enabled: false, EmailVerified: true, RequirePasswordReset: true,
		PasswordHash: "stale-hash", PasswordChangedAt: 1, CreatedAt: 42,
	}
	if err := s.UpdateUser(suiteCtx, upd); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetUser(suiteCtx, realm.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *upd
	want.PasswordHash, want.PasswordChangedAt, want.CreatedAt = "stored-hash", 4000, u.CreatedAt
	suiteMustEqual(t, "user after UpdateUser", got, &want)

	// An update with no hash at all does not clear it either.
	upd.PasswordHash, upd.PasswordChangedAt = "", 0
	if err := s.UpdateUser(suiteCtx, upd); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetUser(suiteCtx, realm.ID, u.ID)
	if err != nil || got.PasswordHash != "stored-hash" || got.PasswordChangedAt != 4000 {
		t.Fatalf("password after an update without one: %+v, %v", got, err)
	}
}

func suiteUserDelete(t *testing.T, s *Store) {
	realm := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	u := suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000001", realm.ID, "alice", "alice@acme.test"))
	keep := suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000002", realm.ID, "bob", ""))
	if err := s.DeleteUser(suiteCtx, realm.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUser(suiteCtx, realm.ID, u.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted user: %v", err)
	}
	if err := s.DeleteUser(suiteCtx, realm.ID, u.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(suiteCtx, realm.ID, keep.ID); err != nil {
		t.Fatalf("the other user went too: %v", err)
	}
	// Username and email are free again.
	suiteMustCreateUser(t, s, suiteUser("a0000000-0000-4000-8000-000000000003", realm.ID, "alice", "alice@acme.test"))
}

func suiteTxCommit(t *testing.T, s *Store) {
	err := s.Tx(suiteCtx, func(tx *Store) error {
		r := suiteMustCreateRealm(t, tx, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		suiteMustCreateUser(t, tx, suiteUser("a0000000-0000-4000-8000-000000000001", r.ID, "alice", ""))
		// Reads inside the transaction see its writes.
		if _, err := tx.GetRealm(suiteCtx, "acme"); err != nil {
			return fmt.Errorf("read own write: %w", err)
		}
		// A nested Tx joins the outer one.
		return tx.Tx(suiteCtx, func(inner *Store) error {
			return inner.CreateRealm(suiteCtx, suiteRealm("22222222-2222-4222-8222-222222222222", "nested", 2000))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"acme", "nested"} {
		if _, err := s.GetRealm(suiteCtx, name); err != nil {
			t.Fatalf("realm %s after commit: %v", name, err)
		}
	}
	if _, err := s.GetUserByUsername(suiteCtx, "11111111-1111-4111-8111-111111111111", "alice"); err != nil {
		t.Fatalf("user after commit: %v", err)
	}
}

func suiteTxRollback(t *testing.T, s *Store) {
	suiteMustCreateRealm(t, s, suiteRealm("33333333-3333-4333-8333-333333333333", "before", 500))
	boom := errors.New("boom")
	err := s.Tx(suiteCtx, func(tx *Store) error {
		r := suiteMustCreateRealm(t, tx, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		suiteMustCreateUser(t, tx, suiteUser("a0000000-0000-4000-8000-000000000001", r.ID, "alice", ""))
		if err := tx.DeleteRealm(suiteCtx, "before"); err != nil {
			return err
		}
		return tx.Tx(suiteCtx, func(inner *Store) error {
			if err := inner.SetAdminAPIKeyHash(suiteCtx, []byte("in-tx")); err != nil {
				return err
			}
			return fmt.Errorf("inner: %w", boom)
		})
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if _, err := s.GetRealm(suiteCtx, "acme"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("realm created in a failed Tx: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(suiteCtx, "11111111-1111-4111-8111-111111111111", "a0000000-0000-4000-8000-000000000001"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("user created in a failed Tx: %v", err)
	}
	if _, err := s.GetRealm(suiteCtx, "before"); err != nil {
		t.Fatalf("realm deleted in a failed Tx is gone: %v", err)
	}
	if _, err := s.AdminAPIKeyHash(suiteCtx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("admin key set in a failed Tx: %v", err)
	}
	// The store is usable after the rollback.
	suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
}

func suiteAdminAPIKey(t *testing.T, s *Store) {
	if h, err := s.AdminAPIKeyHash(suiteCtx); !errors.Is(err, ErrNotFound) || h != nil {
		t.Fatalf("AdminAPIKeyHash before one is set: %x, %v; want ErrNotFound", h, err)
	}
	first := bytes.Repeat([]byte{1}, 32)
	if err := s.SetAdminAPIKeyHash(suiteCtx, first); err != nil {
		t.Fatal(err)
	}
	if h, err := s.AdminAPIKeyHash(suiteCtx); err != nil || !bytes.Equal(h, first) {
		t.Fatalf("AdminAPIKeyHash = %x, %v; want %x", h, err, first)
	}
	second := bytes.Repeat([]byte{2}, 32)
	if err := s.SetAdminAPIKeyHash(suiteCtx, second); err != nil {
		t.Fatalf("replacing the key hash: %v", err)
	}
	if h, err := s.AdminAPIKeyHash(suiteCtx); err != nil || !bytes.Equal(h, second) {
		t.Fatalf("AdminAPIKeyHash after replace = %x, %v; want %x", h, err, second)
	}
}

func suiteAdminUsers(t *testing.T, s *Store) {
	if n, err := s.CountAdminUsers(suiteCtx); err != nil || n != 0 {
		t.Fatalf("CountAdminUsers of an empty store = %d, %v", n, err)
	}
	root := &AdminUser{ID: "c0000000-0000-4000-8000-000000000001", Username: "root", PasswordHash: "hash-root", CreatedAt: 1000}
	if err := s.CreateAdminUser(suiteCtx, root); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountAdminUsers(suiteCtx); err != nil || n != 1 {
		t.Fatalf("CountAdminUsers = %d, %v; want 1", n, err)
	}
	got, err := s.GetAdminUser(suiteCtx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "admin user by id", got, root)
	got, err = s.GetAdminUserByUsername(suiteCtx, "root")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "admin user by username", got, root)

	dup := &AdminUser{ID: "c0000000-0000-4000-8000-000000000002", Username: "root", PasswordHash: "h", CreatedAt: 2000}
	if err := s.CreateAdminUser(suiteCtx, dup); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate admin username: %v, want ErrConflict", err)
	}
	if _, err := s.GetAdminUser(suiteCtx, "c0000000-0000-4000-8000-00000000dead"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing admin user: %v", err)
	}
	if _, err := s.GetAdminUserByUsername(suiteCtx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing admin username: %v", err)
	}
	second := &AdminUser{ID: "c0000000-0000-4000-8000-000000000003", Username: "ops", PasswordHash: "hash-ops", CreatedAt: 3000}
	if err := s.CreateAdminUser(suiteCtx, second); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountAdminUsers(suiteCtx); err != nil || n != 2 {
		t.Fatalf("CountAdminUsers = %d, %v; want 2", n, err)
	}
}

func suiteAdminTokenRevocation(t *testing.T, s *Store) {
	future := s.Now().Add(time.Hour).UnixMilli()
	if revoked, err := s.AdminTokenRevoked(suiteCtx, "jti-1"); err != nil || revoked {
		t.Fatalf("unrevoked token reported revoked=%v, %v", revoked, err)
	}
	if err := s.RevokeAdminToken(suiteCtx, "jti-1", future); err != nil {
		t.Fatal(err)
	}
	if revoked, err := s.AdminTokenRevoked(suiteCtx, "jti-1"); err != nil || !revoked {
		t.Fatalf("revoked token reported revoked=%v, %v", revoked, err)
	}
	if revoked, err := s.AdminTokenRevoked(suiteCtx, "jti-2"); err != nil || revoked {
		t.Fatalf("another token reported revoked=%v, %v", revoked, err)
	}
	// Revoking twice is fine.
	if err := s.RevokeAdminToken(suiteCtx, "jti-1", future); err != nil {
		t.Fatalf("second revocation: %v", err)
	}
	// Revocations of tokens that have expired anyway are forgotten at the
	// next revocation; live ones are kept.
	if err := s.RevokeAdminToken(suiteCtx, "jti-old", s.Now().Add(-time.Minute).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAdminToken(suiteCtx, "jti-3", future); err != nil {
		t.Fatal(err)
	}
	for jti, want := range map[string]bool{"jti-old": false, "jti-1": true, "jti-3": true} {
		if revoked, err := s.AdminTokenRevoked(suiteCtx, jti); err != nil || revoked != want {
			t.Fatalf("%s revoked=%v (%v), want %v", jti, revoked, err, want)
		}
	}
}

// SQLite specifics: the file, its encryption, its migrations and pragmas.

func TestSQLiteSecretsEncryptedAtRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s := storeTestOpen(t, path, storeTestKey)
	a := suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	b := suiteRealm("22222222-2222-4222-8222-222222222222", "beta", 2000)
	b.SMTPPassword = a.SMTPPassword
	suiteMustCreateRealm(t, s, b)

	raw := func(id string) (pw, cfg []byte) {
		t.Helper()
		err := s.readerDB.QueryRow("SELECT smtp_password, email_provider_config FROM realms WHERE id = $1", id).Scan(&pw, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		return pw, cfg
	}
	pwA, cfgA := raw(a.ID)
	pwB, _ := raw(b.ID)
	if bytes.Contains(pwA, []byte(a.SMTPPassword)) || bytes.Contains(cfgA, []byte("key-acme")) || bytes.Contains(cfgA, []byte("apiKey")) {
		t.Fatal("secrets are stored in plaintext")
	}
	if len(pwA) <= len(a.SMTPPassword) {
		t.Fatalf("smtp_password column %x is not a sealed ciphertext", pwA)
	}
	if bytes.Equal(pwA, pwB) {
		t.Fatal("the same password encrypts to the same bytes: nonces are not random")
	}

	// The ciphertext is bound to its row: copied into another, it won't open.
	if _, err := s.writerDB.Exec("UPDATE realms SET smtp_password = $1 WHERE id = $2", pwA, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRealm(suiteCtx, "beta"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("GetRealm with a ciphertext from another row: %v, want a decryption error", err)
	}
	if _, err := s.GetRealm(suiteCtx, "acme"); err != nil {
		t.Fatalf("the source row is unharmed: %v", err)
	}
}

func TestSQLiteWrongMasterKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s, err := Open(suiteCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	suiteMustCreateRealm(t, s, &Realm{ID: "22222222-2222-4222-8222-222222222222", Name: "plain", CreatedAt: 2000})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	otherKey := bytes.Repeat([]byte{0x17}, MasterKeySize)

	checkReads := func(t *testing.T, other *Store) {
		t.Helper()
		r, err := other.GetRealm(suiteCtx, "acme")
		if err == nil {
			t.Fatalf("GetRealm with the wrong master key returned %q, want an error", r.SMTPPassword)
		}
		if errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "master key") {
			t.Fatalf("wrong-key error %q should say the master key may be wrong", err)
		}
		if _, err := other.ListRealms(suiteCtx); err == nil {
			t.Fatal("ListRealms with the wrong master key succeeded")
		}
		// A realm without secrets reads fine: the failure is the key, not the file.
		if _, err := other.GetRealm(suiteCtx, "plain"); err != nil {
			t.Fatalf("realm without secrets: %v", err)
		}
	}

	t.Run("open", func(t *testing.T) {
		// Open may refuse the key outright; if it lets it through, every
		// secret must fail to open rather than come back as garbage.
		other, err := Open(suiteCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: otherKey})
		if err != nil {
			if !strings.Contains(err.Error(), "master key") {
				t.Fatalf("Open with the wrong key: %v, want an error naming the master key", err)
			}
			return
		}
		defer other.Close()
		checkReads(t, other)
	})

	t.Run("read", func(t *testing.T) {
		// The store opened with the right key, then reading with another.
		other := storeTestOpen(t, path, storeTestKey)
		aead, err := newAEAD(otherKey)
		if err != nil {
			t.Fatal(err)
		}
		other.aead = aead
		checkReads(t, other)
	})

	for _, n := range []int{0, 16, 31, 33} {
		if _, err := Open(suiteCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: make([]byte, n)}); err == nil {
			t.Fatalf("Open with a %d-byte master key succeeded", n)
		}
	}
	// The right key still opens it.
	if _, err := storeTestOpen(t, path, storeTestKey).GetRealm(suiteCtx, "acme"); err != nil {
		t.Fatalf("reopen with the right key: %v", err)
	}
}

func TestMigrations(t *testing.T) {
	schema := storeTestSchema(t)

	t.Run("parse rejects bad schemas", func(t *testing.T) {
		for name, bad := range map[string]string{
			"gap":          "-- version 1\nCREATE TABLE a (x INTEGER);\n-- version 3\nCREATE TABLE c (x INTEGER);\n",
			"duplicate":    "-- version 1\nCREATE TABLE a (x INTEGER);\n-- version 1\nCREATE TABLE b (x INTEGER);\n",
			"backwards":    "-- version 1\n-- version 2\n-- version 1\n",
			"not from one": "-- version 2\nCREATE TABLE a (x INTEGER);\n",
			"bad number":   "-- version one\nCREATE TABLE a (x INTEGER);\n",
			"no versions":  "CREATE TABLE a (x INTEGER);\n",
			"empty":        "",
		} {
			if m, err := parseMigrations(bad); err == nil {
				t.Errorf("%s: parseMigrations accepted it: %+v", name, m)
			}
			if _, err := Open(suiteCtx, Config{Path: filepath.Join(t.TempDir(), "x.db"), Schema: bad, MasterKey: storeTestKey}); err == nil {
				t.Errorf("%s: Open accepted the schema", name)
			}
		}
	})

	t.Run("parse splits sections", func(t *testing.T) {
		m, err := parseMigrations("-- header\n-- version 1\nA;\n  -- version 2  \nB;\nC;\n")
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || m[0].version != 1 || m[0].sql != "A;\n" || m[1].version != 2 || m[1].sql != "B;\nC;\n" {
			t.Fatalf("migrations %+v", m)
		}
	})

	migrations, err := parseMigrations(schema)
	if err != nil {
		t.Fatalf("schema.sql: %v", err)
	}
	n := len(migrations)
	t.Run("real schema", func(t *testing.T) {
		if n < 1 {
			t.Fatal("schema.sql has no migrations")
		}
		for i, m := range migrations {
			if m.version != i+1 || strings.TrimSpace(m.sql) == "" {
				t.Fatalf("migration %d: version %d, sql %q", i, m.version, m.sql)
			}
		}
	})

	path := filepath.Join(t.TempDir(), "idenplane.db")
	version := func(s *Store) (int, int) {
		t.Helper()
		var v, rows int
		if err := s.writerDB.QueryRow("SELECT max(version), count(*) FROM schema_version").Scan(&v, &rows); err != nil {
			t.Fatal(err)
		}
		return v, rows
	}

	t.Run("fresh database", func(t *testing.T) {
		s, err := Open(suiteCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v, rows := version(s); v != n || rows != 1 {
			t.Fatalf("schema_version %d (%d rows), want %d in one row", v, rows, n)
		}
		suiteMustCreateRealm(t, s, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	})

	t.Run("reopen applies nothing and keeps data", func(t *testing.T) {
		s, err := Open(suiteCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer s.Close()
		if v, rows := version(s); v != n || rows != 1 {
			t.Fatalf("schema_version after reopen %d (%d rows), want %d", v, rows, n)
		}
		got, err := s.GetRealm(suiteCtx, "acme")
		if err != nil {
			t.Fatalf("data after reopen: %v", err)
		}
		suiteMustEqual(t, "realm after reopen", got, suiteRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	})

	t.Run("new migration applies alone", func(t *testing.T) {
		next := fmt.Sprintf("%s\n-- version %d\nCREATE TABLE migration_probe (x INTEGER);\nINSERT INTO migration_probe (x) VALUES (7);\n", schema, n+1)
		s, err := Open(suiteCtx, Config{Path: path, Schema: next, MasterKey: storeTestKey})
		if err != nil {
			t.Fatalf("open with a new migration: %v", err)
		}
		defer s.Close()
		if v, rows := version(s); v != n+1 || rows != 1 {
			t.Fatalf("schema_version %d (%d rows), want %d", v, rows, n+1)
		}
		var x, count int
		if err := s.writerDB.QueryRow("SELECT max(x), count(*) FROM migration_probe").Scan(&x, &count); err != nil || x != 7 || count != 1 {
			t.Fatalf("migration_probe x=%d count=%d (%v), want the one row", x, count, err)
		}
		if _, err := s.GetRealm(suiteCtx, "acme"); err != nil {
			t.Fatalf("data after migrating: %v", err)
		}
		// Back to N: the database is now newer than the binary.
	})

	t.Run("newer database refused", func(t *testing.T) {
		_, err := Open(suiteCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("open of a database at version %d with a binary at %d: %v, want an error saying newer", n+1, n, err)
		}
	})

	t.Run("newer by schema_version row", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "newer.db")
		s := storeTestOpen(t, p, storeTestKey)
		if _, err := s.writerDB.Exec("UPDATE schema_version SET version = $1", n+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Open(suiteCtx, Config{Path: p, Schema: schema, MasterKey: storeTestKey}); err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("open: %v, want an error mentioning newer", err)
		}
	})

	t.Run("failed migration rolls back", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "failed.db")
		storeTestOpen(t, p, storeTestKey).Close()
		broken := fmt.Sprintf("%s\n-- version %d\nCREATE TABLE half_done (x INTEGER);\nTHIS IS NOT SQL;\n", schema, n+1)
		if _, err := Open(suiteCtx, Config{Path: p, Schema: broken, MasterKey: storeTestKey}); err == nil {
			t.Fatal("a broken migration was applied")
		}
		s := storeTestOpen(t, p, storeTestKey)
		if v, _ := version(s); v != n {
			t.Fatalf("schema_version %d after a failed migration, want %d", v, n)
		}
		var tables int
		if err := s.writerDB.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").Scan(&tables); err != nil || tables != 0 {
			t.Fatalf("half of a failed migration stayed: %d tables (%v)", tables, err)
		}
	})
}

func TestSQLitePragmas(t *testing.T) {
	s := newSQLiteTestStore(t)
	var mode string
	if err := s.writerDB.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("writer journal_mode %q (%v), want wal", mode, err)
	}
	for _, c := range []struct {
		name   string
		pragma string
		want   int
	}{
		{"writer foreign_keys", "foreign_keys", 1},
		{"writer synchronous FULL", "synchronous", 2},
		{"writer busy_timeout", "busy_timeout", 10000},
		{"writer query_only", "query_only", 0},
	} {
		var v int
		if err := s.writerDB.QueryRow("PRAGMA " + c.pragma).Scan(&v); err != nil || v != c.want {
			t.Errorf("%s = %d (%v), want %d", c.name, v, err, c.want)
		}
	}
	var fk, qo int
	if err := s.readerDB.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("reader foreign_keys = %d (%v), want 1", fk, err)
	}
	if err := s.readerDB.QueryRow("PRAGMA query_only").Scan(&qo); err != nil || qo != 1 {
		t.Errorf("reader query_only = %d (%v), want 1", qo, err)
	}
	if _, err := s.readerDB.Exec("INSERT INTO schema_version (version) VALUES (999)"); err == nil {
		t.Error("the reader pool accepted a write")
	}
	if st := s.writerDB.Stats(); st.MaxOpenConnections != 1 {
		t.Errorf("writer pool allows %d connections, want 1", st.MaxOpenConnections)
	}
	var verdict string
	if err := s.readerDB.QueryRowContext(suiteCtx, "PRAGMA integrity_check").Scan(&verdict); err != nil || verdict != "ok" {
		t.Errorf("integrity check %q, %v", verdict, err)
	}
}
