package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// authFlowSuite is the conformance tests of the authentication flows and
// their bindings to clients.
func authFlowSuite() []subTest {
	return []subTest{
		{"AuthFlowCRUD", testAuthFlowCRUD},
		{"AuthFlowBindings", testAuthFlowBindings},
		{"AuthFlowBindingsEndWithTheirClient", testAuthFlowBindingsEndWithTheirClient},
	}
}

func authFlowTest(n int, realmID, alias string) *store.AuthFlow {
	return &store.AuthFlow{ID: orgTestID(n), RealmID: realmID, Alias: alias, Description: "about " + alias,
		Usage: "browser", Steps: `[{"kind":"username-password","requirement":"required"}]`, BuiltIn: true,
		CreatedAt: 100, UpdatedAt: 200}
}

func authFlowMustCreate(t *testing.T, s *store.Store, f *store.AuthFlow) *store.AuthFlow {
	t.Helper()
	if err := s.CreateAuthFlow(testCtx, f); err != nil {
		t.Fatalf("create flow %s: %v", f.Alias, err)
	}
	return f
}

func testAuthFlowCRUD(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	f := authFlowMustCreate(t, s, authFlowTest(31, orgTestRealm, "strict"))
	got, err := s.GetAuthFlow(testCtx, orgTestRealm, f.ID)
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("read back %+v %v, want %+v", got, err, f)
	}
	if got, err := s.GetAuthFlowByAlias(testCtx, orgTestRealm, "strict"); err != nil || got.ID != f.ID {
		t.Errorf("by alias: %+v %v", got, err)
	}
	dup := authFlowTest(32, orgTestRealm, "strict")
	var ce *store.ConflictError
	if err := s.CreateAuthFlow(testCtx, dup); !errors.As(err, &ce) || ce.Column != "alias" {
		t.Errorf("duplicate alias: %v", err)
	}
	dup.RealmID = orgTestRealm2
	authFlowMustCreate(t, s, dup)
	if _, err := s.GetAuthFlow(testCtx, orgTestRealm2, f.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another realm's flow: %v", err)
	}
	other := authFlowMustCreate(t, s, authFlowTest(33, orgTestRealm, "other"))
	other.Alias = "strict"
	if err := s.UpdateAuthFlow(testCtx, other); !errors.As(err, &ce) || ce.Column != "alias" {
		t.Errorf("renamed onto a taken alias: %v", err)
	}
	f.Alias, f.Description, f.Usage, f.Steps, f.BuiltIn, f.UpdatedAt = "a-strict", "", "direct-grant", "[]", false, 300
	if err := s.UpdateAuthFlow(testCtx, f); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListAuthFlows(testCtx, orgTestRealm)
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], f) || list[1].Alias != "other" {
		t.Errorf("list after update %+v %v", list, err)
	}
	if err := s.DeleteAuthFlow(testCtx, orgTestRealm2, f.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted through another realm: %v", err)
	}
	if err := s.DeleteAuthFlow(testCtx, orgTestRealm, f.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAuthFlow(testCtx, orgTestRealm, f.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
	nope := authFlowTest(34, orgTestRealm, "nope")
	nope.ID = f.ID
	if err := s.UpdateAuthFlow(testCtx, nope); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a removed flow: %v", err)
	}
}

