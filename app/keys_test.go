package app

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/store"
)

// keysTestClock is a clock the test moves by hand.
type keysTestClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *keysTestClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *keysTestClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *keysTestClock) advance(d time.Duration) { c.set(c.Now().Add(d)) }

// keysTestServer is a test server on a hand-moved clock. The clock starts
// at the real time: a realm's first key is stamped by the store's clock.
func keysTestServer(t *testing.T) (*testServer, *keysTestClock) {
	t.Helper()
	clock := &keysTestClock{now: time.Now().Truncate(time.Millisecond)}
	return newTestServer(t, func(c *Config) { c.Now = clock.Now }), clock
}

// keysTestRealm creates a realm through the API and loads it.
func keysTestRealm(s *testServer, name string) *store.Realm {
	s.t.Helper()
	s.createRealm(name)
	realm, err := s.store.GetRealm(context.Background(), name)
	if err != nil {
		s.t.Fatal(err)
	}
	return realm
}

func keysTestList(s *testServer, realm string) []signingkeys.KeyRep {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/keys", nil)
	mustStatus(s.t, r, http.StatusOK)
	var out []signingkeys.KeyRep
	r.decode(s.t, &out)
	return out
}

// keysTestRotate posts a rotation (body nil: none) and returns the keys.
func keysTestRotate(s *testServer, realm string, body any) []signingkeys.KeyRep {
	s.t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/keys/rotate", body)
	mustStatus(s.t, r, http.StatusOK)
	var out []signingkeys.KeyRep
	r.decode(s.t, &out)
	return out
}

// keysTestStates sums keys up as "kid=status" in list order.
func keysTestStates(keys []signingkeys.KeyRep) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, k.KID+"="+k.Status)
	}
	return strings.Join(parts, " ")
}

func keysTestFind(t *testing.T, keys []signingkeys.KeyRep, status string) signingkeys.KeyRep {
	t.Helper()
	for _, k := range keys {
		if k.Status == status {
			return k
		}
	}
	t.Fatalf("no %s key in %s", status, keysTestStates(keys))
	return signingkeys.KeyRep{}
}

// keysTestPayload is a typical access token's claims.
var keysTestPayload = []byte(`{"exp":1795000300,"iat":1795000000,"auth_time":1794999990,` +
	`"jti":"5f0c8b1e-2d4a-4c1b-9f3e-7a6b5c4d3e2f","iss":"http://localhost:3000/realms/acme",` +
	`"aud":["account","web"],"sub":"0f8fad5b-d9cb-469f-a165-70867728950e","typ":"Bearer","azp":"web",` +
	`"sid":"b1e2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d","scope":"openid profile email",` +
	`"realm_access":{"roles":["offline_access","uma_authorization","user"]},` +
	`"resource_access":{"account":{"roles":["manage-account","view-profile"]}},` +
	`"email_verified":true,"name":"Alice Liddell","preferred_username":"alice",` +
	`"given_name":"Alice","family_name":"Liddell","email":"alice@acme.test"}`)

