package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// organizationSuite is the conformance tests of the organization tables.
func organizationSuite() []subTest {
	return []subTest{
		{"OrganizationCreateGet", testOrganizationCreateGet},
		{"OrganizationSlugPerRealm", testOrganizationSlugPerRealm},
		{"OrganizationList", testOrganizationList},
		{"OrganizationUpdate", testOrganizationUpdate},
		{"OrganizationDelete", testOrganizationDelete},
		{"OrganizationDomainVerification", testOrganizationDomainVerification},
		{"OrganizationInvitations", testOrganizationInvitations},
		{"OrganizationMembers", testOrganizationMembers},
		{"OrganizationMembersCascade", testOrganizationMembersCascade},
		{"OrganizationSSOConnections", testOrganizationSSOConnections},
		{"OrganizationSSOConnectionCascades", testOrganizationSSOConnectionCascades},
		{"OrganizationSSODiscovery", testOrganizationSSODiscovery},
	}
}

const (
	orgTestRealm  = "33333333-1111-4111-8111-111111111111"
	orgTestRealm2 = "33333333-2222-4222-8222-222222222222"
)

func orgTestID(n int) string { return fmt.Sprintf("33333333-0000-4000-8000-%012d", n) }

func orgTestRealms(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(orgTestRealm, "acme", 1000))
	mustCreateRealm(t, s, testRealm(orgTestRealm2, "other", 2000))
}

func orgTestCreate(t *testing.T, s *store.Store, realmID string, n int, slug, name string, domains ...string) *store.Organization {
	t.Helper()
	o := &store.Organization{ID: orgTestID(n), RealmID: realmID, Slug: slug, Name: name, Description: "about " + name,
		Enabled: true, Attributes: map[string][]string{"tier": {"gold", "x"}}, CreatedAt: int64(1000 + n)}
	for _, d := range domains {
		o.Domains = append(o.Domains, store.OrgDomain{Name: d})
	}
	if err := s.CreateOrganization(testCtx, o); err != nil {
		t.Fatalf("create organization %s: %v", slug, err)
	}
	return o
}

func orgSlugs(list []*store.Organization) []string {
	out := []string{}
	for _, o := range list {
		out = append(out, o.Slug)
	}
	return out
}

func testOrganizationCreateGet(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	want := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme", "b.test", "a.test")
	got, err := s.GetOrganization(testCtx, orgTestRealm, "acme")
	if err != nil {
		t.Fatal(err)
	}
	wantDomains := []store.OrgDomain{{Name: "a.test"}, {Name: "b.test"}}
	if got.ID != want.ID || got.Name != "Acme" || got.Description != "about Acme" || !got.Enabled || got.CreatedAt != 1001 ||
		!slices.Equal(got.Attributes["tier"], []string{"gold", "x"}) || !slices.Equal(got.Domains, wantDomains) {
		t.Errorf("got %+v", got)
	}
	if !slices.Equal(want.Domains, wantDomains) {
		t.Errorf("create left domains %+v", want.Domains)
	}
	if _, err := s.GetOrganization(testCtx, orgTestRealm2, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another realm's slug: %v", err)
	}
}

func testOrganizationSlugPerRealm(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme")
	err := s.CreateOrganization(testCtx, &store.Organization{ID: orgTestID(2), RealmID: orgTestRealm, Slug: "acme", Name: "B"})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Column != "slug" {
		t.Errorf("duplicate slug: %v", err)
	}
	orgTestCreate(t, s, orgTestRealm2, 3, "acme", "Acme elsewhere")
}

