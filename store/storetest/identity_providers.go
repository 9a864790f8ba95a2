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

// brokerSuite is the conformance tests of federated identities and of the
// sign-ins on their way through an upstream.
func brokerSuite() []subTest {
	return []subTest{
		{"FederatedIdentityLinks", testFederatedIdentityLinks},
		{"FederatedIdentityCascades", testFederatedIdentityCascades},
		{"BrokerLoginTakenOnce", testBrokerLoginTakenOnce},
		{"BrokerPendingLink", testBrokerPendingLink},
		{"BrokerContinuesSignInFlow", testBrokerContinuesSignInFlow},
		{"BrokerSessionFollowsFlow", testBrokerSessionFollowsFlow},
		{"BrokerSessionFollowsSignIn", testBrokerSessionFollowsSignIn},
		{"BrokerLogoutTakenOnce", testBrokerLogoutTakenOnce},
	}
}

const idpTestProviderID = "31111111-0000-4000-8000-000000000001"

// brokerTestFixture is sessionsTestFixture with provider corp in acme.
func brokerTestFixture(t *testing.T, s *store.Store) *store.IdentityProvider {
	t.Helper()
	sessionsTestFixture(t, s)
	return idpTestCreate(t, s, idpTestProvider(idpTestProviderID, sessionsTestRealm, "corp"))
}

func testFederatedIdentityLinks(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	alice := &store.FederatedIdentity{ProviderID: p.ID, UserID: "alice", RealmID: sessionsTestRealm, Subject: "up-1",
		Username: "alice.up", Email: "alice@up.test", Token: `{"access_token":"at"}`, CreatedAt: 5}
	if err := s.CreateFederatedIdentity(testCtx, alice); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "a second user for the same subject", s.CreateFederatedIdentity(testCtx,
		&store.FederatedIdentity{ProviderID: p.ID, UserID: "bob", RealmID: sessionsTestRealm, Subject: "up-1", CreatedAt: 5}))
	mustBeErrConflict(t, "a second subject for the same user", s.CreateFederatedIdentity(testCtx,
		&store.FederatedIdentity{ProviderID: p.ID, UserID: "alice", RealmID: sessionsTestRealm, Subject: "up-2", CreatedAt: 5}))

	alice.Alias = "corp"
	got, err := s.FederatedIdentityBySubject(testCtx, p.ID, "up-1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "link by subject", got, alice)
	got, err = s.FederatedIdentity(testCtx, p.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "link by user", got, alice)
	_, err = s.FederatedIdentityBySubject(testCtx, p.ID, "up-9")
	mustBeErrNotFound(t, "unknown subject", err)

	alice.Username, alice.Email, alice.Token = "alice2", "a2@up.test", ""
	if err := s.UpdateFederatedIdentity(testCtx, alice); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListFederatedIdentities(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "links after update", list, []*store.FederatedIdentity{alice})
	mustBeErrNotFound(t, "unlink another user", s.DeleteFederatedIdentity(testCtx, sessionsTestRealm, "bob", p.ID))
	if err := s.DeleteFederatedIdentity(testCtx, sessionsTestRealm, "alice", p.ID); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "unlink twice", s.DeleteFederatedIdentity(testCtx, sessionsTestRealm, "alice", p.ID))
}

