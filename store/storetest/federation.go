package storetest

import (
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// federationSuite is the conformance tests of the user federation tables.
func federationSuite() []subTest {
	return []subTest{
		{"FederationProviderCRUD", testFederationProviderCRUD},
		{"FederationProviderNames", testFederationProviderNames},
		{"FederationProviderOrder", testFederationProviderOrder},
		{"FederationSync", testFederationSync},
		{"FederationLinks", testFederationLinks},
	}
}

const (
	fedTestRealmID  = "31111111-1111-4111-8111-111111111111"
	fedTestRealm2ID = "32222222-2222-4222-8222-222222222222"
)

func fedTestProvider(n int, realmID, name string, priority int) *store.FederationProvider {
	return &store.FederationProvider{ID: fmt.Sprintf("88888888-0000-4000-8000-%012d", n), RealmID: realmID, Name: name,
		ProviderType: "ldap", Enabled: true, Priority: priority, Config: `{"connectionUrl":"ldap://dir.test"}`,
		BindCredential: "bind-secret-" + name, CreatedAt: int64(1000 + n)}
}

func fedTestRealms(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(fedTestRealmID, "acme", 1000))
	mustCreateRealm(t, s, testRealm(fedTestRealm2ID, "other", 2000))
}

func mustCreateFederationProvider(t *testing.T, s *store.Store, p *store.FederationProvider) {
	t.Helper()
	if err := s.CreateFederationProvider(testCtx, p); err != nil {
		t.Fatalf("create provider %s: %v", p.Name, err)
	}
}