// keysTestSign signs payload with the realm's active key, as the token
// endpoint does, and returns the compact JWS and the key used.
func keysTestSign(t testing.TB, s *testServer, realm *store.Realm, payload []byte) (string, *signingkeys.Key) {
	t.Helper()
	k, err := s.app.signingKeys.Active(context.Background(), realm)
	if err != nil {
		t.Fatalf("signing key of %s: %v", realm.Name, err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Algorithm, Key: jose.JSONWebKey{Key: k.Key, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatalf("signer: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token, k
}

var errKeysTestUnpublished = errors.New("the token's kid is not in the realm's key set")

// keysTestVerify checks token against the realm's published key set, as a
// relying party does, and returns the kid it was signed with.
func keysTestVerify(t *testing.T, s *testServer, realm *store.Realm, token string) (string, error) {
	t.Helper()
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA})
	if err != nil {
		t.Fatalf("parse token: %v", err)
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, err := s.app.signingKeys.Public(context.Background(), realm)
	if err != nil {
		t.Fatalf("public keys of %s: %v", realm.Name, err)
	}
	for _, k := range keys {
		if k.KeyID == kid {
			payload, err := jws.Verify(k)
			if err == nil && !bytes.Equal(payload, keysTestPayload) {
				t.Fatalf("verified payload differs: %s", payload)
			}
			return kid, err
		}
	}
	return kid, errKeysTestUnpublished
}

func keysTestPublishedKIDs(t *testing.T, s *testServer, realm *store.Realm) []string {
	t.Helper()
	keys, err := s.app.signingKeys.Public(context.Background(), realm)
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range keys {
		if !k.IsPublic() {
			t.Fatalf("published key %s is private", k.KeyID)
		}
		kids = append(kids, k.KeyID)
	}
	return kids
}

func keysTestMustEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Fatalf("%s:\n got %s\nwant %s", what, gj, wj)
	}
}

func TestKeysNewRealm(t *testing.T) {
	s, clock := keysTestServer(t)
	s.createRealm("acme")
	keys := keysTestList(s, "acme")
	if len(keys) != 1 {
		t.Fatalf("a new realm has keys %s, want one active", keysTestStates(keys))
	}
	k := keys[0]
	if k.Status != store.KeyActive || k.Algorithm != "RS256" || k.CreatedTimestamp != clock.Now().UnixMilli() ||
		k.ActivatedTimestamp != k.CreatedTimestamp || k.RetiredTimestamp != 0 || k.PublishUntil != 0 {
		t.Fatalf("first key: %+v", k)
	}
	var jwk jose.JSONWebKey
	if err := json.Unmarshal(k.PublicKey, &jwk); err != nil {
		t.Fatal(err)
	}
	pub, ok := jwk.Key.(*rsa.PublicKey)
	if !ok || pub.N.BitLen() != RSAKeyBits || jwk.KeyID != k.KID || jwk.Algorithm != "RS256" || jwk.Use != "sig" {
		t.Fatalf("public key %s: %T", k.PublicKey, jwk.Key)
	}
	// The kid is the key's RFC 7638 thumbprint.
	thumb, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil || base64.RawURLEncoding.EncodeToString(thumb) != k.KID {
		t.Fatalf("kid %s is not the key's thumbprint (%v)", k.KID, err)
	}
	r := s.admin(http.MethodGet, "/admin/realms/acme/keys/config", nil)
	mustStatus(t, r, http.StatusOK)
	keysTestMustEqual(t, "config", r.object(t), map[string]any{"algorithm": "RS256", "rotationDays": 90})

	// Each realm has keys of its own.
	s.createRealm("beta")
	if other := keysTestList(s, "beta"); len(other) != 1 || other[0].KID == k.KID {
		t.Fatalf("second realm's keys: %s", keysTestStates(other))
	}
}

func TestKeysSignVerifyPerAlgorithm(t *testing.T) {
	s, _ := keysTestServer(t)
	other := keysTestRealm(s, "other")
	for _, tc := range []struct {
		alg     jose.SignatureAlgorithm
		keyType func(crypto.Signer) bool
	}{
		{jose.RS256, func(k crypto.Signer) bool {
			rk, ok := k.(*rsa.PrivateKey)
			return ok && rk.N.BitLen() == 2048
		}},
		{jose.ES256, func(k crypto.Signer) bool {
			ek, ok := k.(*ecdsa.PrivateKey)
			return ok && ek.Curve == elliptic.P256()
		}},
		{jose.EdDSA, func(k crypto.Signer) bool {
			_, ok := k.(ed25519.PrivateKey)
			return ok
		}},
	} {
		t.Run(string(tc.alg), func(t *testing.T) {
			name := strings.ToLower(string(tc.alg))
			realm := keysTestRealm(s, name)
			keys := keysTestRotate(s, name, map[string]any{"algorithm": tc.alg, "immediate": true})
			active := keysTestFind(t, keys, store.KeyActive)
			if active.Algorithm != string(tc.alg) {
				t.Fatalf("active key after rotating to %s: %+v", tc.alg, active)
			}
			token, k := keysTestSign(t, s, realm, keysTestPayload)
			if k.ID != active.KID || k.Algorithm != tc.alg || !tc.keyType(k.Key) {
				t.Fatalf("signing key %s %s %T, want %s %s", k.ID, k.Algorithm, k.Key, active.KID, tc.alg)
			}
			jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{tc.alg})
			if err != nil {
				t.Fatalf("token is not %s: %v", tc.alg, err)
			}
			if h := jws.Signatures[0].Header; h.KeyID != k.ID || h.Algorithm != string(tc.alg) {
				t.Fatalf("token header %+v", h)
			}
			if kid, err := keysTestVerify(t, s, realm, token); err != nil || kid != k.ID {
				t.Fatalf("verify with the published key: kid %s, %v", kid, err)
			}

			// The published key really is the check: a changed payload or
			// another realm's key set fails it.
			parts := strings.Split(token, ".")
			forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(bytes.Replace(keysTestPayload, []byte("alice"), []byte("mallory"), 1)) + "." + parts[2]
			if _, err := keysTestVerify(t, s, realm, forged); err == nil || errors.Is(err, errKeysTestUnpublished) {
				t.Fatalf("a forged payload: %v, want a signature failure", err)
			}
			if _, err := keysTestVerify(t, s, other, token); !errors.Is(err, errKeysTestUnpublished) {
				t.Fatalf("verified against another realm's keys: %v", err)
			}
		})
	}
}

