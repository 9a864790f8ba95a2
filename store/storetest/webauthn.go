package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// webauthnSuite is the conformance tests of WebAuthn credentials, user
// handles and ceremonies.
func webauthnSuite() []subTest {
	return []subTest{
		{"WebAuthnCredentialAdd", testWebAuthnCredentialAdd},
		{"WebAuthnSignCount", testWebAuthnSignCount},
		{"WebAuthnCredentialDelete", testWebAuthnCredentialDelete},
		{"WebAuthnUserHandle", testWebAuthnUserHandle},
		{"WebAuthnCeremonyOnce", testWebAuthnCeremonyOnce},
		{"WebAuthnSurvivesReplacement", testWebAuthnSurvivesReplacement},
	}
}

// webauthnTestAdd gives user a WebAuthn credential whose credential ID is
// credID, with signature counter count.
func webauthnTestAdd(t *testing.T, s *store.Store, realm, id, user, credID string, count int64) *store.WebAuthnCredential {
	t.Helper()
	c := &store.WebAuthnCredential{ID: id, RealmID: realm, UserID: user, Name: "key " + id, CredentialID: []byte(credID),
		Data: []byte(`{"publicKey":"secret-looking-` + id + `"}`), SignCount: count, CreatedAt: sessionsTestNow}
	if err := s.AddWebAuthnCredential(testCtx, c); err != nil {
		t.Fatalf("add WebAuthn credential %s: %v", id, err)
	}
	return c
}

func testWebAuthnCredentialAdd(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	first := webauthnTestAdd(t, s, sessionsTestRealm, "w1", "alice", "cred-1", 5)
	second := &store.WebAuthnCredential{ID: "w2", RealmID: sessionsTestRealm, UserID: "alice", Name: "key w2",
		CredentialID: []byte("cred-2"), Data: []byte(`{"publicKey":"secret-looking-w2"}`),
		CreatedAt: sessionsTestNow - 1} // listed first: oldest first
	if err := s.AddWebAuthnCredential(testCtx, second); err != nil {
		t.Fatal(err)
	}
	list, err := s.WebAuthnCredentials(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's WebAuthn credentials", list, []*store.WebAuthnCredential{second, first})
	got, err := s.WebAuthnCredentialByCredentialID(testCtx, sessionsTestRealm, []byte("cred-1"))
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "credential by credential ID", got, first)

	// WebAuthn credentials are second factors like TOTP.
	all, err := s.Credentials(testCtx, sessionsTestRealm, "alice")
	if err != nil || len(all) != 2 || all[0].Type != store.CredentialWebAuthn {
		t.Fatalf("alice's second factors: %+v, %v", all, err)
	}

	// A credential ID is the realm's once; another realm may have it.
	dup := &store.WebAuthnCredential{ID: "w3", RealmID: sessionsTestRealm, UserID: "bob", Name: "copy", CredentialID: []byte("cred-1"),
		Data: []byte("{}"), CreatedAt: sessionsTestNow}
	mustBeErrConflict(t, "a credential ID registered twice", s.AddWebAuthnCredential(testCtx, dup))
	webauthnTestAdd(t, s, sessionsTestOther, "w4", "carol", "cred-1", 0)
	if got, err := s.WebAuthnCredentialByCredentialID(testCtx, sessionsTestOther, []byte("cred-1")); err != nil || got.UserID != "carol" {
		t.Fatalf("carol's credential in her realm: %+v, %v", got, err)
	}
	for _, tc := range []struct {
		name  string
		realm string
		user  string
	}{
		{"unknown user", sessionsTestRealm, "nobody"},
		{"user of another realm", sessionsTestRealm, "carol"},
	} {
		c := &store.WebAuthnCredential{ID: "w-" + tc.user, RealmID: tc.realm, UserID: tc.user, CredentialID: []byte("x-" + tc.user),
			Data: []byte("{}")}
		if err := s.AddWebAuthnCredential(testCtx, c); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}
	if _, err := s.WebAuthnCredentialByCredentialID(testCtx, sessionsTestRealm, []byte("cred-9")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown credential ID: %v, want ErrNotFound", err)
	}
	if list, err := s.WebAuthnCredentials(testCtx, sessionsTestOther, "alice"); err != nil || len(list) != 0 {
		t.Fatalf("alice's credentials seen from another realm: %v, %v", list, err)
	}
	// A TOTP credential is no WebAuthn credential.
	credentialsTestEnrolled(t, s, "t1", "bob")
	if list, err := s.WebAuthnCredentials(testCtx, sessionsTestRealm, "bob"); err != nil || len(list) != 0 {
		t.Fatalf("bob's WebAuthn credentials: %v, %v", list, err)
	}
}

