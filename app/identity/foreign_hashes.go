package identity

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/pbkdf2"

	"github.com/idenplane/idenplane/store"
)

// Password hashes of other products, kept as an import brings them
// (app/migration: Keycloak, Auth0, a list of users) and checked natively,
// so that migrated users sign in with the password they had. At the first
// sign-in that proves the password, the hash is replaced by an argon2id
// one (UpgradeHash): a foreign hash lives until its user next signs in.
//
// The formats, each a PHC-like string:
//
//	$2a$10$…, $2b$…, $2y$…                 bcrypt (Modular Crypt Format)
//	$pbkdf2-sha256$i=27500,l=32$salt$key   PBKDF2 with HMAC-SHA-256; -sha512, -sha1 (or $pbkdf2$, SHA-1)
//	$argon2i$v=19$m=…,t=…,p=…$salt$key     Argon2i (Argon2id is the server's own)
//
// salt and key in standard base64, padding optional. Every cost is
// bounded, so that an imported hash cannot ask for minutes of CPU or
// gigabytes of memory per sign-in.

// Bounds of the costs a foreign hash may ask for.
const (
	maxPBKDF2Iterations = 5_000_000
	maxBcryptCost       = 15
	minForeignSalt      = 4
	maxForeignSalt      = 1024
)

// Hash formats, as HashFormat names them.
const (
	FormatArgon2id = "argon2id"
	FormatArgon2i  = "argon2i"
	FormatBcrypt   = "bcrypt"
	FormatPBKDF2   = "pbkdf2-sha1"
	FormatPBKDF256 = "pbkdf2-sha256"
	FormatPBKDF512 = "pbkdf2-sha512"
)

type pbkdf2Params struct {
	algorithm  string
	hash       func() hash.Hash
	iterations int
	salt, key  []byte
}

// pbkdf2Hashes are the HMACs of the PBKDF2 formats, by the name in the
// hash string.
var pbkdf2Hashes = map[string]func() hash.Hash{
	"pbkdf2": sha1.New, FormatPBKDF2: sha1.New, FormatPBKDF256: sha256.New, FormatPBKDF512: sha512.New,
}

// decodeB64 reads standard base64 with or without padding.
func decodeB64(s string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

func parsePBKDF2(h string) (*pbkdf2Params, error) {
	parts := strings.Split(h, "$")
	if len(parts) != 5 || parts[0] != "" {
		return nil, ErrBadHash
	}
	newHash, ok := pbkdf2Hashes[parts[1]]
	if !ok {
		return nil, ErrBadHash
	}
	p := &pbkdf2Params{algorithm: parts[1], hash: newHash}
	if p.algorithm == "pbkdf2" {
		p.algorithm = FormatPBKDF2
	}
	length := -1
	for _, kv := range strings.Split(parts[2], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, ErrBadHash
		}
		switch k {
		case "i":
			p.iterations = n
		case "l":
			length = n
		default:
			return nil, ErrBadHash
		}
	}
	var err error
	if p.salt, err = decodeB64(parts[3]); err != nil || len(p.salt) < minForeignSalt || len(p.salt) > maxForeignSalt {
		return nil, ErrBadHash
	}
	if p.key, err = decodeB64(parts[4]); err != nil || len(p.key) < 16 || len(p.key) > 128 {
		return nil, ErrBadHash
	}
	if p.iterations < 1 || p.iterations > maxPBKDF2Iterations || length != -1 && length != len(p.key) {
		return nil, ErrBadHash
	}
	return p, nil
}

// PBKDF2Hash is the stored form of a PBKDF2 hash: algorithm is
// pbkdf2-sha1, pbkdf2-sha256 or pbkdf2-sha512. It is checked
// (ValidatePasswordHash) before it is stored.
func PBKDF2Hash(algorithm string, iterations int, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$%s$i=%d,l=%d$%s$%s", algorithm, iterations, len(key), b64.EncodeToString(salt), b64.EncodeToString(key))
}

