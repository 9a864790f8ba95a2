package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// clientSuite is the conformance tests of the client tables.
func clientSuite() []subTest {
	return []subTest{
		{"ClientCreateGet", testClientCreateGet},
		{"ClientUnknownRealm", testClientUnknownRealm},
		{"ClientMissing", testClientMissing},
		{"ClientDuplicate", testClientDuplicate},
		{"ClientListOrder", testClientListOrder},
		{"ClientUpdate", testClientUpdate},
		{"ClientSecretHash", testClientSecretHash},
		{"ClientDeleteCascades", testClientDeleteCascades},
		{"ClientRealmDeleteCascades", testClientRealmDeleteCascades},
		{"ClientServiceAccount", testClientServiceAccount},
	}
}

const (
	clientsTestRealmID = "11111111-1111-4111-8111-111111111111"
	clientsTestOtherID = "22222222-2222-4222-8222-222222222222"
)

// clientsTestClient is a confidential client with every field set away
// from its zero value.
func clientsTestClient(id, realmID, clientID string) *store.Client {
	return &store.Client{
		ID: id, RealmID: realmID, ClientID: clientID, Name: "Name " + clientID, Description: "About " + clientID,
		ClientType: "CONFIDENTIAL", Enabled: true,
		RedirectURIs:   []string{"https://" + clientID + ".test/cb", "com.example.app:/cb"},
		WebOrigins:     []string{"https://" + clientID + ".test", "+"},
		GrantTypes:     []string{"authorization_code", "client_credentials"},
		RequireConsent: true, BackchannelLogoutURI: "https://" + clientID + ".test/logout",
		BackchannelLogoutSessionRequired: true, SecretHash: bytes.Repeat([]byte{0xab}, 32), CreatedAt: 1_700_000_000_123,
	}
}

func clientsTestMustCreate(t *testing.T, s *store.Store, c *store.Client) *store.Client {
	t.Helper()
	if err := s.CreateClient(testCtx, c); err != nil {
		t.Fatalf("create client %s: %v", c.ClientID, err)
	}
	return c
}

// clientsTestRealms makes the realms acme and other.
func clientsTestRealms(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(clientsTestRealmID, "acme", 1000))
	mustCreateRealm(t, s, testRealm(clientsTestOtherID, "other", 2000))
}

func clientsTestIDs(clients []*store.Client) []string {
	ids := []string{}
	for _, c := range clients {
		ids = append(ids, c.ClientID)
	}
	return ids
}

func testClientCreateGet(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	want := clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "web-app"))
	got, err := s.GetClient(testCtx, clientsTestRealmID, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "client by id", got, want)
	got, err = s.GetClientByClientID(testCtx, clientsTestRealmID, "web-app")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "client by clientId", got, want)

	// A bare public client: no secret, and nil lists come back empty.
	bare := &store.Client{ID: "c0000000-0000-4000-8000-000000000002", RealmID: clientsTestRealmID, ClientID: "spa",
		ClientType: "PUBLIC", CreatedAt: 5}
	clientsTestMustCreate(t, s, bare)
	got, err = s.GetClientByClientID(testCtx, clientsTestRealmID, "spa")
	if err != nil {
		t.Fatal(err)
	}
	bare.RedirectURIs, bare.WebOrigins, bare.GrantTypes = []string{}, []string{}, []string{}
	mustEqual(t, "bare client", got, bare)
	if got.SecretHash != nil {
		t.Fatalf("public client has secret hash %x", got.SecretHash)
	}
}

func testClientUnknownRealm(t *testing.T, s *store.Store) {
	err := s.CreateClient(testCtx, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "app"))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("client of an unknown realm: %v, want ErrNotFound", err)
	}
}

func testClientMissing(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	c := clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "app"))
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unknown id", clientsTestErr(s.GetClient(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-00000000ffff"))},
		{"id in another realm", clientsTestErr(s.GetClient(testCtx, clientsTestOtherID, c.ID))},
		{"unknown clientId", clientsTestErr(s.GetClientByClientID(testCtx, clientsTestRealmID, "nope"))},
		{"clientId in another realm", clientsTestErr(s.GetClientByClientID(testCtx, clientsTestOtherID, "app"))},
		{"clientId differs in case", clientsTestErr(s.GetClientByClientID(testCtx, clientsTestRealmID, "APP"))},
		{"internal id as clientId", clientsTestErr(s.GetClientByClientID(testCtx, clientsTestRealmID, c.ID))},
	} {
		if !errors.Is(tc.err, store.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, tc.err)
		}
	}
}

// clientsTestErr keeps only the error of a lookup.
func clientsTestErr[T any](_ T, err error) error { return err }

