package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// scimMappingSuite is the conformance tests of SCIM attribute mappings.
func scimMappingSuite() []subTest {
	return []subTest{
		{"SCIMMappingLifecycle", testSCIMMappingLifecycle},
	}
}

func testSCIMMappingLifecycle(t *testing.T, s *store.Store) {
	acme := mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	beta := mustCreateRealm(t, s, testRealm("r2", "beta", 1))
	m1 := &store.SCIMMapping{ID: "m1", RealmID: acme.ID, Path: "title", PathKey: "title", Target: "attributes.jobTitle", CreatedAt: 100}
	m2 := &store.SCIMMapping{ID: "m2", RealmID: acme.ID, Path: `addresses[type eq "work"].locality`,
		PathKey: `addresses[type eq "work"].locality`, Target: "attributes.city", CreatedAt: 200}
	for _, m := range []*store.SCIMMapping{m2, m1} {
		if err := s.CreateSCIMMapping(testCtx, m); err != nil {
			t.Fatal(err)
		}
	}
	var ce *store.ConflictError
	err := s.CreateSCIMMapping(testCtx, &store.SCIMMapping{ID: "m3", RealmID: acme.ID, Path: "Title", PathKey: "title",
		Target: "firstName", CreatedAt: 300})
	if !errors.As(err, &ce) || ce.Column != "path_key" {
		t.Fatalf("a second mapping of the same path: %v, want a conflict on path_key", err)
	}
	err = s.CreateSCIMMapping(testCtx, &store.SCIMMapping{ID: "m3", RealmID: acme.ID, Path: "nickName", PathKey: "nickname",
		Target: "attributes.jobTitle", CreatedAt: 300})
	if !errors.As(err, &ce) || ce.Column != "target" {
		t.Fatalf("a second mapping to the same target: %v, want a conflict on target", err)
	}
	if err := s.CreateSCIMMapping(testCtx, &store.SCIMMapping{ID: "m4", RealmID: beta.ID, Path: "title", PathKey: "title",
		Target: "attributes.jobTitle", CreatedAt: 50}); err != nil {
		t.Fatalf("the same path in another realm: %v", err)
	}
	got, err := s.ListSCIMMappings(testCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "the realm's mappings, oldest first", got, []*store.SCIMMapping{m1, m2})

	mustBeErrNotFound(t, "deleting another realm's mapping", s.DeleteSCIMMapping(testCtx, beta.ID, "m1"))
	if err := s.DeleteSCIMMapping(testCtx, acme.ID, "m1"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "deleting it twice", s.DeleteSCIMMapping(testCtx, acme.ID, "m1"))
	if got, _ := s.ListSCIMMappings(testCtx, acme.ID); len(got) != 1 || got[0].ID != "m2" {
		t.Fatalf("after the delete: %+v", got)
	}

	if err := s.DeleteRealm(testCtx, acme.Name); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ListSCIMMappings(testCtx, acme.ID); len(got) != 0 {
		t.Fatalf("a deleted realm's mappings: %+v", got)
	}
	if got, _ := s.ListSCIMMappings(testCtx, beta.ID); len(got) != 1 {
		t.Fatalf("another realm's mappings after the delete: %+v", got)
	}
}
