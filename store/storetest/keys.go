package storetest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// keySuite is the conformance tests of the signing key tables.
func keySuite() []subTest {
	return []subTest{
		{"KeyCreateList", testKeyCreateList},
		{"KeyOneActivePerRealm", testKeyOneActivePerRealm},
		{"KeyPublished", testKeyPublished},
		{"KeyActivate", testKeyActivate},
		{"KeyDeleteNext", testKeyDeleteNext},
		{"KeyDeleteExpired", testKeyDeleteExpired},
		{"KeySettings", testKeySettings},
		{"KeyRealmDeleteCascades", testKeyRealmDeleteCascades},
	}
}

const (
	keyTestRealmA = "11111111-1111-4111-8111-111111111111"
	keyTestRealmB = "22222222-2222-4222-8222-222222222222"
)

func keyTestRealms(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(keyTestRealmA, "acme", 1000))
	mustCreateRealm(t, s, testRealm(keyTestRealmB, "beta", 2000))
}

// keyTestKey is a key whose private part is random bytes: the store treats
// it as opaque.
func keyTestKey(t *testing.T, kid, realmID, status string, createdAt int64) *store.SigningKey {
	t.Helper()
	priv := make([]byte, 1200)
	if _, err := rand.Read(priv); err != nil {
		t.Fatal(err)
	}
	k := &store.SigningKey{ID: kid, RealmID: realmID, Algorithm: "ES256", PrivateKey: priv,
		PublicJWK: `{"kty":"EC","kid":"` + kid + `"}`, Status: status, CreatedAt: createdAt}
	if status != store.KeyNext {
		k.ActivatedAt = createdAt + 1
	}
	if status == store.KeyRetired {
		k.RetiredAt, k.PublishUntil = createdAt+2, createdAt+3
	}
	return k
}

func keyTestCreate(t *testing.T, s *store.Store, keys ...*store.SigningKey) {
	t.Helper()
	for _, k := range keys {
		if err := s.CreateSigningKey(testCtx, k); err != nil {
			t.Fatalf("create signing key %s: %v", k.ID, err)
		}
	}
}

// keyTestPublic is k as reads return it: without its private part.
func keyTestPublic(k *store.SigningKey) *store.SigningKey {
	out := *k
	out.PrivateKey = nil
	return &out
}

func keyTestIDs(t *testing.T, keys []*store.SigningKey, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var ids string
	for _, k := range keys {
		ids += k.ID + " "
	}
	return ids
}

func testKeyCreateList(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	retiredOld := keyTestKey(t, "retired-old", keyTestRealmA, store.KeyRetired, 1000)
	retiredNew := keyTestKey(t, "retired-new", keyTestRealmA, store.KeyRetired, 2000)
	active := keyTestKey(t, "active", keyTestRealmA, store.KeyActive, 3000)
	next := keyTestKey(t, "next", keyTestRealmA, store.KeyNext, 500) // older than the rest, still listed first
	other := keyTestKey(t, "other", keyTestRealmB, store.KeyActive, 4000)
	keyTestCreate(t, s, retiredOld, active, next, retiredNew, other)

	keys, err := s.ListSigningKeys(testCtx, keyTestRealmA)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "listed keys", keys, []*store.SigningKey{keyTestPublic(next), keyTestPublic(active),
		keyTestPublic(retiredNew), keyTestPublic(retiredOld)})

	got, err := s.GetActiveSigningKey(testCtx, keyTestRealmA)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "active key", got, keyTestPublic(active))
	for _, k := range []*store.SigningKey{retiredOld, active, next, other} {
		der, err := s.SigningKeyPrivate(testCtx, k.RealmID, k.ID)
		if err != nil || !bytes.Equal(der, k.PrivateKey) {
			t.Fatalf("private key of %s: %v; round trip equal: %v", k.ID, err, bytes.Equal(der, k.PrivateKey))
		}
	}
	// A key is only found through its own realm.
	if _, err := s.SigningKeyPrivate(testCtx, keyTestRealmB, "active"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("private key through another realm: %v, want ErrNotFound", err)
	}
	if keys, err := s.ListSigningKeys(testCtx, "99999999-9999-4999-8999-999999999999"); err != nil || len(keys) != 0 {
		t.Fatalf("keys of an unknown realm: %v, %v", keys, err)
	}
	ids, err := s.ActiveSigningKeyIDs(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	mustEqual(t, "active key ids", ids, []string{"active", "other"})
	// A key without its private part is refused, not stored half-made.
	bare := keyTestKey(t, "bare", keyTestRealmB, store.KeyNext, 1)
	bare.PrivateKey = nil
	if err := s.CreateSigningKey(testCtx, bare); err == nil {
		t.Fatal("a key without a private part was stored")
	}
}

