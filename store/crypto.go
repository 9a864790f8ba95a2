package store

import (
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
