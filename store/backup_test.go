package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var backupTestPassphrase = []byte("correct horse battery staple")

func TestSealedKey(t *testing.T) {
	sealed, err := SealMasterKey(storeTestKey, backupTestPassphrase)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed.Sealed, storeTestKey) {
		t.Fatal("the sealed key contains the key")
	}
	got, err := sealed.Open(backupTestPassphrase)
	if err != nil || !bytes.Equal(got, storeTestKey) {
		t.Fatalf("open = %x, %v; want the key", got, err)
	}

	altered := func(change func(k *SealedKey)) *SealedKey {
		k := *sealed
		k.Salt, k.Sealed = bytes.Clone(sealed.Salt), bytes.Clone(sealed.Sealed)
		change(&k)
		return &k
	}
	cases := []struct {
		name       string
		key        *SealedKey
		passphrase []byte
		want       error // nil: any error
	}{
		{"wrong passphrase", sealed, []byte("correct horse battery stapler"), ErrWrongPassphrase},
		{"empty passphrase", sealed, []byte{}, nil},
		{"fewer passes", altered(func(k *SealedKey) { k.Time-- }), backupTestPassphrase, ErrWrongPassphrase},
		{"less memory", altered(func(k *SealedKey) { k.MemoryKiB /= 2 }), backupTestPassphrase, ErrWrongPassphrase},
		{"other salt", altered(func(k *SealedKey) { k.Salt[0] ^= 1 }), backupTestPassphrase, ErrWrongPassphrase},
		{"flipped ciphertext", altered(func(k *SealedKey) { k.Sealed[20] ^= 1 }), backupTestPassphrase, ErrWrongPassphrase},
		{"truncated", altered(func(k *SealedKey) { k.Sealed = k.Sealed[:5] }), backupTestPassphrase, ErrWrongPassphrase},
		{"memory out of range", altered(func(k *SealedKey) { k.MemoryKiB = 1 << 30 }), backupTestPassphrase, nil},
		{"passes out of range", altered(func(k *SealedKey) { k.Time = 1 << 20 }), backupTestPassphrase, nil},
		{"no threads", altered(func(k *SealedKey) { k.Threads = 0 }), backupTestPassphrase, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := tc.key.Open(tc.passphrase)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("open = %x, %v; want error %v", key, err, tc.want)
			}
		})
	}
}

// backupTestSource is a store holding one secret of every sealed kind.
func backupTestSource(t *testing.T, path string) *Store {
	t.Helper()
	s := storeTestOpen(t, path, storeTestKey)
	testFixture(t, s)
	testSigningKey(t, s, "kid-1", testRealmID, KeyActive)
	testBeginTOTP(t, s, "totp-1", "alice", "JBSWY3DPEHPK3PXP")
	return s
}

// backupTestSecrets: the smtp password and provider config of the
// fixture's two realms, the signing key, the TOTP secret.
const backupTestSecrets = 6