func testOrganizationList(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	orgTestCreate(t, s, orgTestRealm, 1, "zed", "Zed", "zed.test")
	orgTestCreate(t, s, orgTestRealm, 2, "acme", "acme", "acme.example")
	orgTestCreate(t, s, orgTestRealm, 3, "bank", "Bank_1", "bank.test")
	orgTestCreate(t, s, orgTestRealm2, 4, "other", "Acme Other", "acme.example")
	for _, tc := range []struct {
		q    store.OrganizationQuery
		want []string
	}{
		{store.OrganizationQuery{Max: 10}, []string{"acme", "bank", "zed"}},
		{store.OrganizationQuery{Max: 1, First: 1}, []string{"bank"}},
		{store.OrganizationQuery{Max: 10, Search: "ACME"}, []string{"acme"}},
		{store.OrganizationQuery{Max: 10, Search: ".test"}, []string{"bank", "zed"}},
		{store.OrganizationQuery{Max: 10, Search: "k_"}, []string{"bank"}},
		{store.OrganizationQuery{Max: 10, Search: "%"}, []string{}},
		{store.OrganizationQuery{Max: 10, Search: "zed.test", Exact: true}, []string{"zed"}},
		{store.OrganizationQuery{Max: 10, Search: "ze", Exact: true}, []string{}},
		{store.OrganizationQuery{Max: 10, Search: "BANK_1", Exact: true}, []string{"bank"}},
	} {
		list, err := s.ListOrganizations(testCtx, orgTestRealm, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := orgSlugs(list); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.q, got, tc.want)
		}
		for _, o := range list {
			if len(o.Domains) != 1 {
				t.Errorf("%s listed with domains %+v", o.Slug, o.Domains)
			}
		}
	}
}

func testOrganizationUpdate(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	o := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme", "a.test", "b.test")
	o.Name, o.Description, o.Enabled, o.Attributes = "Acme 2", "new", false, nil
	o.Domains = []store.OrgDomain{{Name: "b.test"}, {Name: "c.test"}}
	if err := s.UpdateOrganization(testCtx, o); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetOrganization(testCtx, orgTestRealm, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Acme 2" || got.Description != "new" || got.Enabled || len(got.Attributes) != 0 ||
		!slices.Equal(got.Domains, []store.OrgDomain{{Name: "b.test"}, {Name: "c.test"}}) {
		t.Errorf("after update %+v", got)
	}
	list, err := s.ListOrganizations(testCtx, orgTestRealm, store.OrganizationQuery{Max: 10, Search: "acme 2", Exact: true})
	if err != nil || len(list) != 1 {
		t.Errorf("search by the new name: %v %v", orgSlugs(list), err)
	}
	o.ID = orgTestID(9)
	if err := s.UpdateOrganization(testCtx, o); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of an unknown organization: %v", err)
	}
}

