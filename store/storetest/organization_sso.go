package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func ssoTestID(n int) string { return fmt.Sprintf("33333333-0000-4000-a000-%012d", n) }

func ssoTestProvider(t *testing.T, s *store.Store, realmID string, n int, alias string) *store.IdentityProvider {
	t.Helper()
	return idpTestCreate(t, s, idpTestProvider(fmt.Sprintf("33333333-0000-4000-b000-%012d", n), realmID, alias))
}

func ssoTestConnection(t *testing.T, s *store.Store, n int, o *store.Organization, p *store.IdentityProvider, domain string) *store.OrgSSOConnection {
	t.Helper()
	c := &store.OrgSSOConnection{ID: ssoTestID(n), OrgID: o.ID, ProviderID: p.ID, Enabled: true, Domain: domain,
		AutoJoin: true, RedirectWhenEmailMatches: true, CreatedAt: int64(5000 + n)}
	if err := s.CreateOrgSSOConnection(testCtx, c); err != nil {
		t.Fatalf("create connection %d: %v", n, err)
	}
	c.ProviderAlias = p.Alias
	return c
}

func testOrganizationSSOConnections(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme", "acme.test")
	bank := orgTestCreate(t, s, orgTestRealm, 2, "bank", "Bank")
	corp, okta := ssoTestProvider(t, s, orgTestRealm, 1, "corp"), ssoTestProvider(t, s, orgTestRealm, 2, "okta")
	c1 := ssoTestConnection(t, s, 1, acme, corp, "acme.test")
	c2 := ssoTestConnection(t, s, 2, acme, okta, store.AnyVerifiedDomain)

	got, err := s.GetOrgSSOConnection(testCtx, acme.ID, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "connection read back", got, c1)
	if _, err := s.GetOrgSSOConnection(testCtx, bank.ID, c1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization's connection: %v", err)
	}
	list, err := s.ListOrgSSOConnections(testCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "connections", list, []*store.OrgSSOConnection{c1, c2})
	if list, err := s.ListOrgSSOConnections(testCtx, bank.ID); err != nil || len(list) != 0 {
		t.Errorf("bank's connections: %v %v", list, err)
	}

	// A provider serves one organization.
	dup := &store.OrgSSOConnection{ID: ssoTestID(3), OrgID: bank.ID, ProviderID: corp.ID, Domain: store.AnyVerifiedDomain, CreatedAt: 1}
	var ce *store.ConflictError
	if err := s.CreateOrgSSOConnection(testCtx, dup); !errors.As(err, &ce) || ce.Column != "provider_id" {
		t.Errorf("a second connection of a provider: %v", err)
	}

	c1.Enabled, c1.Domain, c1.AutoJoin, c1.RedirectWhenEmailMatches, c1.HideOnLogin = false, store.AnyVerifiedDomain, false, false, true
	if err := s.UpdateOrgSSOConnection(testCtx, c1); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetOrgSSOConnection(testCtx, acme.ID, c1.ID)
	mustEqual(t, "connection updated", got, c1)
	if hidden, err := s.HiddenSSOProviders(testCtx, orgTestRealm); err != nil || len(hidden) != 1 || hidden[0] != "corp" {
		t.Errorf("hidden providers %v %v", hidden, err)
	}
	other := *c2
	other.OrgID = bank.ID
	if err := s.UpdateOrgSSOConnection(testCtx, &other); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update through another organization: %v", err)
	}
	if err := s.DeleteOrgSSOConnection(testCtx, bank.ID, c2.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete through another organization: %v", err)
	}
	if err := s.DeleteOrgSSOConnection(testCtx, acme.ID, c2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetOrgSSOConnection(testCtx, acme.ID, c2.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	// The provider is free again.
	ssoTestConnection(t, s, 4, bank, okta, store.AnyVerifiedDomain)
	d, err := s.SSOConnectionOfProvider(testCtx, okta.ID)
	if err != nil || d.OrgSlug != "bank" || d.Connection.ID != ssoTestID(4) {
		t.Errorf("connection of okta: %+v %v", d, err)
	}
}

func testOrganizationSSOConnectionCascades(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme")
	bank := orgTestCreate(t, s, orgTestRealm, 2, "bank", "Bank")
	corp, okta := ssoTestProvider(t, s, orgTestRealm, 1, "corp"), ssoTestProvider(t, s, orgTestRealm, 2, "okta")
	c1 := ssoTestConnection(t, s, 1, acme, corp, store.AnyVerifiedDomain)
	ssoTestConnection(t, s, 2, bank, okta, store.AnyVerifiedDomain)

	// Deleting the provider removes its connection; the organization stays.
	if err := s.DeleteIdentityProvider(testCtx, orgTestRealm, corp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetOrgSSOConnection(testCtx, acme.ID, c1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("connection of a deleted provider: %v", err)
	}
	if _, err := s.GetOrganization(testCtx, orgTestRealm, "acme"); err != nil {
		t.Errorf("organization after its provider went: %v", err)
	}
	// Deleting the organization removes its connections; the provider stays.
	if err := s.DeleteOrganization(testCtx, orgTestRealm, "bank"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SSOConnectionOfProvider(testCtx, okta.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("connection of a deleted organization: %v", err)
	}
	if _, err := s.GetIdentityProvider(testCtx, orgTestRealm, "okta"); err != nil {
		t.Errorf("provider after its organization went: %v", err)
	}
}

func testOrganizationSSODiscovery(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme", "acme.test", "acme.example", "pending.test")
	for _, d := range []string{"acme.test", "acme.example"} {
		if err := s.VerifyDomain(testCtx, acme.ID, d); err != nil {
			t.Fatal(err)
		}
	}
	anyP, exact := ssoTestProvider(t, s, orgTestRealm, 1, "any"), ssoTestProvider(t, s, orgTestRealm, 2, "exact")
	cAny := ssoTestConnection(t, s, 1, acme, anyP, store.AnyVerifiedDomain)
	cExact := ssoTestConnection(t, s, 2, acme, exact, "acme.example")
	// Another realm's organization with the same verified domain.
	other := orgTestCreate(t, s, orgTestRealm2, 3, "other", "Other", "other.test")
	if err := s.VerifyDomain(testCtx, other.ID, "other.test"); err != nil {
		t.Fatal(err)
	}
	ssoTestConnection(t, s, 3, other, ssoTestProvider(t, s, orgTestRealm2, 3, "o"), store.AnyVerifiedDomain)

	want := func(domain, id string) {
		t.Helper()
		d, err := s.DiscoverSSOConnection(testCtx, orgTestRealm, domain)
		switch {
		case id == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s: want none, got %+v %v", domain, d, err)
		case id != "" && (err != nil || d.Connection.ID != id || d.OrgSlug != "acme"):
			t.Errorf("%s: want %s, got %+v %v", domain, id, d, err)
		}
	}
	if has, err := s.RealmHasSSODiscovery(testCtx, orgTestRealm); err != nil || !has {
		t.Errorf("realm with connections: %v %v", has, err)
	}
	if has, err := s.RealmHasSSODiscovery(testCtx, idpTestRealmA); err != nil || has {
		t.Errorf("realm without: %v %v", has, err)
	}
	want("acme.test", cAny.ID)
	want("acme.example", cExact.ID) // the connection naming the domain wins
	want("pending.test", "")        // not verified
	want("other.test", "")          // another realm's
	want("nowhere.test", "")

	cExact.Enabled = false
	if err := s.UpdateOrgSSOConnection(testCtx, cExact); err != nil {
		t.Fatal(err)
	}
	want("acme.example", cAny.ID)
	cAny.RedirectWhenEmailMatches = false
	if err := s.UpdateOrgSSOConnection(testCtx, cAny); err != nil {
		t.Fatal(err)
	}
	want("acme.test", "")
	cAny.RedirectWhenEmailMatches = true
	if err := s.UpdateOrgSSOConnection(testCtx, cAny); err != nil {
		t.Fatal(err)
	}
	anyP.Enabled = false
	if err := s.UpdateIdentityProvider(testCtx, anyP); err != nil {
		t.Fatal(err)
	}
	want("acme.test", "") // a disabled provider
	anyP.Enabled = true
	if err := s.UpdateIdentityProvider(testCtx, anyP); err != nil {
		t.Fatal(err)
	}
	acme.Enabled = false
	if err := s.UpdateOrganization(testCtx, acme); err != nil {
		t.Fatal(err)
	}
	want("acme.test", "") // a disabled organization
	if has, err := s.RealmHasSSODiscovery(testCtx, orgTestRealm); err != nil || has {
		t.Errorf("realm whose organization is disabled: %v %v", has, err)
	}
}
