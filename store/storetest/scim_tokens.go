package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

// scimTokenSuite is the conformance tests of SCIM provisioning tokens.
func scimTokenSuite() []subTest {
	return []subTest{
		{"SCIMTokenLifecycle", testSCIMTokenLifecycle},
	}
}

func testSCIMTokenLifecycle(t *testing.T, s *store.Store) {
	acme := mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	beta := mustCreateRealm(t, s, testRealm("r2", "beta", 1))
	tok := &store.SCIMToken{ID: "t1", RealmID: acme.ID, Name: "entra", SecretHash: []byte{1, 2, 3}, Enabled: true,
		ExpiresAt: 5000, CreatedAt: 100}
	if err := s.CreateSCIMToken(testCtx, tok); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "a second token of the same name", s.CreateSCIMToken(testCtx,
		&store.SCIMToken{ID: "t2", RealmID: acme.ID, Name: "entra", SecretHash: []byte{4}, Enabled: true, CreatedAt: 100}))
	if err := s.CreateSCIMToken(testCtx, &store.SCIMToken{ID: "t3", RealmID: beta.ID, Name: "entra", SecretHash: []byte{5},
		Enabled: true, CreatedAt: 100}); err != nil {
		t.Fatalf("the same name in another realm: %v", err)
	}
	got, err := s.GetSCIMToken(testCtx, acme.ID, "t1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "token read back", got, tok)
	_, err = s.GetSCIMToken(testCtx, beta.ID, "t1")
	mustBeErrNotFound(t, "a token of another realm", err)
	if got, err := s.SCIMTokenByID(testCtx, "t3"); err != nil || got.RealmID != beta.ID {
		t.Fatalf("token by ID: %+v %v", got, err)
	}

	for _, at := range []int64{200, 300} {
		if err := s.TouchSCIMToken(testCtx, "t1", at); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetSCIMTokenEnabled(testCtx, acme.ID, "t1", false); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetSCIMToken(testCtx, acme.ID, "t1")
	if got.LastUsedAt != 300 || got.UseCount != 2 || got.Enabled {
		t.Fatalf("after two uses and a disable: %+v", got)
	}
	if err := s.RevokeSCIMToken(testCtx, acme.ID, "t1", 400); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeSCIMToken(testCtx, acme.ID, "t1", 500); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "enabling a revoked token", s.SetSCIMTokenEnabled(testCtx, acme.ID, "t1", true))
	got, _ = s.GetSCIMToken(testCtx, acme.ID, "t1")
	if got.RevokedAt != 400 || got.Enabled {
		t.Fatalf("revoked twice: %+v", got)
	}

	list, err := s.ListSCIMTokens(testCtx, acme.ID)
	if err != nil || len(list) != 1 || list[0].ID != "t1" {
		t.Fatalf("acme's tokens: %+v %v", list, err)
	}
	if err := s.DeleteSCIMToken(testCtx, acme.ID, "t1"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "deleting it again", s.DeleteSCIMToken(testCtx, acme.ID, "t1"))
	mustBeErrNotFound(t, "using a deleted token", s.TouchSCIMToken(testCtx, "t1", 600))
	if list, _ := s.ListSCIMTokens(testCtx, acme.ID); len(list) != 0 {
		t.Fatalf("after the deletion: %+v", list)
	}
}