// keysTestDBBytes is the database file and its write-ahead log.
func keysTestDBBytes(t *testing.T, s *testServer) []byte {
	t.Helper()
	var all []byte
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(s.dbPath + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, data...)
	}
	return all
}

// keysTestPrivateForms is every form a private key could leak in: its
// PKCS #8 DER, the raw private scalar or seed, and the private JWK's d.
func keysTestPrivateForms(t *testing.T, k crypto.Signer) (der, raw []byte, d string) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		raw = k.D.Bytes()
	case *ecdsa.PrivateKey:
		if raw, err = k.Bytes(); err != nil {
			t.Fatal(err)
		}
	case ed25519.PrivateKey:
		raw = k.Seed()
	}
	j, err := jose.JSONWebKey{Key: k}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(j, &fields); err != nil {
		t.Fatal(err)
	}
	d, _ = fields["d"].(string)
	if d == "" {
		t.Fatalf("private JWK without d: %s", j)
	}
	return der, raw, d
}

func TestKeysPrivateMaterialNeverExposed(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true})
	var bodies [][]byte
	var signers []*signingkeys.Key
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, alg := range []string{"ES256", "EdDSA", "RS256"} {
		r := s.admin(http.MethodPost, "/admin/realms/acme/keys/rotate", map[string]any{"algorithm": alg, "immediate": true})
		mustStatus(t, r, http.StatusOK)
		bodies = append(bodies, r.Body)
		_, k := keysTestSign(t, s, realm, keysTestPayload)
		signers = append(signers, k)
	}
	// A next key too: its private half exists before it signs.
	r := s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"algorithm": "ES256"})
	mustStatus(t, r, http.StatusOK)
	bodies = append(bodies, r.Body)
	keys := keysTestList(s, "acme")
	next := keysTestFind(t, keys, store.KeyNext)
	der, err := s.store.SigningKeyPrivate(context.Background(), realm.ID, next.KID)
	if err != nil {
		t.Fatal(err)
	}
	nextKey, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		t.Fatal(err)
	}
	signers = append(signers, &signingkeys.Key{ID: next.KID, Key: nextKey.(crypto.Signer)})
	if len(keys) != 5 {
		t.Fatalf("keys %s, want next, active and three retired", keysTestStates(keys))
	}

	for _, path := range []string{"/admin/realms/acme/keys", "/admin/realms/acme/keys/config", "/admin/realms/acme",
		"/admin/realms/acme/export?includeSecrets=true&includeUsers=true", "/admin/realms/acme/admin-events"} {
		r := s.admin(http.MethodGet, path, nil)
		mustStatus(t, r, http.StatusOK)
		bodies = append(bodies, r.Body)
	}
	// Public keys show only public members.
	for _, k := range keys {
		var members map[string]any
		if err := json.Unmarshal(k.PublicKey, &members); err != nil {
			t.Fatal(err)
		}
		for m := range members {
			if !slices.Contains([]string{"kty", "kid", "alg", "use", "n", "e", "crv", "x", "y"}, m) {
				t.Fatalf("public key %s has member %q", k.KID, m)
			}
		}
	}

	db := keysTestDBBytes(t, s)
	// The scan sees what is stored: the public halves are there.
	if !bytes.Contains(db, []byte(keys[0].KID)) {
		t.Fatal("the database bytes read do not hold even the public keys")
	}
	for _, k := range signers {
		der, raw, d := keysTestPrivateForms(t, k.Key)
		for i, b := range bodies {
			if bytes.Contains(b, []byte(d)) || bytes.Contains(b, der) || bytes.Contains(b, raw) {
				t.Fatalf("response %d shows the private key of %s: %s", i, k.ID, b)
			}
		}
		if bytes.Contains(db, der) {
			t.Fatalf("the PKCS #8 key of %s is stored in the clear", k.ID)
		}
		if bytes.Contains(db, raw) {
			t.Fatalf("the private scalar of %s is stored in the clear", k.ID)
		}
		if bytes.Contains(db, []byte(d)) {
			t.Fatalf("the private JWK d of %s is stored", k.ID)
		}
	}
}