func testWebAuthnSignCount(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	webauthnTestAdd(t, s, sessionsTestRealm, "w1", "alice", "cred-1", 5)
	webauthnTestAdd(t, s, sessionsTestRealm, "w0", "alice", "cred-0", 0)
	for _, tc := range []struct {
		name, realm, id string
		count           int64
		want            error
	}{
		{"the stored counter again", sessionsTestRealm, "w1", 5, store.ErrSignCount},
		{"a lower counter", sessionsTestRealm, "w1", 4, store.ErrSignCount},
		{"zero after a counter", sessionsTestRealm, "w1", 0, store.ErrSignCount},
		{"a higher counter", sessionsTestRealm, "w1", 6, nil},
		{"the new counter again", sessionsTestRealm, "w1", 6, store.ErrSignCount},
		{"no counter, no counter", sessionsTestRealm, "w0", 0, nil},
		{"no counter again", sessionsTestRealm, "w0", 0, nil},
		{"a counter starts", sessionsTestRealm, "w0", 1, nil},
		{"then zero", sessionsTestRealm, "w0", 0, store.ErrSignCount},
		{"unknown credential", sessionsTestRealm, "w9", 100, store.ErrNotFound},
		{"another realm", sessionsTestOther, "w1", 100, store.ErrNotFound},
	} {
		err := s.UseWebAuthnCredential(testCtx, tc.realm, tc.id, tc.count, []byte(`{"used":"`+tc.name+`"}`), sessionsTestNow+10)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	got, err := s.WebAuthnCredentialByCredentialID(testCtx, sessionsTestRealm, []byte("cred-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.SignCount != 6 || got.LastUsedAt != sessionsTestNow+10 || string(got.Data) != `{"used":"a higher counter"}` {
		t.Fatalf("after sign-ins: %+v", got)
	}
}

func testWebAuthnCredentialDelete(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	credentialsTestEnrolled(t, s, "t1", "alice") // with recovery codes
	webauthnTestAdd(t, s, sessionsTestRealm, "w1", "alice", "cred-1", 0)
	webauthnTestAdd(t, s, sessionsTestRealm, "w2", "bob", "cred-2", 0)
	for _, tc := range []struct{ name, realm, user, id string }{
		{"another user's", sessionsTestRealm, "alice", "w2"},
		{"a TOTP credential", sessionsTestRealm, "alice", "t1"},
		{"from another realm", sessionsTestOther, "bob", "w2"},
		{"unknown", sessionsTestRealm, "alice", "w9"},
	} {
		if err := s.DeleteWebAuthnCredential(testCtx, tc.realm, tc.user, tc.id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete %s: %v, want ErrNotFound", tc.name, err)
		}
	}
	if err := s.DeleteWebAuthnCredential(testCtx, sessionsTestRealm, "alice", "w1"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.WebAuthnCredentials(testCtx, sessionsTestRealm, "alice"); len(list) != 0 {
		t.Fatalf("alice's keys after the delete: %v", list)
	}
	// TOTP stands, so the recovery codes stay; they go with the last factor.
	if n, _ := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); n != 2 {
		t.Fatalf("recovery codes left %d, want 2", n)
	}
	webauthnTestAdd(t, s, sessionsTestRealm, "w3", "alice", "cred-3", 0)
	if _, err := s.DeleteCredentials(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); n != 2 {
		t.Fatalf("recovery codes left with a key standing: %d, want 2", n)
	}
	if err := s.DeleteWebAuthnCredential(testCtx, sessionsTestRealm, "alice", "w3"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); n != 0 {
		t.Fatalf("recovery codes left without a factor: %d, want 0", n)
	}
	// Removing every factor takes the keys too.
	if n, err := s.DeleteCredentials(testCtx, sessionsTestRealm, "bob"); err != nil || n != 1 {
		t.Fatalf("delete bob's factors: %d, %v", n, err)
	}
	if list, _ := s.WebAuthnCredentials(testCtx, sessionsTestRealm, "bob"); len(list) != 0 {
		t.Fatalf("bob's keys after removing his factors: %v", list)
	}
}

func testWebAuthnUserHandle(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	h, err := s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "alice", []byte("handle-a"))
	if err != nil || string(h) != "handle-a" {
		t.Fatalf("alice's first handle: %q, %v", h, err)
	}
	if h, err = s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "alice", []byte("handle-b")); err != nil || string(h) != "handle-a" {
		t.Fatalf("alice's handle asked again: %q, %v; want it kept", h, err)
	}
	if h, err = s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "bob", []byte("handle-b")); err != nil || string(h) != "handle-b" {
		t.Fatalf("bob's handle: %q, %v", h, err)
	}
	if _, err := s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "bob-2", []byte("handle-c")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown user: %v, want ErrNotFound", err)
	}
	if _, err := s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "carol", []byte("handle-c")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("user of another realm: %v, want ErrNotFound", err)
	}
	// A handle is a realm's once.
	mustCreateUser(t, s, testUser("dave", sessionsTestRealm, "dave", ""))
	if _, err := s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "dave", []byte("handle-a")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a handle given twice: %v, want ErrConflict", err)
	}
}