func testClientDuplicate(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "app"))
	err := s.CreateClient(testCtx, clientsTestClient("c0000000-0000-4000-8000-000000000002", clientsTestRealmID, "app"))
	var ce *store.ConflictError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &ce) || ce.Column != "client_id" {
		t.Fatalf("duplicate clientId: %v, want ErrConflict on client_id", err)
	}
	// The same clientId is free in another realm.
	clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000003", clientsTestOtherID, "app"))
	// clientIds are case-sensitive, as in Keycloak.
	clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000004", clientsTestRealmID, "App"))
	// A taken internal id is a conflict too.
	err = s.CreateClient(testCtx, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "fresh"))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate id: %v, want ErrConflict", err)
	}
	clients, err := s.ListClients(testCtx, clientsTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted here: backends order case differently.
	ids := clientsTestIDs(clients)
	slices.Sort(ids)
	mustEqual(t, "clients after conflicts", ids, []string{"App", "app"})
}

func testClientListOrder(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	if clients, err := s.ListClients(testCtx, clientsTestRealmID); err != nil || len(clients) != 0 {
		t.Fatalf("clients of an empty realm: %v, %v", clients, err)
	}
	// Internal ids and creation times sort the other way round from clientId.
	for i, id := range []string{"zeta", "mid", "alpha"} {
		c := clientsTestClient("c0000000-0000-4000-8000-00000000000"+string(rune('1'+i)), clientsTestRealmID, id)
		c.CreatedAt = int64(i)
		clientsTestMustCreate(t, s, c)
	}
	clientsTestMustCreate(t, s, clientsTestClient("d0000000-0000-4000-8000-000000000001", clientsTestOtherID, "beta"))
	clients, err := s.ListClients(testCtx, clientsTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "client order", clientsTestIDs(clients), []string{"alpha", "mid", "zeta"})
	// Listed clients are whole.
	mustEqual(t, "listed client", clients[1], func() *store.Client {
		c := clientsTestClient("c0000000-0000-4000-8000-000000000002", clientsTestRealmID, "mid")
		c.CreatedAt = 1
		return c
	}())
}

func testClientUpdate(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	orig := clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "app"))
	upd := &store.Client{
		ID: orig.ID, RealmID: clientsTestRealmID, ClientID: "renamed", Name: "New", Description: "",
		ClientType: "PUBLIC", Enabled: false, RedirectURIs: []string{"http://localhost:8080/cb"}, WebOrigins: []string{},
		GrantTypes: []string{"refresh_token"}, RequireConsent: false, BackchannelLogoutURI: "",
		BackchannelLogoutSessionRequired: false, SecretHash: []byte("ignored"), CreatedAt: 42,
	}
	if err := s.UpdateClient(testCtx, upd); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetClient(testCtx, clientsTestRealmID, orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The secret and creation time are not written by an update.
	want := *upd
	want.SecretHash, want.CreatedAt = orig.SecretHash, orig.CreatedAt
	mustEqual(t, "updated client", got, &want)

	// A clientId taken in the realm is a conflict; a missing client is not found.
	clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000002", clientsTestRealmID, "taken"))
	upd.ClientID = "taken"
	mustBeErrConflict(t, "update to a taken clientId", s.UpdateClient(testCtx, upd))
	missing := clientsTestClient("c0000000-0000-4000-8000-00000000ffff", clientsTestRealmID, "ghost")
	mustBeErrNotFound(t, "update of a missing client", s.UpdateClient(testCtx, missing))
	wrongRealm := clientsTestClient(orig.ID, clientsTestOtherID, "app")
	mustBeErrNotFound(t, "update through another realm", s.UpdateClient(testCtx, wrongRealm))
}

