package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// scopeSuite is the conformance tests of the scope tables.
func scopeSuite() []subTest {
	return []subTest{
		{"ScopeCreateGetList", testScopeCreateGetList},
		{"ScopeNameUniquePerRealm", testScopeNameUniquePerRealm},
		{"ScopeMapperUniquePerScope", testScopeMapperUniquePerScope},
		{"ScopeUpdate", testScopeUpdate},
		{"ScopeMapperUpdateDelete", testScopeMapperUpdateDelete},
		{"ScopeDeleteCascades", testScopeDeleteCascades},
		{"ScopeLinks", testScopeLinks},
		{"ScopeRealmDeleteCascades", testScopeRealmDeleteCascades},
	}
}

const (
	scopeTestRealmA = "11111111-1111-4111-8111-111111111111"
	scopeTestRealmB = "22222222-2222-4222-8222-222222222222"
)

func scopeTestRealms(t *testing.T, s *store.Store) (a, b *store.Realm) {
	t.Helper()
	return mustCreateRealm(t, s, testRealm(scopeTestRealmA, "acme", 1000)),
		mustCreateRealm(t, s, testRealm(scopeTestRealmB, "beta", 2000))
}

func scopeTestMapper(id, scopeID, name string) *store.ProtocolMapper {
	return &store.ProtocolMapper{ID: id, ScopeID: scopeID, Name: name, MapperType: "oidc-usermodel-attribute-mapper",
		Protocol: "openid-connect", Config: map[string]string{"claim.name": name, "user.attribute": name}, CreatedAt: 5000}
}

func scopeTestScope(id, realmID, name string, mappers ...*store.ProtocolMapper) *store.ClientScope {
	if mappers == nil {
		mappers = []*store.ProtocolMapper{}
	}
	return &store.ClientScope{ID: id, RealmID: realmID, Name: name, Description: "about " + name,
		Protocol: "openid-connect", CreatedAt: 4000, Mappers: mappers}
}

func scopeTestCreate(t *testing.T, s *store.Store, c *store.ClientScope) *store.ClientScope {
	t.Helper()
	if err := s.CreateClientScope(testCtx, c); err != nil {
		t.Fatalf("create client scope %s: %v", c.Name, err)
	}
	return c
}

// scopeTestStored describes a realm's scopes as "name:mappers", by name.
func scopeTestStored(t *testing.T, s *store.Store, realmID string) []string {
	t.Helper()
	scopes, err := s.ListClientScopes(testCtx, realmID)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, c := range scopes {
		out = append(out, fmt.Sprintf("%s:%d", c.Name, len(c.Mappers)))
	}
	return out
}

// scopeTestLinks is a realm's links of clients to scopes, as the export
// reads them.
func scopeTestLinks(t *testing.T, s *store.Store, realmID string) map[string][]string {
	t.Helper()
	links, err := s.AllScopeLinks(testCtx, realmID)
	if err != nil {
		t.Fatal(err)
	}
	if links == nil {
		links = map[string][]string{}
	}
	return links
}

func scopeTestConflict(t *testing.T, what string, err error, column string) {
	t.Helper()
	var ce *store.ConflictError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &ce) || ce.Column != column {
		t.Fatalf("%s: %v, want ErrConflict on column %s", what, err, column)
	}
}

