package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

// identityProviderSuite is the conformance tests of the brokering tables.
func identityProviderSuite() []subTest {
	return []subTest{
		{"IdentityProviderCreateGetList", testIdentityProviderCreateGetList},
		{"IdentityProviderAliasUniquePerRealm", testIdentityProviderAliasUniquePerRealm},
		{"IdentityProviderUpdateDelete", testIdentityProviderUpdateDelete},
		{"IdentityProviderRealmDeleteCascades", testIdentityProviderRealmDeleteCascades},
	}
}

const (
	idpTestRealmA = "31111111-1111-4111-8111-111111111111"
	idpTestRealmB = "32222222-2222-4222-8222-222222222222"
)

func idpTestProvider(id, realmID, alias string) *store.IdentityProvider {
	return &store.IdentityProvider{ID: id, RealmID: realmID, Alias: alias, DisplayName: "Sign in with " + alias,
		ProviderType: "oidc", Enabled: true, ClientID: "client-" + alias, ClientSecret: "secret-" + alias,
		AuthorizationURL: "https://" + alias + ".test/auth", TokenURL: "https://" + alias + ".test/token",
		UserinfoURL: "https://" + alias + ".test/userinfo", JWKSURL: "https://" + alias + ".test/jwks",
		Issuer: "https://" + alias + ".test", DefaultScopes: "openid email", TrustEmail: true, SyncUserProfile: true,
		Config: `{"storeToken":true}`, CreatedAt: 7000}
}

func idpTestCreate(t *testing.T, s *store.Store, p *store.IdentityProvider) *store.IdentityProvider {
	t.Helper()
	if err := s.CreateIdentityProvider(testCtx, p); err != nil {
		t.Fatalf("create identity provider %s: %v", p.Alias, err)
	}
	return p
}

func testIdentityProviderCreateGetList(t *testing.T, s *store.Store) {
	a := mustCreateRealm(t, s, testRealm(idpTestRealmA, "acme", 1000))
	google := idpTestCreate(t, s, idpTestProvider("31111111-0000-4000-8000-000000000001", a.ID, "google"))
	bare := idpTestProvider("31111111-0000-4000-8000-000000000002", a.ID, "corp")
	bare.ClientSecret, bare.Config, bare.TrustEmail, bare.Enabled = "", "", false, false
	idpTestCreate(t, s, bare)

	got, err := s.GetIdentityProvider(testCtx, a.ID, "google")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "provider read back", got, google)
	got, err = s.GetIdentityProvider(testCtx, a.ID, "corp")
	if err != nil {
		t.Fatal(err)
	}
	if got.ClientSecret != "" || got.Config != "{}" || got.TrustEmail || got.Enabled {
		t.Fatalf("provider without secret or config read back as %+v", got)
	}
	list, err := s.ListIdentityProviders(testCtx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var aliases []string
	for _, p := range list {
		aliases = append(aliases, p.Alias)
	}
	mustEqual(t, "providers by alias", aliases, []string{"corp", "google"})
	_, err = s.GetIdentityProvider(testCtx, a.ID, "nope")
	mustBeErrNotFound(t, "unknown alias", err)
}

func testIdentityProviderAliasUniquePerRealm(t *testing.T, s *store.Store) {
	a := mustCreateRealm(t, s, testRealm(idpTestRealmA, "acme", 1000))
	b := mustCreateRealm(t, s, testRealm(idpTestRealmB, "beta", 2000))
	idpTestCreate(t, s, idpTestProvider("31111111-0000-4000-8000-000000000001", a.ID, "google"))
	mustBeErrConflict(t, "same alias, same realm",
		s.CreateIdentityProvider(testCtx, idpTestProvider("31111111-0000-4000-8000-000000000002", a.ID, "google")))
	idpTestCreate(t, s, idpTestProvider("31111111-0000-4000-8000-000000000003", b.ID, "google"))
	list, err := s.ListIdentityProviders(testCtx, b.ID)
	if err != nil || len(list) != 1 || list[0].RealmID != b.ID {
		t.Fatalf("realm b providers: %v %v", list, err)
	}
}

func testIdentityProviderUpdateDelete(t *testing.T, s *store.Store) {
	a := mustCreateRealm(t, s, testRealm(idpTestRealmA, "acme", 1000))
	p := idpTestCreate(t, s, idpTestProvider("31111111-0000-4000-8000-000000000001", a.ID, "google"))
	idpTestCreate(t, s, idpTestProvider("31111111-0000-4000-8000-000000000002", a.ID, "github"))

	changed := *p
	changed.Alias, changed.DisplayName, changed.ClientSecret, changed.Enabled = "gmail", "Gmail", "rotated", false
	changed.Config, changed.DefaultScopes, changed.SyncUserProfile = `{"tenant":"x"}`, "openid", false
	changed.CreatedAt = 1 // not written by an update
	if err := s.UpdateIdentityProvider(testCtx, &changed); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetIdentityProvider(testCtx, a.ID, "gmail")
	if err != nil {
		t.Fatal(err)
	}
	changed.CreatedAt = p.CreatedAt
	mustEqual(t, "updated provider", got, &changed)

	clash := changed
	clash.Alias = "github"
	mustBeErrConflict(t, "update to a taken alias", s.UpdateIdentityProvider(testCtx, &clash))
	missing := changed
	missing.ID = "31111111-0000-4000-8000-000000000009"
	mustBeErrNotFound(t, "update unknown", s.UpdateIdentityProvider(testCtx, &missing))

	if err := s.DeleteIdentityProvider(testCtx, a.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetIdentityProvider(testCtx, a.ID, "gmail")
	mustBeErrNotFound(t, "deleted provider", err)
	mustBeErrNotFound(t, "delete twice", s.DeleteIdentityProvider(testCtx, a.ID, p.ID))
}

func testIdentityProviderRealmDeleteCascades(t *testing.T, s *store.Store) {
	a := mustCreateRealm(t, s, testRealm(idpTestRealmA, "acme", 1000))
	idpTestCreate(t, s, idpTestProvider("31111111-0000-4000-8000-000000000001", a.ID, "google"))
	if err := s.DeleteRealm(testCtx, a.Name); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListIdentityProviders(testCtx, a.ID)
	if err != nil || len(list) != 0 {
		t.Fatalf("providers of a deleted realm: %v %v", list, err)
	}
}
