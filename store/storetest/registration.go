package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// registrationSuite is the conformance tests of registration fields,
// settings, user attributes and statuses.
func registrationSuite() []subTest {
	return []subTest{
		{"RegistrationFields", testRegistrationFields},
		{"RegistrationModeration", testRegistrationModeration},
		{"RegistrationUserState", testRegistrationUserState},
	}
}

func testRegistrationFields(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	phone := &store.RegistrationField{ID: "f1", RealmID: sessionsTestRealm, Key: "phone", Label: "Phone", Type: "tel",
		Required: true, Pattern: `^\+?[0-9 ]+$`, Options: []string{}, Enabled: true, Position: 2, CreatedAt: 5}
	plan := &store.RegistrationField{ID: "f2", RealmID: sessionsTestRealm, Key: "plan", Label: "Plan", Type: "select",
		Options: []string{"free", "pro"}, Enabled: false, Position: 1, CreatedAt: 6}
	for _, f := range []*store.RegistrationField{phone, plan} {
		if err := s.CreateRegistrationField(testCtx, f); err != nil {
			t.Fatal(err)
		}
	}
	dup := *phone
	dup.ID = "f3"
	var ce *store.ConflictError
	if err := s.CreateRegistrationField(testCtx, &dup); !errors.As(err, &ce) {
		t.Fatalf("duplicate key: %v", err)
	}
	dup.RealmID = sessionsTestOther // the same key in another realm is fine
	if err := s.CreateRegistrationField(testCtx, &dup); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListRegistrationFields(testCtx, sessionsTestRealm, false)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "all fields", all, []*store.RegistrationField{plan, phone})
	enabled, err := s.ListRegistrationFields(testCtx, sessionsTestRealm, true)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "enabled fields", enabled, []*store.RegistrationField{phone})
	plan.Enabled, plan.Label, plan.Options = true, "Your plan", []string{"pro"}
	if err := s.UpdateRegistrationField(testCtx, plan); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRegistrationField(testCtx, sessionsTestRealm, "f2")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "updated field", got, plan)
	if _, err := s.GetRegistrationField(testCtx, sessionsTestOther, "f2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other realm's field: %v", err)
	}
	if err := s.DeleteRegistrationField(testCtx, sessionsTestRealm, "f2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRegistrationField(testCtx, sessionsTestRealm, "f2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	missing := *plan
	if err := s.UpdateRegistrationField(testCtx, &missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a deleted field: %v", err)
	}
}

func testRegistrationModeration(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	if on, err := s.RegistrationModeration(testCtx, sessionsTestRealm); err != nil || on {
		t.Fatalf("unset moderation %v %v", on, err)
	}
	for _, want := range []bool{true, false, true} {
		if err := s.SetRegistrationModeration(testCtx, sessionsTestRealm, want); err != nil {
			t.Fatal(err)
		}
		on, err := s.RegistrationModeration(testCtx, sessionsTestRealm)
		if err != nil || on != want {
			t.Fatalf("moderation %v %v, want %v", on, err, want)
		}
	}
	if on, err := s.RegistrationModeration(testCtx, sessionsTestOther); err != nil || on {
		t.Fatalf("other realm: %v %v", on, err)
	}
	if err := s.SetRegistrationModeration(testCtx, "nope", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown realm: %v", err)
	}
}

func testRegistrationUserState(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	if st, err := s.UserStatus(testCtx, sessionsTestRealm, "alice"); err != nil || st != store.UserActive {
		t.Fatalf("default status %q %v", st, err)
	}
	if err := s.ChangeUserStatus(testCtx, sessionsTestRealm, "alice", store.UserPending, store.UserActive); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("approve of an active user: %v", err)
	}
	if err := s.ChangeUserStatus(testCtx, sessionsTestRealm, "alice", store.UserActive, store.UserPending); err != nil {
		t.Fatal(err)
	}
	pending, err := s.ListUsersByStatus(testCtx, sessionsTestRealm, store.UserPending)
	if err != nil || len(pending) != 1 || pending[0].ID != "alice" {
		t.Fatalf("pending %v %v", pending, err)
	}
	if err := s.ChangeUserStatus(testCtx, sessionsTestRealm, "alice", store.UserPending, store.UserRejected); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.UserStatus(testCtx, sessionsTestRealm, "alice"); st != store.UserRejected {
		t.Fatalf("status %q", st)
	}
	if _, err := s.UserStatus(testCtx, sessionsTestOther, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other realm: %v", err)
	}
	if err := s.SetUserAttributes(testCtx, "alice", map[string]string{"phone": "1", "plan": "pro"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserAttributes(testCtx, "alice", map[string]string{"phone": "2"}); err != nil {
		t.Fatal(err)
	}
	attrs, err := s.UserAttributes(testCtx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "attributes", attrs, map[string]string{"phone": "2", "plan": "pro"})
	bob, err := s.GetUser(testCtx, sessionsTestRealm, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEmailVerified(testCtx, sessionsTestRealm, "bob", bob.Email); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.GetUser(testCtx, sessionsTestRealm, "bob"); !u.EmailVerified {
		t.Fatal("bob not verified")
	}
	if err := s.MarkEmailVerified(testCtx, sessionsTestOther, "bob", bob.Email); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other realm: %v", err)
	}
}