func testScopeCreateGetList(t *testing.T, s *store.Store) {
	a, b := scopeTestRealms(t, s)
	const id = "a0000000-0000-4000-8000-000000000001"
	zeta := scopeTestMapper("b0000000-0000-4000-8000-000000000001", id, "zeta")
	alpha := scopeTestMapper("b0000000-0000-4000-8000-000000000002", id, "alpha")
	bare := &store.ProtocolMapper{ID: "b0000000-0000-4000-8000-000000000003", ScopeID: id, Name: "bare",
		MapperType: "oidc-full-name-mapper", Protocol: "openid-connect", CreatedAt: 5000}
	profile := scopeTestCreate(t, s, scopeTestScope(id, a.ID, "profile", zeta, alpha, bare))
	email := scopeTestCreate(t, s, scopeTestScope("a0000000-0000-4000-8000-000000000002", a.ID, "email"))
	scopeTestCreate(t, s, scopeTestScope("a0000000-0000-4000-8000-000000000003", b.ID, "other"))

	got, err := s.GetClientScope(testCtx, a.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	// Mappers come back by name; a nil config reads back as an empty one.
	wantBare := *bare
	wantBare.Config = map[string]string{}
	want := *profile
	want.Mappers = []*store.ProtocolMapper{alpha, &wantBare, zeta}
	mustEqual(t, "scope", got, &want)

	m, err := s.GetMapper(testCtx, id, alpha.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "mapper", m, alpha)

	list, err := s.ListClientScopes(testCtx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "realm scopes by name", list, []*store.ClientScope{email, &want})

	for _, c := range []struct{ what, realm, id string }{
		{"unknown id", a.ID, "a0000000-0000-4000-8000-00000000dead"},
		{"another realm's scope", b.ID, id},
	} {
		if _, err := s.GetClientScope(testCtx, c.realm, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetClientScope of %s: %v, want ErrNotFound", c.what, err)
		}
	}
	if _, err := s.GetMapper(testCtx, email.ID, alpha.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetMapper through another scope: %v, want ErrNotFound", err)
	}
	if list, err := s.ListClientScopes(testCtx, "33333333-3333-4333-8333-333333333333"); err != nil || len(list) != 0 {
		t.Errorf("ListClientScopes of an unknown realm: %v, %v", list, err)
	}
}

func testScopeNameUniquePerRealm(t *testing.T, s *store.Store) {
	a, b := scopeTestRealms(t, s)
	scopeTestCreate(t, s, scopeTestScope("a0000000-0000-4000-8000-000000000001", a.ID, "profile"))
	err := s.CreateClientScope(testCtx, scopeTestScope("a0000000-0000-4000-8000-000000000002", a.ID, "profile"))
	scopeTestConflict(t, "same name in the realm", err, "name")
	err = s.CreateClientScope(testCtx, scopeTestScope("a0000000-0000-4000-8000-000000000001", a.ID, "email"))
	scopeTestConflict(t, "same id", err, "id")
	// Names are case-sensitive, as OAuth scope tokens are, and per realm.
	scopeTestCreate(t, s, scopeTestScope("a0000000-0000-4000-8000-000000000003", a.ID, "Profile"))
	scopeTestCreate(t, s, scopeTestScope("a0000000-0000-4000-8000-000000000004", b.ID, "profile"))
	err = s.CreateClientScope(testCtx, scopeTestScope("a0000000-0000-4000-8000-000000000005", "33333333-3333-4333-8333-333333333333", "x"))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("scope of an unknown realm: %v, want ErrNotFound", err)
	}
	mustEqual(t, "scopes of a", scopeTestStored(t, s, a.ID), []string{"Profile:0", "profile:0"})
	mustEqual(t, "scopes of b", scopeTestStored(t, s, b.ID), []string{"profile:0"})
	mustEqual(t, "scopes of the unknown realm", scopeTestStored(t, s, "33333333-3333-4333-8333-333333333333"), []string{})
}

func testScopeMapperUniquePerScope(t *testing.T, s *store.Store) {
	a, _ := scopeTestRealms(t, s)
	const one, two = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	scopeTestCreate(t, s, scopeTestScope(one, a.ID, "one", scopeTestMapper("b0000000-0000-4000-8000-000000000001", one, "email")))
	scopeTestCreate(t, s, scopeTestScope(two, a.ID, "two"))

	err := s.CreateMapper(testCtx, scopeTestMapper("b0000000-0000-4000-8000-000000000002", one, "email"))
	scopeTestConflict(t, "same mapper name in the scope", err, "name")
	// The same name in another scope is fine.
	if err := s.CreateMapper(testCtx, scopeTestMapper("b0000000-0000-4000-8000-000000000003", two, "email")); err != nil {
		t.Fatal(err)
	}
	err = s.CreateMapper(testCtx, scopeTestMapper("b0000000-0000-4000-8000-000000000004", "a0000000-0000-4000-8000-00000000dead", "x"))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("mapper of an unknown scope: %v, want ErrNotFound", err)
	}

	// A scope whose mappers clash is not half-created.
	const three = "a0000000-0000-4000-8000-000000000003"
	err = s.CreateClientScope(testCtx, scopeTestScope(three, a.ID, "three",
		scopeTestMapper("b0000000-0000-4000-8000-000000000005", three, "dup"),
		scopeTestMapper("b0000000-0000-4000-8000-000000000006", three, "dup")))
	scopeTestConflict(t, "scope with two mappers of one name", err, "name")
	if _, err := s.GetClientScope(testCtx, a.ID, three); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the failed scope was stored: %v", err)
	}
	mustEqual(t, "scopes and their mappers", scopeTestStored(t, s, a.ID), []string{"one:1", "two:1"})
	// Nor are its mappers: the same scope made again has none.
	scopeTestCreate(t, s, scopeTestScope(three, a.ID, "three"))
	mustEqual(t, "scopes and their mappers after a new three", scopeTestStored(t, s, a.ID), []string{"one:1", "three:0", "two:1"})
}