func testClientSecretHash(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	c := clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000001", clientsTestRealmID, "app"))
	hash := bytes.Repeat([]byte{0x01}, 32)
	if err := s.SetClientSecretHash(testCtx, clientsTestRealmID, c.ID, hash); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetClient(testCtx, clientsTestRealmID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "new secret hash", got.SecretHash, hash)
	// Nothing else changed.
	got.SecretHash = c.SecretHash
	mustEqual(t, "client after secret change", got, c)

	if err := s.SetClientSecretHash(testCtx, clientsTestRealmID, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetClient(testCtx, clientsTestRealmID, c.ID); got.SecretHash != nil {
		t.Fatalf("removed secret hash: %x", got.SecretHash)
	}
	for _, realm := range []string{clientsTestRealmID, clientsTestOtherID} {
		id := "c0000000-0000-4000-8000-00000000ffff"
		if realm == clientsTestOtherID {
			id = c.ID
		}
		mustBeErrNotFound(t, "secret of a missing client", s.SetClientSecretHash(testCtx, realm, id, hash))
	}
}

// clientsTestWithDependents makes a client with a client role and a
// service-account user.
func clientsTestWithDependents(t *testing.T, s *store.Store, realmID, id, clientID string) (role *store.Role, sa *store.User) {
	t.Helper()
	c := clientsTestMustCreate(t, s, clientsTestClient(id, realmID, clientID))
	role = &store.Role{ID: "role-" + id, RealmID: realmID, ClientID: c.ID, Name: "viewer", CreatedAt: 1}
	if err := s.CreateRole(testCtx, role); err != nil {
		t.Fatal(err)
	}
	sa = mustCreateUser(t, s, &store.User{ID: "sa-" + id, RealmID: realmID, Username: "service-account-" + clientID,
		Enabled: true, CreatedAt: 1, ServiceAccountClientID: c.ID})
	return role, sa
}

func clientsTestScope(t *testing.T, s *store.Store, realmID, id, name string) *store.ClientScope {
	t.Helper()
	sc := &store.ClientScope{ID: id, RealmID: realmID, Name: name, Protocol: "openid-connect", CreatedAt: 1}
	if err := s.CreateClientScope(testCtx, sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

func testClientDeleteCascades(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	role, sa := clientsTestWithDependents(t, s, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001", "app")
	keepRole, keepSA := clientsTestWithDependents(t, s, clientsTestRealmID, "c0000000-0000-4000-8000-000000000002", "keep")
	def := clientsTestScope(t, s, clientsTestRealmID, "e0000000-0000-4000-8000-000000000001", "profile")
	opt := clientsTestScope(t, s, clientsTestRealmID, "e0000000-0000-4000-8000-000000000002", "phone")
	for _, id := range []string{"c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002"} {
		if err := s.LinkClientScope(testCtx, id, def.ID, store.ScopeDefault); err != nil {
			t.Fatal(err)
		}
		if err := s.LinkClientScope(testCtx, id, opt.ID, store.ScopeOptional); err != nil {
			t.Fatal(err)
		}
	}
	realmRole := &store.Role{ID: "f0000000-0000-4000-8000-000000000001", RealmID: clientsTestRealmID, Name: "viewer", CreatedAt: 1}
	if err := s.CreateRole(testCtx, realmRole); err != nil {
		t.Fatal(err)
	}
	alice := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", clientsTestRealmID, "alice", ""))
	if err := s.AddRoleMappings(testCtx, store.UserRoles(alice.ID), []string{role.ID, keepRole.ID, realmRole.ID}); err != nil {
		t.Fatal(err)
	}

	if err := s.DeleteClient(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetClientByClientID(testCtx, clientsTestRealmID, "app"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted client: %v, want ErrNotFound", err)
	}
	if _, err := s.GetRoleByID(testCtx, clientsTestRealmID, role.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("role of the deleted client: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(testCtx, clientsTestRealmID, sa.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("service account of the deleted client: %v, want ErrNotFound", err)
	}
	// A person who held the client's role keeps the others (in any order:
	// backends sort the realm role's NULL client differently).
	held, err := s.ListRoleMappings(testCtx, store.UserRoles(alice.ID), "*")
	if err != nil {
		t.Fatal(err)
	}
	var heldIDs []string
	for _, r := range held {
		heldIDs = append(heldIDs, r.ID)
	}
	wantIDs := []string{keepRole.ID, realmRole.ID}
	slices.Sort(heldIDs)
	slices.Sort(wantIDs)
	mustEqual(t, "alice's roles after the delete", heldIDs, wantIDs)
	for _, kind := range []string{store.ScopeDefault, store.ScopeOptional} {
		if scopes, err := s.ListLinkedScopes(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001", kind); err != nil || len(scopes) != 0 {
			t.Fatalf("%s scopes of the deleted client: %v, %v", kind, scopes, err)
		}
	}
	mustBeErrNotFound(t, "second delete", s.DeleteClient(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001"))

	// The cascade stays with the client: the scopes themselves, the other
	// client's role, links and service account, and the realm role remain.
	for _, id := range []string{def.ID, opt.ID} {
		if _, err := s.GetClientScope(testCtx, clientsTestRealmID, id); err != nil {
			t.Fatalf("scope %s: %v", id, err)
		}
	}
	for _, id := range []string{keepRole.ID, realmRole.ID} {
		if _, err := s.GetRoleByID(testCtx, clientsTestRealmID, id); err != nil {
			t.Fatalf("role %s: %v", id, err)
		}
	}
	if u, err := s.GetServiceAccountUser(testCtx, "c0000000-0000-4000-8000-000000000002"); err != nil || u.ID != keepSA.ID {
		t.Fatalf("other client's service account: %v, %v", u, err)
	}
	for kind, want := range map[string]string{store.ScopeDefault: "profile", store.ScopeOptional: "phone"} {
		scopes, err := s.ListLinkedScopes(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-000000000002", kind)
		if err != nil || len(scopes) != 1 || scopes[0].Name != want {
			t.Fatalf("%s scopes of the other client: %v, %v", kind, scopes, err)
		}
	}
	// A client of another realm cannot be deleted through this one.
	clientsTestMustCreate(t, s, clientsTestClient("d0000000-0000-4000-8000-000000000001", clientsTestOtherID, "app"))
	mustBeErrNotFound(t, "delete through another realm", s.DeleteClient(testCtx, clientsTestRealmID, "d0000000-0000-4000-8000-000000000001"))
	// The clientId and the service-account username are free again.
	clientsTestWithDependents(t, s, clientsTestRealmID, "c0000000-0000-4000-8000-000000000003", "app")
}

func testClientRealmDeleteCascades(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	role, sa := clientsTestWithDependents(t, s, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001", "app")
	_, otherSA := clientsTestWithDependents(t, s, clientsTestOtherID, "d0000000-0000-4000-8000-000000000001", "app")
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetClient(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("client of the deleted realm: %v, want ErrNotFound", err)
	}
	if clients, err := s.ListClients(testCtx, clientsTestRealmID); err != nil || len(clients) != 0 {
		t.Fatalf("clients of the deleted realm: %v, %v", clients, err)
	}
	if _, err := s.GetRoleByID(testCtx, clientsTestRealmID, role.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("client role of the deleted realm: %v", err)
	}
	if _, err := s.GetServiceAccountUser(testCtx, sa.ServiceAccountClientID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("service account of the deleted realm: %v", err)
	}
	if u, err := s.GetServiceAccountUser(testCtx, "d0000000-0000-4000-8000-000000000001"); err != nil || u.ID != otherSA.ID {
		t.Fatalf("service account of the other realm: %v, %v", u, err)
	}
	if clients, err := s.ListClients(testCtx, clientsTestOtherID); err != nil || len(clients) != 1 {
		t.Fatalf("clients of the other realm: %v, %v", clients, err)
	}
}

func testClientServiceAccount(t *testing.T, s *store.Store) {
	clientsTestRealms(t, s)
	_, sa := clientsTestWithDependents(t, s, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001", "app")
	plain := clientsTestMustCreate(t, s, clientsTestClient("c0000000-0000-4000-8000-000000000002", clientsTestRealmID, "plain"))
	human := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", clientsTestRealmID, "alice", ""))

	got, err := s.GetServiceAccountUser(testCtx, "c0000000-0000-4000-8000-000000000001")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "service account", got, sa)
	if _, err := s.GetServiceAccountUser(testCtx, plain.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("service account of a client without one: %v, want ErrNotFound", err)
	}
	// A client has one service account at most.
	another := &store.User{ID: "a0000000-0000-4000-8000-000000000002", RealmID: clientsTestRealmID, Username: "another",
		CreatedAt: 1, ServiceAccountClientID: "c0000000-0000-4000-8000-000000000001"}
	mustBeErrConflict(t, "second service account", s.CreateUser(testCtx, another))
	// A service account must belong to an existing client.
	orphan := &store.User{ID: "a0000000-0000-4000-8000-000000000003", RealmID: clientsTestRealmID, Username: "orphan",
		CreatedAt: 1, ServiceAccountClientID: "c0000000-0000-4000-8000-00000000ffff"}
	mustBeErrNotFound(t, "service account of a missing client", s.CreateUser(testCtx, orphan))
	// Listings of people leave service accounts out.
	users, total, err := s.ListUsers(testCtx, clientsTestRealmID, store.UserFilter{Limit: 10})
	if err != nil || total != 1 || len(users) != 1 || users[0].ID != human.ID {
		t.Fatalf("users: %d %v %v, want only alice", total, users, err)
	}
	// Deleting the service-account user leaves its client.
	if err := s.DeleteUser(testCtx, clientsTestRealmID, sa.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetClient(testCtx, clientsTestRealmID, "c0000000-0000-4000-8000-000000000001"); err != nil {
		t.Fatalf("client after its service account was deleted: %v", err)
	}
	if _, err := s.GetServiceAccountUser(testCtx, "c0000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted service account: %v, want ErrNotFound", err)
	}
}
