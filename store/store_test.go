package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// The suite below is in the style of dex's storage/conformance: every
// backend runs the same named subtests against a fresh store.

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
