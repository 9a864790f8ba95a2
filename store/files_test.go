package store

import (
	"context"
	"database/sql"
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
	sessionsTestFixture(t, s)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := s.Backup(context.Background(), backup); err != nil {
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
	sessionsTestFixture(t, s)
	bystander, err := sql.Open("sqlite", dsn(path, true))
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
