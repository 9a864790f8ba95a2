package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// samlSuite is the conformance tests of the SAML identity provider's tables.
func samlSuite() []subTest {
	return []subTest{
		{"SAMLKeyLifecycle", testSAMLKeyLifecycle},
		{"SAMLSettings", testSAMLSettings},
		{"SAMLServiceProviders", testSAMLServiceProviders},
		{"SAMLSignInRows", testSAMLSignInRows},
		{"SAMLSessions", testSAMLSessions},
	}
}

func samlTestKey(id, realmID, status string, createdAt int64) *store.SAMLKey {
	k := &store.SAMLKey{ID: id, RealmID: realmID, PrivateKey: []byte("private " + id), Certificate: []byte("cert " + id),
		Status: status, CreatedAt: createdAt}
	if status == store.KeyActive {
		k.ActivatedAt = createdAt
	}
	return k
}

func testSAMLKeyLifecycle(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	for _, k := range []*store.SAMLKey{samlTestKey("a1", keyTestRealmA, store.KeyActive, 1000),
		samlTestKey("a2", keyTestRealmA, store.KeyNext, 2000), samlTestKey("b1", keyTestRealmB, store.KeyActive, 1500)} {
		if err := s.CreateSAMLKey(testCtx, k); err != nil {
			t.Fatalf("create %s: %v", k.ID, err)
		}
	}
	if err := s.CreateSAMLKey(testCtx, samlTestKey("a3", keyTestRealmA, store.KeyActive, 3000)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second active key: %v, want ErrConflict", err)
	}
	if err := s.CreateSAMLKey(testCtx, samlTestKey("x", "33333333-3333-4333-8333-333333333333", store.KeyNext, 1)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("key of an unknown realm: %v, want ErrNotFound", err)
	}
	ids := func(keys []*store.SAMLKey, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, k := range keys {
			out += k.ID + "=" + k.Status + " "
			if k.PrivateKey != nil {
				t.Fatalf("key %s read with its private half", k.ID)
			}
			if string(k.Certificate) != "cert "+k.ID {
				t.Fatalf("key %s certificate %q", k.ID, k.Certificate)
			}
		}
		return out
	}
	if got := ids(s.ListSAMLKeys(testCtx, keyTestRealmA)); got != "a2=next a1=active " {
		t.Fatalf("keys of A: %s", got)
	}
	priv, err := s.SAMLKeyPrivate(testCtx, keyTestRealmA, "a1")
	if err != nil || string(priv) != "private a1" {
		t.Fatalf("private a1: %q %v", priv, err)
	}
	if _, err := s.SAMLKeyPrivate(testCtx, keyTestRealmB, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("private key through another realm: %v", err)
	}

	now := time.UnixMilli(5000)
	if err := s.ActivateSAMLKey(testCtx, keyTestRealmA, "a2", now, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.ActivateSAMLKey(testCtx, keyTestRealmA, "a2", now, now.Add(time.Second)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("activating a key that is not next: %v", err)
	}
	if got := ids(s.PublishedSAMLKeys(testCtx, keyTestRealmA, now)); got != "a2=active a1=retired " {
		t.Fatalf("published while a1 is retired: %s", got)
	}
	later := now.Add(time.Second)
	if got := ids(s.PublishedSAMLKeys(testCtx, keyTestRealmA, later)); got != "a2=active " {
		t.Fatalf("published after a1's publication: %s", got)
	}
	if n, err := s.DeleteExpiredSAMLKeys(testCtx, later); err != nil || n != 1 {
		t.Fatalf("delete expired: %d %v", n, err)
	}
	if got := ids(s.ListSAMLKeys(testCtx, keyTestRealmB)); got != "b1=active " {
		t.Fatalf("keys of B: %s", got)
	}
	if err := s.DeleteRealm(testCtx, "beta"); err != nil {
		t.Fatal(err)
	}
	if got := ids(s.ListSAMLKeys(testCtx, keyTestRealmB)); got != "" {
		t.Fatalf("keys of a deleted realm: %s", got)
	}
}

func testSAMLSettings(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	got, err := s.GetSAMLSettings(testCtx, keyTestRealmA)
	if err != nil || got.WantAuthnRequestsSigned {
		t.Fatalf("default settings: %+v %v", got, err)
	}
	if err := s.PutSAMLSettings(testCtx, &store.SAMLSettings{RealmID: keyTestRealmA, WantAuthnRequestsSigned: true}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetSAMLSettings(testCtx, keyTestRealmA); err != nil || !got.WantAuthnRequestsSigned {
		t.Fatalf("settings after put: %+v %v", got, err)
	}
	if got, err = s.GetSAMLSettings(testCtx, keyTestRealmB); err != nil || got.WantAuthnRequestsSigned {
		t.Fatalf("settings of another realm: %+v %v", got, err)
	}
	if err := s.PutSAMLSettings(testCtx, &store.SAMLSettings{RealmID: "33333333-3333-4333-8333-333333333333"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settings of an unknown realm: %v", err)
	}
}

func samlTestSP(id, realmID, entityID string) *store.SAMLServiceProvider {
	return &store.SAMLServiceProvider{ID: id, RealmID: realmID, EntityID: entityID, Name: "SP " + entityID, Enabled: true,
		ACSURL: entityID + "/acs", SLOURL: entityID + "/slo", SLOBinding: store.SLOBindingRedirect, Certificate: "PEM sign", RequestsSigned: true, EncryptionCertificate: "PEM enc",
		EncryptAssertions: true, NameIDFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
		SignAssertions: true, SignResponses: true, AttributeStatements: map[string]string{"mail": "email"},
		IDPInitiated: true, CreatedAt: 1234}
}

func testSAMLServiceProviders(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	a := samlTestSP("44444444-4444-4444-8444-444444444444", keyTestRealmA, "https://sp.test")
	if err := s.CreateSAMLServiceProvider(testCtx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSAMLServiceProvider(testCtx, keyTestRealmA, a.ID)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, a)
	}
	if got, err := s.GetSAMLServiceProviderByEntityID(testCtx, keyTestRealmA, a.EntityID); err != nil || got.ID != a.ID {
		t.Fatalf("by entity ID: %+v %v", got, err)
	}
	if _, err := s.GetSAMLServiceProvider(testCtx, keyTestRealmB, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("through another realm: %v", err)
	}
	dup := samlTestSP("55555555-5555-4555-8555-555555555555", keyTestRealmA, a.EntityID)
	var ce *store.ConflictError
	if err := s.CreateSAMLServiceProvider(testCtx, dup); !errors.As(err, &ce) || ce.Column != "entity_id" {
		t.Fatalf("an entity ID twice in a realm: %v", err)
	}
	dup.RealmID = keyTestRealmB // another realm may have the same entity ID
	if err := s.CreateSAMLServiceProvider(testCtx, dup); err != nil {
		t.Fatal(err)
	}
	b := samlTestSP("66666666-6666-4666-8666-666666666666", keyTestRealmA, "https://another.test")
	b.AttributeStatements = nil
	if err := s.CreateSAMLServiceProvider(testCtx, b); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListSAMLServiceProviders(testCtx, keyTestRealmA)
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID || list[0].AttributeStatements == nil {
		t.Fatalf("list: %+v %v", list, err)
	}

	a.Name, a.Enabled, a.AttributeStatements = "renamed", false, map[string]string{"uid": "username"}
	a.SLOBinding, a.RequestsSigned = store.SLOBindingPOST, false
	if err := s.UpdateSAMLServiceProvider(testCtx, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSAMLServiceProvider(testCtx, keyTestRealmA, a.ID); !reflect.DeepEqual(got, a) {
		t.Fatalf("after update %+v", got)
	}
	b.EntityID = a.EntityID
	if err := s.UpdateSAMLServiceProvider(testCtx, b); !errors.As(err, &ce) || ce.Column != "entity_id" {
		t.Fatalf("update to a taken entity ID: %v", err)
	}
	if err := s.DeleteSAMLServiceProvider(testCtx, keyTestRealmB, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete through another realm: %v", err)
	}
	if err := s.DeleteSAMLServiceProvider(testCtx, keyTestRealmA, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSAMLServiceProvider(testCtx, keyTestRealmA, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

func testSAMLSignInRows(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	sp := samlTestSP("44444444-4444-4444-8444-444444444444", keyTestRealmA, "https://sp.test")
	if err := s.CreateSAMLServiceProvider(testCtx, sp); err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_700_000_000_000)

	// Request IDs: each once per issuer and realm, until it expires.
	if err := s.RecordSAMLRequestID(testCtx, keyTestRealmA, sp.EntityID, "id-1", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordSAMLRequestID(testCtx, keyTestRealmA, sp.EntityID, "id-1", now.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a request ID twice: %v", err)
	}
	for _, other := range [][2]string{{keyTestRealmA, "https://other.test"}, {keyTestRealmB, sp.EntityID}} {
		if err := s.RecordSAMLRequestID(testCtx, other[0], other[1], "id-1", now.Add(time.Minute)); err != nil {
			t.Fatalf("the same ID of another issuer or realm: %v", err)
		}
	}

	// A waiting AuthnRequest is taken once, and not after it expires.
	ar := &store.SAMLAuthRequest{IDHash: []byte("hash-1"), RealmID: keyTestRealmA, SPID: sp.ID, RequestID: "id-1",
		ACSURL: sp.ACSURL, RelayState: "rs", NameIDFormat: "f", ForceAuthn: true, AuthnContext: `{"comparison":"minimum"}`,
		CreatedAt: now.UnixMilli(),
		ExpiresAt: now.Add(time.Minute).UnixMilli()}
	if err := s.CreateSAMLAuthRequest(testCtx, ar); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeSAMLAuthRequest(testCtx, keyTestRealmB, ar.IDHash, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("taken through another realm: %v", err)
	}
	got, err := s.TakeSAMLAuthRequest(testCtx, keyTestRealmA, ar.IDHash, now)
	if err != nil || !reflect.DeepEqual(got, ar) {
		t.Fatalf("taken %+v %v, want %+v", got, err, ar)
	}
	if _, err := s.TakeSAMLAuthRequest(testCtx, keyTestRealmA, ar.IDHash, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}
	ar.IDHash = []byte("hash-2")
	if err := s.CreateSAMLAuthRequest(testCtx, ar); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeSAMLAuthRequest(testCtx, keyTestRealmA, ar.IDHash, now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("taken expired: %v", err)
	}

	// Logouts under way.
	if err := s.PutSAMLLogout(testCtx, keyTestRealmA, []byte("lo"), `{"a":1}`, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSAMLLogout(testCtx, keyTestRealmA, []byte("lo"), `{"a":2}`, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st, err := s.GetSAMLLogout(testCtx, keyTestRealmA, []byte("lo"), now); err != nil || st != `{"a":2}` {
		t.Fatalf("logout state %q %v", st, err)
	}
	if _, err := s.GetSAMLLogout(testCtx, keyTestRealmA, []byte("lo"), now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired logout: %v", err)
	}

	// The sweep deletes what expired: the two request IDs, the expired
	// AuthnRequest, the logout.
	n, err := s.DeleteExpiredSAMLRows(testCtx, now.Add(2*time.Minute))
	if err != nil || n != 5 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if err := s.RecordSAMLRequestID(testCtx, keyTestRealmA, sp.EntityID, "id-1", now.Add(time.Hour)); err != nil {
		t.Fatalf("an ID again after it expired: %v", err)
	}
}

func testSAMLSessions(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	a := samlTestSP("44444444-4444-4444-8444-444444444444", sessionsTestRealm, "https://a.test")
	b := samlTestSP("55555555-5555-4555-8555-555555555555", sessionsTestRealm, "https://b.test")
	for _, sp := range []*store.SAMLServiceProvider{a, b} {
		if err := s.CreateSAMLServiceProvider(testCtx, sp); err != nil {
			t.Fatal(err)
		}
	}
	sessionsTestMustCreate(t, s, sessionsTestSSO("s1", sessionsTestRealm, "alice", sessionsTestNow, sessionsTestNow+sessionsTestHour),
		sessionsTestSSO("s2", sessionsTestRealm, "bob", sessionsTestNow, sessionsTestNow+sessionsTestHour))
	rows := []*store.SAMLSession{
		{SessionIndex: "i1", RealmID: sessionsTestRealm, SSOSessionID: "s1", SPID: b.ID, NameID: "n1", NameIDFormat: "f", CreatedAt: 1},
		{SessionIndex: "i2", RealmID: sessionsTestRealm, SSOSessionID: "s1", SPID: a.ID, NameID: "n2", NameIDFormat: "f", CreatedAt: 2},
		{SessionIndex: "i3", RealmID: sessionsTestRealm, SSOSessionID: "s1", SPID: b.ID, NameID: "n1", NameIDFormat: "f", CreatedAt: 3},
		{SessionIndex: "i4", RealmID: sessionsTestRealm, SSOSessionID: "s2", SPID: a.ID, NameID: "n4", NameIDFormat: "f", CreatedAt: 4},
	}
	for _, r := range rows {
		if err := s.CreateSAMLSession(testCtx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSAMLSession(testCtx, &store.SAMLSession{SessionIndex: "i5", RealmID: sessionsTestRealm,
		SSOSessionID: "gone", SPID: a.ID, CreatedAt: 5}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a SAML session of no SSO session: %v", err)
	}
	got, err := s.ListSAMLSessions(testCtx, sessionsTestRealm, "s1")
	if err != nil || len(got) != 3 || !reflect.DeepEqual(got[0], rows[0]) || got[2].SessionIndex != "i3" {
		t.Fatalf("SAML sessions of s1: %+v %v", got, err)
	}
	if got, err := s.GetSAMLSession(testCtx, sessionsTestRealm, "i4"); err != nil || !reflect.DeepEqual(got, rows[3]) {
		t.Fatalf("SAML session i4: %+v %v", got, err)
	}
	for _, realm := range []string{sessionsTestRealm, sessionsTestOther} {
		index := map[string]string{sessionsTestRealm: "nope", sessionsTestOther: "i4"}[realm]
		if _, err := s.GetSAMLSession(testCtx, realm, index); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("SAML session %s in realm %s: %v, want not found", index, realm, err)
		}
	}
	sps, err := s.SAMLServiceProvidersOfSessions(testCtx, sessionsTestRealm, []string{"s1", "s2", "none"})
	want := map[string][]string{"s1": {b.EntityID, a.EntityID}, "s2": {a.EntityID}}
	if err != nil || !reflect.DeepEqual(sps, want) {
		t.Fatalf("SPs of sessions %v %v, want %v", sps, err, want)
	}
	if sps, err := s.SAMLServiceProvidersOfSessions(testCtx, sessionsTestOther, []string{"s1"}); err != nil || len(sps) != 0 {
		t.Fatalf("through another realm: %v %v", sps, err)
	}
	// They go with their SSO session.
	if _, err := s.DeleteSession(testCtx, sessionsTestRealm, "s1", store.SessionSSO, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListSAMLSessions(testCtx, sessionsTestRealm, "s1"); err != nil || len(got) != 0 {
		t.Fatalf("SAML sessions after their SSO session ended: %+v %v", got, err)
	}
}
