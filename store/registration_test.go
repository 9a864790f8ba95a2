package store

import (
	"errors"
	"testing"
)

// registrationSuite is the conformance tests of registration fields,
// settings, user attributes and statuses.
func registrationSuite() []suiteTest {
	return []suiteTest{
		{"RegistrationFields", suiteRegistrationFields},
		{"RegistrationModeration", suiteRegistrationModeration},
		{"RegistrationUserState", suiteRegistrationUserState},
	}
}

func suiteRegistrationFields(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	phone := &RegistrationField{ID: "f1", RealmID: sessionsTestRealm, Key: "phone", Label: "Phone", Type: "tel",
		Required: true, Pattern: `^\+?[0-9 ]+$`, Options: []string{}, Enabled: true, Position: 2, CreatedAt: 5}
	plan := &RegistrationField{ID: "f2", RealmID: sessionsTestRealm, Key: "plan", Label: "Plan", Type: "select",
		Options: []string{"free", "pro"}, Enabled: false, Position: 1, CreatedAt: 6}
	for _, f := range []*RegistrationField{phone, plan} {
		if err := s.CreateRegistrationField(suiteCtx, f); err != nil {
			t.Fatal(err)
		}
	}
	dup := *phone
	dup.ID = "f3"
	var ce *ConflictError
	if err := s.CreateRegistrationField(suiteCtx, &dup); !errors.As(err, &ce) {
		t.Fatalf("duplicate key: %v", err)
	}
	dup.RealmID = sessionsTestOther // the same key in another realm is fine
	if err := s.CreateRegistrationField(suiteCtx, &dup); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListRegistrationFields(suiteCtx, sessionsTestRealm, false)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "all fields", all, []*RegistrationField{plan, phone})
	enabled, err := s.ListRegistrationFields(suiteCtx, sessionsTestRealm, true)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "enabled fields", enabled, []*RegistrationField{phone})
	plan.Enabled, plan.Label, plan.Options = true, "Your plan", []string{"pro"}
	if err := s.UpdateRegistrationField(suiteCtx, plan); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRegistrationField(suiteCtx, sessionsTestRealm, "f2")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "updated field", got, plan)
	if _, err := s.GetRegistrationField(suiteCtx, sessionsTestOther, "f2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other realm's field: %v", err)
	}
	if err := s.DeleteRegistrationField(suiteCtx, sessionsTestRealm, "f2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRegistrationField(suiteCtx, sessionsTestRealm, "f2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	missing := *plan
	if err := s.UpdateRegistrationField(suiteCtx, &missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a deleted field: %v", err)
	}
}

func suiteRegistrationModeration(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	if on, err := s.RegistrationModeration(suiteCtx, sessionsTestRealm); err != nil || on {
		t.Fatalf("unset moderation %v %v", on, err)
	}
	for _, want := range []bool{true, false, true} {
		if err := s.SetRegistrationModeration(suiteCtx, sessionsTestRealm, want); err != nil {
			t.Fatal(err)
		}
		on, err := s.RegistrationModeration(suiteCtx, sessionsTestRealm)
		if err != nil || on != want {
			t.Fatalf("moderation %v %v, want %v", on, err, want)
		}
	}
	if on, err := s.RegistrationModeration(suiteCtx, sessionsTestOther); err != nil || on {
		t.Fatalf("other realm: %v %v", on, err)
	}
	if err := s.SetRegistrationModeration(suiteCtx, "nope", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown realm: %v", err)
	}
}

func suiteRegistrationUserState(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	if st, err := s.UserStatus(suiteCtx, sessionsTestRealm, "alice"); err != nil || st != UserActive {
		t.Fatalf("default status %q %v", st, err)
	}
	if err := s.ChangeUserStatus(suiteCtx, sessionsTestRealm, "alice", UserPending, UserActive); !errors.Is(err, ErrNotFound) {
		t.Fatalf("approve of an active user: %v", err)
	}
	if err := s.ChangeUserStatus(suiteCtx, sessionsTestRealm, "alice", UserActive, UserPending); err != nil {
		t.Fatal(err)
	}
	pending, err := s.ListUsersByStatus(suiteCtx, sessionsTestRealm, UserPending)
	if err != nil || len(pending) != 1 || pending[0].ID != "alice" {
		t.Fatalf("pending %v %v", pending, err)
	}
	if err := s.ChangeUserStatus(suiteCtx, sessionsTestRealm, "alice", UserPending, UserRejected); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.UserStatus(suiteCtx, sessionsTestRealm, "alice"); st != UserRejected {
		t.Fatalf("status %q", st)
	}
	if _, err := s.UserStatus(suiteCtx, sessionsTestOther, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other realm: %v", err)
	}
	if err := s.SetUserAttributes(suiteCtx, "alice", map[string]string{"phone": "1", "plan": "pro"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserAttributes(suiteCtx, "alice", map[string]string{"phone": "2"}); err != nil {
		t.Fatal(err)
	}
	attrs, err := s.UserAttributes(suiteCtx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "attributes", attrs, map[string]string{"phone": "2", "plan": "pro"})
	bob, err := s.GetUser(suiteCtx, sessionsTestRealm, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEmailVerified(suiteCtx, sessionsTestRealm, "bob", bob.Email); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.GetUser(suiteCtx, sessionsTestRealm, "bob"); !u.EmailVerified {
		t.Fatal("bob not verified")
	}
	if err := s.MarkEmailVerified(suiteCtx, sessionsTestOther, "bob", bob.Email); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other realm: %v", err)
	}
}