// Argon2Hash is the stored form of an Argon2 hash of version 19 (1.3):
// variant is argon2id or argon2i.
func Argon2Hash(variant string, memoryKiB, iterations uint32, threads uint8, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$%s$v=%d$m=%d,t=%d,p=%d$%s$%s", variant, argon2.Version, memoryKiB, iterations, threads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

func parseArgon2i(h string) (*argon2Params, error) {
	if !strings.HasPrefix(h, "$argon2i$") {
		return nil, ErrBadHash
	}
	return parseArgon2id("$argon2id$" + strings.TrimPrefix(h, "$argon2i$"))
}

func checkBcrypt(h string) error {
	if len(h) < 4 || h[0] != '$' || h[1] != '2' {
		return ErrBadHash
	}
	cost, err := bcrypt.Cost([]byte(h))
	if err != nil || cost > maxBcryptCost {
		return ErrBadHash
	}
	return nil
}

// HashFormat names the format of a stored hash (the Format constants), or
// answers ErrBadHash for one this server cannot check.
func HashFormat(h string) (string, error) {
	switch {
	case strings.HasPrefix(h, "$argon2id$"):
		if _, err := parseArgon2id(h); err != nil {
			return "", err
		}
		return FormatArgon2id, nil
	case strings.HasPrefix(h, "$argon2i$"):
		if _, err := parseArgon2i(h); err != nil {
			return "", err
		}
		return FormatArgon2i, nil
	case strings.HasPrefix(h, "$2"):
		if err := checkBcrypt(h); err != nil {
			return "", err
		}
		return FormatBcrypt, nil
	case strings.HasPrefix(h, "$pbkdf2"):
		p, err := parsePBKDF2(h)
		if err != nil {
			return "", err
		}
		return p.algorithm, nil
	}
	return "", ErrBadHash
}

// verifyForeign checks password against a hash of another product's
// format; the caller holds a hash slot.
func verifyForeign(h, password string) (bool, error) {
	switch {
	case strings.HasPrefix(h, "$argon2i$"):
		p, err := parseArgon2i(h)
		if err != nil {
			return false, err
		}
		key := argon2.Key([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
		return subtle.ConstantTimeCompare(key, p.key) == 1, nil
	case strings.HasPrefix(h, "$2"):
		if err := checkBcrypt(h); err != nil {
			return false, err
		}
		err := bcrypt.CompareHashAndPassword([]byte(h), []byte(password))
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) || errors.Is(err, bcrypt.ErrPasswordTooLong) {
			return false, nil
		}
		return err == nil, err
	case strings.HasPrefix(h, "$pbkdf2"):
		p, err := parsePBKDF2(h)
		if err != nil {
			return false, err
		}
		key := pbkdf2.Key([]byte(password), p.salt, p.iterations, len(p.key), p.hash)
		return subtle.ConstantTimeCompare(key, p.key) == 1, nil
	}
	return false, ErrBadHash
}

// NeedsRehash says whether a stored hash is of another product's format,
// to be replaced by an argon2id hash once its password is proved.
func NeedsRehash(h string) bool {
	return h != "" && !strings.HasPrefix(h, "$argon2id$")
}

// UpgradeHash replaces user's foreign hash (NeedsRehash) by an argon2id
// hash of password, which has just been proved right: a migrated user's
// hash is argon2id from their first sign-in on. The write is conditional
// on the hash still being the one checked, so that it never undoes a
// password change that raced it; the password's age, history and reset
// flag are left as they are. Only a store failure is an error: no free
// hash slot leaves the upgrade to the next sign-in.
func (c *Core) UpgradeHash(ctx context.Context, realm *store.Realm, user *store.User, password string) error {
	if user == nil || !NeedsRehash(user.PasswordHash) {
		return nil
	}
	if ok, err := c.VerifyPassword(ctx, user.PasswordHash, password); err != nil || !ok {
		return nil
	}
	fresh, err := c.HashPassword(ctx, password)
	if err != nil {
		return nil
	}
	old := user.PasswordHash
	switch err := c.store.ReplacePasswordHash(ctx, realm.ID, user.ID, old, fresh); {
	case errors.Is(err, store.ErrNotFound):
		return nil // changed meanwhile
	case err != nil:
		return err
	}
	user.PasswordHash = fresh
	c.log.InfoContext(ctx, "password hash upgraded to argon2id", "realm", realm.Name, "user", user.ID, "from", formatName(old))
	return nil
}

func formatName(h string) string {
	f, err := HashFormat(h)
	if err != nil {
		return "unknown"
	}
	return f
}