func testKeyOneActivePerRealm(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	keyTestCreate(t, s, keyTestKey(t, "a1", keyTestRealmA, store.KeyActive, 1000))
	err := s.CreateSigningKey(testCtx, keyTestKey(t, "a2", keyTestRealmA, store.KeyActive, 2000))
	scopeTestConflict(t, "second active key", err, "realm_id")
	// Another realm has its own active key; a kid is unique everywhere.
	keyTestCreate(t, s, keyTestKey(t, "b1", keyTestRealmB, store.KeyActive, 1000))
	err = s.CreateSigningKey(testCtx, keyTestKey(t, "a1", keyTestRealmB, store.KeyNext, 2000))
	scopeTestConflict(t, "duplicate kid", err, "id")
	err = s.CreateSigningKey(testCtx, keyTestKey(t, "x", "99999999-9999-4999-8999-999999999999", store.KeyNext, 1))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("key of an unknown realm: %v, want ErrNotFound", err)
	}
	if _, err := s.GetActiveSigningKey(testCtx, "99999999-9999-4999-8999-999999999999"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("active key of a realm without keys: %v, want ErrNotFound", err)
	}
}

func testKeyPublished(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	gone := keyTestKey(t, "gone", keyTestRealmA, store.KeyRetired, 1000)
	gone.PublishUntil = 5000
	edge := keyTestKey(t, "edge", keyTestRealmA, store.KeyRetired, 2000)
	edge.PublishUntil = 5001
	keyTestCreate(t, s, gone, edge, keyTestKey(t, "active", keyTestRealmA, store.KeyActive, 3000),
		keyTestKey(t, "next", keyTestRealmA, store.KeyNext, 4000), keyTestKey(t, "other", keyTestRealmB, store.KeyActive, 1))

	// publish_until is the first instant a key is no longer published.
	keys, err := s.PublishedSigningKeys(testCtx, keyTestRealmA, time.UnixMilli(5000))
	if got := keyTestIDs(t, keys, err); got != "next active edge " {
		t.Fatalf("published at 5000: %s", got)
	}
	keys, err = s.PublishedSigningKeys(testCtx, keyTestRealmA, time.UnixMilli(4999))
	if got := keyTestIDs(t, keys, err); got != "next active edge gone " {
		t.Fatalf("published at 4999: %s", got)
	}
	keys, err = s.PublishedSigningKeys(testCtx, keyTestRealmA, time.UnixMilli(5001))
	if got := keyTestIDs(t, keys, err); got != "next active " {
		t.Fatalf("published at 5001: %s", got)
	}
	for _, k := range keys {
		if k.PrivateKey != nil {
			t.Fatalf("published key %s carries its private part", k.ID)
		}
	}
}