func testScopeUpdate(t *testing.T, s *store.Store) {
	a, b := scopeTestRealms(t, s)
	const id = "a0000000-0000-4000-8000-000000000001"
	c := scopeTestCreate(t, s, scopeTestScope(id, a.ID, "profile", scopeTestMapper("b0000000-0000-4000-8000-000000000001", id, "m")))
	scopeTestCreate(t, s, scopeTestScope("a0000000-0000-4000-8000-000000000002", a.ID, "email"))

	c.Name, c.Description, c.Protocol = "profile2", "new words", "saml"
	if err := s.UpdateClientScope(testCtx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetClientScope(testCtx, a.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "updated scope", got, c)

	clash := *c
	clash.Name = "email"
	scopeTestConflict(t, "rename onto another scope", s.UpdateClientScope(testCtx, &clash), "name")
	foreign := *c
	foreign.RealmID = b.ID
	mustBeErrNotFound(t, "update through another realm", s.UpdateClientScope(testCtx, &foreign))
	missing := *c
	missing.ID = "a0000000-0000-4000-8000-00000000dead"
	mustBeErrNotFound(t, "update of a missing scope", s.UpdateClientScope(testCtx, &missing))
	if got, _ := s.GetClientScope(testCtx, a.ID, id); got.Name != "profile2" {
		t.Fatalf("scope after failed updates: %+v", got)
	}
}

func testScopeMapperUpdateDelete(t *testing.T, s *store.Store) {
	a, _ := scopeTestRealms(t, s)
	const id = "a0000000-0000-4000-8000-000000000001"
	m1 := scopeTestMapper("b0000000-0000-4000-8000-000000000001", id, "one")
	m2 := scopeTestMapper("b0000000-0000-4000-8000-000000000002", id, "two")
	scopeTestCreate(t, s, scopeTestScope(id, a.ID, "profile", m1, m2))

	m1.Name, m1.Config = "uno", map[string]string{"claim.name": "x.y", "user.attribute": "nick"}
	if err := s.UpdateMapper(testCtx, m1); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMapper(testCtx, id, m1.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "updated mapper", got, m1)

	cleared := *m1
	cleared.Config = nil
	if err := s.UpdateMapper(testCtx, &cleared); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetMapper(testCtx, id, m1.ID); err != nil || got.Config == nil || len(got.Config) != 0 {
		t.Fatalf("mapper with a nil config reads back %+v, %v; want an empty config", got, err)
	}

	clash := *m1
	clash.Name = "two"
	scopeTestConflict(t, "rename onto another mapper", s.UpdateMapper(testCtx, &clash), "name")
	missing := *m1
	missing.ID = "b0000000-0000-4000-8000-00000000dead"
	mustBeErrNotFound(t, "update of a missing mapper", s.UpdateMapper(testCtx, &missing))

	if err := s.DeleteMapper(testCtx, id, m2.ID); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "second delete", s.DeleteMapper(testCtx, id, m2.ID))
	c, err := s.GetClientScope(testCtx, a.ID, id)
	if err != nil || len(c.Mappers) != 1 || c.Mappers[0].ID != m1.ID {
		t.Fatalf("scope after deleting a mapper: %+v, %v", c, err)
	}
}

func scopeTestClient(t *testing.T, s *store.Store, id, realmID, clientID string) *store.Client {
	t.Helper()
	c := &store.Client{ID: id, RealmID: realmID, ClientID: clientID, ClientType: "PUBLIC", Enabled: true, CreatedAt: 3000}
	if err := s.CreateClient(testCtx, c); err != nil {
		t.Fatalf("create client %s: %v", clientID, err)
	}
	return c
}

func scopeTestLinked(t *testing.T, s *store.Store, realmID, clientID, kind string) []string {
	t.Helper()
	scopes, err := s.ListLinkedScopes(testCtx, realmID, clientID, kind)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, c := range scopes {
		names = append(names, c.Name)
	}
	return names
}