func testOrganizationDelete(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme", "a.test")
	if err := s.DeleteOrganization(testCtx, orgTestRealm2, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete from another realm: %v", err)
	}
	if err := s.DeleteOrganization(testCtx, orgTestRealm, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetOrganization(testCtx, orgTestRealm, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	orgTestCreate(t, s, orgTestRealm, 2, "acme", "Acme", "a.test")
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.ListOrganizations(testCtx, orgTestRealm, store.OrganizationQuery{Max: 10}); err != nil || len(list) != 0 {
		t.Errorf("a deleted realm's organizations: %v %v", orgSlugs(list), err)
	}
}

func orgTestUser(t *testing.T, s *store.Store, n int, username string) *store.User {
	t.Helper()
	return mustCreateUser(t, s, testUser(fmt.Sprintf("33333333-0000-4000-9000-%012d", n), orgTestRealm, username, username+"@x.test"))
}

func memberNames(list []*store.OrgMember) []string {
	out := []string{}
	for _, m := range list {
		out = append(out, m.User.Username+":"+m.Role)
	}
	return out
}

func testOrganizationMembers(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme")
	bank := orgTestCreate(t, s, orgTestRealm, 2, "bank", "Bank")
	alice, bob := orgTestUser(t, s, 1, "alice"), orgTestUser(t, s, 2, "bob")
	for _, m := range []struct {
		org  *store.Organization
		user *store.User
		role string
	}{{acme, bob, "member"}, {acme, alice, "owner"}, {bank, alice, "admin"}} {
		if err := s.AddOrgMember(testCtx, m.org.ID, m.user.ID, m.role, 5000); err != nil {
			t.Fatal(err)
		}
	}
	var ce *store.ConflictError
	if err := s.AddOrgMember(testCtx, acme.ID, alice.ID, "member", 6000); !errors.As(err, &ce) {
		t.Errorf("added twice: %v", err)
	}
	if err := s.AddOrgMember(testCtx, acme.ID, "nobody", "member", 6000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	list, err := s.ListOrgMembers(testCtx, acme.ID, 0, 10)
	if got := memberNames(list); err != nil || !slices.Equal(got, []string{"alice:owner", "bob:member"}) {
		t.Errorf("members %v %v", got, err)
	}
	if list, _ := s.ListOrgMembers(testCtx, acme.ID, 1, 1); !slices.Equal(memberNames(list), []string{"bob:member"}) {
		t.Errorf("page %v", memberNames(list))
	}
	m, err := s.GetOrgMember(testCtx, acme.ID, alice.ID)
	if err != nil || m.Role != "owner" || m.JoinedAt != 5000 || m.User.Email != "alice@x.test" {
		t.Errorf("member %+v %v", m, err)
	}
	if n, err := s.CountOrgMembers(testCtx, acme.ID, "owner"); n != 1 || err != nil {
		t.Errorf("owners %d %v", n, err)
	}
	if err := s.SetOrgMemberRole(testCtx, acme.ID, bob.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetOrgMemberRole(testCtx, bank.ID, bob.ID, "admin"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("role of a non-member: %v", err)
	}
	orgsOf, err := s.UserOrganizations(testCtx, alice.ID)
	want := []store.OrgMembership{{OrgID: acme.ID, Slug: "acme", Name: "Acme", Enabled: true, Role: "owner"},
		{OrgID: bank.ID, Slug: "bank", Name: "Bank", Enabled: true, Role: "admin"}}
	if err != nil || !slices.Equal(orgsOf, want) {
		t.Errorf("alice's organizations %+v %v", orgsOf, err)
	}
	if err := s.RemoveOrgMember(testCtx, acme.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveOrgMember(testCtx, acme.ID, bob.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removed twice: %v", err)
	}
}

func testOrganizationMembersCascade(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme")
	alice, bob := orgTestUser(t, s, 1, "alice"), orgTestUser(t, s, 2, "bob")
	for _, u := range []*store.User{alice, bob} {
		if err := s.AddOrgMember(testCtx, acme.ID, u.ID, "member", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteUser(testCtx, orgTestRealm, bob.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListOrgMembers(testCtx, acme.ID, 0, 10); !slices.Equal(memberNames(list), []string{"alice:member"}) {
		t.Errorf("after deleting bob: %v", memberNames(list))
	}
	if err := s.DeleteOrganization(testCtx, orgTestRealm, "acme"); err != nil {
		t.Fatal(err)
	}
	if orgsOf, err := s.UserOrganizations(testCtx, alice.ID); err != nil || len(orgsOf) != 0 {
		t.Errorf("alice's organizations after the deletion: %v %v", orgsOf, err)
	}
	if _, err := s.GetUser(testCtx, orgTestRealm, alice.ID); err != nil {
		t.Errorf("the member went with the organization: %v", err)
	}
}

func testOrganizationDomainVerification(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme", "a.test", "b.test")
	rival := orgTestCreate(t, s, orgTestRealm, 2, "rival", "Rival", "a.test")
	other := orgTestCreate(t, s, orgTestRealm2, 3, "acme", "Acme elsewhere", "a.test")
	if err := s.SetDomainChallenge(testCtx, acme.ID, "a.test", "v1", 77); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDomainChallenge(testCtx, acme.ID, "c.test", "v1", 77); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("challenge of an unlisted domain: %v", err)
	}
	got, _ := s.GetOrganization(testCtx, orgTestRealm, "acme")
	if got.Domains[0] != (store.OrgDomain{Name: "a.test", Challenge: "v1", ChallengeAt: 77}) {
		t.Errorf("domain with its challenge %+v", got.Domains[0])
	}
	if err := s.VerifyDomain(testCtx, acme.ID, "a.test"); err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyDomain(testCtx, rival.ID, "a.test"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second organization verified the domain: %v", err)
	}
	if err := s.VerifyDomain(testCtx, other.ID, "a.test"); err != nil {
		t.Errorf("another realm's organization: %v", err)
	}
	got, _ = s.GetOrganization(testCtx, orgTestRealm, "acme")
	if got.Domains[0] != (store.OrgDomain{Name: "a.test", Verified: true, ChallengeAt: 77}) {
		t.Errorf("verified domain %+v", got.Domains[0])
	}
	// Listing it anew elsewhere is refused; kept by its owner, it stays verified.
	err := s.CreateOrganization(testCtx, &store.Organization{ID: orgTestID(4), RealmID: orgTestRealm, Slug: "third", Name: "T",
		Domains: []store.OrgDomain{{Name: "a.test"}}})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Column != "domain" {
		t.Errorf("listing a verified domain: %v", err)
	}
	if _, err := s.GetOrganization(testCtx, orgTestRealm, "third"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused organization was kept: %v", err)
	}
	got.Domains = []store.OrgDomain{{Name: "a.test"}, {Name: "d.test"}}
	if err := s.UpdateOrganization(testCtx, got); err != nil {
		t.Fatal(err)
	}
	if got.Domains[0].Name != "a.test" || !got.Domains[0].Verified || got.Domains[1].Verified {
		t.Errorf("after an update %+v", got.Domains)
	}
}

func testOrganizationInvitations(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	acme := orgTestCreate(t, s, orgTestRealm, 1, "acme", "Acme")
	alice := orgTestUser(t, s, 1, "alice")
	for i, inv := range []*store.OrgInvitation{
		{ID: orgTestID(11), Email: "a@x.test", CreatedAt: 100, ExpiresAt: 1000},
		{ID: orgTestID(12), Email: "b@x.test", CreatedAt: 200, ExpiresAt: 500},
		{ID: orgTestID(13), Email: "c@x.test", CreatedAt: 300, ExpiresAt: 1000},
	} {
		inv.OrgID, inv.Role, inv.TokenHash = acme.ID, "member", store.HashToken(fmt.Sprint("token", i))
		if err := s.CreateOrgInvitation(testCtx, inv); err != nil {
			t.Fatal(err)
		}
	}
	emails := func(now int64) []string {
		list, err := s.PendingOrgInvitations(testCtx, acme.ID, now, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, inv := range list {
			out = append(out, inv.Email)
		}
		return out
	}
	if got := emails(400); !slices.Equal(got, []string{"c@x.test", "b@x.test", "a@x.test"}) {
		t.Errorf("pending %v", got)
	}
	if got := emails(500); !slices.Equal(got, []string{"c@x.test", "a@x.test"}) {
		t.Errorf("pending after b expired %v", got)
	}
	inv, err := s.OrgInvitationByToken(testCtx, store.HashToken("token0"))
	if err != nil || inv.Email != "a@x.test" || inv.OrgID != acme.ID || inv.ExpiresAt != 1000 {
		t.Fatalf("by token %+v %v", inv, err)
	}
	if _, err := s.OrgInvitationByToken(testCtx, store.HashToken("nope")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown token: %v", err)
	}
	if err := s.UseOrgInvitation(testCtx, inv.ID, alice.ID, 600); err != nil {
		t.Fatal(err)
	}
	if err := s.UseOrgInvitation(testCtx, inv.ID, alice.ID, 700); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("used twice: %v", err)
	}
	if inv, _ = s.OrgInvitationByToken(testCtx, store.HashToken("token0")); inv.UsedAt != 600 || inv.UsedBy != alice.ID {
		t.Errorf("used invitation %+v", inv)
	}
	if got := emails(550); !slices.Equal(got, []string{"c@x.test"}) {
		t.Errorf("pending after a was used %v", got)
	}
	if err := s.DeleteOrganization(testCtx, orgTestRealm, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OrgInvitationByToken(testCtx, store.HashToken("token2")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an invitation outlived its organization: %v", err)
	}
}
