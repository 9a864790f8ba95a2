// Package storetest is the conformance suite of package store: the named
// tests that every backend of the store passes, each run against a fresh,
// empty store from the backend's factory, in the manner of dex's
// storage/conformance. The tests see the store through its exported API
// only; what only a backend's own files can show (how secrets sit in the
// file, its pragmas, its migrations of older schemas) is tested beside
// that backend.
package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// subTest is one conformance test: it gets a fresh, empty store.
type subTest struct {
	name string
	run  func(t *testing.T, s *store.Store)
}

// Run runs every test of the store's API against stores from newStore.
// Each area of the store adds its tests from its own file.
func Run(t *testing.T, newStore func(t *testing.T) *store.Store) {
	runTests(t, newStore, slices.Concat(realmSuite(), userSuite(), adminSuite(), clientSuite(), roleSuite(), groupSuite(),
		scopeSuite(), eventSuite(), sessionSuite(), keySuite(), deviceSuite(), authRequestSuite(), logoutSuite(), outboxSuite(),
		actionTokenSuite(), recoverySuite(), registrationSuite(), pendingLoginSuite(), accountSuite(), loginFailuresSuite(),
		passwordHistorySuite(), credentialsSuite(), webauthnSuite(), bulkSuite(), adminLoginFailureSuite(), throttleFailureSuite(), impersonationSuite(), webhookSuite(), auditStreamSuite(),
		accessTokenSuite(), samlSuite(), identityProviderSuite(), federationSuite(), scimTokenSuite(), nhiSuite(), organizationSuite(), scimResourceSuite(), scimMappingSuite(), customAttributeSuite(), brokerSuite(), authFlowSuite(), signInFlowSuite(), signInStepSuite(), pluginSuite(), riskSuite(), sessionRiskSuite(), policySuite(), themeSuite(), setupSuite()))
}

// RunTransactions runs the tests of transactions and of concurrent
// writers against stores from newStore: what Tx promises, and that writers
// racing on the same rows leave them as one writer after the other would.
func RunTransactions(t *testing.T, newStore func(t *testing.T) *store.Store) {
	runTests(t, newStore, transactionSuite())
}

func runTests(t *testing.T, newStore func(t *testing.T) *store.Store, tests []subTest) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

var testCtx = context.Background()

// testRealm is a realm with every field set away from its zero value.
func testRealm(id, name string, createdAt int64) *store.Realm {
	return &store.Realm{
		ID: id, Name: name, DisplayName: "Display " + name, Enabled: true,
		AccessTokenLifespan: 300, RefreshTokenLifespan: 1800, OfflineTokenLifespan: 2592000,
		SMTPHost: "smtp." + name + ".test", SMTPPort: 587, SMTPUser: "mailer", SMTPPassword: "smtp-pw-" + name,
		SMTPFrom: "noreply@" + name + ".test", SMTPSecure: true,
		EmailProvider: "sendgrid", EmailProviderConfig: map[string]any{"apiKey": "key-" + name, "region": "eu", "retries": 3.0},
		PasswordMinLength: 10, PasswordRequireUppercase: true, PasswordRequireLowercase: true,
		PasswordRequireDigits: true, PasswordRequireSpecialChars: true, PasswordHistoryCount: 2,
		PasswordMaxAgeDays: 90, BruteForceEnabled: true, MaxLoginFailures: 5, LockoutDuration: 900,
		FailureResetTime: 43200, PermanentLockoutAfter: 10, RegistrationAllowed: true,
		RequireEmailVerification: true, MFARequired: true, EventsEnabled: true, EventsExpiration: 3600,
		EnabledEventTypes: []string{"LOGIN", "REFRESH_TOKEN"}, AdminEventsEnabled: true, ThemeName: "idenplane-dark",
		Theme:      map[string]any{"primaryColor": "#112233", "logoUrl": "https://" + name + ".test/logo.png"},
		LoginTheme: "high-contrast", AccountTheme: "idenplane", EmailTheme: "idenplane-dark",
		DefaultLocale: "fr", SupportedLocales: []string{"fr", "de"}, TermsText: "The terms of " + name + ".", TermsVersion: "2026-01",
		CreatedAt: createdAt,
	}
}

func testUser(id, realmID, username, email string) *store.User {
	return &store.User{
		ID: id, RealmID: realmID, Username: username, Email: email, FirstName: "First " + username,
		LastName: "Last", Enabled: true, CreatedAt: 1_700_000_000_000,
	}
}

func mustCreateRealm(t *testing.T, s *store.Store, r *store.Realm) *store.Realm {
	t.Helper()
	if err := s.CreateRealm(testCtx, r); err != nil {
		t.Fatalf("create realm %s: %v", r.Name, err)
	}
	return r
}

func mustCreateUser(t *testing.T, s *store.Store, u *store.User) *store.User {
	t.Helper()
	if err := s.CreateUser(testCtx, u); err != nil {
		t.Fatalf("create user %s: %v", u.Username, err)
	}
	return u
}

func mustEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func mustBeErrConflict(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("%s: %v, want ErrConflict", what, err)
	}
}

func mustBeErrNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: %v, want ErrNotFound", what, err)
	}
}