func testScopeDeleteCascades(t *testing.T, s *store.Store) {
	a, b := scopeTestRealms(t, s)
	const id, keep = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	scopeTestCreate(t, s, scopeTestScope(id, a.ID, "gone",
		scopeTestMapper("b0000000-0000-4000-8000-000000000001", id, "m1"),
		scopeTestMapper("b0000000-0000-4000-8000-000000000002", id, "m2")))
	scopeTestCreate(t, s, scopeTestScope(keep, a.ID, "kept", scopeTestMapper("b0000000-0000-4000-8000-000000000003", keep, "m1")))
	app := scopeTestClient(t, s, "c0000000-0000-4000-8000-000000000001", a.ID, "app")
	for _, l := range []struct{ scope, kind string }{{id, store.ScopeDefault}, {keep, store.ScopeOptional}} {
		if err := s.LinkClientScope(testCtx, app.ID, l.scope, l.kind); err != nil {
			t.Fatal(err)
		}
	}

	mustBeErrNotFound(t, "delete through another realm", s.DeleteClientScope(testCtx, b.ID, id))
	if err := s.DeleteClientScope(testCtx, a.ID, id); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "second delete", s.DeleteClientScope(testCtx, a.ID, id))
	if _, err := s.GetMapper(testCtx, id, "b0000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("mapper of a deleted scope: %v, want ErrNotFound", err)
	}
	mustEqual(t, "default scopes", scopeTestLinked(t, s, a.ID, app.ID, store.ScopeDefault), []string{})
	mustEqual(t, "optional scopes", scopeTestLinked(t, s, a.ID, app.ID, store.ScopeOptional), []string{"kept"})
	// Its mappers and links went with it: made again with the same ID, the
	// scope has none.
	scopeTestCreate(t, s, scopeTestScope(id, a.ID, "profile"))
	mustEqual(t, "scopes and their mappers", scopeTestStored(t, s, a.ID), []string{"kept:1", "profile:0"})
	mustEqual(t, "links", scopeTestLinks(t, s, a.ID), map[string][]string{app.ID + " " + store.ScopeOptional: {keep}})
}

