package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The fixtures of this package's own tests: those of the SQLite file, its
// pragmas, migrations, backups and query plans. The conformance suite has
// its own, in storetest.

var (
	testCtx      = context.Background()
	storeTestKey = bytes.Repeat([]byte{0x42}, MasterKeySize)
)

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

// The realms of testFixture.
const (
	testRealmID      = "11111111-1111-4111-8111-111111111111"
	testOtherRealmID = "22222222-2222-4222-8222-222222222222"
)

// testRealm is a realm with every field set away from its zero value.
func testRealm(id, name string, createdAt int64) *Realm {
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

func testUser(id, realmID, username, email string) *User {
	return &User{
		ID: id, RealmID: realmID, Username: username, Email: email, FirstName: "First " + username,
		LastName: "Last", Enabled: true, CreatedAt: 1_700_000_000_000,
	}
}

func mustCreateRealm(t *testing.T, s *Store, r *Realm) *Realm {
	t.Helper()
	if err := s.CreateRealm(testCtx, r); err != nil {
		t.Fatalf("create realm %s: %v", r.Name, err)
	}
	return r
}

func mustCreateUser(t *testing.T, s *Store, u *User) *User {
	t.Helper()
	if err := s.CreateUser(testCtx, u); err != nil {
		t.Fatalf("create user %s: %v", u.Username, err)
	}
	return u
}

// testFixture makes realms acme and other; users alice and bob and
// clients web and cli in acme; user carol and client far in other.
func testFixture(t *testing.T, s *Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
	mustCreateRealm(t, s, testRealm(testOtherRealmID, "other", 2000))
	mustCreateUser(t, s, testUser("alice", testRealmID, "alice", ""))
	mustCreateUser(t, s, testUser("bob", testRealmID, "bob", ""))
	mustCreateUser(t, s, testUser("carol", testOtherRealmID, "carol", ""))
	for _, c := range []*Client{
		{ID: "web", RealmID: testRealmID, ClientID: "web-app", ClientType: "PUBLIC", CreatedAt: 1},
		{ID: "cli", RealmID: testRealmID, ClientID: "cli-app", ClientType: "PUBLIC", CreatedAt: 1},
		{ID: "far", RealmID: testOtherRealmID, ClientID: "far-app", ClientType: "PUBLIC", CreatedAt: 1},
	} {
		if err := s.CreateClient(testCtx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// testSigningKey stores a key of realmID whose private part is 1200
// random bytes: the store treats it as opaque.
func testSigningKey(t *testing.T, s *Store, kid, realmID, status string) *SigningKey {
	t.Helper()
	priv := make([]byte, 1200)
	if _, err := rand.Read(priv); err != nil {
		t.Fatal(err)
	}
	k := &SigningKey{ID: kid, RealmID: realmID, Algorithm: "ES256", PrivateKey: priv,
		PublicJWK: `{"kty":"EC","kid":"` + kid + `"}`, Status: status, CreatedAt: 1000}
	if status != KeyNext {
		k.ActivatedAt = 1001
	}
	if err := s.CreateSigningKey(testCtx, k); err != nil {
		t.Fatalf("create signing key %s: %v", kid, err)
	}
	return k
}

// testBeginTOTP starts a TOTP enrolment of user in acme.
func testBeginTOTP(t *testing.T, s *Store, id, user, secret string) {
	t.Helper()
	c := &Credential{ID: id, RealmID: testRealmID, UserID: user, Type: CredentialTOTP, Label: "phone",
		Secret: []byte(secret), CreatedAt: 1_800_000_000_000}
	if err := s.BeginCredential(testCtx, c); err != nil {
		t.Fatalf("begin credential %s: %v", id, err)
	}
}

func mustEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
