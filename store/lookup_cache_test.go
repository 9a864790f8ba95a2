package store

import (
	"errors"
	"testing"
	"time"
)

// An entry is used while the generation it was read under holds and its
// lifetime lasts; a write moves the generation and the next read loads.
func TestLookupCache(t *testing.T) {
	s := newSQLiteTestStore(t)
	c := NewLookupCache[string]()
	loads := 0
	load := func() (string, error) {
		loads++
		return "v", nil
	}
	for range 2 {
		if v, err := Cached(s, c, "k", load); err != nil || v != "v" {
			t.Fatalf("cached: %q, %v", v, err)
		}
	}
	if loads != 1 {
		t.Fatalf("%d loads of an entry whose generation held, want 1", loads)
	}
	mustCreateRealm(t, s, testRealm("r1", "acme", 1000))
	if _, err := Cached(s, c, "k", load); err != nil || loads != 2 {
		t.Fatalf("after a write: %d loads (%v), want 2", loads, err)
	}

	now := time.Now()
	if _, ok := c.Get("k", s.Generation(), now.Add(lookupTTL+time.Second)); ok {
		t.Fatal("an entry past its lifetime was used")
	}
	if _, ok := c.Get("k", s.Generation()+1, now); ok {
		t.Fatal("an entry of another generation was used")
	}

	// A failed load is not kept.
	failed := errors.New("down")
	if _, err := Cached(s, c, "other", func() (string, error) { return "", failed }); !errors.Is(err, failed) {
		t.Fatalf("failed load: %v", err)
	}
	if _, ok := c.Get("other", s.Generation(), now); ok {
		t.Fatal("a failed load was kept")
	}
}

// A store of a fleet that does not hear the others keeps nothing cached:
// its generations move on every read.
func TestDeafStoreCachesNothing(t *testing.T) {
	s := &Store{changes: &changes{fleet: &fleet{}}}
	held := func() bool {
		gen, rev := s.Generation(), s.RevocationGeneration()
		return gen == s.Generation() && rev == s.RevocationGeneration()
	}
	if held() {
		t.Fatal("a deaf store's generations held still")
	}
	s.changes.fleet.listening.Store(true)
	if !held() {
		t.Fatal("a listening store's generations moved with no change")
	}
}
