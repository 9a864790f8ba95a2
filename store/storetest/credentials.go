package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// credentialsSuite is the conformance tests of second factors: TOTP
// credentials, recovery codes, and the second step of a sign-in.
func credentialsSuite() []subTest {
	return []subTest{
		{"CredentialEnrol", testCredentialEnrol},
		{"CredentialStepOnce", testCredentialStepOnce},
		{"RecoveryCodeOnce", testRecoveryCodeOnce},
		{"CredentialDelete", testCredentialDelete},
		{"CredentialCascade", testCredentialCascade},
		{"AuthRequestStep", testAuthRequestStep},
		{"FactorsSurviveReplacement", testFactorsSurviveReplacement},
	}
}

// credentialsTestBegin starts a TOTP enrolment of user in acme.
func credentialsTestBegin(t *testing.T, s *store.Store, id, user, secret string) *store.Credential {
	t.Helper()
	c := &store.Credential{ID: id, RealmID: sessionsTestRealm, UserID: user, Type: store.CredentialTOTP, Label: "phone",
		Secret: []byte(secret), CreatedAt: sessionsTestNow}
	if err := s.BeginCredential(testCtx, c); err != nil {
		t.Fatalf("begin credential %s: %v", id, err)
	}
	return c
}

func credentialsTestHashes(codes ...string) [][]byte {
	var out [][]byte
	for _, c := range codes {
		out = append(out, store.HashToken(c))
	}
	return out
}

// credentialsTestEnrolled gives user a confirmed TOTP credential and the
// recovery codes r1 and r2 (prefixed with the user).
func credentialsTestEnrolled(t *testing.T, s *store.Store, id, user string) *store.Credential {
	t.Helper()
	c := credentialsTestBegin(t, s, id, user, "secret-"+user)
	if err := s.ConfirmCredential(testCtx, sessionsTestRealm, id, 100, credentialsTestHashes(user+"-r1", user+"-r2"), sessionsTestNow+1); err != nil {
		t.Fatalf("confirm credential %s: %v", id, err)
	}
	return c
}

// credentialsTestNone fails unless user has no second factor of any kind,
// pending or confirmed, and no recovery code.
func credentialsTestNone(t *testing.T, s *store.Store, realm, user string) {
	t.Helper()
	if list, err := s.Credentials(testCtx, realm, user); err != nil || len(list) != 0 {
		t.Fatalf("credentials of %s: %v, %v; want none", user, list, err)
	}
	if c, err := s.PendingCredential(testCtx, realm, user, store.CredentialTOTP); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pending credential of %s: %+v, %v; want ErrNotFound", user, c, err)
	}
	if n, err := s.RecoveryCodesLeft(testCtx, realm, user); err != nil || n != 0 {
		t.Fatalf("recovery codes of %s: %d, %v; want none", user, n, err)
	}
}