func TestKeysScheduledRotation(t *testing.T) {
	s, clock := keysTestServer(t)
	realm := keysTestRealm(s, "acme")
	ctx := context.Background()
	// A key stamped by the test's clock, so every time below is exact.
	old := keysTestFind(t, keysTestRotate(s, "acme", map[string]any{"immediate": true}), store.KeyActive)
	t0 := clock.Now()
	oldToken, _ := keysTestSign(t, s, realm, keysTestPayload)

	// A rotation without a body schedules a next key: published, not signing.
	keys := keysTestRotate(s, "acme", nil)
	next := keysTestFind(t, keys, store.KeyNext)
	if keysTestStates(keys) != next.KID+"=next "+old.KID+"=active "+keys[2].KID+"=retired" {
		t.Fatalf("keys after scheduling: %s", keysTestStates(keys))
	}
	if next.Algorithm != "RS256" || next.CreatedTimestamp != t0.UnixMilli() || next.ActivatedTimestamp != 0 {
		t.Fatalf("next key: %+v", next)
	}
	if got := keysTestPublishedKIDs(t, s, realm); !slices.Equal(got[:2], []string{next.KID, old.KID}) {
		t.Fatalf("published %v, want the next key and the active one first", got)
	}
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.ID != old.KID {
		t.Fatalf("the next key signs before its grace period: %s", k.ID)
	}
	// Scheduling again changes nothing.
	if again := keysTestRotate(s, "acme", nil); keysTestStates(again) != keysTestStates(keys) {
		t.Fatalf("a second schedule: %s, was %s", keysTestStates(again), keysTestStates(keys))
	}

	clock.set(t0.Add(signingkeys.PublishGrace - time.Millisecond))
	s.app.signingKeys.RotateDue(ctx)
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.ID != old.KID {
		t.Fatalf("the job activated the next key before its grace period: %s", k.ID)
	}

	promoted := t0.Add(signingkeys.PublishGrace)
	clock.set(promoted)
	s.app.signingKeys.RotateDue(ctx)
	keys = keysTestList(s, "acme")
	active, retired := keysTestFind(t, keys, store.KeyActive), keys[1]
	publishUntil := promoted.Add(300*time.Second + signingkeys.RetiredKeyMargin).UnixMilli()
	if active.KID != next.KID || active.ActivatedTimestamp != promoted.UnixMilli() ||
		retired.KID != old.KID || retired.Status != store.KeyRetired || retired.RetiredTimestamp != promoted.UnixMilli() ||
		retired.PublishUntil != publishUntil {
		t.Fatalf("after promotion: active %+v, retired %+v", active, retired)
	}
	newToken, k := keysTestSign(t, s, realm, keysTestPayload)
	if k.ID != next.KID {
		t.Fatalf("signing with %s after promotion, want %s", k.ID, next.KID)
	}
	for _, token := range []string{oldToken, newToken} {
		if _, err := keysTestVerify(t, s, realm, token); err != nil {
			t.Fatalf("a token no longer verifies after promotion: %v", err)
		}
	}

	// The retired key is published until publishUntil, then dropped.
	clock.set(time.UnixMilli(publishUntil - 1))
	s.app.signingKeys.RotateDue(ctx)
	if _, err := keysTestVerify(t, s, realm, oldToken); err != nil {
		t.Fatalf("the retired key left the key set early: %v", err)
	}
	clock.set(time.UnixMilli(publishUntil))
	if !slices.Contains(keysTestKIDs(keysTestList(s, "acme")), old.KID) {
		t.Fatal("the retired key was deleted before the job ran")
	}
	if _, err := keysTestVerify(t, s, realm, oldToken); !errors.Is(err, errKeysTestUnpublished) {
		t.Fatalf("a retired key past publishUntil is still published: %v", err)
	}
	s.app.signingKeys.RotateDue(ctx)
	if slices.Contains(keysTestKIDs(keysTestList(s, "acme")), old.KID) {
		t.Fatal("the job kept a retired key past publishUntil")
	}
	if _, err := keysTestVerify(t, s, realm, newToken); err != nil {
		t.Fatalf("the active key's token: %v", err)
	}
}