func testFederatedIdentityCascades(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	for _, u := range []string{"alice", "bob"} {
		if err := s.CreateFederatedIdentity(testCtx, &store.FederatedIdentity{ProviderID: p.ID, UserID: u,
			RealmID: sessionsTestRealm, Subject: "up-" + u, CreatedAt: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	_, err := s.FederatedIdentityBySubject(testCtx, p.ID, "up-alice")
	mustBeErrNotFound(t, "link of a deleted user", err)
	if err := s.DeleteIdentityProvider(testCtx, sessionsTestRealm, p.ID); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListFederatedIdentities(testCtx, sessionsTestRealm, "bob")
	if err != nil || len(list) != 0 {
		t.Fatalf("links of a deleted provider: %v %v", list, err)
	}
}

func testBrokerLoginTakenOnce(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("pending"))
	now := sessionsTestNow
	l := &store.BrokerLogin{StateHash: store.HashToken("state"), RealmID: sessionsTestRealm, ProviderID: p.ID,
		BrowserHash: store.HashToken("browser"), Nonce: "nonce", CodeVerifier: "verifier", AuthRequestID: "pending",
		CreatedAt: now, ExpiresAt: now + 600_000}
	if err := s.CreateBrokerLogin(testCtx, l); err != nil {
		t.Fatal(err)
	}
	_, err := s.TakeBrokerLogin(testCtx, sessionsTestOther, store.HashToken("state"), now)
	mustBeErrNotFound(t, "another realm's state", err)
	got, err := s.TakeBrokerLogin(testCtx, sessionsTestRealm, store.HashToken("state"), now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "taken sign-in", got, l)
	_, err = s.TakeBrokerLogin(testCtx, sessionsTestRealm, store.HashToken("state"), now)
	mustBeErrNotFound(t, "a state taken twice", err)

	expired := *l
	expired.StateHash, expired.AuthRequestID = store.HashToken("old"), ""
	if err := s.CreateBrokerLogin(testCtx, &expired); err != nil {
		t.Fatal(err)
	}
	_, err = s.TakeBrokerLogin(testCtx, sessionsTestRealm, store.HashToken("old"), now+600_000)
	mustBeErrNotFound(t, "an expired state", err)
	mustBeErrNotFound(t, "a sign-in for an unknown request", s.CreateBrokerLogin(testCtx, &store.BrokerLogin{
		StateHash: store.HashToken("x"), RealmID: sessionsTestRealm, ProviderID: p.ID, BrowserHash: []byte{1},
		AuthRequestID: "nope", CreatedAt: now, ExpiresAt: now + 1}))

	// The sweep removes what never came back.
	stale := *l
	stale.StateHash = store.HashToken("stale")
	if err := s.CreateBrokerLogin(testCtx, &stale); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpiredBrokerLogins(testCtx, now+600_000); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
}

func testBrokerPendingLink(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("pending"))
	now := sessionsTestNow
	l := &store.BrokerPendingLink{ID: "link-1", RealmID: sessionsTestRealm, ProviderID: p.ID, UserID: "alice",
		AuthRequestID: "pending", BrowserHash: store.HashToken("browser"), Identity: `{"subject":"up-1"}`,
		CreatedAt: now, ExpiresAt: now + 600_000}
	if err := s.CreateBrokerPendingLink(testCtx, l); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBrokerPendingLink(testCtx, sessionsTestRealm, "link-1", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "pending link", got, l)
	_, err = s.GetBrokerPendingLink(testCtx, sessionsTestRealm, "link-1", now+600_000)
	mustBeErrNotFound(t, "an expired link", err)
	_, err = s.GetBrokerPendingLink(testCtx, sessionsTestOther, "link-1", now)
	mustBeErrNotFound(t, "another realm's link", err)
	if err := s.DeleteBrokerPendingLink(testCtx, sessionsTestRealm, "link-1"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "a link confirmed twice", s.DeleteBrokerPendingLink(testCtx, sessionsTestRealm, "link-1"))
}

// A sign-in through a provider and a link waiting for its confirmation
// may continue a sign-in flow instead of an authorization request, and go
// with the flow; a link continues exactly one of them.
func testBrokerContinuesSignInFlow(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	signInFlowMustCreate(t, s, signInFlowTest("flow-1"))
	now := sessionsTestNow
	l := &store.BrokerLogin{StateHash: store.HashToken("state"), RealmID: sessionsTestRealm, ProviderID: p.ID,
		BrowserHash: store.HashToken("browser"), Nonce: "nonce", CodeVerifier: "verifier", SignInFlowID: "flow-1",
		CreatedAt: now, ExpiresAt: now + 600_000}
	pl := &store.BrokerPendingLink{ID: "link-1", RealmID: sessionsTestRealm, ProviderID: p.ID, UserID: "alice",
		SignInFlowID: "flow-1", BrowserHash: store.HashToken("browser"), Identity: `{"subject":"up-1"}`,
		CreatedAt: now, ExpiresAt: now + 600_000}
	if err := s.CreateBrokerLogin(testCtx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBrokerPendingLink(testCtx, pl); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBrokerPendingLink(testCtx, sessionsTestRealm, "link-1", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "pending link of a flow", got, pl)
	taken, err := s.TakeBrokerLogin(testCtx, sessionsTestRealm, store.HashToken("state"), now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "sign-in of a flow", taken, l)

	if err := s.CreateBrokerLogin(testCtx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSignInFlow(testCtx, sessionsTestRealm, "flow-1"); err != nil {
		t.Fatal(err)
	}
	_, err = s.TakeBrokerLogin(testCtx, sessionsTestRealm, store.HashToken("state"), now)
	mustBeErrNotFound(t, "the sign-in of a flow gone", err)
	_, err = s.GetBrokerPendingLink(testCtx, sessionsTestRealm, "link-1", now)
	mustBeErrNotFound(t, "the link of a flow gone", err)

	neither := *pl
	neither.ID, neither.SignInFlowID = "link-2", ""
	if err := s.CreateBrokerPendingLink(testCtx, &neither); err == nil {
		t.Fatal("a link that continues nothing was stored")
	}
}

// The upstream ID token of a flow's sign-in outlives the flow, which ends
// before its requester lands the session, and goes to that session; one
// no session took is swept at its expiry.
func testBrokerSessionFollowsFlow(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	now := sessionsTestNow
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso-1", sessionsTestRealm, "alice", now, now+3_600_000))
	for _, tok := range []string{"first.id.token", "second.id.token"} { // a later attempt replaces
		if err := s.PutBrokerFlowSignIn(testCtx, "flow-1", p.ID, tok, now+600_000); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.BindBrokerFlowSession(testCtx, "flow-1", "sso-1"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBrokerSession(testCtx, "sso-1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "session's upstream", got, &store.BrokerSession{ProviderID: p.ID, IDToken: "second.id.token"})
	// Taken once: a second binding finds nothing and changes nothing.
	if err := s.BindBrokerFlowSession(testCtx, "flow-1", "sso-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBrokerFlowSignIn(testCtx, "flow-2", p.ID, "left.id.token", now+600_000); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpiredBrokerLogins(testCtx, now+600_000); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if err := s.BindBrokerFlowSession(testCtx, "flow-2", "sso-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetBrokerSession(testCtx, "sso-1"); err != nil || got.IDToken != "second.id.token" {
		t.Fatalf("after a swept token's binding: %+v, %v", got, err)
	}
}

// The upstream ID token of a sign-in goes, sealed, from its request to the
// session the sign-in ends in, and goes with the session; a sign-in
// without one leaves a session's as it was.
func testBrokerSessionFollowsSignIn(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	authRequestsTestMustCreate(t, s, authRequestsTestPending("pending"), authRequestsTestPending("plain"))
	now := sessionsTestNow
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso-1", sessionsTestRealm, "alice", now, now+3_600_000))
	mustBeErrNotFound(t, "a session signed in otherwise", func() error { _, err := s.GetBrokerSession(testCtx, "sso-1"); return err }())
	for _, tok := range []string{"first.id.token", "second.id.token"} { // a later attempt replaces
		if err := s.PutBrokerSignIn(testCtx, "pending", p.ID, tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.BindBrokerSession(testCtx, "plain", "sso-1"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "bound from a request without a token", func() error { _, err := s.GetBrokerSession(testCtx, "sso-1"); return err }())
	if err := s.BindBrokerSession(testCtx, "pending", "sso-1"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBrokerSession(testCtx, "sso-1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "broker session", got, &store.BrokerSession{ProviderID: p.ID, IDToken: "second.id.token"})
	// Taken by the binding: a second binding finds nothing, and the
	// session keeps its token.
	if err := s.BindBrokerSession(testCtx, "pending", "sso-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetBrokerSession(testCtx, "sso-1"); err != nil || got.IDToken != "second.id.token" {
		t.Fatalf("after a second binding: %+v %v", got, err)
	}
	if _, err := s.DeleteSession(testCtx, sessionsTestRealm, "sso-1", store.SessionSSO, now); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "an ended session's", func() error { _, err := s.GetBrokerSession(testCtx, "sso-1"); return err }())
	mustBeErrNotFound(t, "a sign-in of an unknown request", s.PutBrokerSignIn(testCtx, "nope", p.ID, "t"))
}

func testBrokerLogoutTakenOnce(t *testing.T, s *store.Store) {
	p := brokerTestFixture(t, s)
	now := sessionsTestNow
	l := &store.BrokerLogout{StateHash: store.HashToken("state"), RealmID: sessionsTestRealm, ProviderID: p.ID,
		Redirect: "https://app.example.test/bye?state=s", CreatedAt: now, ExpiresAt: now + 600_000}
	if err := s.CreateBrokerLogout(testCtx, l); err != nil {
		t.Fatal(err)
	}
	_, err := s.TakeBrokerLogout(testCtx, sessionsTestOther, store.HashToken("state"), now)
	mustBeErrNotFound(t, "another realm's state", err)
	got, err := s.TakeBrokerLogout(testCtx, sessionsTestRealm, store.HashToken("state"), now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "taken sign-out", got, l)
	_, err = s.TakeBrokerLogout(testCtx, sessionsTestRealm, store.HashToken("state"), now)
	mustBeErrNotFound(t, "a state taken twice", err)

	expired := *l
	expired.StateHash = store.HashToken("old")
	if err := s.CreateBrokerLogout(testCtx, &expired); err != nil {
		t.Fatal(err)
	}
	_, err = s.TakeBrokerLogout(testCtx, sessionsTestRealm, store.HashToken("old"), now+600_000)
	mustBeErrNotFound(t, "an expired state", err)
	stale := *l
	stale.StateHash = store.HashToken("stale")
	if err := s.CreateBrokerLogout(testCtx, &stale); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpiredBrokerLogins(testCtx, now+600_000); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
}