func testCredentialEnrol(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	first := credentialsTestBegin(t, s, "c1", "alice", "first-secret")
	got, err := s.PendingCredential(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "pending credential", got, first)
	if list, err := s.Credentials(testCtx, sessionsTestRealm, "alice"); err != nil || len(list) != 0 {
		t.Fatalf("confirmed credentials while pending: %v, %v", list, err)
	}
	if types, err := s.CredentialTypes(testCtx, sessionsTestRealm, "alice"); err != nil || len(types) != 0 {
		t.Fatalf("credential types while pending: %v, %v", types, err)
	}
	// A new enrolment replaces the pending one.
	second := credentialsTestBegin(t, s, "c2", "alice", "second-secret")
	if got, err = s.PendingCredential(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP); err != nil || got.ID != "c2" {
		t.Fatalf("pending after a second begin: %+v, %v", got, err)
	}
	mustBeErrNotFound(t, "confirm the replaced enrolment", s.ConfirmCredential(testCtx, sessionsTestRealm, "c1", 5, nil, sessionsTestNow))
	mustBeErrNotFound(t, "confirm in another realm", s.ConfirmCredential(testCtx, sessionsTestOther, "c2", 5, nil, sessionsTestNow))
	if err := s.ConfirmCredential(testCtx, sessionsTestRealm, "c2", 5, [][]byte{[]byte("raw")}, sessionsTestNow); err == nil {
		t.Fatal("an unhashed recovery code was accepted")
	}
	if err := s.ConfirmCredential(testCtx, sessionsTestRealm, "c2", 5, credentialsTestHashes("a", "b"), sessionsTestNow+7); err != nil {
		t.Fatal(err)
	}
	want := *second
	want.Confirmed, want.LastUsedStep, want.CreatedAt = true, 5, sessionsTestNow+7
	list, err := s.Credentials(testCtx, sessionsTestRealm, "alice")
	if err != nil || len(list) != 1 {
		t.Fatalf("confirmed credentials: %v, %v", list, err)
	}
	mustEqual(t, "confirmed credential", list[0], &want)
	if types, err := s.CredentialTypes(testCtx, sessionsTestRealm, "alice"); err != nil || len(types) != 1 || types[0] != store.CredentialTOTP {
		t.Fatalf("credential types: %v, %v", types, err)
	}
	if types, err := s.CredentialTypes(testCtx, sessionsTestOther, "alice"); err != nil || len(types) != 0 {
		t.Fatalf("credential types seen from another realm: %v, %v", types, err)
	}
	if _, err := s.PendingCredential(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pending after confirmation: %v, want ErrNotFound", err)
	}
	mustBeErrNotFound(t, "confirm twice", s.ConfirmCredential(testCtx, sessionsTestRealm, "c2", 6, nil, sessionsTestNow))
	// One TOTP authenticator per user: a second enrolment can begin but
	// not be confirmed while the first stands.
	credentialsTestBegin(t, s, "c3", "alice", "third-secret")
	mustBeErrConflict(t, "a second TOTP credential", s.ConfirmCredential(testCtx, sessionsTestRealm, "c3", 9, nil, sessionsTestNow))
	// Unknown users and users of another realm have no credentials.
	if err := s.BeginCredential(testCtx, &store.Credential{ID: "c4", RealmID: sessionsTestRealm, UserID: "carol",
		Type: store.CredentialTOTP, Secret: []byte("x")}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("begin for a user of another realm: %v, want ErrNotFound", err)
	}
	if list, err := s.Credentials(testCtx, sessionsTestOther, "alice"); err != nil || len(list) != 0 {
		t.Fatalf("alice's credentials seen from another realm: %v, %v", list, err)
	}
}