func keysTestKIDs(keys []signingkeys.KeyRep) []string {
	var kids []string
	for _, k := range keys {
		kids = append(kids, k.KID)
	}
	return kids
}

func TestKeysImmediateRotation(t *testing.T) {
	s, clock := keysTestServer(t)
	realm := keysTestRealm(s, "acme")
	first := keysTestFind(t, keysTestList(s, "acme"), store.KeyActive)
	token, _ := keysTestSign(t, s, realm, keysTestPayload)

	now := clock.Now()
	keys := keysTestRotate(s, "acme", map[string]any{"immediate": true})
	if len(keys) != 2 {
		t.Fatalf("keys after an immediate rotation: %s", keysTestStates(keys))
	}
	active, retired := keys[0], keys[1]
	if active.Status != store.KeyActive || active.KID == first.KID || active.Algorithm != "RS256" ||
		active.CreatedTimestamp != now.UnixMilli() || active.ActivatedTimestamp != now.UnixMilli() {
		t.Fatalf("new active key %+v", active)
	}
	if retired.KID != first.KID || retired.Status != store.KeyRetired ||
		retired.PublishUntil != now.Add(15*time.Minute).UnixMilli() { // accessTokenLifespan 300 s + 10 min
		t.Fatalf("retired key %+v", retired)
	}
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.ID != active.KID {
		t.Fatalf("signing with %s, want the new key at once", k.ID)
	}
	if _, err := keysTestVerify(t, s, realm, token); err != nil {
		t.Fatalf("a token of the retired key: %v", err)
	}

	// A scheduled next key of the same algorithm is the one activated: it
	// is already published.
	next := keysTestFind(t, keysTestRotate(s, "acme", nil), store.KeyNext)
	clock.advance(time.Second)
	keys = keysTestRotate(s, "acme", map[string]any{"immediate": true})
	if keys[0].KID != next.KID || keys[0].Status != store.KeyActive || len(keys) != 3 {
		t.Fatalf("after activating the scheduled key: %s", keysTestStates(keys))
	}

	// A scheduled next key of another algorithm gives way to a new key.
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"algorithm": "ES256"}), http.StatusOK)
	pending := keysTestFind(t, keysTestList(s, "acme"), store.KeyNext)
	keys = keysTestRotate(s, "acme", map[string]any{"immediate": true, "algorithm": "EdDSA"})
	if slices.Contains(keysTestKIDs(keys), pending.KID) {
		t.Fatalf("the withdrawn ES256 next key is still stored: %s", keysTestStates(keys))
	}
	if keys[0].Status != store.KeyActive || keys[0].Algorithm != "EdDSA" || len(keys) != 4 {
		t.Fatalf("after rotating to EdDSA: %s", keysTestStates(keys))
	}
	// The algorithm given became the realm's.
	r := s.admin(http.MethodGet, "/admin/realms/acme/keys/config", nil)
	keysTestMustEqual(t, "config after rotating to EdDSA", r.object(t), map[string]any{"algorithm": "EdDSA", "rotationDays": 90})
	// Without an algorithm, a rotation keeps the realm's.
	keys = keysTestRotate(s, "acme", map[string]any{"immediate": true})
	if keys[0].Algorithm != "EdDSA" || keys[0].Status != store.KeyActive {
		t.Fatalf("rotation without an algorithm: %+v", keys[0])
	}
}

