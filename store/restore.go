package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

var (
	// ErrNoPassphrase: the backup carries the master key, and no
	// passphrase was given to open it.
	ErrNoPassphrase = errors.New("the backup carries the master key sealed under a passphrase, and no passphrase was given")
	// ErrNoMasterKey: the backup was made without the master key, and
	// none was given.
	ErrNoMasterKey = errors.New("the backup carries no master key, and none was given")
)

// RestoreConfig says which backup to put back where.
type RestoreConfig struct {
	Backup string // the backup file
	Path   string // where the database goes
	Schema string // schema.sql: a backup from an older version is migrated
	// Passphrase opens the master key the backup carries.
	Passphrase []byte
	// MasterKey is the key of a backup made without one.
	MasterKey []byte
}

// Restore is a verified copy of a backup beside the database's path, not
// yet in its place: Commit moves it there, Discard removes it.
type Restore struct {
	// MasterKey is the key the restored database's secrets open with.
	MasterKey []byte
	// KeyInBackup: MasterKey came out of the backup.
	KeyInBackup bool
	// Secrets is how many sealed secrets were opened to prove the key.
	Secrets int

	path, temp string
}

// PrepareRestore copies a backup beside cfg.Path and proves it whole before
// anything at cfg.Path is touched: the passphrase opens the master key (or
// the key given opens a backup made without one), and that key opens every
// secret sealed in the copy. The copy loses the sealed key's table and is
// migrated to the schema, as a server would at start.
func PrepareRestore(ctx context.Context, cfg RestoreConfig) (*Restore, error) {
	temp, err := createPrivateTemp(cfg.Path, "restore")
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	r := &Restore{path: cfg.Path, temp: temp}
	if err := r.prepare(ctx, cfg); err != nil {
		r.Discard()
		return nil, err
	}
	return r, nil
}

func (r *Restore) prepare(ctx context.Context, cfg RestoreConfig) error {
	if err := copyFile(cfg.Backup, r.temp); err != nil {
		return fmt.Errorf("restore: copy %s: %w", cfg.Backup, err)
	}
	sealed, err := takeBackupKey(ctx, r.temp)
	if err != nil {
		return err
	}
	switch {
	case sealed != nil && cfg.Passphrase == nil:
		return ErrNoPassphrase
	case sealed != nil:
		if r.MasterKey, err = sealed.Open(cfg.Passphrase); err != nil {
			return err
		}
		r.KeyInBackup = true
	case cfg.MasterKey == nil:
		return ErrNoMasterKey
	default:
		r.MasterKey = cfg.MasterKey
	}
	st, err := Open(ctx, Config{Path: r.temp, Schema: cfg.Schema, MasterKey: r.MasterKey})
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	r.Secrets, err = st.openEverySecret(ctx)
	if err == nil {
		err = st.Checkpoint(ctx)
	}
	if err = errors.Join(err, st.Close()); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := removeSidecars(r.temp); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return syncFile(r.temp)
}

// takeBackupKey reads the sealed master key out of a copy of a backup and
// drops its table, wiping the freed pages.
func takeBackupKey(ctx context.Context, path string) (*SealedKey, error) {
	db, err := sql.Open(sqliteDialect.driver, sqliteFileDSN(path, true))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	k, err := readBackupKey(ctx, db)
	if err != nil || k == nil {
		return k, err
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE backup_master_key"); err != nil {
		return nil, fmt.Errorf("restore: remove the sealed master key from the copy: %w", err)
	}
	return k, db.Close()
}

// Commit puts the verified copy in place of the database and returns with
// the rename on disk. A -wal or -shm file of the database it replaces is
// removed first: SQLite would replay that log over the restored file.
func (r *Restore) Commit() error {
	if err := removeSidecars(r.path); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(r.temp, r.path); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	r.temp = ""
	return syncDir(filepath.Dir(r.path))
}

// Discard removes the copy, unless Commit put it in place.
func (r *Restore) Discard() {
	if r.temp != "" {
		os.Remove(r.temp)
		_ = removeSidecars(r.temp)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return errors.Join(dst.Sync(), dst.Close())
}

// openEverySecret decrypts every secret sealed with the master key and
// returns how many there are: proof that the key is the one they were
// sealed with, row by row, not only that it opens the key check.
func (s *Store) openEverySecret(ctx context.Context) (int, error) {
	sealedColumns := []struct {
		query string
		aad   func(id, owner string) string
	}{
		{"SELECT id, '', private_key FROM signing_keys", func(id, _ string) string { return signingKeyAAD(id) }},
		{"SELECT id, '', smtp_password FROM realms WHERE smtp_password IS NOT NULL",
			func(id, _ string) string { return "realm.smtp_password:" + id }},
		{"SELECT id, '', email_provider_config FROM realms WHERE email_provider_config IS NOT NULL",
			func(id, _ string) string { return "realm.email_provider_config:" + id }},
		{"SELECT id, user_id, secret FROM user_credentials", credentialAAD},
		{"SELECT id, '', client_secret FROM identity_providers WHERE client_secret IS NOT NULL",
			func(id, _ string) string { return identityProviderAAD(id) }},
		{"SELECT provider_id, user_id, token FROM federated_identities WHERE token IS NOT NULL", federatedAAD},
		{"SELECT id, '', identity FROM broker_pending_links", func(id, _ string) string { return pendingLinkAAD(id) }},
		{"SELECT state_hash, '', code_verifier FROM broker_logins", func(id, _ string) string { return brokerLoginAAD([]byte(id)) }},
		{"SELECT provider_id, '', id_token FROM broker_signins", func(id, _ string) string { return brokerIDTokenAAD(id) }},
		{"SELECT provider_id, '', id_token FROM broker_flow_signins", func(id, _ string) string { return brokerIDTokenAAD(id) }},
		{"SELECT provider_id, '', id_token FROM broker_sessions", func(id, _ string) string { return brokerIDTokenAAD(id) }},
	}
	n := 0
	for _, c := range sealedColumns {
		rows, err := s.r.QueryContext(ctx, c.query)
		if err != nil {
			return n, fmt.Errorf("read sealed secrets: %w", err)
		}
		for rows.Next() {
			var id, owner string
			var sealed []byte
			if err := rows.Scan(&id, &owner, &sealed); err != nil {
				rows.Close()
				return n, fmt.Errorf("read sealed secrets: %w", err)
			}
			if _, err := s.open(sealed, c.aad(id, owner)); err != nil {
				rows.Close()
				return n, err
			}
			n++
		}
		if err := rows.Close(); err != nil {
			return n, err
		}
		if err := rows.Err(); err != nil {
			return n, fmt.Errorf("read sealed secrets: %w", err)
		}
	}
	return n, nil
}