func testCredentialStepOnce(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	credentialsTestEnrolled(t, s, "c1", "alice") // last used step 100
	credentialsTestBegin(t, s, "p1", "bob", "pending")
	for _, tc := range []struct {
		name, realm, id string
		step            int64
		want            error
	}{
		{"the confirming step again", sessionsTestRealm, "c1", 100, store.ErrStepUsed},
		{"an earlier step", sessionsTestRealm, "c1", 99, store.ErrStepUsed},
		{"the next step", sessionsTestRealm, "c1", 101, nil},
		{"the same step replayed", sessionsTestRealm, "c1", 101, store.ErrStepUsed},
		{"a later step", sessionsTestRealm, "c1", 103, nil},
		{"a step skipped over", sessionsTestRealm, "c1", 102, store.ErrStepUsed},
		{"another realm", sessionsTestOther, "c1", 200, store.ErrStepUsed},
		{"an unconfirmed credential", sessionsTestRealm, "p1", 200, store.ErrStepUsed},
	} {
		if err := s.UseCredentialStep(testCtx, tc.realm, tc.id, tc.step); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	list, err := s.Credentials(testCtx, sessionsTestRealm, "alice")
	if err != nil || len(list) != 1 || list[0].LastUsedStep != 103 {
		t.Fatalf("credential after use: %+v, %v; want last used step 103", list, err)
	}
}

func testRecoveryCodeOnce(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	credentialsTestEnrolled(t, s, "c1", "alice")
	credentialsTestEnrolled(t, s, "c2", "bob")
	if n, err := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); err != nil || n != 2 {
		t.Fatalf("recovery codes left: %d, %v; want 2", n, err)
	}
	if err := s.UseRecoveryCode(testCtx, sessionsTestRealm, "alice", store.HashToken("alice-r1"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, realm, user, code string }{
		{"used twice", sessionsTestRealm, "alice", "alice-r1"},
		{"another user's code", sessionsTestRealm, "alice", "bob-r1"},
		{"unknown code", sessionsTestRealm, "alice", "nope"},
		{"another realm", sessionsTestOther, "alice", "alice-r2"},
	} {
		if err := s.UseRecoveryCode(testCtx, tc.realm, tc.user, store.HashToken(tc.code), sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}
	if n, err := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); err != nil || n != 1 {
		t.Fatalf("recovery codes left after one use: %d, %v; want 1", n, err)
	}
	// A new enrolment brings a new set; the old codes stop working.
	if _, err := s.DeleteCredentials(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP); err != nil {
		t.Fatal(err)
	}
	credentialsTestBegin(t, s, "c3", "alice", "new")
	if err := s.ConfirmCredential(testCtx, sessionsTestRealm, "c3", 1, credentialsTestHashes("n1", "n2", "n3"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "a code of the old set", s.UseRecoveryCode(testCtx, sessionsTestRealm, "alice", store.HashToken("alice-r2"), sessionsTestNow))
	if n, err := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); err != nil || n != 3 {
		t.Fatalf("recovery codes of the new set: %d, %v; want 3", n, err)
	}
}

func testCredentialDelete(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	credentialsTestEnrolled(t, s, "c1", "alice")
	credentialsTestBegin(t, s, "p1", "alice", "pending")
	// Another type of factor, as WebAuthn keys will be.
	key := &store.Credential{ID: "k1", RealmID: sessionsTestRealm, UserID: "alice", Type: "webauthn", Secret: []byte("pk"), CreatedAt: 1}
	if err := s.BeginCredential(testCtx, key); err != nil {
		t.Fatal(err)
	}
	if err := s.ConfirmCredential(testCtx, sessionsTestRealm, "k1", 0, nil, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	credentialsTestEnrolled(t, s, "c2", "bob")

	n, err := s.DeleteCredentials(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP)
	if err != nil || n != 1 {
		t.Fatalf("delete alice's TOTP: %d, %v; want 1", n, err)
	}
	list, err := s.Credentials(testCtx, sessionsTestRealm, "alice")
	if err != nil || len(list) != 1 || list[0].ID != "k1" {
		t.Fatalf("credentials left: %+v, %v; want only the other factor", list, err)
	}
	if _, err := s.PendingCredential(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pending TOTP after removal: %v, want it gone", err)
	}
	// Recovery codes stay while a factor remains, and go with the last.
	if left, _ := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); left != 2 {
		t.Fatalf("recovery codes while a factor remains: %d, want 2", left)
	}
	if n, err := s.DeleteCredentials(testCtx, sessionsTestRealm, "alice", store.CredentialTOTP); err != nil || n != 0 {
		t.Fatalf("delete again: %d, %v; want 0", n, err)
	}
	if n, err := s.DeleteCredentials(testCtx, sessionsTestOther, "alice"); err != nil || n != 0 {
		t.Fatalf("delete from another realm: %d, %v; want 0", n, err)
	}
	if n, err := s.DeleteCredentials(testCtx, sessionsTestRealm, "alice"); err != nil || n != 1 {
		t.Fatalf("delete every factor: %d, %v; want 1", n, err)
	}
	if left, _ := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "alice"); left != 0 {
		t.Fatalf("recovery codes without a factor: %d, want 0", left)
	}
	// Bob's are untouched.
	if list, err := s.Credentials(testCtx, sessionsTestRealm, "bob"); err != nil || len(list) != 1 {
		t.Fatalf("bob's credentials: %v, %v", list, err)
	}
	if left, _ := s.RecoveryCodesLeft(testCtx, sessionsTestRealm, "bob"); left != 2 {
		t.Fatalf("bob's recovery codes: %d, want 2", left)
	}
}