func TestKeysAlgorithmChange(t *testing.T) {
	s, clock := keysTestServer(t)
	realm := keysTestRealm(s, "acme")
	old := keysTestFind(t, keysTestRotate(s, "acme", map[string]any{"immediate": true}), store.KeyActive)
	t0 := clock.Now()

	r := s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"algorithm": "ES256"})
	mustStatus(t, r, http.StatusOK)
	keysTestMustEqual(t, "put config", r.object(t), map[string]any{"algorithm": "ES256", "rotationDays": 90})
	keys := keysTestList(s, "acme")
	next := keysTestFind(t, keys, store.KeyNext)
	if next.Algorithm != "ES256" || keysTestFind(t, keys, store.KeyActive).KID != old.KID {
		t.Fatalf("after the algorithm change: %s", keysTestStates(keys))
	}
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.Algorithm != jose.RS256 {
		t.Fatalf("the new algorithm signs before its key's grace period: %s", k.Algorithm)
	}
	// Naming the same algorithm again, or only rotationDays, schedules nothing more.
	for _, body := range []map[string]any{{"algorithm": "ES256"}, {"rotationDays": 30}} {
		mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/keys/config", body), http.StatusOK)
		if got := keysTestStates(keysTestList(s, "acme")); got != keysTestStates(keys) {
			t.Fatalf("PUT %v changed the keys: %s, was %s", body, got, keysTestStates(keys))
		}
	}
	r = s.admin(http.MethodGet, "/admin/realms/acme/keys/config", nil)
	keysTestMustEqual(t, "config", r.object(t), map[string]any{"algorithm": "ES256", "rotationDays": 30})

	clock.set(t0.Add(signingkeys.PublishGrace))
	s.app.signingKeys.RotateDue(context.Background())
	token, k := keysTestSign(t, s, realm, keysTestPayload)
	if k.ID != next.KID || k.Algorithm != jose.ES256 {
		t.Fatalf("after the grace period signing with %s %s, want %s ES256", k.ID, k.Algorithm, next.KID)
	}
	if _, err := keysTestVerify(t, s, realm, token); err != nil {
		t.Fatal(err)
	}

	// null returns the algorithm to its default, which schedules RS256.
	r = s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"algorithm": nil})
	mustStatus(t, r, http.StatusOK)
	keysTestMustEqual(t, "config reset", r.object(t), map[string]any{"algorithm": "RS256", "rotationDays": 30})
	if n := keysTestFind(t, keysTestList(s, "acme"), store.KeyNext); n.Algorithm != "RS256" {
		t.Fatalf("next key after the reset: %+v", n)
	}
}

func TestKeysRotationJob(t *testing.T) {
	s, clock := keysTestServer(t)
	realm := keysTestRealm(s, "acme")
	manual := keysTestRealm(s, "manual")
	ctx := context.Background()
	keysTestRotate(s, "acme", map[string]any{"immediate": true, "algorithm": "EdDSA"})
	manualKey := keysTestFind(t, keysTestRotate(s, "manual", map[string]any{"immediate": true}), store.KeyActive)
	first := keysTestFind(t, keysTestList(s, "acme"), store.KeyActive)
	t0 := clock.Now()
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"rotationDays": 2}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/manual/keys/config", map[string]any{"rotationDays": 0}), http.StatusOK)

	// The next key is published signingkeys.PublishGrace before the active one is
	// rotationDays old, and signs from then on.
	nextDue := t0.Add(2*24*time.Hour - signingkeys.PublishGrace)
	clock.set(nextDue.Add(-time.Millisecond))
	s.app.signingKeys.RotateDue(ctx)
	if keys := keysTestList(s, "acme"); keys[0].KID != first.KID || keys[0].Status != store.KeyActive {
		t.Fatalf("a next key before it was due: %s", keysTestStates(keys))
	}
	clock.set(nextDue)
	s.app.signingKeys.RotateDue(ctx)
	next := keysTestFind(t, keysTestList(s, "acme"), store.KeyNext)
	if next.Algorithm != "EdDSA" || next.CreatedTimestamp != nextDue.UnixMilli() {
		t.Fatalf("scheduled next key: %+v", next)
	}
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.ID != first.KID {
		t.Fatalf("the next key signs at once: %s", k.ID)
	}
	clock.set(t0.Add(2 * 24 * time.Hour))
	s.app.signingKeys.RotateDue(ctx)
	if _, k := keysTestSign(t, s, realm, keysTestPayload); k.ID != next.KID {
		t.Fatalf("after rotationDays signing with %s, want %s", k.ID, next.KID)
	}
	retired := keysTestList(s, "acme")[1]
	if retired.KID != first.KID || retired.Status != store.KeyRetired {
		t.Fatalf("the old key: %+v", retired)
	}

	// Long after, acme has rotated again and deleted its expired keys; the
	// manual realm still has its one key.
	clock.set(t0.Add(1000 * 24 * time.Hour))
	s.app.signingKeys.RotateDue(ctx) // publishes a next key
	clock.advance(signingkeys.PublishGrace)
	s.app.signingKeys.RotateDue(ctx) // activates it
	keys := keysTestList(s, "acme")
	if len(keys) != 2 || keys[0].Status != store.KeyActive || keys[1].KID != next.KID || keys[1].Status != store.KeyRetired {
		t.Fatalf("acme's keys long after: %s", keysTestStates(keys))
	}
	clock.advance(time.Hour)
	s.app.signingKeys.RotateDue(ctx)
	if keys := keysTestList(s, "acme"); len(keys) != 1 || keys[0].Status != store.KeyActive {
		t.Fatalf("acme's keys once the retired one expired: %s", keysTestStates(keys))
	}
	manualKeys := keysTestList(s, "manual")
	if len(manualKeys) != 1 || manualKeys[0].KID != manualKey.KID || manualKeys[0].Status != store.KeyActive {
		t.Fatalf("the manual realm's keys: %s", keysTestStates(manualKeys))
	}
	if _, k := keysTestSign(t, s, manual, keysTestPayload); k.ID != manualKey.KID {
		t.Fatalf("the manual realm rotated: %s", k.ID)
	}
}

