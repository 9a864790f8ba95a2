package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/argon2"
)

// A backup is one SQLite file: a consistent copy of the database made with
// VACUUM INTO, plus, unless left out on request, the master key sealed
// under a passphrase in a table of its own, backup_master_key. That table
// exists only in backups (it is no migration of schema.sql), and restore
// removes it from the copy it puts back. The file is an ordinary database
// in rollback-journal mode, so it can be opened, checked and read alone.

const backupKeyTable = `CREATE TABLE backup_master_key (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    kdf             TEXT    NOT NULL,  -- 'argon2id'
    kdf_time        INTEGER NOT NULL,  -- passes
    kdf_memory_kib  INTEGER NOT NULL,
    kdf_threads     INTEGER NOT NULL,
    salt            BLOB    NOT NULL,  -- 16 random bytes
    sealed          BLOB    NOT NULL   -- 12-byte nonce, then AES-256-GCM of the 32-byte master key
)`

// The passphrase's key derivation: argon2id with RFC 9106's second
// recommended setting (3 passes over 64 MiB, 4 lanes). It runs once per
// backup or restore, so it can afford to be slow for someone guessing.
const (
	backupKDF          = "argon2id"
	backupKDFTime      = 3
	backupKDFMemoryKiB = 64 * 1024
	backupKDFThreads   = 4
	backupSaltSize     = 16
)

// Limits on the parameters a backup file asks for: a crafted file must not
// make restore allocate gigabytes or run for hours before failing.
const (
	maxBackupKDFTime      = 64
	maxBackupKDFMemoryKiB = 1 << 20 // 1 GiB
)

// ErrWrongPassphrase: the passphrase does not open the backup's master key.
var ErrWrongPassphrase = errors.New("the passphrase does not open the master key in the backup")

// SealedKey is the master key sealed under a passphrase: argon2id turns the
// passphrase and salt into an AES-256 key, and AES-GCM seals the master key
// with the derivation's parameters as additional data, so none of them can
// be changed unnoticed.
type SealedKey struct {
	Time      uint32 // argon2id passes
	MemoryKiB uint32
	Threads   uint8
	Salt      []byte
	Sealed    []byte // nonce, ciphertext, tag
}

// SealMasterKey seals masterKey under passphrase.
func SealMasterKey(masterKey, passphrase []byte) (*SealedKey, error) {
	if len(masterKey) != MasterKeySize {
		return nil, fmt.Errorf("master key must be %d bytes, got %d", MasterKeySize, len(masterKey))
	}
	k := &SealedKey{Time: backupKDFTime, MemoryKiB: backupKDFMemoryKiB, Threads: backupKDFThreads,
		Salt: make([]byte, backupSaltSize)}
	_, _ = rand.Read(k.Salt)
	aead, err := k.aead(passphrase)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+MasterKeySize+aead.Overhead())
	_, _ = rand.Read(nonce)
	k.Sealed = aead.Seal(nonce, nonce, masterKey, k.additionalData())
	return k, nil
}

// Open returns the master key; ErrWrongPassphrase if passphrase is not the
// one it was sealed under (or the sealed key was altered).
func (k *SealedKey) Open(passphrase []byte) ([]byte, error) {
	if k.Time < 1 || k.Time > maxBackupKDFTime || k.MemoryKiB < 8*uint32(k.Threads) ||
		k.MemoryKiB > maxBackupKDFMemoryKiB || k.Threads < 1 || len(k.Salt) < 8 {
		return nil, fmt.Errorf("the backup's sealed key has parameters out of range (t=%d m=%d p=%d)", k.Time, k.MemoryKiB, k.Threads)
	}
	aead, err := k.aead(passphrase)
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(k.Sealed) < n {
		return nil, ErrWrongPassphrase
	}
	key, err := aead.Open(nil, k.Sealed[:n], k.Sealed[n:], k.additionalData())
	if err != nil || len(key) != MasterKeySize {
		return nil, ErrWrongPassphrase
	}
	return key, nil
}

func (k *SealedKey) aead(passphrase []byte) (cipher.AEAD, error) {
	if len(passphrase) == 0 {
		return nil, errors.New("the passphrase is empty")
	}
	block, err := aes.NewCipher(argon2.IDKey(passphrase, k.Salt, k.Time, k.MemoryKiB, k.Threads, 32))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (k *SealedKey) additionalData() []byte {
	return fmt.Appendf(nil, "idenplane backup master key: %s t=%d m=%d p=%d", backupKDF, k.Time, k.MemoryKiB, k.Threads)
}

// ErrBackupUnsupported: the database is not a SQLite file; PostgreSQL is
// backed up with its own tools (pg_dump).
var ErrBackupUnsupported = errors.New("idenplane backup writes SQLite files: back up a PostgreSQL database with pg_dump (docs/postgres.md)")

// Backup writes a consistent copy of the database to path, which must not
// exist, readable by its owner only. It runs beside a live server: readers
// never block the writer. A non-nil key goes into the copy, so that the
// file alone restores everything. The copy is written beside path and
// renamed into place once complete, so path is never half a backup.
func (s *Store) Backup(ctx context.Context, path string, key *SealedKey) error {
	if s.dialect.backupInto == "" {
		return ErrBackupUnsupported
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("backup target %s already exists", path)
	}
	temp, err := createPrivateTemp(path, "partial")
	if err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			os.Remove(temp)
		}
	}()
	// VACUUM INTO writes into an empty file it finds, keeping its mode.
	if _, err := s.writerDB.ExecContext(ctx, s.dialect.backupInto, temp); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	if key != nil {
		if err := writeBackupKey(ctx, temp, key); err != nil {
			return fmt.Errorf("backup to %s: %w", path, err)
		}
	}
	if err := syncFile(temp); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	if err := os.Rename(temp, path); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	done = true
	return syncDir(filepath.Dir(path))
}

func writeBackupKey(ctx context.Context, path string, k *SealedKey) error {
	db, err := sql.Open(sqliteDialect.driver, sqliteFileDSN(path, false))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, backupKeyTable); err != nil {
		return fmt.Errorf("store the sealed master key: %w", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO backup_master_key
		(id, kdf, kdf_time, kdf_memory_kib, kdf_threads, salt, sealed) VALUES (1, $1, $2, $3, $4, $5, $6)`,
		backupKDF, k.Time, k.MemoryKiB, k.Threads, k.Salt, k.Sealed)
	if err != nil {
		return fmt.Errorf("store the sealed master key: %w", err)
	}
	return db.Close()
}

// readBackupKey returns the sealed master key a backup carries; nil if it
// was made without one.
func readBackupKey(ctx context.Context, db *sql.DB) (*SealedKey, error) {
	var n int
	if err := db.QueryRowContext(ctx, sqliteDialect.tableExists, "backup_master_key").Scan(&n); err != nil {
		return nil, fmt.Errorf("read backup: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	var k SealedKey
	var kdf string
	err := db.QueryRowContext(ctx, `SELECT kdf, kdf_time, kdf_memory_kib, kdf_threads, salt, sealed
		FROM backup_master_key WHERE id = 1`).Scan(&kdf, &k.Time, &k.MemoryKiB, &k.Threads, &k.Salt, &k.Sealed)
	if err != nil {
		return nil, fmt.Errorf("read the backup's sealed master key: %w", err)
	}
	if kdf != backupKDF {
		return nil, fmt.Errorf("the backup's master key is sealed with %q, which this version does not know", kdf)
	}
	return &k, nil
}
