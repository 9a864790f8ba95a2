package identity

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/pbkdf2"
)

// foreignHashes are hashes of "correct horse" in every foreign format the
// server checks, as an import stores them.
func foreignHashes(t *testing.T) map[string]string {
	t.Helper()
	salt := []byte("0123456789abcdef")
	pw := []byte("correct horse")
	b, err := bcrypt.GenerateFromPassword(pw, bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	kdf := func(h func() hash.Hash, n int) []byte { return pbkdf2.Key(pw, salt, 1000, n, h) }
	return map[string]string{
		FormatBcrypt:   string(b),
		FormatPBKDF2:   PBKDF2Hash(FormatPBKDF2, 1000, salt, kdf(sha1.New, 64)),
		FormatPBKDF256: PBKDF2Hash(FormatPBKDF256, 1000, salt, kdf(sha256.New, 32)),
		FormatPBKDF512: PBKDF2Hash(FormatPBKDF512, 1000, salt, kdf(sha512.New, 64)),
		FormatArgon2i:  Argon2Hash(FormatArgon2i, 1024, 2, 1, salt, argon2.Key(pw, salt, 2, 1024, 1, 32)),
		FormatArgon2id: Argon2Hash(FormatArgon2id, 1024, 2, 1, salt, argon2.IDKey(pw, salt, 2, 1024, 1, 32)),
	}
}

func TestForeignHashesVerify(t *testing.T) {
	e := newTestEnv(t)
	for format, h := range foreignHashes(t) {
		t.Run(format, func(t *testing.T) {
			if got, err := HashFormat(h); err != nil || got != format {
				t.Fatalf("HashFormat(%s) = %q, %v", h, got, err)
			}
			if err := ValidatePasswordHash(h); err != nil {
				t.Fatalf("ValidatePasswordHash: %v", err)
			}
			for pw, want := range map[string]bool{"correct horse": true, "wrong horse": false} {
				if ok, err := e.core.VerifyPassword(t.Context(), h, pw); err != nil || ok != want {
					t.Errorf("VerifyPassword(%q) = %v, %v; want %v", pw, ok, err, want)
				}
			}
			if NeedsRehash(h) != (format != FormatArgon2id) {
				t.Errorf("NeedsRehash = %v", NeedsRehash(h))
			}
		})
	}
}

// A padded base64 and the $pbkdf2$ name of SHA-1 (passlib's) are read too.
func TestForeignHashSpellings(t *testing.T) {
	h := foreignHashes(t)[FormatPBKDF2]
	padded := strings.Replace(h, "$pbkdf2-sha1$", "$pbkdf2$", 1)
	if f, err := HashFormat(padded); err != nil || f != FormatPBKDF2 {
		t.Fatalf("HashFormat(%s) = %q, %v", padded, f, err)
	}
}

func TestForeignHashesRefused(t *testing.T) {
	salt := []byte("0123456789abcdef")
	key := make([]byte, 32)
	expensive, _ := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost)
	for name, h := range map[string]string{
		"md5 crypt":             "$1$saltsalt$abcdefghijklmnopqrstuv",
		"unknown pbkdf2":        strings.Replace(PBKDF2Hash(FormatPBKDF256, 1000, salt, key), "sha256", "md5", 1),
		"too many iterations":   PBKDF2Hash(FormatPBKDF256, maxPBKDF2Iterations+1, salt, key),
		"zero iterations":       PBKDF2Hash(FormatPBKDF256, 0, salt, key),
		"wrong length":          strings.Replace(PBKDF2Hash(FormatPBKDF256, 1000, salt, key), "l=32", "l=31", 1),
		"short key":             PBKDF2Hash(FormatPBKDF256, 1000, salt, key[:8]),
		"bcrypt cost too high":  strings.Replace(string(expensive), "$04$", "$16$", 1),
		"argon2d":               strings.Replace(Argon2Hash(FormatArgon2i, 1024, 2, 1, salt, key), "argon2i", "argon2d", 1),
		"argon2i huge memory":   Argon2Hash(FormatArgon2i, 1<<22, 2, 1, salt, key),
		"argon2i old version":   strings.Replace(Argon2Hash(FormatArgon2i, 1024, 2, 1, salt, key), "v=19", "v=16", 1),
		"plain text":            "hunter2",
		"empty":                 "",
		"pbkdf2 bad parameters": "$pbkdf2-sha256$rounds=1000$c2FsdHNhbHQ$" + strings.Repeat("A", 43),
	} {
		if _, err := HashFormat(h); err == nil {
			t.Errorf("%s: HashFormat(%s) accepted", name, h)
		}
	}
}

// A migrated user's foreign hash is checked at sign-in and becomes
// argon2id in that sign-in; the password's age and reset flag stay.
func TestSignInUpgradesForeignHash(t *testing.T) {
	e := newTestEnv(t)
	for format, h := range foreignHashes(t) {
		if format == FormatArgon2id {
			continue
		}
		t.Run(format, func(t *testing.T) {
			u, err := e.core.CreateUser(t.Context(), e.store, e.realm, NewUser{Username: "u-" + format, PasswordHash: h,
				PasswordChangedAt: 1234})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.core.CheckCredentials(t.Context(), e.realm, u.Username, "wrong horse", "192.0.2.1"); err == nil {
				t.Fatal("a wrong password passed")
			}
			if got, _ := e.store.GetUser(t.Context(), e.realm.ID, u.ID); got.PasswordHash != h {
				t.Fatal("a refused sign-in changed the hash")
			}
			if _, err := e.core.CheckCredentials(t.Context(), e.realm, u.Username, "correct horse", "192.0.2.1"); err != nil {
				t.Fatalf("sign-in with the original password: %v", err)
			}
			got, err := e.store.GetUser(t.Context(), e.realm.ID, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got.PasswordHash, "$argon2id$") || got.PasswordChangedAt != 1234 {
				t.Fatalf("after the sign-in: hash %s, changed at %d", got.PasswordHash, got.PasswordChangedAt)
			}
			if _, err := e.core.CheckCredentials(t.Context(), e.realm, u.Username, "correct horse", "192.0.2.1"); err != nil {
				t.Fatalf("sign-in with the upgraded hash: %v", err)
			}
		})
	}
}