func testKeyActivate(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	old := keyTestKey(t, "old", keyTestRealmA, store.KeyActive, 1000)
	next := keyTestKey(t, "next", keyTestRealmA, store.KeyNext, 2000)
	otherNext := keyTestKey(t, "other-next", keyTestRealmB, store.KeyNext, 2000)
	keyTestCreate(t, s, old, next, otherNext)

	now, until := time.UnixMilli(10_000), time.UnixMilli(20_000)
	// Only a next key of the realm can be activated; a failure changes nothing.
	for _, kid := range []string{"old", "other-next", "missing"} {
		if err := s.ActivateSigningKey(testCtx, keyTestRealmA, kid, now, until); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("activate %s: %v, want ErrNotFound", kid, err)
		}
		keys, err := s.ListSigningKeys(testCtx, keyTestRealmA)
		mustEqual(t, "keys after refused activation", keys, []*store.SigningKey{keyTestPublic(next), keyTestPublic(old)})
		if err != nil {
			t.Fatal(err)
		}
	}

	if err := s.ActivateSigningKey(testCtx, keyTestRealmA, "next", now, until); err != nil {
		t.Fatal(err)
	}
	wantActive, wantRetired := keyTestPublic(next), keyTestPublic(old)
	wantActive.Status, wantActive.ActivatedAt = store.KeyActive, 10_000
	wantRetired.Status, wantRetired.RetiredAt, wantRetired.PublishUntil = store.KeyRetired, 10_000, 20_000
	keys, err := s.ListSigningKeys(testCtx, keyTestRealmA)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "keys after activation", keys, []*store.SigningKey{wantActive, wantRetired})
	// The other realm's keys are untouched.
	keys, err = s.ListSigningKeys(testCtx, keyTestRealmB)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "other realm's keys", keys, []*store.SigningKey{keyTestPublic(otherNext)})

	// A realm without an active key (made before keys existed) gets one.
	if err := s.ActivateSigningKey(testCtx, keyTestRealmB, "other-next", now, until); err != nil {
		t.Fatal(err)
	}
	if k, err := s.GetActiveSigningKey(testCtx, keyTestRealmB); err != nil || k.ID != "other-next" {
		t.Fatalf("active key of realm b: %+v, %v", k, err)
	}
}

func testKeyDeleteNext(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	keyTestCreate(t, s, keyTestKey(t, "n1", keyTestRealmA, store.KeyNext, 1000), keyTestKey(t, "n2", keyTestRealmA, store.KeyNext, 2000),
		keyTestKey(t, "active", keyTestRealmA, store.KeyActive, 500), keyTestKey(t, "retired", keyTestRealmA, store.KeyRetired, 100),
		keyTestKey(t, "b-next", keyTestRealmB, store.KeyNext, 1000))
	if err := s.DeleteNextSigningKeys(testCtx, keyTestRealmA); err != nil {
		t.Fatal(err)
	}
	keys, err := s.ListSigningKeys(testCtx, keyTestRealmA)
	if got := keyTestIDs(t, keys, err); got != "active retired " {
		t.Fatalf("keys after deleting next ones: %s", got)
	}
	keys, err = s.ListSigningKeys(testCtx, keyTestRealmB)
	if got := keyTestIDs(t, keys, err); got != "b-next " {
		t.Fatalf("other realm's keys: %s", got)
	}
}

func testKeyDeleteExpired(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	var keys []*store.SigningKey
	for _, k := range []struct {
		kid, realmID string
		until        int64
	}{{"a-past", keyTestRealmA, 4999}, {"a-edge", keyTestRealmA, 5000}, {"a-live", keyTestRealmA, 5001},
		{"b-past", keyTestRealmB, 1}} {
		rk := keyTestKey(t, k.kid, k.realmID, store.KeyRetired, 1)
		rk.PublishUntil = k.until
		keys = append(keys, rk)
	}
	keyTestCreate(t, s, keys...)
	// Next and active keys have no publish_until and are never expired.
	keyTestCreate(t, s, keyTestKey(t, "a-active", keyTestRealmA, store.KeyActive, 1), keyTestKey(t, "a-next", keyTestRealmA, store.KeyNext, 1))
	n, err := s.DeleteExpiredSigningKeys(testCtx, time.UnixMilli(5000))
	if err != nil || n != 3 {
		t.Fatalf("deleted %d, %v; want 3", n, err)
	}
	left, err := s.ListSigningKeys(testCtx, keyTestRealmA)
	if got := keyTestIDs(t, left, err); got != "a-next a-active a-live " {
		t.Fatalf("keys left: %s", got)
	}
	if left, err := s.ListSigningKeys(testCtx, keyTestRealmB); err != nil || len(left) != 0 {
		t.Fatalf("realm b keys left: %v, %v", left, err)
	}
}

