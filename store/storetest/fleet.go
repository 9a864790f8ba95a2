package storetest

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// FleetBound is how long a change made by one server of a fleet may go
// unseen by another's caches (docs/postgres.md).
const FleetBound = time.Second

// RunFleet runs the tests of servers sharing one database: stores from
// newPair are two servers' on the same database.
func RunFleet(t *testing.T, newPair func(t *testing.T) (a, b *store.Store)) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, a, b *store.Store)
	}{
		{"GenerationsMoveOnEveryServer", testFleetGenerations},
		{"FailuresCountedOnceAcrossServers", testFleetLoginFailures},
		{"ExclusiveRunsOnOneServer", testFleetExclusive},
		{"JobClaimedOncePerPeriod", testFleetClaimJob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newPair(t)
			tc.run(t, a, b)
		})
	}
}

// waitListening waits until s hears the fleet: its generation then holds
// still between two reads.
func waitListening(t *testing.T, s *store.Store) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if gen := s.Generation(); gen == s.Generation() {
			return
		}
	}
	t.Fatal("the store never listened to the fleet")
}

// moves waits up to FleetBound for gen to differ from was.
func moves(gen func() uint64, was uint64) bool {
	for deadline := time.Now().Add(FleetBound); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if gen() != was {
			return true
		}
	}
	return false
}

func testFleetGenerations(t *testing.T, a, b *store.Store) {
	sessionsTestFixture(t, a)
	waitListening(t, a)
	waitListening(t, b)

	// A change to cached data on a moves both of b's generations.
	gen, rev := b.Generation(), b.RevocationGeneration()
	r, err := a.GetRealmByID(testCtx, sessionsTestRealm)
	if err != nil {
		t.Fatal(err)
	}
	r.DisplayName = "Changed on a"
	if err := a.UpdateRealm(testCtx, r); err != nil {
		t.Fatal(err)
	}
	if !moves(b.Generation, gen) || !moves(b.RevocationGeneration, rev) {
		t.Fatalf("b's generations did not move within %s of a realm change on a", FleetBound)
	}

	// A session ended on a moves b's revocation generation alone. The
	// fixture's notifications that a sent from goroutines of their own (a
	// statement's rows still open) may land on b late, once: a logout that
	// moved the generation would move it every time.
	now := sessionsTestNow
	for attempt := 1; ; attempt++ {
		id := "s1-" + strconv.Itoa(attempt)
		if err := a.CreateSession(testCtx, sessionsTestSSO(id, sessionsTestRealm, "alice", now, now+3_600_000)); err != nil {
			t.Fatal(err)
		}
		gen, rev = b.Generation(), b.RevocationGeneration()
		if _, err := a.DeleteSession(testCtx, sessionsTestRealm, id, store.SessionSSO, now); err != nil {
			t.Fatal(err)
		}
		if !moves(b.RevocationGeneration, rev) {
			t.Fatalf("b's revocation generation did not move within %s of a logout on a", FleetBound)
		}
		if b.Generation() == gen {
			break
		}
		if attempt == 3 {
			t.Fatal("a logout on a moved b's generation of cached data")
		}
	}

	// A transaction that rolls back tells no one.
	rev = b.RevocationGeneration()
	_ = a.Tx(testCtx, func(tx *store.Store) error {
		if err := tx.CreateSession(testCtx, sessionsTestSSO("s2", sessionsTestRealm, "alice", now, now+3_600_000)); err != nil {
			return err
		}
		if _, err := tx.DeleteSession(testCtx, sessionsTestRealm, "s2", store.SessionSSO, now); err != nil {
			return err
		}
		return context.Canceled
	})
	if moves(b.RevocationGeneration, rev) {
		t.Fatal("a rolled back logout on a moved b's revocation generation")
	}
}

// Failures recorded at once on two servers are each counted: the write
// transactions of a fleet run one at a time.
func testFleetLoginFailures(t *testing.T, a, b *store.Store) {
	sessionsTestFixture(t, a)
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			if _, _, err := s.RecordLoginFailure(testCtx, sessionsTestRealm, "alice", "192.0.2.9", sessionsTestNow+int64(i),
				store.LoginFailurePolicy{MaxFailures: 1000, LockoutMillis: failTestMinute}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f, err := b.GetLoginFailure(testCtx, sessionsTestRealm, "alice")
	if err != nil || f.Failures != n {
		t.Fatalf("after %d failures on two servers at once: %+v %v", n, f, err)
	}
}

func testFleetExclusive(t *testing.T, a, b *store.Store) {
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan bool)
	go func() {
		ran, err := a.Exclusive(testCtx, "job", func(context.Context) error {
			close(held)
			<-release
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		done <- ran
	}()
	<-held
	ran, err := b.Exclusive(testCtx, "job", func(context.Context) error { return nil })
	if err != nil || ran {
		t.Fatalf("b ran work a was running: %v %v", ran, err)
	}
	ran, err = b.Exclusive(testCtx, "other job", func(context.Context) error { return nil })
	if err != nil || !ran {
		t.Fatalf("b did not run work of another name: %v %v", ran, err)
	}
	close(release)
	if !<-done {
		t.Fatal("a did not run its work")
	}
	ran, err = b.Exclusive(testCtx, "job", func(context.Context) error { return nil })
	if err != nil || !ran {
		t.Fatalf("b did not run the work once a had finished: %v %v", ran, err)
	}
}

func testFleetClaimJob(t *testing.T, a, b *store.Store) {
	now, hour := time.UnixMilli(sessionsTestNow), time.Hour
	for _, step := range []struct {
		s    *store.Store
		at   time.Time
		want bool
	}{
		{a, now, true},
		{b, now.Add(time.Minute), false},
		{a, now.Add(59 * time.Minute), false},
		{b, now.Add(hour), true},
		{a, now.Add(hour + time.Second), false},
	} {
		got, err := step.s.ClaimJob(testCtx, "upkeep", step.at, hour)
		if err != nil || got != step.want {
			t.Fatalf("claim at %s: %v %v, want %v", step.at.Sub(now), got, err, step.want)
		}
	}
}