func testScopeLinks(t *testing.T, s *store.Store) {
	a, b := scopeTestRealms(t, s)
	ids := map[string]string{}
	for i, name := range []string{"profile", "email", "phone", "address"} {
		id := "a0000000-0000-4000-8000-00000000000" + string(rune('1'+i))
		ids[name] = id
		scopeTestCreate(t, s, scopeTestScope(id, a.ID, name, scopeTestMapper("b0000000-0000-4000-8000-00000000000"+string(rune('1'+i)), id, "m")))
	}
	const foreignScope = "a0000000-0000-4000-8000-000000000009"
	scopeTestCreate(t, s, scopeTestScope(foreignScope, b.ID, "profile"))
	app := scopeTestClient(t, s, "c0000000-0000-4000-8000-000000000001", a.ID, "app")
	other := scopeTestClient(t, s, "c0000000-0000-4000-8000-000000000002", a.ID, "other")
	foreignClient := scopeTestClient(t, s, "c0000000-0000-4000-8000-000000000003", b.ID, "app")

	for _, l := range []struct{ client, scope, kind string }{
		{app.ID, ids["profile"], store.ScopeDefault}, {app.ID, ids["email"], store.ScopeDefault},
		{app.ID, ids["phone"], store.ScopeOptional}, {other.ID, ids["profile"], store.ScopeOptional},
	} {
		if err := s.LinkClientScope(testCtx, l.client, l.scope, l.kind); err != nil {
			t.Fatalf("link %s to %s: %v", l.scope, l.client, err)
		}
	}
	mustEqual(t, "app defaults", scopeTestLinked(t, s, a.ID, app.ID, store.ScopeDefault), []string{"email", "profile"})
	mustEqual(t, "app optionals", scopeTestLinked(t, s, a.ID, app.ID, store.ScopeOptional), []string{"phone"})
	mustEqual(t, "other defaults", scopeTestLinked(t, s, a.ID, other.ID, store.ScopeDefault), []string{})
	mustEqual(t, "other optionals", scopeTestLinked(t, s, a.ID, other.ID, store.ScopeOptional), []string{"profile"})
	linked, err := s.ListLinkedScopes(testCtx, a.ID, app.ID, store.ScopeOptional)
	if err != nil || len(linked) != 1 || len(linked[0].Mappers) != 1 || linked[0].Mappers[0].Name != "m" {
		t.Fatalf("linked scopes come with their mappers: %+v, %v", linked, err)
	}

	// A scope is linked once per client, whatever the kind.
	scopeTestConflict(t, "link twice, same kind", s.LinkClientScope(testCtx, app.ID, ids["profile"], store.ScopeDefault), "scope_id")
	scopeTestConflict(t, "link twice, other kind", s.LinkClientScope(testCtx, app.ID, ids["profile"], store.ScopeOptional), "scope_id")

	for _, c := range []struct{ what, client, scope string }{
		{"a scope of another realm", app.ID, foreignScope},
		{"a client of another realm", foreignClient.ID, ids["email"]},
		{"an unknown scope", app.ID, "a0000000-0000-4000-8000-00000000dead"},
		{"an unknown client", "c0000000-0000-4000-8000-00000000dead", ids["email"]},
	} {
		if err := s.LinkClientScope(testCtx, c.client, c.scope, store.ScopeOptional); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("link %s: %v, want ErrNotFound", c.what, err)
		}
	}
	if err := s.LinkClientScope(testCtx, app.ID, ids["address"], "sometimes"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("link with an unknown kind: %v, want an error", err)
	}
	// Another realm's view of the client shows nothing.
	mustEqual(t, "defaults seen from another realm", scopeTestLinked(t, s, b.ID, app.ID, store.ScopeDefault), []string{})

	mustBeErrNotFound(t, "unlink with the wrong kind", s.UnlinkClientScope(testCtx, app.ID, ids["profile"], store.ScopeOptional))
	if err := s.UnlinkClientScope(testCtx, app.ID, ids["profile"], store.ScopeDefault); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "second unlink", s.UnlinkClientScope(testCtx, app.ID, ids["profile"], store.ScopeDefault))
	mustEqual(t, "app defaults after unlink", scopeTestLinked(t, s, a.ID, app.ID, store.ScopeDefault), []string{"email"})
	// Now unlinked, it can be linked the other way.
	if err := s.LinkClientScope(testCtx, app.ID, ids["profile"], store.ScopeOptional); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "app optionals after relink", scopeTestLinked(t, s, a.ID, app.ID, store.ScopeOptional), []string{"phone", "profile"})

	// Deleting the client drops its links, not the scopes.
	if err := s.DeleteClient(testCtx, a.ID, app.ID); err != nil {
		t.Fatal(err)
	}
	// Made again with the same ID, the client has no links.
	scopeTestClient(t, s, app.ID, a.ID, "app")
	mustEqual(t, "links after deleting the client", scopeTestLinks(t, s, a.ID),
		map[string][]string{other.ID + " " + store.ScopeOptional: {ids["profile"]}})
	mustEqual(t, "scopes after deleting a client", scopeTestStored(t, s, a.ID),
		[]string{"address:1", "email:1", "phone:1", "profile:1"})
	mustEqual(t, "the other realm's scopes", scopeTestStored(t, s, b.ID), []string{"profile:0"})
}

func testScopeRealmDeleteCascades(t *testing.T, s *store.Store) {
	a, b := scopeTestRealms(t, s)
	const id, keep = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	scopeTestCreate(t, s, scopeTestScope(id, a.ID, "profile", scopeTestMapper("b0000000-0000-4000-8000-000000000001", id, "m")))
	scopeTestCreate(t, s, scopeTestScope(keep, b.ID, "profile", scopeTestMapper("b0000000-0000-4000-8000-000000000002", keep, "m")))
	app := scopeTestClient(t, s, "c0000000-0000-4000-8000-000000000001", a.ID, "app")
	if err := s.LinkClientScope(testCtx, app.ID, id, store.ScopeDefault); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRealm(testCtx, a.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetClientScope(testCtx, b.ID, keep); err != nil {
		t.Fatalf("the other realm's scope: %v", err)
	}
	mustEqual(t, "the other realm's scopes", scopeTestStored(t, s, b.ID), []string{"profile:1"})
	// The realm, its client and its scope made again with the same IDs
	// have nothing left of the deleted ones.
	mustCreateRealm(t, s, testRealm(a.ID, a.Name, 3000))
	mustEqual(t, "scopes of the deleted realm", scopeTestStored(t, s, a.ID), []string{})
	scopeTestClient(t, s, app.ID, a.ID, "app")
	scopeTestCreate(t, s, scopeTestScope(id, a.ID, "profile"))
	mustEqual(t, "scopes of the realm made again", scopeTestStored(t, s, a.ID), []string{"profile:0"})
	mustEqual(t, "links of the realm made again", scopeTestLinks(t, s, a.ID), map[string][]string{})
}
