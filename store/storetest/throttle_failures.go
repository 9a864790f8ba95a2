package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

func throttleFailureSuite() []subTest {
	return []subTest{
		{"ThrottleFailuresCountedTrimmedAndForgotten", testThrottleFailures},
	}
}

func testThrottleFailures(t *testing.T, s *store.Store) {
	nth := func(key string, n int, since int64) (int64, bool) {
		t.Helper()
		at, ok, err := s.ThrottleFailureAt(testCtx, key, n, since)
		if err != nil {
			t.Fatal(err)
		}
		return at, ok
	}
	for at := int64(1); at <= 5; at++ {
		if err := s.RecordThrottleFailures(testCtx, []string{"a", "b"}, at*1000, 3); err != nil {
			t.Fatal(err)
		}
	}
	// Three kept per key, the newest: the third newest is the failure at 3 s.
	if at, ok := nth("a", 3, 0); !ok || at != 3000 {
		t.Fatalf("third newest of a: %d %v, want 3000", at, ok)
	}
	if _, ok := nth("a", 4, 0); ok {
		t.Fatal("a fourth failure kept past keep=3")
	}
	// Only failures after since count.
	if _, ok := nth("b", 2, 4000); ok {
		t.Fatal("failures at or before since counted")
	}
	if at, ok := nth("b", 1, 4000); !ok || at != 5000 {
		t.Fatalf("newest of b after 4 s: %d %v", at, ok)
	}
	if err := s.ClearThrottleFailures(testCtx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := nth("a", 1, 0); ok {
		t.Fatal("a's failures kept after they were cleared")
	}
	n, err := s.DeleteOldThrottleFailures(testCtx, 3000)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d old failures (%v), want b's at 3 s", n, err)
	}
	if at, ok := nth("b", 2, 0); !ok || at != 4000 {
		t.Fatalf("second newest of b after the purge: %d %v", at, ok)
	}
}
