package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func bulkSuite() []subTest {
	return []subTest{
		{"BulkCreateUsers", testBulkCreateUsers},
		{"BulkCreateUsersAllOrNothing", testBulkCreateUsersAllOrNothing},
		{"BulkAddLoginEvents", testBulkAddLoginEvents},
		{"GenerationMovesOnCachedWrites", testGenerationMovesOnCachedWrites},
		{"GenerationKeepsOnTokenWrites", testGenerationKeepsOnTokenWrites},
	}
}

func testBulkCreateUsers(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	var users []*store.User
	for i := range 25 {
		users = append(users, testUser(fmt.Sprintf("u%02d", i), "r1", fmt.Sprintf("user%02d", i), fmt.Sprintf("u%02d@example.com", i)))
	}
	users[3].PasswordHash = "$argon2id$hash"
	if err := s.CreateUsers(testCtx, users); err != nil {
		t.Fatal(err)
	}
	got, total, err := s.ListUsers(testCtx, "r1", store.UserFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if total != 25 || len(got) != 25 {
		t.Fatalf("listed %d of %d users, want 25", len(got), total)
	}
	u, err := s.GetUserByUsername(testCtx, "r1", "user03")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "user03", u, users[3])
	// The name search column is filled as by CreateUser.
	if _, n, _ := s.ListUsers(testCtx, "r1", store.UserFilter{Search: "first user07", Limit: 10}); n != 1 {
		t.Fatalf("search by name found %d users, want 1", n)
	}
}

func testBulkCreateUsersAllOrNothing(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	users := []*store.User{testUser("u1", "r1", "ann", "ann@example.com"), testUser("u2", "r1", "ann", "other@example.com")}
	mustBeErrConflict(t, "a duplicate username", s.CreateUsers(testCtx, users))
	if _, err := s.GetUser(testCtx, "r1", "u1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the batch's first user: %v, want it rolled back", err)
	}
}

func testBulkAddLoginEvents(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	events := []*store.LoginEvent{
		{ID: "e1", RealmID: "r1", Time: 10, Type: "CLIENT_LOGIN", ClientID: "svc"},
		{ID: "e2", RealmID: "r1", Time: 11, Type: "LOGIN", UserID: "u1", Details: map[string]string{"grant_type": "password"}},
	}
	if err := s.AddLoginEvents(testCtx, events); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListLoginEvents(testCtx, "r1", store.LoginEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Details["grant_type"] != "password" && got[0].Details["grant_type"] != "password" {
		t.Fatalf("events %+v", got)
	}
}

// The caches of the server are good while the generation stands: every
// committed write to the data they hold must move it, after the commit.
func testGenerationMovesOnCachedWrites(t *testing.T, s *store.Store) {
	moved := func(what string, write func() error) {
		t.Helper()
		before := s.Generation()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if s.Generation() == before {
			t.Fatalf("%s kept the generation", what)
		}
	}
	moved("create realm", func() error { return s.CreateRealm(testCtx, testRealm("r1", "acme", 1)) })
	moved("create user", func() error { return s.CreateUser(testCtx, testUser("u1", "r1", "ann", "")) })
	before := s.Generation()
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := tx.CreateUser(testCtx, testUser("u2", "r1", "bob", "")); err != nil {
			return err
		}
		// Before the commit readers still see the old data: a value read
		// now must not be taken for current afterwards.
		if s.Generation() != before {
			return errors.New("the generation moved before the commit")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Generation() == before {
		t.Fatal("a committed transaction kept the generation")
	}
}

func testGenerationKeepsOnTokenWrites(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	mustCreateUser(t, s, testUser("u1", "r1", "ann", ""))
	before := s.Generation()
	if err := s.AddLoginEvents(testCtx, []*store.LoginEvent{{ID: "e1", RealmID: "r1", Time: 1, Type: "LOGIN"}}); err != nil {
		t.Fatal(err)
	}
	sess := &store.Session{ID: "s1", RealmID: "r1", UserID: "u1", Kind: store.SessionSSO, StartedAt: 1, LastAccessAt: 1, ExpiresAt: 2, AuthTime: 1}
	if err := s.CreateSession(testCtx, sess); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != before {
		t.Fatal("writing events and sessions moved the generation: every grant would empty the caches")
	}
}
