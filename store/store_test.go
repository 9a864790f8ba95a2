package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/storetest"
)

// newSQLiteStore is the conformance suite's factory: a store on a new
// file, migrated to schema.sql.
func newSQLiteStore(t *testing.T) *store.Store {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	s, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "idenplane.db"),
		Schema: string(schema), MasterKey: bytes.Repeat([]byte{0x42}, store.MasterKeySize)})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLiteStore(t *testing.T) {
	storetest.Run(t, newSQLiteStore)
}

func TestSQLiteStoreTransactions(t *testing.T) {
	storetest.RunTransactions(t, newSQLiteStore)
}
