package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

func nhiSuite() []subTest {
	return []subTest{
		{"NHICreateGetList", testNHICreateGetList},
		{"NHIUpdateTouch", testNHIUpdateTouch},
		{"NHICredentials", testNHICredentials},
		{"NHICascade", testNHICascade},
	}
}

// nhiTestFixture makes the realms acme and other and, in acme, the
// clients c1 and c2 with c1's service-account user.
func nhiTestFixture(t *testing.T, s *store.Store) {
	t.Helper()
	clientsTestRealms(t, s)
	clientsTestMustCreate(t, s, clientsTestClient("c1", clientsTestRealmID, "svc-one"))
	clientsTestMustCreate(t, s, clientsTestClient("c2", clientsTestRealmID, "svc-two"))
	clientsTestMustCreate(t, s, clientsTestClient("c3", clientsTestOtherID, "svc-one"))
	u := testUser("sa1", clientsTestRealmID, "service-account-svc-one", "")
	u.ServiceAccountClientID = "c1"
	mustCreateUser(t, s, u)
}

func nhiTestIdentity(id, realmID, clientID, name, kind string) *store.NHI {
	return &store.NHI{ID: id, RealmID: realmID, ClientID: clientID, Kind: kind, Name: name, Description: "about " + name,
		OwnerType: "user", OwnerID: "owner-" + name, Metadata: map[string]string{"team": "t-" + name}, State: "active",
		CreatedAt: 1000, UpdatedAt: 2000, AdminPermissions: []string{"users:read"}}
}

func nhiTestMustCreate(t *testing.T, s *store.Store, n *store.NHI) *store.NHI {
	t.Helper()
	if err := s.CreateNHI(testCtx, n); err != nil {
		t.Fatalf("create identity %s: %v", n.Name, err)
	}
	return n
}

func nhiTestNames(list []*store.NHI) []string {
	var out []string
	for _, n := range list {
		out = append(out, n.Name)
	}
	return out
}

func testNHICreateGetList(t *testing.T, s *store.Store) {
	nhiTestFixture(t, s)
	// A new identity changes what its client is, which the server caches
	// (app/cache.go); a use of one changes nothing cached.
	gen := s.Generation()
	one := nhiTestMustCreate(t, s, nhiTestIdentity("n1", clientsTestRealmID, "c1", "svc-one", "service"))
	if s.Generation() == gen {
		t.Error("creating an identity kept the generation of cached data")
	}
	gen = s.Generation()
	if err := s.TouchNHI(testCtx, "n1", 5000); err != nil || s.Generation() != gen {
		t.Errorf("recording a use: %v, generation %d then %d", err, gen, s.Generation())
	}
	one.LastUsedAt = 5000
	nhiTestMustCreate(t, s, nhiTestIdentity("n2", clientsTestRealmID, "c2", "svc-two", "device"))
	nhiTestMustCreate(t, s, nhiTestIdentity("n3", clientsTestOtherID, "c3", "svc-one", "service"))

	got, err := s.GetNHI(testCtx, clientsTestRealmID, "n1")
	if err != nil {
		t.Fatal(err)
	}
	want := *one
	want.ServiceAccountUserID = "sa1"
	mustEqual(t, "identity", got, &want)
	byClient, err := s.GetNHIByClient(testCtx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "identity by client", byClient, &want)
	if n2, _ := s.GetNHI(testCtx, clientsTestRealmID, "n2"); n2.ServiceAccountUserID != "" {
		t.Errorf("service-account user of a client without one: %q", n2.ServiceAccountUserID)
	}

	_, err = s.GetNHI(testCtx, clientsTestOtherID, "n1")
	mustBeErrNotFound(t, "identity of another realm", err)
	_, err = s.GetNHIByClient(testCtx, "nope")
	mustBeErrNotFound(t, "identity of an unknown client", err)
	mustBeErrConflict(t, "name taken in the realm", s.CreateNHI(testCtx, nhiTestIdentity("n4", clientsTestRealmID, "c2", "svc-one", "bot")))
	mustBeErrConflict(t, "client backing two", s.CreateNHI(testCtx, nhiTestIdentity("n4", clientsTestRealmID, "c1", "svc-four", "bot")))

	for _, c := range []struct {
		f            store.NHIFilter
		first, max   int
		want         []string
		filterRemark string
	}{
		{store.NHIFilter{}, 0, 10, []string{"svc-one", "svc-two"}, "all"},
		{store.NHIFilter{Kind: "device"}, 0, 10, []string{"svc-two"}, "kind"},
		{store.NHIFilter{State: "suspended"}, 0, 10, nil, "state"},
		{store.NHIFilter{Owner: "owner-svc-one"}, 0, 10, []string{"svc-one"}, "owner"},
		{store.NHIFilter{Search: "TWO"}, 0, 10, []string{"svc-two"}, "search"},
		{store.NHIFilter{Search: "_"}, 0, 10, nil, "search for a LIKE wildcard"},
		{store.NHIFilter{}, 1, 10, []string{"svc-two"}, "first"},
		{store.NHIFilter{}, 0, 1, []string{"svc-one"}, "max"},
	} {
		list, err := s.ListNHIs(testCtx, clientsTestRealmID, c.f, c.first, c.max)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "list by "+c.filterRemark, nhiTestNames(list), c.want)
	}
}