func TestKeysRunJobsRotates(t *testing.T) {
	s, clock := keysTestServer(t)
	keysTestRealm(s, "acme")
	first := keysTestFind(t, keysTestList(s, "acme"), store.KeyActive)
	clock.set(time.UnixMilli(first.ActivatedTimestamp).Add(90 * 24 * time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.app.RunJobs(ctx)
		close(done)
	}()
	// The first run happens at once.
	deadline := time.Now().Add(10 * time.Second)
	for len(keysTestList(s, "acme")) != 2 {
		if time.Now().After(deadline) {
			t.Fatal("RunJobs did not publish a next key for a key 90 days old")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if next := keysTestList(s, "acme")[0]; next.Status != store.KeyNext || next.Algorithm != "RS256" {
		t.Fatalf("the job's next key: %+v", next)
	}
}

func TestKeysWrongMasterKey(t *testing.T) {
	s, _ := keysTestServer(t)
	realm := keysTestRealm(s, "acme")
	keysTestRotate(s, "acme", nil) // a next key beside the active one

	// The database does not open under another master key at all.
	_, err := store.Open(context.Background(), store.Config{Path: s.dbPath, Schema: testSchema(t),
		MasterKey: bytes.Repeat([]byte{8}, store.MasterKeySize)})
	if !errors.Is(err, store.ErrWrongMasterKey) {
		t.Fatalf("open with another master key: %v, want ErrWrongMasterKey", err)
	}

	// A sealed key moved onto another key's row is refused rather than
	// signing under the wrong kid.
	writer, _ := s.store.DBs()
	if _, err := writer.Exec(`UPDATE signing_keys SET private_key =
		(SELECT private_key FROM signing_keys WHERE realm_id = $1 AND status = 'next')
		WHERE realm_id = $1 AND status = 'active'`, realm.ID); err != nil {
		t.Fatal(err)
	}
	if k, err := s.app.signingKeys.Active(context.Background(), realm); err == nil {
		t.Fatalf("signing with a key whose ciphertext belongs to another kid: %s", k.ID)
	}
	// Its public keys are still served: they are not sealed.
	if kids := keysTestPublishedKIDs(t, s, realm); len(kids) != 2 {
		t.Fatalf("published %v", kids)
	}
}

func TestKeysRealmDeleteCascades(t *testing.T) {
	s, _ := keysTestServer(t)
	realm := keysTestRealm(s, "acme")
	other := keysTestRealm(s, "other")
	keysTestRotate(s, "acme", map[string]any{"immediate": true})
	keysTestRotate(s, "acme", nil)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/keys/config", map[string]any{"rotationDays": 7}), http.StatusOK)
	keysTestSign(t, s, realm, keysTestPayload)
	_, otherKey := keysTestSign(t, s, other, keysTestPayload)

	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusOK)
	if keys, err := s.store.ListSigningKeys(context.Background(), realm.ID); err != nil || len(keys) != 0 {
		t.Fatalf("%d signing keys of the deleted realm left (%v)", len(keys), err)
	}
	if ks, err := s.store.GetKeySettings(context.Background(), realm.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("key settings of the deleted realm left: %+v (%v)", ks, err)
	}
	mustError(t, s.admin(http.MethodGet, "/admin/realms/acme/keys", nil), http.StatusNotFound, "not_found", "")
	if keys := keysTestList(s, "other"); len(keys) != 1 || keys[0].KID != otherKey.ID {
		t.Fatalf("other realm's keys: %s", keysTestStates(keys))
	}
}

// keysTestRealmWithoutKeys makes a realm as one created before signing
// keys existed: the settings of a realm made through the API, written to
// the store with no keys and no key settings.
func keysTestRealmWithoutKeys(s *testServer, name string) *store.Realm {
	s.t.Helper()
	realm := *keysTestRealm(s, name+"-model")
	realm.ID, realm.Name = uuid.NewString(), name
	if err := s.store.CreateRealm(context.Background(), &realm); err != nil {
		s.t.Fatal(err)
	}
	if keys, err := s.store.ListSigningKeys(context.Background(), realm.ID); err != nil || len(keys) != 0 {
		s.t.Fatalf("keys of a realm written to the store: %d (%v)", len(keys), err)
	}
	return &realm
}

func TestKeysRealmWithoutKeys(t *testing.T) {
	s, _ := keysTestServer(t)
	ctx := context.Background()

	t.Run("key set", func(t *testing.T) {
		realm := keysTestRealmWithoutKeys(s, "certs")
		if keys := keysTestList(s, "certs"); len(keys) != 0 {
			t.Fatalf("keys after dropping them: %s", keysTestStates(keys))
		}
		r := s.admin(http.MethodGet, "/admin/realms/certs/keys/config", nil)
		mustStatus(t, r, http.StatusOK)
		keysTestMustEqual(t, "default config", r.object(t), map[string]any{"algorithm": "RS256", "rotationDays": 90})
		kids := keysTestPublishedKIDs(t, s, realm)
		keys := keysTestList(s, "certs")
		if len(kids) != 1 || len(keys) != 1 || keys[0].KID != kids[0] || keys[0].Status != store.KeyActive {
			t.Fatalf("published %v, stored %s", kids, keysTestStates(keys))
		}
	})

	t.Run("concurrent signing", func(t *testing.T) {
		realm := keysTestRealmWithoutKeys(s, "sign")
		var wg sync.WaitGroup
		kids := make([]string, 4)
		errs := make([]error, 4)
		for i := range kids {
			wg.Go(func() {
				k, err := s.app.signingKeys.Active(ctx, realm)
				errs[i] = err
				if err == nil {
					kids[i] = k.ID
				}
			})
		}
		wg.Wait()
		keys := keysTestList(s, "sign")
		for i := range kids {
			if errs[i] != nil || kids[i] != keys[0].KID {
				t.Fatalf("request %d: kid %s, %v; stored %s", i, kids[i], errs[i], keysTestStates(keys))
			}
		}
		if len(keys) != 1 {
			t.Fatalf("concurrent first signings made keys %s", keysTestStates(keys))
		}
	})

	t.Run("job", func(t *testing.T) {
		keysTestRealmWithoutKeys(s, "job")
		s.app.signingKeys.RotateDue(ctx)
		if keys := keysTestList(s, "job"); len(keys) != 1 || keys[0].Status != store.KeyActive || keys[0].Algorithm != "RS256" {
			t.Fatalf("keys the job made: %s", keysTestStates(keys))
		}
	})

	t.Run("rotation", func(t *testing.T) {
		keysTestRealmWithoutKeys(s, "rotate")
		keys := keysTestRotate(s, "rotate", map[string]any{"immediate": true, "algorithm": "ES256"})
		if len(keys) != 1 || keys[0].Status != store.KeyActive || keys[0].Algorithm != "ES256" {
			t.Fatalf("keys after rotating: %s", keysTestStates(keys))
		}
	})
}

func TestKeysConcurrentRotations(t *testing.T) {
	s, _ := keysTestServer(t)
	keysTestRealm(s, "acme")
	next := keysTestFind(t, keysTestRotate(s, "acme", map[string]any{"algorithm": "ES256"}), store.KeyNext)
	// Every rotation asked for happens, though all start from the same keys:
	// the first activates the scheduled key, the others start over.
	statuses := make([]int, 3)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = s.admin(http.MethodPost, "/admin/realms/acme/keys/rotate", map[string]any{"immediate": true}).Status
		})
	}
	wg.Wait()
	if !slices.Equal(statuses, []int{200, 200, 200}) {
		t.Fatalf("concurrent rotations answered %v", statuses)
	}
	keys := keysTestList(s, "acme")
	if len(keys) != 4 || keys[0].Status != store.KeyActive || keys[0].Algorithm != "ES256" {
		t.Fatalf("keys after three rotations: %s", keysTestStates(keys))
	}
	if k := keys[slices.Index(keysTestKIDs(keys), next.KID)]; k.Status != store.KeyRetired || k.ActivatedTimestamp == 0 {
		t.Fatalf("the scheduled key %+v was not activated and retired in turn", k)
	}
}
