package store

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// MasterKeySize is the length of the key that encrypts secrets at rest.
const MasterKeySize = 32

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != MasterKeySize {
		return nil, fmt.Errorf("master key must be %d bytes, got %d", MasterKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts a secret. The additional data binds the ciphertext to its row
// and column, so a ciphertext copied elsewhere in the database won't open.
func (s *Store) seal(plaintext []byte, aad string) []byte {
	if plaintext == nil {
		return nil
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plaintext, []byte(aad))
}

func (s *Store) open(ciphertext []byte, aad string) ([]byte, error) {
	if ciphertext == nil {
		return nil, nil
	}
	n := s.aead.NonceSize()
	if len(ciphertext) < n {
		return nil, errors.New("decrypt secret: ciphertext too short")
	}
	plain, err := s.aead.Open(nil, ciphertext[:n], ciphertext[n:], []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("decrypt secret (%s): wrong master key? %w", aad, err)
	}
	return plain, nil
}

// ErrWrongMasterKey: the master key is not the one the database was made with.
var ErrWrongMasterKey = errors.New("the master key does not match this database")

const keyCheckPlaintext = "idenplane master key check"

// checkMasterKey seals a known value on first open and, on every later open,
// proves the key can open it.
func (s *Store) checkMasterKey(ctx context.Context) error {
	var sealed []byte
	err := mapErr(s.w.QueryRowContext(ctx, "SELECT sealed FROM master_key_check WHERE id = 1").Scan(&sealed))
	if errors.Is(err, ErrNotFound) {
		_, err = s.w.ExecContext(ctx, "INSERT INTO master_key_check (id, sealed) VALUES (1, $1)",
			s.seal([]byte(keyCheckPlaintext), "master_key_check"))
		return mapErr(err)
	}
	if err != nil {
		return fmt.Errorf("read master key check: %w", err)
	}
	plain, err := s.open(sealed, "master_key_check")
	if err != nil || !bytes.Equal(plain, []byte(keyCheckPlaintext)) {
		return ErrWrongMasterKey
	}
	return nil
}

// verifyMasterKey is checkMasterKey that writes nothing, for a database
// whose migrations wait (Config.DeferMigrations): a wrong key is told at
// start, not after the upgrade.
func (s *Store) verifyMasterKey(ctx context.Context) error {
	var sealed []byte
	err := mapErr(s.r.QueryRowContext(ctx, "SELECT sealed FROM master_key_check WHERE id = 1").Scan(&sealed))
	if errors.Is(err, ErrNotFound) {
		return nil // sealed at the first open that migrates
	}
	if err != nil {
		return fmt.Errorf("read master key check: %w", err)
	}
	plain, err := s.open(sealed, "master_key_check")
	if err != nil || !bytes.Equal(plain, []byte(keyCheckPlaintext)) {
		return ErrWrongMasterKey
	}
	return nil
}
