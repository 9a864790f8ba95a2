package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// policySuite is the conformance tests of the authorization policies and
// their realm settings.
func policySuite() []subTest {
	return []subTest{
		{"PolicyCRUD", testPolicyCRUD},
		{"PolicySettings", testPolicySettings},
	}
}

func policyTest(n int, realmID, name string) *store.AuthzPolicy {
	return &store.AuthzPolicy{ID: orgTestID(n), RealmID: realmID, Name: name, Description: "about " + name, Enabled: true,
		Effect: "permit", ResourceTypes: `["document"]`, Actions: `["read","edit"]`, Expression: `"editor" in subject.roles`,
		CreatedAt: 100, UpdatedAt: 200}
}

func testPolicyCRUD(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	p := policyTest(41, orgTestRealm, "editors")
	if err := s.CreateAuthzPolicy(testCtx, p); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAuthzPolicy(testCtx, orgTestRealm, p.ID)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("read back %+v %v, want %+v", got, err, p)
	}
	if _, err := s.GetAuthzPolicy(testCtx, orgTestRealm2, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("through another realm: %v", err)
	}
	var ce *store.ConflictError
	dup := policyTest(42, orgTestRealm, "editors")
	if err := s.CreateAuthzPolicy(testCtx, dup); !errors.As(err, &ce) || ce.Column != "name" {
		t.Errorf("a name the realm has: %v", err)
	}
	dup.RealmID = orgTestRealm2
	if err := s.CreateAuthzPolicy(testCtx, dup); err != nil {
		t.Fatalf("the same name in another realm: %v", err)
	}
	sameID := policyTest(42, orgTestRealm, "other")
	if err := s.CreateAuthzPolicy(testCtx, sameID); !errors.As(err, &ce) || ce.Column != "id" {
		t.Errorf("an ID another realm's policy has: %v", err)
	}
	other := policyTest(43, orgTestRealm, "admins")
	other.Effect, other.Enabled, other.Expression = "deny", false, ""
	if err := s.CreateAuthzPolicy(testCtx, other); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListAuthzPolicies(testCtx, orgTestRealm)
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], other) || !reflect.DeepEqual(list[1], p) {
		t.Fatalf("list %+v %v", list, err)
	}
	if n, err := s.CountAuthzPolicies(testCtx, orgTestRealm); err != nil || n != 2 {
		t.Errorf("count %d %v", n, err)
	}
	other.Name = "editors"
	if err := s.UpdateAuthzPolicy(testCtx, other); !errors.As(err, &ce) || ce.Column != "name" {
		t.Errorf("renamed onto a taken name: %v", err)
	}
	p.Name, p.Description, p.Enabled, p.Effect, p.ResourceTypes, p.Actions, p.Expression, p.UpdatedAt =
		"writers", "", false, "deny", `["*"]`, `["*"]`, "true", 300
	if err := s.UpdateAuthzPolicy(testCtx, p); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetAuthzPolicy(testCtx, orgTestRealm, p.ID); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("after update %+v %v, want %+v", got, err, p)
	}
	moved := *p
	moved.RealmID = orgTestRealm2
	if err := s.UpdateAuthzPolicy(testCtx, &moved); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updated through another realm: %v", err)
	}
	if err := s.DeleteAuthzPolicy(testCtx, orgTestRealm2, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted through another realm: %v", err)
	}
	if err := s.DeleteAuthzPolicy(testCtx, orgTestRealm, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAuthzPolicy(testCtx, orgTestRealm, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
	if err := s.UpdateAuthzPolicy(testCtx, p); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a removed policy: %v", err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.ListAuthzPolicies(testCtx, orgTestRealm); err != nil || len(list) != 0 {
		t.Errorf("a deleted realm's policies: %+v %v", list, err)
	}
	if list, err := s.ListAuthzPolicies(testCtx, orgTestRealm2); err != nil || len(list) != 1 {
		t.Errorf("the other realm's policies: %+v %v", list, err)
	}
}

func testPolicySettings(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	if _, err := s.AuthzPolicySettings(testCtx, orgTestRealm); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("before any write: %v", err)
	}
	for _, v := range []string{`{"defaultDecision":"permit"}`, `{"defaultDecision":"deny"}`} {
		if err := s.PutAuthzPolicySettings(testCtx, orgTestRealm, v, 100); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AuthzPolicySettings(testCtx, orgTestRealm); err != nil || got != v {
			t.Errorf("read back %q %v, want %q", got, err, v)
		}
	}
	if _, err := s.AuthzPolicySettings(testCtx, orgTestRealm2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another realm's: %v", err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthzPolicySettings(testCtx, orgTestRealm); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted realm's: %v", err)
	}
}
