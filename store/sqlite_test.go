package store

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests of SQLite itself: the file, its encryption, its pragmas. The
// conformance suite, which every backend passes, is in storetest.

// TestSQLiteSecretsEncryptedAtRest reads the columns that hold secrets as
// they are in the file: sealed (or hashed), and bound to their row, so that
// a ciphertext copied onto another row does not open there.
func TestSQLiteSecretsEncryptedAtRest(t *testing.T) {
	t.Run("realm secrets", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "idenplane.db")
		s := storeTestOpen(t, path, storeTestKey)
		a := mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		b := testRealm("22222222-2222-4222-8222-222222222222", "beta", 2000)
		b.SMTPPassword = a.SMTPPassword
		mustCreateRealm(t, s, b)

		raw := func(id string) (pw, cfg []byte) {
			t.Helper()
			err := s.readerDB.QueryRow("SELECT smtp_password, email_provider_config FROM realms WHERE id = $1", id).Scan(&pw, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			return pw, cfg
		}
		pwA, cfgA := raw(a.ID)
		pwB, _ := raw(b.ID)
		if bytes.Contains(pwA, []byte(a.SMTPPassword)) || bytes.Contains(cfgA, []byte("key-acme")) || bytes.Contains(cfgA, []byte("apiKey")) {
			t.Fatal("secrets are stored in plaintext")
		}
		if len(pwA) <= len(a.SMTPPassword) {
			t.Fatalf("smtp_password column %x is not a sealed ciphertext", pwA)
		}
		if bytes.Equal(pwA, pwB) {
			t.Fatal("the same password encrypts to the same bytes: nonces are not random")
		}

		// The ciphertext is bound to its row: copied into another, it won't open.
		if _, err := s.writerDB.Exec("UPDATE realms SET smtp_password = $1 WHERE id = $2", pwA, b.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRealm(testCtx, "beta"); err == nil || errors.Is(err, ErrNotFound) {
			t.Fatalf("GetRealm with a ciphertext from another row: %v, want a decryption error", err)
		}
		if _, err := s.GetRealm(testCtx, "acme"); err != nil {
			t.Fatalf("the source row is unharmed: %v", err)
		}

		// A cleared secret leaves no ciphertext behind.
		a.SMTPPassword, a.EmailProviderConfig = "", nil
		if err := s.UpdateRealm(testCtx, a); err != nil {
			t.Fatal(err)
		}
		if pw, cfg := raw(a.ID); pw != nil || cfg != nil {
			t.Fatalf("cleared secrets still hold %d and %d bytes", len(pw), len(cfg))
		}
	})

	t.Run("TOTP secret", func(t *testing.T) {
		s := newSQLiteTestStore(t)
		testFixture(t, s)
		testBeginTOTP(t, s, "c1", "alice", "plain-secret-alice")
		testBeginTOTP(t, s, "c2", "bob", "plain-secret-bob")
		var sealed []byte
		if err := s.readerDB.QueryRow(`SELECT secret FROM user_credentials WHERE id = 'c1'`).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, []byte("plain-secret")) {
			t.Fatal("the TOTP secret is stored in the clear")
		}
		// A ciphertext moved to another user's row does not open there.
		if _, err := s.writerDB.Exec(`UPDATE user_credentials SET secret = $1 WHERE id = 'c2'`, sealed); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PendingCredential(testCtx, testRealmID, "bob", CredentialTOTP); err == nil {
			t.Fatal("a secret copied to another row opened")
		}
	})

	t.Run("WebAuthn credential", func(t *testing.T) {
		s := newSQLiteTestStore(t)
		testFixture(t, s)
		c := &WebAuthnCredential{ID: "w1", RealmID: testRealmID, UserID: "alice", Name: "key", CredentialID: []byte("cred-1"),
			Data: []byte(`{"publicKey":"secret-looking-w1"}`), CreatedAt: 1000}
		if err := s.AddWebAuthnCredential(testCtx, c); err != nil {
			t.Fatal(err)
		}
		var sealed []byte
		if err := s.readerDB.QueryRow(`SELECT secret FROM user_credentials WHERE id = 'w1'`).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, []byte("secret-looking")) {
			t.Fatal("the credential record is stored in the clear")
		}
	})

	t.Run("WebAuthn ceremony ID", func(t *testing.T) {
		s := newSQLiteTestStore(t)
		testFixture(t, s)
		c := &WebAuthnCeremony{ID: "ceremony-alice", RealmID: testRealmID, UserID: "alice", Kind: CeremonyLogin,
			SessionData: []byte(`{"challenge":"c"}`), ExpiresAt: 1000}
		if err := s.CreateWebAuthnCeremony(testCtx, c); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.readerDB.QueryRow(`SELECT count(*) FROM webauthn_ceremonies WHERE id_hash = 'ceremony-alice'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("a ceremony ID is stored in the clear (%d rows, %v)", n, err)
		}
	})

	t.Run("signing keys", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "idenplane.db")
		s := storeTestOpen(t, path, storeTestKey)
		mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
		a, b := testSigningKey(t, s, "key-a", testRealmID, KeyActive), testSigningKey(t, s, "key-b", testRealmID, KeyNext)

		// Neither the database file nor its log holds a private key in the clear.
		for _, suffix := range []string{"", "-wal"} {
			data, err := os.ReadFile(path + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(data, a.PrivateKey[:64]) || bytes.Contains(data, b.PrivateKey[:64]) {
				t.Fatalf("a private key is stored in the clear in the database file%s", suffix)
			}
		}

		// A sealed key copied onto another key's row does not open there.
		if _, err := s.writerDB.Exec("UPDATE signing_keys SET private_key = (SELECT private_key FROM signing_keys WHERE id = 'key-a') WHERE id = 'key-b'"); err != nil {
			t.Fatal(err)
		}
		if der, err := s.SigningKeyPrivate(testCtx, testRealmID, "key-b"); err == nil {
			t.Fatalf("key-a's ciphertext opened as key-b: %d bytes", len(der))
		}

		// Another master key cannot open it.
		aead, err := newAEAD(bytes.Repeat([]byte{0x43}, MasterKeySize))
		if err != nil {
			t.Fatal(err)
		}
		wrong := *s
		wrong.aead = aead
		if der, err := wrong.SigningKeyPrivate(testCtx, testRealmID, "key-a"); err == nil {
			t.Fatalf("a wrong master key opened key-a: %d bytes", len(der))
		}
		if der, err := s.SigningKeyPrivate(testCtx, testRealmID, "key-a"); err != nil || !bytes.Equal(der, a.PrivateKey) {
			t.Fatalf("key-a with the right master key: %v", err)
		}
	})

	t.Run("SAML keys", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "idenplane.db")
		s := storeTestOpen(t, path, storeTestKey)
		mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
		keys := map[string]*SAMLKey{}
		for _, id := range []string{"saml-a", "saml-b"} {
			priv, cert := make([]byte, 1200), make([]byte, 800)
			if _, err := rand.Read(priv); err != nil {
				t.Fatal(err)
			}
			status := KeyActive
			if id == "saml-b" {
				status = KeyNext
			}
			keys[id] = &SAMLKey{ID: id, RealmID: testRealmID, PrivateKey: priv, Certificate: cert, Status: status, CreatedAt: 1000}
			if err := s.CreateSAMLKey(testCtx, keys[id]); err != nil {
				t.Fatal(err)
			}
		}
		for _, suffix := range []string{"", "-wal"} {
			data, err := os.ReadFile(path + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			for id, k := range keys {
				if bytes.Contains(data, k.PrivateKey[:64]) {
					t.Fatalf("SAML key %s is stored in the clear in the database file%s", id, suffix)
				}
			}
		}
		if _, err := s.writerDB.Exec("UPDATE saml_keys SET private_key = (SELECT private_key FROM saml_keys WHERE id = 'saml-a') WHERE id = 'saml-b'"); err != nil {
			t.Fatal(err)
		}
		if der, err := s.SAMLKeyPrivate(testCtx, testRealmID, "saml-b"); err == nil {
			t.Fatalf("saml-a's ciphertext opened as saml-b: %d bytes", len(der))
		}
		if der, err := s.SAMLKeyPrivate(testCtx, testRealmID, "saml-a"); err != nil || !bytes.Equal(der, keys["saml-a"].PrivateKey) {
			t.Fatalf("saml-a with the right master key: %v", err)
		}
	})

	t.Run("realm CA key", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "idenplane.db")
		s := storeTestOpen(t, path, storeTestKey)
		mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
		const otherID = "33333333-3333-4333-8333-333333333333"
		mustCreateRealm(t, s, testRealm(otherID, "other", 2000))
		key := bytes.Repeat([]byte("ca private key "), 8)
		for _, id := range []string{testRealmID, otherID} {
			if err := s.CreateRealmCA(testCtx, &RealmCA{RealmID: id, Certificate: "PEM", PrivateKey: key, CreatedAt: 1}); err != nil {
				t.Fatal(err)
			}
		}
		for _, suffix := range []string{"", "-wal"} {
			data, err := os.ReadFile(path + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(data, key[:32]) {
				t.Fatalf("the CA key is stored in the clear in the database file%s", suffix)
			}
		}
		if ca, err := s.GetRealmCA(testCtx, testRealmID); err != nil || !bytes.Equal(ca.PrivateKey, key) {
			t.Fatalf("CA key read back: %v", err)
		}
		if err := s.CreateRealmCA(testCtx, &RealmCA{RealmID: testRealmID, Certificate: "PEM", PrivateKey: key}); !errors.Is(err, ErrConflict) {
			t.Fatalf("a second CA: %v, want ErrConflict", err)
		}
		// Bound to its realm: copied onto another's row, it does not open.
		if _, err := s.writerDB.Exec("UPDATE nhi_realm_cas SET private_key = (SELECT private_key FROM nhi_realm_cas WHERE realm_id = $1) WHERE realm_id = $2",
			testRealmID, otherID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRealmCA(testCtx, otherID); err == nil {
			t.Fatal("one realm's sealed CA key opened as another's")
		}
	})
}

func TestSQLiteWrongMasterKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idenplane.db")
	s, err := Open(testCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: storeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	mustCreateRealm(t, s, &Realm{ID: "22222222-2222-4222-8222-222222222222", Name: "plain", CreatedAt: 2000})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	otherKey := bytes.Repeat([]byte{0x17}, MasterKeySize)

	checkReads := func(t *testing.T, other *Store) {
		t.Helper()
		r, err := other.GetRealm(testCtx, "acme")
		if err == nil {
			t.Fatalf("GetRealm with the wrong master key returned %q, want an error", r.SMTPPassword)
		}
		if errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "master key") {
			t.Fatalf("wrong-key error %q should say the master key may be wrong", err)
		}
		if _, err := other.ListRealms(testCtx); err == nil {
			t.Fatal("ListRealms with the wrong master key succeeded")
		}
		// A realm without secrets reads fine: the failure is the key, not the file.
		if _, err := other.GetRealm(testCtx, "plain"); err != nil {
			t.Fatalf("realm without secrets: %v", err)
		}
	}

	t.Run("open", func(t *testing.T) {
		// Open may refuse the key outright; if it lets it through, every
		// secret must fail to open rather than come back as garbage.
		other, err := Open(testCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: otherKey})
		if err != nil {
			if !strings.Contains(err.Error(), "master key") {
				t.Fatalf("Open with the wrong key: %v, want an error naming the master key", err)
			}
			return
		}
		defer other.Close()
		checkReads(t, other)
	})

	t.Run("read", func(t *testing.T) {
		// The store opened with the right key, then reading with another.
		other := storeTestOpen(t, path, storeTestKey)
		aead, err := newAEAD(otherKey)
		if err != nil {
			t.Fatal(err)
		}
		other.aead = aead
		checkReads(t, other)
	})

	for _, n := range []int{0, 16, 31, 33} {
		if _, err := Open(testCtx, Config{Path: path, Schema: storeTestSchema(t), MasterKey: make([]byte, n)}); err == nil {
			t.Fatalf("Open with a %d-byte master key succeeded", n)
		}
	}
	// The right key still opens it.
	if _, err := storeTestOpen(t, path, storeTestKey).GetRealm(testCtx, "acme"); err != nil {
		t.Fatalf("reopen with the right key: %v", err)
	}
}

func TestSQLitePragmas(t *testing.T) {
	s := newSQLiteTestStore(t)
	var mode string
	if err := s.writerDB.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("writer journal_mode %q (%v), want wal", mode, err)
	}
	for _, c := range []struct {
		name   string
		pragma string
		want   int
	}{
		{"writer foreign_keys", "foreign_keys", 1},
		{"writer synchronous FULL", "synchronous", 2},
		{"writer busy_timeout", "busy_timeout", 10000},
		{"writer query_only", "query_only", 0},
	} {
		var v int
		if err := s.writerDB.QueryRow("PRAGMA " + c.pragma).Scan(&v); err != nil || v != c.want {
			t.Errorf("%s = %d (%v), want %d", c.name, v, err, c.want)
		}
	}
	var fk, qo, cache int
	if err := s.readerDB.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("reader foreign_keys = %d (%v), want 1", fk, err)
	}
	if err := s.readerDB.QueryRow("PRAGMA cache_size").Scan(&cache); err != nil || cache != -readerCacheKiB {
		t.Errorf("reader cache_size = %d (%v), want %d (KiB)", cache, err, -readerCacheKiB)
	}
	if err := s.readerDB.QueryRow("PRAGMA query_only").Scan(&qo); err != nil || qo != 1 {
		t.Errorf("reader query_only = %d (%v), want 1", qo, err)
	}
	if _, err := s.readerDB.Exec("INSERT INTO schema_version (version) VALUES (999)"); err == nil {
		t.Error("the reader pool accepted a write")
	}
	if st := s.writerDB.Stats(); st.MaxOpenConnections != 1 {
		t.Errorf("writer pool allows %d connections, want 1", st.MaxOpenConnections)
	}
	var verdict string
	if err := s.readerDB.QueryRowContext(testCtx, "PRAGMA integrity_check").Scan(&verdict); err != nil || verdict != "ok" {
		t.Errorf("integrity check %q, %v", verdict, err)
	}
}
