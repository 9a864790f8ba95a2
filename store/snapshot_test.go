package store

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// snapshotTestStore is a store over a new file, marked in use as a
// server's is, with a realm and a user in it.
func snapshotTestStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s, err := Open(testCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey, Lock: true,
		Now: func() time.Time { return time.UnixMilli(1_767_225_600_000) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
	if err := s.CreateUser(testCtx, testUser("33333333-3333-4333-8333-333333333333", testRealmID, "alice", "alice@acme.test")); err != nil {
		t.Fatal(err)
	}
	return s, path
}

func TestSnapshotAndRestore(t *testing.T) {
	s, path := snapshotTestStore(t)
	snapshot := path + ".pre-upgrade-test.db"
	if err := s.Snapshot(testCtx, snapshot); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if info, err := os.Stat(snapshot); err != nil || info.Mode().Perm() != privateFileMode {
		t.Fatalf("snapshot file: %v %v", info, err)
	}
	if err := s.Snapshot(testCtx, snapshot); err == nil {
		t.Fatal("a second snapshot overwrote the first")
	}
	since := time.UnixMilli(1_767_225_600_000)
	if err := s.CreateUser(testCtx, testUser("44444444-4444-4444-8444-444444444444", testRealmID, "bob", "bob@acme.test")); err != nil {
		t.Fatal(err)
	}
	bob, _ := s.GetUser(testCtx, testRealmID, "44444444-4444-4444-8444-444444444444")
	bob.CreatedAt = since.UnixMilli() + 1
	if _, err := s.w.ExecContext(testCtx, "UPDATE users SET created_at = $1 WHERE id = $2", bob.CreatedAt, bob.ID); err != nil {
		t.Fatal(err)
	}

	facts, err := ReadSnapshot(testCtx, snapshot, true)
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.RowCounts(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	written, err := s.RowsWrittenSince(testCtx, since)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.SchemaVersion(testCtx); facts.SchemaVersion != v || len(facts.Problems) != 0 ||
		facts.Rows["users"] != 1 || now["users"] != 2 || written["users"] != 1 {
		t.Fatalf("snapshot %+v; now %d users, %d written since", facts, now["users"], written["users"])
	}
	if n, err := s.SnapshotBytes(testCtx); err != nil || n <= 0 {
		t.Fatalf("snapshot bytes %d, %v", n, err)
	}

	if err := s.RestoreSnapshot(testCtx, snapshot); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if err := s.Ping(testCtx); err == nil {
		t.Fatal("the store still answers after the rollback closed it")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	for _, sidecar := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + sidecar); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left beside the restored database (%v)", sidecar, err)
		}
	}
	if a, b := mustReadFile(t, path), mustReadFile(t, snapshot); !bytes.Equal(a, b) {
		t.Fatal("the restored database is not the snapshot")
	}
	back := storeTestOpen(t, path, storeTestKey)
	if _, err := back.GetUser(testCtx, testRealmID, bob.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the user written after the snapshot: %v, want gone", err)
	}
	if _, err := back.GetUser(testCtx, testRealmID, "33333333-3333-4333-8333-333333333333"); err != nil {
		t.Fatalf("the user of the snapshot: %v", err)
	}
	if entries, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".idenplane.db.rollback-*")); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// A restore that fails before the store closes leaves it open and the
// database as it was; one that finds the database in use by another
// process says the store is closed.
func TestRestoreSnapshotRefusals(t *testing.T) {
	t.Run("damaged snapshot", func(t *testing.T) {
		s, path := snapshotTestStore(t)
		snapshot := path + ".snap"
		if err := s.Snapshot(testCtx, snapshot); err != nil {
			t.Fatal(err)
		}
		corruptRootPage(t, snapshot, "users")
		err := s.RestoreSnapshot(testCtx, snapshot)
		if err == nil || errors.Is(err, ErrStoreClosed) {
			t.Fatalf("restore of a damaged snapshot: %v", err)
		}
		if err := s.Ping(testCtx); err != nil {
			t.Fatalf("the store closed for a refused restore: %v", err)
		}
	})
	t.Run("database in use", func(t *testing.T) {
		s, path := snapshotTestStore(t)
		snapshot := path + ".snap"
		if err := s.Snapshot(testCtx, snapshot); err != nil {
			t.Fatal(err)
		}
		other, err := Open(testCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey, Lock: true})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		err = s.RestoreSnapshot(testCtx, snapshot)
		if !errors.Is(err, ErrStoreClosed) || !errors.Is(err, ErrInUse) {
			t.Fatalf("restore over a database in use: %v", err)
		}
		if _, err := other.GetRealm(testCtx, "acme"); err != nil {
			t.Fatalf("the other store's database: %v", err)
		}
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		s := &Store{dialect: &postgresDialect}
		for name, err := range map[string]error{
			"snapshot": s.Snapshot(testCtx, "x"), "restore": s.RestoreSnapshot(testCtx, "x"),
		} {
			if !errors.Is(err, ErrSQLiteOnly) {
				t.Errorf("%s on PostgreSQL: %v", name, err)
			}
		}
	})
}

func TestIntegrityCheck(t *testing.T) {
	s, path := snapshotTestStore(t)
	for i := range 100 {
		u := testUser(fmt.Sprintf("55555555-5555-4555-8555-%012d", i), testRealmID, fmt.Sprintf("user%03d", i), "")
		if err := s.CreateUser(testCtx, u); err != nil {
			t.Fatal(err)
		}
	}
	if problems, err := s.IntegrityCheck(testCtx); err != nil || len(problems) != 0 {
		t.Fatalf("a whole file: %q, %v", problems, err)
	}
	if problems, err := s.ForeignKeyCheck(testCtx); err != nil || len(problems) != 0 {
		t.Fatalf("foreign keys of a whole file: %q, %v", problems, err)
	}
	s.Close()
	corruptRootPage(t, path, "users")
	damaged, err := Open(testCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey, DeferMigrations: true})
	if err != nil {
		t.Fatal(err)
	}
	defer damaged.Close()
	problems, err := damaged.IntegrityCheck(testCtx)
	if err != nil || len(problems) == 0 {
		t.Fatalf("a damaged file: %q, %v", problems, err)
	}
	facts, err := ReadSnapshot(testCtx, path, true)
	if err != nil || len(facts.Problems) == 0 {
		t.Fatalf("ReadSnapshot of a damaged file: %+v, %v", facts, err)
	}
}

// corruptRootPage overwrites the second half of a table's root page, where
// its cells are.
func corruptRootPage(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open(sqliteDialect.driver, sqliteSourceDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	var root, size int64
	if err := db.QueryRow("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = $1", table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, int(size/2)), (root-1)*size+size/2); err != nil {
		t.Fatal(err)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