func testCredentialCascade(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	credentialsTestEnrolled(t, s, "c1", "alice")
	credentialsTestEnrolled(t, s, "c2", "bob")
	credentialsTestBegin(t, s, "p1", "bob", "pending")
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	// A new user with the deleted one's ID inherits nothing of hers.
	mustCreateUser(t, s, testUser("alice", sessionsTestRealm, "alice", ""))
	credentialsTestNone(t, s, sessionsTestRealm, "alice")
	if list, err := s.Credentials(testCtx, sessionsTestRealm, "bob"); err != nil || len(list) != 1 {
		t.Fatalf("bob's credentials after alice's deletion: %v, %v", list, err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	// Nor does a realm with the deleted one's ID, or its users.
	mustCreateRealm(t, s, testRealm(sessionsTestRealm, "acme", 3000))
	for _, user := range []string{"alice", "bob"} {
		mustCreateUser(t, s, testUser(user, sessionsTestRealm, user, ""))
		credentialsTestNone(t, s, sessionsTestRealm, user)
	}
}

func testAuthRequestStep(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("ar1"), authRequestsTestPending("ar2"))
	step := &store.AuthRequestStep{AuthRequestID: "ar1", UserID: "alice", Pending: store.StepTOTP, BrowserHash: store.HashToken("cookie"),
		PasswordAt: sessionsTestNow}
	for _, tc := range []struct {
		name  string
		realm string
		st    store.AuthRequestStep
		now   int64
	}{
		{"unknown request", sessionsTestRealm, store.AuthRequestStep{AuthRequestID: "nope", UserID: "alice"}, sessionsTestNow},
		{"request of another realm", sessionsTestOther, store.AuthRequestStep{AuthRequestID: "ar1", UserID: "carol"}, sessionsTestNow},
		{"user of another realm", sessionsTestRealm, store.AuthRequestStep{AuthRequestID: "ar1", UserID: "carol"}, sessionsTestNow},
		{"expired request", sessionsTestRealm, store.AuthRequestStep{AuthRequestID: "ar1", UserID: "alice"}, sessionsTestNow + sessionsTestHour},
	} {
		tc.st.Pending, tc.st.BrowserHash = store.StepTOTP, store.HashToken("cookie")
		if err := s.CreateAuthRequestStep(testCtx, tc.realm, &tc.st, tc.now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}
	if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, step, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAuthRequestStep(testCtx, sessionsTestRealm, "ar1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "step", got, step)
	if _, err := s.GetAuthRequestStep(testCtx, sessionsTestOther, "ar1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("step seen from another realm: %v", err)
	}
	// A second password for the same request replaces the step.
	bob := &store.AuthRequestStep{AuthRequestID: "ar1", UserID: "bob", Pending: store.StepTOTPSetup, BrowserHash: store.HashToken("c2"), PasswordAt: sessionsTestNow + 1}
	if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, bob, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAuthRequestStep(testCtx, sessionsTestRealm, "ar1"); got.UserID != "bob" {
		t.Fatalf("step after a second password: %+v", got)
	}
	mustBeErrNotFound(t, "advance from the wrong state", s.AdvanceAuthRequestStep(testCtx, "ar1", store.StepTOTP, store.StepRecoveryCodes))
	if err := s.AdvanceAuthRequestStep(testCtx, "ar1", store.StepTOTPSetup, store.StepRecoveryCodes); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "complete from the wrong state", s.CompleteAuthRequestStep(testCtx, "ar1", store.StepTOTPSetup))
	if err := s.CompleteAuthRequestStep(testCtx, "ar1", store.StepRecoveryCodes); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "complete twice", s.CompleteAuthRequestStep(testCtx, "ar1", store.StepRecoveryCodes))
	// The step goes with its request.
	step.AuthRequestID = "ar2"
	if err := s.CreateAuthRequestStep(testCtx, sessionsTestRealm, step, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAuthRequest(testCtx, sessionsTestRealm, "ar2"); err != nil {
		t.Fatal(err)
	}
	// Neither the completed step nor that of the deleted request is left:
	// a request made again with the same ID starts without one.
	authRequestsTestMustCreate(t, s, authRequestsTestPending("ar2"))
	for _, id := range []string{"ar1", "ar2"} {
		if st, err := s.GetAuthRequestStep(testCtx, sessionsTestRealm, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("step of %s left: %+v, %v", id, st, err)
		}
	}
}

func testFactorsSurviveReplacement(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	alice := credentialsTestEnrolled(t, s, "c1", "alice")
	credentialsTestEnrolled(t, s, "c2", "bob")
	if err := s.UseRecoveryCode(testCtx, sessionsTestRealm, "alice", store.HashToken("alice-r1"), sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotFactors(testCtx, sessionsTestRealm)
	if err != nil {
		t.Fatal(err)
	}
	// The realm is replaced by one with a new ID, where alice keeps her ID
	// and bob does not come back.
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	const newRealm = "33333333-3333-4333-8333-333333333333"
	mustCreateRealm(t, s, testRealm(newRealm, "acme", 3000))
	mustCreateUser(t, s, testUser("alice", newRealm, "alice", ""))
	mustCreateUser(t, s, testUser("bob-new", newRealm, "bob", ""))
	if err := s.RestoreFactors(testCtx, newRealm, snap); err != nil {
		t.Fatal(err)
	}
	list, err := s.Credentials(testCtx, newRealm, "alice")
	if err != nil || len(list) != 1 {
		t.Fatalf("alice's credentials after the replacement: %v, %v", list, err)
	}
	want := *alice
	want.RealmID, want.Confirmed, want.LastUsedStep, want.CreatedAt = newRealm, true, 100, sessionsTestNow+1
	mustEqual(t, "restored credential", list[0], &want)
	if n, err := s.RecoveryCodesLeft(testCtx, newRealm, "alice"); err != nil || n != 1 {
		t.Fatalf("alice's recovery codes left: %d, %v; want 1 (the used one stays used)", n, err)
	}
	// No one else has a factor, in the new realm, the old or another.
	credentialsTestNone(t, s, newRealm, "bob-new")
	credentialsTestNone(t, s, newRealm, "bob")
	credentialsTestNone(t, s, sessionsTestRealm, "alice")
	credentialsTestNone(t, s, sessionsTestRealm, "bob")
	credentialsTestNone(t, s, sessionsTestOther, "carol")
}
