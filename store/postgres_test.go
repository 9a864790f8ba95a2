package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// A deadlock PostgreSQL breaks undoes one of the transactions; the store
// reports it as the database being unavailable for a moment, which the
// API answers 503 with Retry-After, so that the client runs it again.
func TestPostgresDeadlockIsUnavailable(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, n INT); INSERT INTO t VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}
	tx1, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback()
	tx2, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback()
	for _, step := range []struct {
		tx *sql.Tx
		id int
	}{{tx1, 1}, {tx2, 2}} {
		if _, err := step.tx.ExecContext(ctx, "UPDATE t SET n = n + 1 WHERE id = $1", step.id); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2)
	go func() { _, err := tx1.ExecContext(ctx, "UPDATE t SET n = n + 1 WHERE id = 2"); errs <- err }()
	go func() { _, err := tx2.ExecContext(ctx, "UPDATE t SET n = n + 1 WHERE id = 1"); errs <- err }()
	var broken error
	for range 2 {
		if err := <-errs; err != nil && broken == nil {
			broken = err
			// The victim's rollback lets the other through.
			_ = tx1.Rollback()
			_ = tx2.Rollback()
		}
	}
	if broken == nil || !store.Unavailable(broken) {
		t.Fatalf("the deadlock's victim: %v; want an error store.Unavailable reports", broken)
	}
}

// Work under Exclusive's lock reads through the store: with a read pool of
// one connection, the lock must not hold it.
func TestPostgresExclusiveLeavesThePoolsFree(t *testing.T) {
	cfg := postgresConfig(t)
	cfg.Readers = 1
	s := openPostgres(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ran, err := s.Exclusive(ctx, "work", func(ctx context.Context) error {
		_, err := s.ListRealms(ctx)
		return err
	})
	if err != nil || !ran {
		t.Fatalf("work under the lock with one reader: ran %v, %v", ran, err)
	}
}