func testAuthFlowBindings(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	web := clientsTestMustCreate(t, s, clientsTestClient(orgTestID(41), orgTestRealm, "web"))
	sp := samlTestSP(orgTestID(42), orgTestRealm, "https://sp.test")
	if err := s.CreateSAMLServiceProvider(testCtx, sp); err != nil {
		t.Fatal(err)
	}
	strict := authFlowMustCreate(t, s, authFlowTest(43, orgTestRealm, "strict"))
	lax := authFlowMustCreate(t, s, authFlowTest(44, orgTestRealm, "lax"))
	foreign := authFlowMustCreate(t, s, authFlowTest(45, orgTestRealm2, "foreign"))

	if _, err := s.FlowForClient(testCtx, orgTestRealm, store.ClientKindOIDC, web.ID, "browser"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no binding yet: %v", err)
	}
	bind := func(kind, client, usage, flow string) error {
		return s.BindFlow(testCtx, &store.FlowBinding{RealmID: orgTestRealm, ClientKind: kind, ClientID: client, Usage: usage, FlowID: flow})
	}
	for _, b := range []struct{ kind, client, usage, flow string }{
		{store.ClientKindOIDC, web.ID, "browser", lax.ID},
		{store.ClientKindOIDC, web.ID, "browser", strict.ID}, // replaces
		{store.ClientKindOIDC, web.ID, "direct-grant", lax.ID},
		{store.ClientKindSAML, sp.ID, "browser", strict.ID},
	} {
		if err := bind(b.kind, b.client, b.usage, b.flow); err != nil {
			t.Fatalf("bind %+v: %v", b, err)
		}
	}
	for _, c := range []struct {
		kind, client, usage string
		want                string
	}{
		{store.ClientKindOIDC, web.ID, "browser", strict.ID},
		{store.ClientKindOIDC, web.ID, "direct-grant", lax.ID},
		{store.ClientKindSAML, sp.ID, "browser", strict.ID},
	} {
		got, err := s.FlowForClient(testCtx, orgTestRealm, c.kind, c.client, c.usage)
		if err != nil || got.ID != c.want {
			t.Errorf("flow of %s %s: %+v %v, want %s", c.kind, c.usage, got, err, c.want)
		}
	}
	if _, err := s.FlowForClient(testCtx, orgTestRealm2, store.ClientKindOIDC, web.ID, "browser"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the client's flow asked through another realm: %v", err)
	}
	if _, err := s.FlowForClient(testCtx, orgTestRealm, store.ClientKindSAML, web.ID, "browser"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an OIDC client's flow asked as a service provider's: %v", err)
	}
	for name, err := range map[string]error{
		"another realm's flow":    bind(store.ClientKindOIDC, web.ID, "browser", foreign.ID),
		"an unknown client":       bind(store.ClientKindOIDC, orgTestID(99), "browser", strict.ID),
		"a client as an SP":       bind(store.ClientKindSAML, web.ID, "browser", strict.ID),
		"an unknown flow":         bind(store.ClientKindOIDC, web.ID, "browser", orgTestID(98)),
		"another realm's binding": s.BindFlow(testCtx, &store.FlowBinding{RealmID: orgTestRealm2, ClientKind: store.ClientKindOIDC, ClientID: web.ID, Usage: "browser", FlowID: foreign.ID}),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v", name, err)
		}
	}
	bound, err := s.FlowBindings(testCtx, orgTestRealm, strict.ID)
	want := []*store.FlowBinding{
		{RealmID: orgTestRealm, ClientKind: store.ClientKindOIDC, ClientID: web.ID, ClientName: "web", Usage: "browser", FlowID: strict.ID},
		{RealmID: orgTestRealm, ClientKind: store.ClientKindSAML, ClientID: sp.ID, ClientName: "https://sp.test", Usage: "browser", FlowID: strict.ID},
	}
	if err != nil || !reflect.DeepEqual(bound, want) {
		t.Errorf("bindings of the flow %+v %v, want %+v", bound, err, want)
	}
	if all, err := s.RealmFlowBindings(testCtx, orgTestRealm); err != nil || len(all) != 3 {
		t.Errorf("the realm's bindings %+v %v", all, err)
	}
	var inUse *store.FlowInUseError
	if err := s.DeleteAuthFlow(testCtx, orgTestRealm, strict.ID); !errors.As(err, &inUse) || !errors.Is(err, store.ErrConflict) ||
		!reflect.DeepEqual(inUse.Bindings, want) {
		t.Fatalf("deleting a bound flow: %v", err)
	}
	if _, err := s.GetAuthFlow(testCtx, orgTestRealm, strict.ID); err != nil {
		t.Errorf("the refused delete removed the flow: %v", err)
	}
	// The realm goes with its flows and bindings, bound or not.
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatalf("delete the realm of bound flows: %v", err)
	}
	if _, err := s.GetAuthFlow(testCtx, orgTestRealm, strict.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a flow outlived its realm: %v", err)
	}
}

func testAuthFlowBindingsEndWithTheirClient(t *testing.T, s *store.Store) {
	orgTestRealms(t, s)
	web := clientsTestMustCreate(t, s, clientsTestClient(orgTestID(51), orgTestRealm, "web"))
	sp := samlTestSP(orgTestID(52), orgTestRealm, "https://sp.test")
	if err := s.CreateSAMLServiceProvider(testCtx, sp); err != nil {
		t.Fatal(err)
	}
	f := authFlowMustCreate(t, s, authFlowTest(53, orgTestRealm, "strict"))
	for _, b := range []*store.FlowBinding{
		{RealmID: orgTestRealm, ClientKind: store.ClientKindOIDC, ClientID: web.ID, Usage: "browser", FlowID: f.ID},
		{RealmID: orgTestRealm, ClientKind: store.ClientKindSAML, ClientID: sp.ID, Usage: "browser", FlowID: f.ID},
	} {
		if err := s.BindFlow(testCtx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteClient(testCtx, orgTestRealm, web.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSAMLServiceProvider(testCtx, orgTestRealm, sp.ID); err != nil {
		t.Fatal(err)
	}
	if bound, err := s.FlowBindings(testCtx, orgTestRealm, f.ID); err != nil || len(bound) != 0 {
		t.Fatalf("bindings outlived their clients: %+v %v", bound, err)
	}
	if err := s.DeleteAuthFlow(testCtx, orgTestRealm, f.ID); err != nil {
		t.Errorf("a flow whose clients are gone: %v", err)
	}
}