func testKeySettings(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	if _, err := s.GetKeySettings(testCtx, keyTestRealmA); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settings never stored: %v, want ErrNotFound", err)
	}
	want := &store.KeySettings{RealmID: keyTestRealmA, Algorithm: "RS256", RotationDays: 90}
	if err := s.PutKeySettings(testCtx, want); err != nil {
		t.Fatal(err)
	}
	if err := s.PutKeySettings(testCtx, &store.KeySettings{RealmID: keyTestRealmB, Algorithm: "EdDSA", RotationDays: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetKeySettings(testCtx, keyTestRealmA)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "settings", got, want)

	want = &store.KeySettings{RealmID: keyTestRealmA, Algorithm: "ES256", RotationDays: 0}
	if err := s.PutKeySettings(testCtx, want); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetKeySettings(testCtx, keyTestRealmA)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "replaced settings", got, want)
	got, err = s.GetKeySettings(testCtx, keyTestRealmB)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "other realm's settings", got, &store.KeySettings{RealmID: keyTestRealmB, Algorithm: "EdDSA", RotationDays: 1})

	err = s.PutKeySettings(testCtx, &store.KeySettings{RealmID: "99999999-9999-4999-8999-999999999999", Algorithm: "RS256"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settings of an unknown realm: %v, want ErrNotFound", err)
	}
}

func testKeyRealmDeleteCascades(t *testing.T, s *store.Store) {
	keyTestRealms(t, s)
	keyTestCreate(t, s, keyTestKey(t, "a-active", keyTestRealmA, store.KeyActive, 1), keyTestKey(t, "a-next", keyTestRealmA, store.KeyNext, 2),
		keyTestKey(t, "a-retired", keyTestRealmA, store.KeyRetired, 3), keyTestKey(t, "b-active", keyTestRealmB, store.KeyActive, 1))
	for _, id := range []string{keyTestRealmA, keyTestRealmB} {
		if err := s.PutKeySettings(testCtx, &store.KeySettings{RealmID: id, Algorithm: "RS256", RotationDays: 90}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.ActiveSigningKeyIDs(testCtx); err != nil || !slices.Equal(ids, []string{"b-active"}) {
		t.Fatalf("active keys left: %v, %v; want realm b's one", ids, err)
	}
	if left, err := s.ListSigningKeys(testCtx, keyTestRealmB); keyTestIDs(t, left, err) != "b-active " {
		t.Fatalf("realm b's keys: %v", left)
	}
	if _, err := s.GetKeySettings(testCtx, keyTestRealmB); err != nil {
		t.Fatalf("other realm's settings: %v", err)
	}
	// A realm made again with the deleted one's ID has neither keys nor
	// settings, and the deleted keys' ids are free again.
	mustCreateRealm(t, s, testRealm(keyTestRealmA, "acme", 3000))
	if left, err := s.ListSigningKeys(testCtx, keyTestRealmA); err != nil || len(left) != 0 {
		t.Fatalf("keys of the deleted realm: %v, %v", left, err)
	}
	if ks, err := s.GetKeySettings(testCtx, keyTestRealmA); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settings of the deleted realm: %+v, %v; want ErrNotFound", ks, err)
	}
	keyTestCreate(t, s, keyTestKey(t, "a-active", keyTestRealmA, store.KeyActive, 1), keyTestKey(t, "a-next", keyTestRealmA, store.KeyNext, 2),
		keyTestKey(t, "a-retired", keyTestRealmA, store.KeyRetired, 3))
}
