package saml

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/pgtest"
)

func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	st, _ := apptest.OpenStore(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rotation := 30
	s := New(Deps{Store: st, Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now },
		BaseURL: apptest.BaseURL, RotationDays: func(context.Context, string) (int, error) { return rotation, nil }})
	realm := &store.Realm{ID: uuid.NewString(), Name: "acme", Enabled: true, CreatedAt: now.UnixMilli()}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	// The metadata, valid against the schema at every step of the
	// rotation, publishes the published keys, the next one included.
	descriptor := func(keys int) {
		t.Helper()
		doc, err := s.metadata(httptest.NewRequest(http.MethodGet, "/", nil), realm)
		if err != nil {
			t.Fatal(err)
		}
		b, err := doc.WriteToBytes()
		if err != nil {
			t.Fatal(err)
		}
		validateXSD(t, schemaMetadata, b)
		if got := len(doc.FindElements("//KeyDescriptor")); got != keys {
			t.Fatalf("metadata has %d KeyDescriptors, want %d", got, keys)
		}
	}
	published := func() (ids []string) {
		t.Helper()
		keys, err := s.publishedKeys(ctx, realm)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			ids = append(ids, k.ID[:8]+"="+k.Status)
		}
		return ids
	}
	signer := func() string {
		t.Helper()
		k, err := s.signingKey(ctx, realm)
		if err != nil {
			t.Fatal(err)
		}
		return k.id[:8]
	}
	first := signer()
	if got := published(); len(got) != 1 || got[0] != first+"=active" {
		t.Fatalf("first use: %v", got)
	}
	steps := []struct {
		after  time.Duration
		want   []string // statuses of the published keys, next first
		signer string   // "first", "second"
	}{
		{28 * 24 * time.Hour, []string{"active"}, "first"},          // not due yet
		{24 * time.Hour, []string{"next", "active"}, "first"},       // published a day ahead
		{23 * time.Hour, []string{"next", "active"}, "first"},       // still in its grace
		{time.Hour, []string{"active", "retired"}, "second"},        // signs; the first still published
		{retiredKeyLifetime, []string{"active"}, "second"},          // the first gone
		{29 * 24 * time.Hour, []string{"next", "active"}, "second"}, // and again
	}
	var second string
	for i, step := range steps {
		now = now.Add(step.after)
		s.RotateDueKeys(ctx)
		got := published()
		descriptor(len(step.want))
		if len(got) != len(step.want) {
			t.Fatalf("step %d: published %v, want %v", i, got, step.want)
		}
		for j, w := range step.want {
			if got[j][9:] != w {
				t.Fatalf("step %d: published %v, want %v", i, got, step.want)
			}
		}
		sig := signer()
		switch step.signer {
		case "first":
			if sig != first {
				t.Fatalf("step %d: signs with %s, want the first key %s", i, sig, first)
			}
		case "second":
			if second == "" {
				second = sig
			}
			if sig == first || sig != second {
				t.Fatalf("step %d: signs with %s (first %s, second %s)", i, sig, first, second)
			}
		}
	}

	// A realm that rotates on request only keeps its key.
	rotation = 0
	now = now.Add(400 * 24 * time.Hour)
	s.RotateDueKeys(ctx) // activates the pending next key, makes no new one
	now = now.Add(retiredKeyLifetime)
	s.RotateDueKeys(ctx)
	if got := published(); len(got) != 1 {
		t.Fatalf("without scheduled rotation: %v", got)
	}
}

// The parsed key is kept while the store's generation stays, kept again
// when it moves for another change, and not used once another key has
// been activated (no upkeep here to empty the cache); when another
// process activated it, unseen by the generation, not after keyCacheTTL.
func TestSigningKeyCache(t *testing.T) {
	ctx := context.Background()
	st, path := apptest.OpenStore(t)
	now := time.Now()
	s := New(Deps{Store: st, Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now },
		BaseURL: apptest.BaseURL})
	realm := &store.Realm{ID: uuid.NewString(), Name: "acme", Enabled: true, CreatedAt: now.UnixMilli()}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	signer := func() *signingKey {
		t.Helper()
		k, err := s.signingKey(ctx, realm)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	first := signer()
	if again := signer(); again != first {
		t.Fatal("the key was parsed again while nothing changed")
	}
	other := &store.Realm{ID: uuid.NewString(), Name: "other", Enabled: true, CreatedAt: now.UnixMilli()}
	if err := st.CreateRealm(ctx, other); err != nil { // moves the generation
		t.Fatal(err)
	}
	if again := signer(); again != first {
		t.Fatal("the key was parsed again after a change to something else")
	}

	next, err := generateKey(realm, s.entityID(realm), now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSAMLKey(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := st.ActivateSAMLKey(ctx, realm.ID, next.ID, now, now.Add(retiredKeyLifetime)); err != nil {
		t.Fatal(err)
	}
	if got := signer(); got.id != next.ID {
		t.Fatalf("signs with %s after the activation of %s", got.id[:8], next.ID[:8])
	}

	if pgtest.OnPostgres() {
		return // the servers of a fleet hear of each other's changes
	}
	elsewhere, err := store.Open(ctx, store.Config{Path: path, Schema: apptest.Schema(t), MasterKey: apptest.MasterKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close()
	third, err := generateKey(realm, s.entityID(realm), now)
	if err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.CreateSAMLKey(ctx, third); err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.ActivateSAMLKey(ctx, realm.ID, third.ID, now, now.Add(retiredKeyLifetime)); err != nil {
		t.Fatal(err)
	}
	if got := signer(); got.id != next.ID {
		t.Fatalf("signs with %s, want the cached %s until the cache's time is out", got.id[:8], next.ID[:8])
	}
	now = now.Add(keyCacheTTL)
	if got := signer(); got.id != third.ID {
		t.Fatalf("signs with %s %s after another process activated %s", got.id[:8], keyCacheTTL, third.ID[:8])
	}
}
