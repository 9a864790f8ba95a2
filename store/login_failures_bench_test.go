package store

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRecordLoginFailure is one counted wrong password: a read and a
// write in one durable transaction on the single writer. Ten users take
// turns so that lockouts start and end along the way.
func BenchmarkRecordLoginFailure(b *testing.B) {
	s := benchStoreOpen(b)
	realm := benchStoreRealm(b, s, "acme")
	benchStoreSeedUsers(b, s, realm.ID, 10)
	policy := LoginFailurePolicy{MaxFailures: 5, LockoutMillis: 1, ResetMillis: 43_200_000}
	ctx := context.Background()
	now := time.Now().UnixMilli()
	i := 0
	for b.Loop() {
		now++
		if _, _, err := s.RecordLoginFailure(ctx, realm.ID, benchStoreUser(realm.ID, i%10, 0).ID, "192.0.2.1", now, policy); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkLoginLock is the lockout check every password sign-in makes.
func BenchmarkLoginLock(b *testing.B) {
	s := benchStoreOpen(b)
	realm := benchStoreRealm(b, s, "acme")
	benchStoreSeedUsers(b, s, realm.ID, 1)
	ctx := context.Background()
	userID := benchStoreUser(realm.ID, 0, 0).ID
	now := time.Now().UnixMilli()
	if _, _, err := s.RecordLoginFailure(ctx, realm.ID, userID, "192.0.2.1", now, LoginFailurePolicy{MaxFailures: 5}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.LoginLock(ctx, realm.ID, userID, now); err != nil {
			b.Fatal(err)
		}
	}
}