func backupTestTables(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteFileDSN(path, false)+"&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// backupTestDirIs fails unless dir holds exactly names.
func backupTestDirIs(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

func TestBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	src := backupTestSource(t, filepath.Join(t.TempDir(), "live.db"))
	sealed, err := SealMasterKey(storeTestKey, backupTestPassphrase)
	if err != nil {
		t.Fatal(err)
	}
	backups := t.TempDir()
	withKey := filepath.Join(backups, "with-key.db")
	if err := src.Backup(ctx, withKey, sealed); err != nil {
		t.Fatal(err)
	}
	withoutKey := filepath.Join(backups, "without-key.db")
	if err := src.Backup(ctx, withoutKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := src.Backup(ctx, withKey, sealed); err == nil {
		t.Error("a backup over an existing file succeeded")
	}
	backupTestDirIs(t, backups, "with-key.db", "without-key.db")
	for _, f := range []string{withKey, withoutKey} {
		if mode := fileTestMode(t, f); mode != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, mode)
		}
	}
	if !slices.Contains(backupTestTables(t, withKey), "backup_master_key") {
		t.Error("the backup carries no sealed key table")
	}
	if slices.Contains(backupTestTables(t, withoutKey), "backup_master_key") {
		t.Error("the backup made without the key carries a sealed key table")
	}

	schema := storeTestSchema(t)
	t.Run("refusals leave nothing behind", func(t *testing.T) {
		otherKey := bytes.Repeat([]byte{7}, MasterKeySize)
		cases := []struct {
			name string
			cfg  RestoreConfig
			want error
		}{
			{"wrong passphrase", RestoreConfig{Backup: withKey, Passphrase: []byte("wrong passphrase!")}, ErrWrongPassphrase},
			{"no passphrase", RestoreConfig{Backup: withKey, MasterKey: storeTestKey}, ErrNoPassphrase},
			{"no key", RestoreConfig{Backup: withoutKey, Passphrase: backupTestPassphrase}, ErrNoMasterKey},
			{"wrong key", RestoreConfig{Backup: withoutKey, MasterKey: otherKey}, ErrWrongMasterKey},
		}
		for _, tc := range cases {
			dir := t.TempDir()
			tc.cfg.Path, tc.cfg.Schema = filepath.Join(dir, "idenplane.db"), schema
			if _, err := PrepareRestore(ctx, tc.cfg); !errors.Is(err, tc.want) {
				t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
			}
			backupTestDirIs(t, dir)
		}
	})

	cases := []struct {
		name string
		cfg  RestoreConfig
	}{
		{"sealed key", RestoreConfig{Backup: withKey, Passphrase: backupTestPassphrase}},
		{"key given", RestoreConfig{Backup: withoutKey, MasterKey: storeTestKey}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.cfg.Path, tc.cfg.Schema = filepath.Join(dir, "idenplane.db"), schema
			r, err := PrepareRestore(ctx, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			backupTestDirIs(t, dir, filepath.Base(r.temp))
			if !bytes.Equal(r.MasterKey, storeTestKey) || r.KeyInBackup != (tc.cfg.Passphrase != nil) || r.Secrets != backupTestSecrets {
				t.Errorf("restore %+v, want the key, %d secrets", r, backupTestSecrets)
			}
			if err := r.Commit(); err != nil {
				t.Fatal(err)
			}
			r.Discard() // after Commit: nothing to remove
			backupTestDirIs(t, dir, "idenplane.db")
			if mode := fileTestMode(t, tc.cfg.Path); mode != 0o600 {
				t.Errorf("restored database has mode %v, want 0600", mode)
			}
			if slices.Contains(backupTestTables(t, tc.cfg.Path), "backup_master_key") {
				t.Error("the restored database still holds the sealed key")
			}
			// Nor do its free pages: the table's bytes were wiped, not only unlinked.
			file, err := os.ReadFile(tc.cfg.Path)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(file, sealed.Sealed) || bytes.Contains(file, sealed.Salt) {
				t.Error("the restored database file still holds the sealed key's bytes")
			}
			got := storeTestOpen(t, tc.cfg.Path, storeTestKey)
			realm, err := got.GetRealm(ctx, "acme")
			if err != nil || realm.SMTPPassword != "smtp-pw-acme" {
				t.Fatalf("restored realm %+v, %v", realm, err)
			}
			if der, err := got.SigningKeyPrivate(ctx, testRealmID, "kid-1"); err != nil || len(der) != 1200 {
				t.Errorf("restored signing key: %d bytes, %v", len(der), err)
			}
		})
	}
}

// TestRestoreOpensEverySecret: a key that opens the key check but not a
// secret (one sealed under another key) is refused before anything is
// written.
func TestRestoreOpensEverySecret(t *testing.T) {
	ctx := context.Background()
	src := backupTestSource(t, filepath.Join(t.TempDir(), "live.db"))
	other := storeTestOpen(t, filepath.Join(t.TempDir(), "other.db"), bytes.Repeat([]byte{9}, MasterKeySize))
	mustCreateRealm(t, other, testRealm(testRealmID, "acme", 1000))
	var foreign []byte
	if err := other.r.QueryRowContext(ctx, "SELECT smtp_password FROM realms").Scan(&foreign); err != nil {
		t.Fatal(err)
	}
	if _, err := src.w.ExecContext(ctx, "UPDATE realms SET smtp_password = $1", foreign); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := src.Backup(ctx, backup, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err := PrepareRestore(ctx, RestoreConfig{Backup: backup, Path: filepath.Join(dir, "idenplane.db"),
		Schema: storeTestSchema(t), MasterKey: storeTestKey})
	if err == nil {
		t.Fatal("restore with a secret the key does not open succeeded")
	}
	backupTestDirIs(t, dir)
}

// TestRestoreReplacesWAL: a -wal file left by the database a restore
// replaces is not replayed over the restored one.
func TestRestoreReplacesWAL(t *testing.T) {
	ctx := context.Background()
	src := backupTestSource(t, filepath.Join(t.TempDir(), "live.db"))
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := src.Backup(ctx, backup, nil); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "idenplane.db")
	old := storeTestOpen(t, path, storeTestKey)
	mustCreateRealm(t, old, testRealm("33333333-3333-4333-8333-333333333333", "old", 1000))
	// A crash leaves the WAL behind: copy the files while the store is open.
	crashed := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, "idenplane.db"+suffix), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(crashed, "idenplane.db")

	r, err := PrepareRestore(ctx, RestoreConfig{Backup: backup, Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	restored := storeTestOpen(t, path, storeTestKey)
	realms, err := restored.ListRealms(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range realms {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"acme", "other"}) {
		t.Errorf("restored realms %v, want the backup's acme and other", names)
	}
	if verdict := backupTestIntegrity(t, path); verdict != "ok" {
		t.Errorf("integrity_check: %s", verdict)
	}
}

func backupTestIntegrity(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var verdict string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&verdict); err != nil {
		t.Fatal(err)
	}
	return verdict
}
