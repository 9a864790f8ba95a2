package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// customAttributeSuite is the conformance tests of the custom attribute
// tables.
func customAttributeSuite() []subTest {
	return []subTest{
		{"CustomAttributeCRUD", testCustomAttributeCRUD},
		{"CustomAttributeUserValues", testCustomAttributeUserValues},
	}
}

func testCustomAttributeCRUD(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	minLen, lo := 2, 1.5
	a := &store.CustomAttribute{ID: orgTestID(21), RealmID: orgTestRealm, Name: "dept", DisplayName: "Department", Type: "enum",
		Required: true, Multivalued: true, Options: []string{"a", "b"}, EditableBy: "user", OnRegistration: true, InTokens: true,
		Validation: store.AttributeValidation{Pattern: "x", MinLength: &minLen, Min: &lo}, CreatedAt: 99}
	if err := s.CreateCustomAttribute(testCtx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCustomAttribute(testCtx, orgTestRealm, a.ID)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("read back %+v %v, want %+v", got, err, a)
	}
	dup := *a
	dup.ID = orgTestID(22)
	var ce *store.ConflictError
	if err := s.CreateCustomAttribute(testCtx, &dup); !errors.As(err, &ce) || ce.Column != "name" {
		t.Errorf("duplicate name: %v", err)
	}
	dup.RealmID = orgTestRealm2
	if err := s.CreateCustomAttribute(testCtx, &dup); err != nil {
		t.Errorf("the name in another realm: %v", err)
	}
	a.Name, a.Options, a.Validation = "department", nil, store.AttributeValidation{}
	if err := s.UpdateCustomAttribute(testCtx, a); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListCustomAttributes(testCtx, orgTestRealm)
	if err != nil || len(list) != 1 || list[0].Name != "department" || len(list[0].Options) != 0 || list[0].Validation.MinLength != nil {
		t.Errorf("after update %+v %v", list, err)
	}
	if _, err := s.GetCustomAttribute(testCtx, orgTestRealm2, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another realm's attribute: %v", err)
	}
	if err := s.DeleteCustomAttribute(testCtx, orgTestRealm, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCustomAttribute(testCtx, orgTestRealm, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
}

func testCustomAttributeUserValues(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	alice := orgTestUser(t, s, 1, "alice")
	if err := s.SetUserCustomAttribute(testCtx, alice.ID, "langs", []string{"en", "fr"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserCustomAttribute(testCtx, alice.ID, "age", []string{"42"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserCustomAttribute(testCtx, alice.ID, "age", []string{"43"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.UserCustomAttributes(testCtx, alice.ID)
	if want := map[string][]string{"langs": {"en", "fr"}, "age": {"43"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("values %v %v, want %v", got, err, want)
	}
	if err := s.SetUserCustomAttribute(testCtx, alice.ID, "langs", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(testCtx, orgTestRealm, alice.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.UserCustomAttributes(testCtx, alice.ID); err != nil || len(got) != 0 {
		t.Errorf("a deleted user's values %v %v", got, err)
	}
}
