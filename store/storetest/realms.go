package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// realmSuite is the conformance tests of realms.
func realmSuite() []subTest {
	return []subTest{
		{"RealmCreateGet", testRealmCreateGet},
		{"RealmGetMissing", testRealmGetMissing},
		{"RealmDuplicate", testRealmDuplicate},
		{"RealmListOrder", testRealmListOrder},
		{"RealmUpdate", testRealmUpdate},
		{"RealmUpdateMissing", testRealmUpdateMissing},
		{"RealmDeleteCascades", testRealmDeleteCascades},
		{"RealmSecretsRoundTrip", testRealmSecretsRoundTrip},
	}
}

func testRealmCreateGet(t *testing.T, s *store.Store) {
	want := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	got, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "realm", got, want)

	// Zero values and nil maps come back as such.
	bare := &store.Realm{ID: "22222222-2222-4222-8222-222222222222", Name: "bare", CreatedAt: 2000}
	mustCreateRealm(t, s, bare)
	got, err = s.GetRealm(testCtx, "bare")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "bare realm", got, bare)
}

func testRealmGetMissing(t *testing.T, s *store.Store) {
	if _, err := s.GetRealm(testCtx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRealm of a missing realm: %v, want ErrNotFound", err)
	}
	if realms, err := s.ListRealms(testCtx); err != nil || len(realms) != 0 {
		t.Fatalf("ListRealms of an empty store: %v, %v", realms, err)
	}
}

func testRealmDuplicate(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	err := s.CreateRealm(testCtx, testRealm("22222222-2222-4222-8222-222222222222", "acme", 2000))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate realm name: %v, want ErrConflict", err)
	}
	err = s.CreateRealm(testCtx, testRealm("11111111-1111-4111-8111-111111111111", "other", 2000))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate realm id: %v, want ErrConflict", err)
	}
	realms, err := s.ListRealms(testCtx)
	if err != nil || len(realms) != 1 || realms[0].DisplayName != "Display acme" {
		t.Fatalf("realms after conflicts: %v, %v", realms, err)
	}
}

func testRealmListOrder(t *testing.T, s *store.Store) {
	// IDs sort the other way round from creation, so an order by id fails.
	for _, r := range []*store.Realm{
		testRealm("cccccccc-0000-4000-8000-000000000000", "first", 1000),
		testRealm("bbbbbbbb-0000-4000-8000-000000000000", "second", 2000),
		testRealm("aaaaaaaa-0000-4000-8000-000000000000", "third", 3000),
	} {
		mustCreateRealm(t, s, r)
	}
	realms, err := s.ListRealms(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range realms {
		names = append(names, r.Name)
	}
	mustEqual(t, "realm order", names, []string{"first", "second", "third"})
	// Listed realms are whole, secrets decrypted.
	want := testRealm("bbbbbbbb-0000-4000-8000-000000000000", "second", 2000)
	mustEqual(t, "listed realm", realms[1], want)

	// Realms created within one millisecond still list in creation order.
	for _, r := range []*store.Realm{
		testRealm("ffffffff-0000-4000-8000-000000000000", "fourth", 4000),
		testRealm("eeeeeeee-0000-4000-8000-000000000000", "fifth", 4000),
		testRealm("00000000-0000-4000-8000-000000000000", "sixth", 4000),
	} {
		mustCreateRealm(t, s, r)
	}
	realms, err = s.ListRealms(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, r := range realms {
		names = append(names, r.Name)
	}
	mustEqual(t, "realm order within a millisecond", names, []string{"first", "second", "third", "fourth", "fifth", "sixth"})
}

func testRealmUpdate(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	upd := &store.Realm{
		ID: "11111111-1111-4111-8111-111111111111", Name: "renamed", DisplayName: "New", Enabled: false,
		AccessTokenLifespan: 60, RefreshTokenLifespan: 120, OfflineTokenLifespan: 240,
		SMTPHost: "mx.test", SMTPPort: 25, SMTPUser: "u2", SMTPPassword: "new-pw", SMTPFrom: "a@b.test",
		EmailProvider: "smtp", EmailProviderConfig: map[string]any{"token": "t2"},
		PasswordMinLength: 20, PasswordHistoryCount: 5, PasswordMaxAgeDays: 30, MaxLoginFailures: 9,
		LockoutDuration: 1, FailureResetTime: 2, PermanentLockoutAfter: 3, EventsExpiration: 60,
		ThemeName: "high-contrast", Theme: map[string]any{"textColor": "#000"},
		LoginTheme: "idenplane", AccountTheme: "high-contrast", EmailTheme: "idenplane",
		TermsText: "New terms.", TermsVersion: "v2", CreatedAt: 99999,
	}
	if err := s.UpdateRealm(testCtx, upd); err != nil {
		t.Fatal(err)
	}
	// Name and creation time never change through an update.
	if _, err := s.GetRealm(testCtx, "renamed"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update renamed the realm: %v", err)
	}
	got, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	want := *upd
	want.Name, want.CreatedAt = "acme", 1000
	mustEqual(t, "updated realm", got, &want)

	// Clearing the secrets and the theme stores them as absent.
	want.SMTPPassword, want.EmailProviderConfig, want.Theme = "", nil, nil
	if err := s.UpdateRealm(testCtx, &want); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "cleared realm", got, &want)
}

func testRealmUpdateMissing(t *testing.T, s *store.Store) {
	err := s.UpdateRealm(testCtx, testRealm("99999999-9999-4999-8999-999999999999", "ghost", 1))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateRealm of a missing realm: %v, want ErrNotFound", err)
	}
	mustBeErrNotFound(t, "DeleteRealm of a missing realm", s.DeleteRealm(testCtx, "ghost"))
	if _, err := s.GetRealm(testCtx, "ghost"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateRealm of a missing realm created it: %v", err)
	}
}