func testWebAuthnCeremonyOnce(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	mk := func(id, realm, user string, expires int64) *store.WebAuthnCeremony {
		t.Helper()
		c := &store.WebAuthnCeremony{ID: id, RealmID: realm, UserID: user, Kind: store.CeremonyLogin,
			SessionData: []byte(`{"challenge":"` + id + `"}`), ExpiresAt: expires}
		if err := s.CreateWebAuthnCeremony(testCtx, c); err != nil {
			t.Fatalf("create ceremony %s: %v", id, err)
		}
		return c
	}
	alice := mk("ceremony-alice", sessionsTestRealm, "alice", sessionsTestNow+1000)
	alice.Kind = store.CeremonyLogin
	passkey := mk("ceremony-passkey", sessionsTestRealm, "", sessionsTestNow+1000)
	mk("ceremony-old", sessionsTestRealm, "", sessionsTestNow)
	mk("ceremony-bob", sessionsTestRealm, "bob", sessionsTestNow+1000)
	if err := s.CreateWebAuthnCeremony(testCtx, &store.WebAuthnCeremony{ID: "x", RealmID: sessionsTestRealm, UserID: "carol",
		Kind: store.CeremonyRegister, SessionData: []byte("{}"), ExpiresAt: sessionsTestNow + 1000}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a ceremony for a user of another realm: %v, want ErrNotFound", err)
	}

	if _, err := s.TakeWebAuthnCeremony(testCtx, sessionsTestOther, "ceremony-alice", sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("take from another realm: %v, want ErrNotFound", err)
	}
	got, err := s.TakeWebAuthnCeremony(testCtx, sessionsTestRealm, "ceremony-alice", sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ceremony", got, alice)
	if _, err := s.TakeWebAuthnCeremony(testCtx, sessionsTestRealm, "ceremony-alice", sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a ceremony taken twice: %v, want ErrNotFound", err)
	}
	if got, err = s.TakeWebAuthnCeremony(testCtx, sessionsTestRealm, "ceremony-passkey", sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "passkey ceremony", got, passkey)
	if _, err := s.TakeWebAuthnCeremony(testCtx, sessionsTestRealm, "ceremony-old", sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired ceremony: %v, want ErrNotFound", err)
	}
	mk("ceremony-old-2", sessionsTestRealm, "", sessionsTestNow-5)
	if n, err := s.DeleteExpiredWebAuthnCeremonies(testCtx, sessionsTestNow); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want the one expired", n, err)
	}
	// A user's ceremonies go with the user.
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, s, testUser("bob", sessionsTestRealm, "bob", ""))
	// None is left: taken before any of them expired, each would come back.
	for _, id := range []string{"ceremony-alice", "ceremony-passkey", "ceremony-old", "ceremony-old-2", "ceremony-bob"} {
		if c, err := s.TakeWebAuthnCeremony(testCtx, sessionsTestRealm, id, 0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ceremony %s left: %+v, %v", id, c, err)
		}
	}
}

func testWebAuthnSurvivesReplacement(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	key := webauthnTestAdd(t, s, sessionsTestRealm, "w1", "alice", "cred-1", 7)
	if err := s.UseWebAuthnCredential(testCtx, sessionsTestRealm, "w1", 8, key.Data, sessionsTestNow+5); err != nil {
		t.Fatal(err)
	}
	key.SignCount, key.LastUsedAt = 8, sessionsTestNow+5
	webauthnTestAdd(t, s, sessionsTestRealm, "w2", "bob", "cred-2", 0)
	if _, err := s.WebAuthnUserHandle(testCtx, sessionsTestRealm, "alice", []byte("handle-a")); err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotFactors(testCtx, sessionsTestRealm)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	const newRealm = "33333333-3333-4333-8333-333333333333"
	mustCreateRealm(t, s, testRealm(newRealm, "acme", 3000))
	mustCreateUser(t, s, testUser("alice", newRealm, "alice", ""))
	if err := s.RestoreFactors(testCtx, newRealm, snap); err != nil {
		t.Fatal(err)
	}
	got, err := s.WebAuthnCredentialByCredentialID(testCtx, newRealm, []byte("cred-1"))
	if err != nil {
		t.Fatal(err)
	}
	key.RealmID = newRealm
	mustEqual(t, "restored key", got, key)
	if h, err := s.WebAuthnUserHandle(testCtx, newRealm, "alice", []byte("other")); err != nil || string(h) != "handle-a" {
		t.Fatalf("alice's handle after the replacement: %q, %v", h, err)
	}
	// Bob's key came back nowhere.
	credentialsTestNone(t, s, sessionsTestRealm, "bob")
	credentialsTestNone(t, s, newRealm, "bob")
	for _, realm := range []string{sessionsTestRealm, newRealm} {
		if c, err := s.WebAuthnCredentialByCredentialID(testCtx, realm, []byte("cred-2")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("bob's key in realm %s: %+v, %v", realm, c, err)
		}
	}
	if list, err := s.Credentials(testCtx, newRealm, "alice"); err != nil || len(list) != 1 {
		t.Fatalf("alice's factors after the replacement: %v, %v; want her key only", list, err)
	}
}