func testNHIUpdateTouch(t *testing.T, s *store.Store) {
	nhiTestFixture(t, s)
	n := nhiTestMustCreate(t, s, nhiTestIdentity("n1", clientsTestRealmID, "c1", "svc-one", "service"))
	n.Description, n.OwnerType, n.OwnerID, n.Metadata, n.State, n.UpdatedAt = "d2", "", "", nil, "suspended", 3000
	if err := s.UpdateNHI(testCtx, n); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetNHI(testCtx, clientsTestRealmID, "n1")
	if got.Description != "d2" || got.OwnerType != "" || len(got.Metadata) != 0 || got.State != "suspended" || got.UpdatedAt != 3000 {
		t.Fatalf("updated %+v", got)
	}
	mustBeErrNotFound(t, "update of an unknown identity", s.UpdateNHI(testCtx, &store.NHI{ID: "nope", RealmID: clientsTestRealmID}))
	for _, at := range []int64{5000, 4000} {
		if err := s.TouchNHI(testCtx, "n1", at); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.GetNHI(testCtx, clientsTestRealmID, "n1"); got.LastUsedAt != 5000 {
		t.Fatalf("last used %d, want the latest, 5000", got.LastUsedAt)
	}
}

func testNHICredentials(t *testing.T, s *store.Store) {
	nhiTestFixture(t, s)
	nhiTestMustCreate(t, s, nhiTestIdentity("n1", clientsTestRealmID, "c1", "svc-one", "service"))
	nhiTestMustCreate(t, s, nhiTestIdentity("n3", clientsTestOtherID, "c3", "svc-one", "service"))
	key := &store.NHICredential{ID: "k1", RealmID: clientsTestRealmID, NHIID: "n1", Type: "api_key", Name: "ci",
		Prefix: "abcd1234", SecretHash: []byte{1, 2, 3}, Scopes: []string{"read"}, CreatedAt: 100, ExpiresAt: 900}
	secret := &store.NHICredential{ID: "s1", RealmID: clientsTestRealmID, NHIID: "n1", Type: "client_secret",
		SecretHash: []byte{4, 5, 6}, CreatedAt: 200}
	pub := &store.NHICredential{ID: "p1", RealmID: clientsTestRealmID, NHIID: "n1", Type: "public_key",
		PublicKey: `{"kty":"OKP"}`, KeyID: "kid1", CreatedAt: 300}
	for _, c := range []*store.NHICredential{key, secret, pub} {
		if err := s.CreateNHICredential(testCtx, c); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.GetNHICredential(testCtx, "n1", "k1"); err != nil {
		t.Fatal(err)
	} else {
		mustEqual(t, "API key", got, key)
	}
	_, err := s.GetNHICredential(testCtx, "n3", "k1")
	mustBeErrNotFound(t, "credential of another identity", err)
	if got, err := s.GetNHICredentialByPrefix(testCtx, clientsTestRealmID, "abcd1234"); err != nil || got.ID != "k1" {
		t.Fatalf("by prefix: %+v %v", got, err)
	}
	_, err = s.GetNHICredentialByPrefix(testCtx, clientsTestOtherID, "abcd1234")
	mustBeErrNotFound(t, "prefix in another realm", err)
	_, err = s.GetNHICredentialByPrefix(testCtx, clientsTestRealmID, "")
	mustBeErrNotFound(t, "the empty prefix", err)
	dup := *key
	dup.ID = "k2"
	mustBeErrConflict(t, "a prefix taken", s.CreateNHICredential(testCtx, &dup))

	all, _ := s.ListNHICredentials(testCtx, "n1")
	mustEqual(t, "count", len(all), 3)
	keys, _ := s.ListNHICredentials(testCtx, "n1", "api_key", "client_secret")
	mustEqual(t, "secrets and keys", []string{keys[0].ID, keys[1].ID}, []string{"k1", "s1"})

	// A revocation keeps the earlier time; a rotation names its successor.
	if err := s.RevokeNHICredential(testCtx, "n1", "k1", 500, "k9"); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeNHICredential(testCtx, "n1", "k1", 700, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetNHICredential(testCtx, "n1", "k1"); got.RevokedAt != 500 || got.ReplacedBy != "k9" {
		t.Fatalf("revoked %+v", got)
	}
	mustBeErrNotFound(t, "revoke unknown", s.RevokeNHICredential(testCtx, "n1", "nope", 1, ""))
	if err := s.RevokeNHICredentials(testCtx, "n1", 400); err != nil {
		t.Fatal(err)
	}
	all, _ = s.ListNHICredentials(testCtx, "n1")
	for _, c := range all {
		if c.RevokedAt != 400 {
			t.Errorf("after revoking all at 400: %s revoked at %d", c.ID, c.RevokedAt)
		}
	}
	for _, at := range []int64{800, 600} {
		if err := s.TouchNHICredential(testCtx, "s1", at); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.GetNHICredential(testCtx, "n1", "s1"); got.LastUsedAt != 800 {
		t.Fatalf("last used %d", got.LastUsedAt)
	}
}

// Deleting the backing client deletes the identity and its credentials.
func testNHICascade(t *testing.T, s *store.Store) {
	nhiTestFixture(t, s)
	nhiTestMustCreate(t, s, nhiTestIdentity("n1", clientsTestRealmID, "c1", "svc-one", "service"))
	if err := s.CreateNHICredential(testCtx, &store.NHICredential{ID: "s1", RealmID: clientsTestRealmID, NHIID: "n1",
		Type: "client_secret", SecretHash: []byte{1}, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteClient(testCtx, clientsTestRealmID, "c1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetNHI(testCtx, clientsTestRealmID, "n1")
	mustBeErrNotFound(t, "identity of a deleted client", err)
	_, err = s.GetNHICredential(testCtx, "n1", "s1")
	mustBeErrNotFound(t, "credential of a deleted identity", err)
}