func testRealmDeleteCascades(t *testing.T, s *store.Store) {
	acme := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	other := mustCreateRealm(t, s, testRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", acme.ID, "alice", "alice@acme.test"))
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000002", acme.ID, "bob", ""))
	mustCreateUser(t, s, testUser("b0000000-0000-4000-8000-000000000001", other.ID, "alice", "alice@acme.test"))

	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRealm(testCtx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted realm: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(testCtx, acme.ID, "a0000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("user of a deleted realm: %v, want ErrNotFound", err)
	}
	users, total, err := s.ListUsers(testCtx, acme.ID, store.UserFilter{Limit: 10})
	if err != nil || total != 0 || len(users) != 0 {
		t.Fatalf("users of the deleted realm: %d %v %v", total, users, err)
	}
	// The cascade stays inside the realm.
	if _, err := s.GetUser(testCtx, other.ID, "b0000000-0000-4000-8000-000000000001"); err != nil {
		t.Fatalf("user of the other realm: %v", err)
	}
	// The name is free again.
	mustCreateRealm(t, s, testRealm("33333333-3333-4333-8333-333333333333", "acme", 3000))
	// And the deleted users' ids are free too: they were really deleted.
	mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", "33333333-3333-4333-8333-333333333333", "alice", ""))
}

func testRealmSecretsRoundTrip(t *testing.T, s *store.Store) {
	r := testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000)
	r.SMTPPassword = "p@ss wörd with \x00 nul and ünïcode"
	r.EmailProviderConfig = map[string]any{"apiKey": "k", "nested": map[string]any{"secret": "s", "n": 1.5}, "list": []any{"a", true}}
	mustCreateRealm(t, s, r)
	got, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "smtp password", got.SMTPPassword, r.SMTPPassword)
	mustEqual(t, "provider config", got.EmailProviderConfig, r.EmailProviderConfig)

	r.SMTPPassword = "rotated"
	r.EmailProviderConfig = map[string]any{"apiKey": "k2"}
	if err := s.UpdateRealm(testCtx, r); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.SMTPPassword != "rotated" || !reflect.DeepEqual(got.EmailProviderConfig, r.EmailProviderConfig) {
		t.Fatalf("secrets after update: %q %v", got.SMTPPassword, got.EmailProviderConfig)
	}
}