func testFederationProviderCRUD(t *testing.T, s *store.Store) {
	fedTestRealms(t, s)
	p := fedTestProvider(1, fedTestRealmID, "corp", 0)
	mustCreateFederationProvider(t, s, p)
	got, err := s.GetFederationProvider(testCtx, fedTestRealmID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "provider", *got, *p)
	_, err = s.GetFederationProvider(testCtx, fedTestRealm2ID, p.ID)
	mustBeErrNotFound(t, "provider of another realm", err)

	p.Name, p.Enabled, p.Priority, p.Config, p.BindCredential = "corp2", false, 7, `{"a":1}`, "new-secret"
	if err := s.UpdateFederationProvider(testCtx, p); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetFederationProvider(testCtx, fedTestRealmID, p.ID)
	mustEqual(t, "updated provider", *got, *p)

	other := *p
	other.RealmID = fedTestRealm2ID
	mustBeErrNotFound(t, "update in another realm", s.UpdateFederationProvider(testCtx, &other))
	mustBeErrNotFound(t, "delete in another realm", s.DeleteFederationProvider(testCtx, fedTestRealm2ID, p.ID))
	if err := s.DeleteFederationProvider(testCtx, fedTestRealmID, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetFederationProvider(testCtx, fedTestRealmID, p.ID)
	mustBeErrNotFound(t, "deleted provider", err)
	mustBeErrNotFound(t, "second delete", s.DeleteFederationProvider(testCtx, fedTestRealmID, p.ID))
}

func testFederationProviderNames(t *testing.T, s *store.Store) {
	fedTestRealms(t, s)
	mustCreateFederationProvider(t, s, fedTestProvider(1, fedTestRealmID, "corp", 0))
	mustBeErrConflict(t, "same name, same realm", s.CreateFederationProvider(testCtx, fedTestProvider(2, fedTestRealmID, "corp", 1)))
	mustCreateFederationProvider(t, s, fedTestProvider(3, fedTestRealm2ID, "corp", 0))
	p := fedTestProvider(4, fedTestRealmID, "lab", 0)
	mustCreateFederationProvider(t, s, p)
	p.Name = "corp"
	mustBeErrConflict(t, "renamed onto another", s.UpdateFederationProvider(testCtx, p))
}

func testFederationProviderOrder(t *testing.T, s *store.Store) {
	fedTestRealms(t, s)
	mustCreateFederationProvider(t, s, fedTestProvider(1, fedTestRealmID, "b", 5))
	mustCreateFederationProvider(t, s, fedTestProvider(2, fedTestRealmID, "a", 5))
	mustCreateFederationProvider(t, s, fedTestProvider(3, fedTestRealmID, "z", 1))
	mustCreateFederationProvider(t, s, fedTestProvider(4, fedTestRealm2ID, "x", 0))
	list, err := s.ListFederationProviders(testCtx, fedTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	mustEqual(t, "order", names, []string{"z", "a", "b"})
	all, err := s.AllFederationProviders(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "all providers", len(all), 4)
	none, err := s.ListFederationProviders(testCtx, "no-such-realm")
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("providers of no realm: %v, %v", none, err)
	}
}

func testFederationSync(t *testing.T, s *store.Store) {
	fedTestRealms(t, s)
	p := fedTestProvider(1, fedTestRealmID, "corp", 0)
	mustCreateFederationProvider(t, s, p)
	if err := s.SetFederationSync(testCtx, fedTestRealmID, p.ID, `{"created":1}`, 5000); err != nil {
		t.Fatal(err)
	}
	// A failed sync records its outcome and keeps where the next starts.
	if err := s.SetFederationSync(testCtx, fedTestRealmID, p.ID, `{"error":"down"}`, 0); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetFederationProvider(testCtx, fedTestRealmID, p.ID)
	mustEqual(t, "last sync", got.LastSync, `{"error":"down"}`)
	mustEqual(t, "changed since", got.ChangedSince, int64(5000))
	// An update of the settings leaves the sync state alone.
	if err := s.UpdateFederationProvider(testCtx, got); err != nil {
		t.Fatal(err)
	}
	again, _ := s.GetFederationProvider(testCtx, fedTestRealmID, p.ID)
	mustEqual(t, "sync state after update", again.ChangedSince, int64(5000))
	mustBeErrNotFound(t, "sync of another realm's", s.SetFederationSync(testCtx, fedTestRealm2ID, p.ID, "{}", 1))
}

func testFederationLinks(t *testing.T, s *store.Store) {
	fedTestRealms(t, s)
	p := fedTestProvider(1, fedTestRealmID, "corp", 0)
	mustCreateFederationProvider(t, s, p)
	u1 := mustCreateUser(t, s, testUser("a1111111-1111-4111-8111-111111111111", fedTestRealmID, "ann", "ann@x.test"))
	u2 := mustCreateUser(t, s, testUser("a2222222-2222-4222-8222-222222222222", fedTestRealmID, "bob", "bob@x.test"))
	l1 := &store.FederationLink{UserID: u1.ID, RealmID: fedTestRealmID, ProviderID: p.ID, ExternalID: "e1", DN: "uid=ann,dc=x"}
	if err := s.PutFederationLink(testCtx, l1); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "entry linked twice", s.PutFederationLink(testCtx,
		&store.FederationLink{UserID: u2.ID, RealmID: fedTestRealmID, ProviderID: p.ID, ExternalID: "e1", DN: "uid=x"}))
	l1.DN = "uid=ann,ou=moved,dc=x"
	if err := s.PutFederationLink(testCtx, l1); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetFederationLink(testCtx, fedTestRealmID, u1.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "link", *got, *l1)
	_, err = s.GetFederationLink(testCtx, fedTestRealmID, u2.ID)
	mustBeErrNotFound(t, "unlinked user", err)
	byID, err := s.FederationLinkByExternalID(testCtx, fedTestRealmID, p.ID, "e1")
	if err != nil || byID.UserID != u1.ID {
		t.Fatalf("link by external ID: %v, %v", byID, err)
	}
	_, err = s.FederationLinkByExternalID(testCtx, fedTestRealm2ID, p.ID, "e1")
	mustBeErrNotFound(t, "link by external ID in another realm", err)
	links, err := s.FederationLinks(testCtx, fedTestRealmID, p.ID)
	if err != nil || len(links) != 1 {
		t.Fatalf("links: %v, %v", links, err)
	}
	linked, err := s.FederationLinkedUsers(testCtx, fedTestRealmID, p.ID, []string{"e1", "e9", "e1", "e8"})
	if err != nil || len(linked) != 1 || linked["e1"].User.Username != "ann" || *linked["e1"].Link != *l1 {
		t.Fatalf("linked users: %v, %v", linked, err)
	}
	if linked, err := s.FederationLinkedUsers(testCtx, fedTestRealm2ID, p.ID, []string{"e1"}); err != nil || len(linked) != 0 {
		t.Fatalf("linked users of another realm: %v, %v", linked, err)
	}
	// Deleting the user or the provider deletes the link.
	if err := s.DeleteUser(testCtx, fedTestRealmID, u1.ID); err != nil {
		t.Fatal(err)
	}
	links, _ = s.FederationLinks(testCtx, fedTestRealmID, p.ID)
	mustEqual(t, "links after the user's deletion", len(links), 0)
	if err := s.PutFederationLink(testCtx, &store.FederationLink{UserID: u2.ID, RealmID: fedTestRealmID, ProviderID: p.ID,
		ExternalID: "e2", DN: "uid=bob"}); err != nil {
		t.Fatal(err)
	}
	u3 := mustCreateUser(t, s, testUser("a3333333-3333-4333-8333-333333333333", fedTestRealmID, "cy", "cy@x.test"))
	if err := s.PutFederationLink(testCtx, &store.FederationLink{UserID: u3.ID, RealmID: fedTestRealmID, ProviderID: p.ID,
		ExternalID: "e0", DN: "uid=cy"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for after := ""; ; {
		part, err := s.FederationLinksAfter(testCtx, fedTestRealmID, p.ID, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(part) == 0 {
			break
		}
		ids, after = append(ids, part[0].ExternalID), part[0].ExternalID
	}
	mustEqual(t, "links a part at a time", fmt.Sprint(ids), "[e0 e2]")
	if err := s.DeleteFederationProvider(testCtx, fedTestRealmID, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetFederationLink(testCtx, fedTestRealmID, u2.ID)
	mustBeErrNotFound(t, "link after the provider's deletion", err)
}
