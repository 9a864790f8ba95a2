package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/pgtest"
	"github.com/idenplane/idenplane/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// newPostgresStore is the conformance suite's factory on PostgreSQL: a
// store on a new database of the test server, migrated to
// schema_postgres.sql.
func newPostgresStore(t *testing.T) *store.Store {
	t.Helper()
	return openPostgres(t, postgresConfig(t))
}

// postgresConfig is the configuration of stores on a new database of the
// test server, migrated to schema_postgres.sql.
func postgresConfig(t *testing.T) store.Config {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "schema_postgres.sql"))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	cfg := store.Config{PostgresSchema: string(schema), MasterKey: bytes.Repeat([]byte{0x42}, store.MasterKeySize)}
	// Each test gets a database migrated once and emptied between tests.
	cfg.Path = pgtest.DatabaseFrom(t, "store", func(url string) error {
		migrated := cfg
		migrated.Path = url
		s, err := store.Open(context.Background(), migrated)
		if err != nil {
			return err
		}
		return s.Close()
	})
	return cfg
}

func openPostgres(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgresStore(t *testing.T) {
	storetest.Run(t, newPostgresStore)
}

func TestPostgresStoreTransactions(t *testing.T) {
	storetest.RunTransactions(t, newPostgresStore)
}

// Two stores on one database are two servers of a fleet.
func TestPostgresFleet(t *testing.T) {
	storetest.RunFleet(t, func(t *testing.T) (a, b *store.Store) {
		cfg := postgresConfig(t)
		return openPostgres(t, cfg), openPostgres(t, cfg)
	})
}
