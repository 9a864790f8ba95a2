package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// transactionSuite is the conformance tests of transactions and of
// concurrent writers.
func transactionSuite() []subTest {
	return []subTest{
		{"TxCommit", testTxCommit},
		{"TxRollback", testTxRollback},
	}
}

func testTxCommit(t *testing.T, s *store.Store) {
	err := s.Tx(testCtx, func(tx *store.Store) error {
		r := mustCreateRealm(t, tx, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		mustCreateUser(t, tx, testUser("a0000000-0000-4000-8000-000000000001", r.ID, "alice", ""))
		// Reads inside the transaction see its writes.
		if _, err := tx.GetRealm(testCtx, "acme"); err != nil {
			return fmt.Errorf("read own write: %w", err)
		}
		// A nested Tx joins the outer one.
		return tx.Tx(testCtx, func(inner *store.Store) error {
			return inner.CreateRealm(testCtx, testRealm("22222222-2222-4222-8222-222222222222", "nested", 2000))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"acme", "nested"} {
		if _, err := s.GetRealm(testCtx, name); err != nil {
			t.Fatalf("realm %s after commit: %v", name, err)
		}
	}
	if _, err := s.GetUserByUsername(testCtx, "11111111-1111-4111-8111-111111111111", "alice"); err != nil {
		t.Fatalf("user after commit: %v", err)
	}
}

func testTxRollback(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("33333333-3333-4333-8333-333333333333", "before", 500))
	boom := errors.New("boom")
	err := s.Tx(testCtx, func(tx *store.Store) error {
		r := mustCreateRealm(t, tx, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		mustCreateUser(t, tx, testUser("a0000000-0000-4000-8000-000000000001", r.ID, "alice", ""))
		if err := tx.DeleteRealm(testCtx, "before"); err != nil {
			return err
		}
		return tx.Tx(testCtx, func(inner *store.Store) error {
			if err := inner.SetAdminAPIKeyHash(testCtx, []byte("in-tx")); err != nil {
				return err
			}
			return fmt.Errorf("inner: %w", boom)
		})
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if _, err := s.GetRealm(testCtx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("realm created in a failed Tx: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(testCtx, "11111111-1111-4111-8111-111111111111", "a0000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("user created in a failed Tx: %v", err)
	}
	if _, err := s.GetRealm(testCtx, "before"); err != nil {
		t.Fatalf("realm deleted in a failed Tx is gone: %v", err)
	}
	if _, err := s.AdminAPIKeyHash(testCtx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("admin key set in a failed Tx: %v", err)
	}
	// The store is usable after the rollback.
	mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
}
