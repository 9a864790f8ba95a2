package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func fileTestMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// TestPrivateFiles: the database, its -wal and -shm files and a backup are
// readable by their owner only. (The umask cases run in the binary's tests:
// the umask is the whole process's.)
func TestPrivateFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s := storeTestOpen(t, path, storeTestKey)
	testFixture(t, s)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := s.Backup(context.Background(), backup, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm", backup} {
		if mode := fileTestMode(t, f); mode != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), mode)
		}
	}
}

// TestCheckpoint: after Checkpoint the database file alone holds every
// write, even while another connection keeps SQLite from checkpointing on
// close.
func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s := storeTestOpen(t, path, storeTestKey)
	testFixture(t, s)
	bystander, err := sql.Open("sqlite", sqliteDSN(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer bystander.Close()
	if err := bystander.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()

	alone := filepath.Join(t.TempDir(), "copy.db")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got := storeTestOpen(t, alone, storeTestKey)
	if realm, err := got.GetRealm(ctx, "acme"); err != nil || realm.SMTPPassword != "smtp-pw-acme" {
		t.Fatalf("realm in the file alone: %+v, %v", realm, err)
	}
}

func TestLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idenplane.db")
	openLocked := func() (*Store, error) {
		return Open(ctx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey, Lock: true})
	}
	a, err := openLocked()
	if err != nil {
		t.Fatal(err)
	}
	b, err := openLocked() // servers share the database
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockExclusive(path); !errors.Is(err, ErrInUse) {
		t.Fatalf("exclusive lock beside open stores: %v, want ErrInUse", err)
	}
	a.Close()
	if _, err := LockExclusive(path); !errors.Is(err, ErrInUse) {
		t.Fatalf("exclusive lock beside one open store: %v, want ErrInUse", err)
	}
	b.Close()
	release, err := LockExclusive(path)
	if err != nil {
		t.Fatalf("exclusive lock of a closed database: %v", err)
	}
	if s, err := openLocked(); !errors.Is(err, ErrInUse) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("open during an exclusive lock: %v, want ErrInUse", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	c, err := openLocked()
	if err != nil {
		t.Fatalf("open after the exclusive lock: %v", err)
	}
	c.Close()
	if mode := fileTestMode(t, path+".lock"); mode != 0o600 {
		t.Errorf("lock file mode %v, want 0600", mode)
	}
}
