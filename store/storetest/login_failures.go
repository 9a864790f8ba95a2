package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func loginFailuresSuite() []subTest {
	return []subTest{
		{"LoginFailuresLockout", testLoginFailuresLockout},
		{"LoginFailuresReset", testLoginFailuresReset},
		{"LoginFailuresPermanent", testLoginFailuresPermanent},
		{"LoginFailuresConcurrent", testLoginFailuresConcurrent},
		{"LoginFailuresList", testLoginFailuresList},
		{"LoginFailuresCascade", testLoginFailuresCascade},
	}
}

const failTestMinute = int64(60_000)

// failTestPolicy: three failures lock for 15 minutes; an hour of quiet
// forgets them; no permanent lockout.
var failTestPolicy = store.LoginFailurePolicy{MaxFailures: 3, LockoutMillis: 15 * failTestMinute, ResetMillis: 60 * failTestMinute}

func failTestRecord(t *testing.T, s *store.Store, user string, now int64, p store.LoginFailurePolicy) (*store.LoginFailure, bool) {
	t.Helper()
	f, locked, err := s.RecordLoginFailure(testCtx, sessionsTestRealm, user, "192.0.2.9", now, p)
	if err != nil {
		t.Fatal(err)
	}
	return f, locked
}

func failTestLocked(t *testing.T, s *store.Store, user string, now int64) bool {
	t.Helper()
	locked, err := s.LoginLock(testCtx, sessionsTestRealm, user, now)
	if err != nil {
		t.Fatal(err)
	}
	return locked
}

func testLoginFailuresLockout(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	if _, err := s.GetLoginFailure(testCtx, sessionsTestRealm, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("record before any failure: %v, want ErrNotFound", err)
	}
	if failTestLocked(t, s, "alice", now) {
		t.Fatal("locked before any failure")
	}
	for i := 1; i <= 2; i++ {
		if f, locked := failTestRecord(t, s, "alice", now+int64(i), failTestPolicy); locked || f.Failures != i || f.LockedUntil != 0 {
			t.Fatalf("failure %d: %+v locked %v", i, f, locked)
		}
	}
	f, locked := failTestRecord(t, s, "alice", now+3, failTestPolicy)
	want := &store.LoginFailure{RealmID: sessionsTestRealm, UserID: "alice", Failures: 3, LastFailureAt: now + 3, LastIP: "192.0.2.9",
		TemporaryLockouts: 1, LockedUntil: now + 3 + 15*failTestMinute}
	if !locked {
		t.Fatal("the third failure did not lock")
	}
	mustEqual(t, "record after the third failure", f, want)
	got, err := s.GetLoginFailure(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "stored record", got, want)
	if !failTestLocked(t, s, "alice", want.LockedUntil-1) || failTestLocked(t, s, "alice", want.LockedUntil) {
		t.Fatal("the lockout does not end at LockedUntil")
	}
	if failTestLocked(t, s, "bob", now+4) {
		t.Fatal("bob is locked by alice's failures")
	}
	// Failures during the lockout are not counted.
	if f, locked := failTestRecord(t, s, "alice", now+4, failTestPolicy); locked || f.Failures != 3 || f.LastFailureAt != now+3 {
		t.Fatalf("failure while locked: %+v locked %v", f, locked)
	}
	// After it, a fresh count toward the next lockout; the lockouts so far stay.
	after := want.LockedUntil + 1
	f, locked = failTestRecord(t, s, "alice", after, failTestPolicy)
	if locked || f.Failures != 1 || f.LockedUntil != 0 || f.TemporaryLockouts != 1 {
		t.Fatalf("first failure after the lockout: %+v locked %v", f, locked)
	}
	// A success (or an unlock) forgets everything; clearing twice is fine.
	for range 2 {
		if err := s.ClearLoginFailures(testCtx, sessionsTestRealm, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetLoginFailure(testCtx, sessionsTestRealm, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("record after clearing: %v, want ErrNotFound", err)
	}
}

func testLoginFailuresReset(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	failTestRecord(t, s, "alice", now, failTestPolicy)
	failTestRecord(t, s, "alice", now+1, failTestPolicy)
	// Just short of an hour after the last failure: still counted.
	if f, locked := failTestRecord(t, s, "alice", now+1+60*failTestMinute-1, failTestPolicy); !locked || f.Failures != 3 {
		t.Fatalf("third failure within the reset time: %+v locked %v", f, locked)
	}
	// A quiet hour after the last failure forgets the count and the lockouts.
	last := now + 60*failTestMinute
	f, locked := failTestRecord(t, s, "alice", last+60*failTestMinute, failTestPolicy)
	if locked || f.Failures != 1 || f.TemporaryLockouts != 0 || f.LockedUntil != 0 {
		t.Fatalf("failure after the reset time: %+v locked %v", f, locked)
	}
	// Without a reset time the count never resets.
	never := failTestPolicy
	never.ResetMillis = 0
	failTestRecord(t, s, "bob", now, never)
	failTestRecord(t, s, "bob", now+1, never)
	if f, locked := failTestRecord(t, s, "bob", now+1000*60*failTestMinute, never); !locked || f.Failures != 3 {
		t.Fatalf("failure long after, without a reset time: %+v locked %v", f, locked)
	}
}

func testLoginFailuresPermanent(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	p := failTestPolicy
	p.PermanentAfter = 2
	now := sessionsTestNow
	// Two temporary lockouts, each three failures after the last one ended.
	for lockout := 1; lockout <= 2; lockout++ {
		var f *store.LoginFailure
		var locked bool
		for range 3 {
			now += failTestMinute
			f, locked = failTestRecord(t, s, "alice", now, p)
		}
		if !locked || f.Permanent() || f.TemporaryLockouts != lockout || f.LockedUntil != now+p.LockoutMillis {
			t.Fatalf("lockout %d: %+v locked %v", lockout, f, locked)
		}
		now = f.LockedUntil
	}
	// The third is permanent.
	var f *store.LoginFailure
	var locked bool
	for range 3 {
		now += failTestMinute
		f, locked = failTestRecord(t, s, "alice", now, p)
	}
	if !locked || !f.Permanent() || f.TemporaryLockouts != 2 || f.LockedUntil != store.PermanentLockout {
		t.Fatalf("third lockout: %+v locked %v", f, locked)
	}
	// Neither time nor the reset time ends it.
	if !failTestLocked(t, s, "alice", now+1000*60*failTestMinute) {
		t.Fatal("a permanent lockout ended by itself")
	}
	if f, _ := failTestRecord(t, s, "alice", now+1000*60*failTestMinute, p); !f.Permanent() {
		t.Fatalf("a failure long after the permanent lockout: %+v", f)
	}
	// An unlock does.
	if err := s.ClearLoginFailures(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	if failTestLocked(t, s, "alice", now) {
		t.Fatal("still locked after the unlock")
	}
}

// Concurrent failures are each counted once: the read-modify-write is one
// transaction on the one writer connection.
func testLoginFailuresConcurrent(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	const n = 50
	run := func(user string, p store.LoginFailurePolicy) (locks int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range n {
			wg.Go(func() {
				_, locked, err := s.RecordLoginFailure(testCtx, sessionsTestRealm, user, "192.0.2.9", sessionsTestNow+int64(i), p)
				if err != nil {
					t.Error(err)
				}
				if locked {
					mu.Lock()
					locks++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return locks
	}
	// Below the limit: every failure counted.
	if locks := run("alice", store.LoginFailurePolicy{MaxFailures: 1000, LockoutMillis: failTestMinute}); locks != 0 {
		t.Fatalf("%d lockouts below the limit", locks)
	}
	f, err := s.GetLoginFailure(testCtx, sessionsTestRealm, "alice")
	if err != nil || f.Failures != n {
		t.Fatalf("after %d concurrent failures: %+v %v", n, f, err)
	}
	// Over it: exactly one lockout, at exactly the limit.
	if locks := run("bob", store.LoginFailurePolicy{MaxFailures: 5, LockoutMillis: 1000 * failTestMinute}); locks != 1 {
		t.Fatalf("%d lockouts, want 1", locks)
	}
	f, err = s.GetLoginFailure(testCtx, sessionsTestRealm, "bob")
	if err != nil || f.Failures != 5 || f.TemporaryLockouts != 1 {
		t.Fatalf("after %d concurrent failures over the limit: %+v %v", n, f, err)
	}
}

func testLoginFailuresList(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	for _, name := range []string{"dave", "erin", "fay"} {
		mustCreateUser(t, s, testUser(name, sessionsTestRealm, name, ""))
	}
	now := sessionsTestNow
	one := store.LoginFailurePolicy{MaxFailures: 1, LockoutMillis: 10 * failTestMinute}
	failTestRecord(t, s, "alice", now, one)                                    // locked until now+10m
	failTestRecord(t, s, "bob", now+failTestMinute, one)                       // until now+11m
	failTestRecord(t, s, "erin", now-20*failTestMinute, one)                   // ran out at now-10m
	failTestRecord(t, s, "fay", now, store.LoginFailurePolicy{MaxFailures: 2}) // one failure, not locked
	if _, _, err := s.RecordLoginFailure(testCtx, sessionsTestOther, "carol", "192.0.2.9", now, one); err != nil {
		t.Fatal(err)
	}
	// dave: locked for a while long ago, then for good.
	perm := store.LoginFailurePolicy{MaxFailures: 1, LockoutMillis: failTestMinute, PermanentAfter: 1}
	failTestRecord(t, s, "dave", now-100*failTestMinute, perm)
	failTestRecord(t, s, "dave", now-50*failTestMinute, perm)

	names := func(first, max int) []string {
		t.Helper()
		locked, err := s.ListLockedUsers(testCtx, sessionsTestRealm, now+5*failTestMinute, first, max)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range locked {
			if u.RealmID != sessionsTestRealm || u.UserID != u.Username {
				t.Fatalf("record %+v", u)
			}
			out = append(out, u.Username)
		}
		return out
	}
	mustEqual(t, "locked users", names(0, 10), []string{"dave", "bob", "alice"})
	mustEqual(t, "second page", names(1, 1), []string{"bob"})
	mustEqual(t, "past the end", names(3, 10), []string(nil))
	locked, err := s.ListLockedUsers(testCtx, sessionsTestRealm, now+5*failTestMinute, 0, 1)
	if err != nil || len(locked) != 1 || !locked[0].Permanent() || locked[0].TemporaryLockouts != 1 {
		t.Fatalf("permanent record %+v %v", locked, err)
	}
	// After the temporary lockouts end, only the permanent one is listed.
	locked, err = s.ListLockedUsers(testCtx, sessionsTestRealm, now+11*failTestMinute, 0, 10)
	if err != nil || len(locked) != 1 || locked[0].Username != "dave" {
		t.Fatalf("later %+v %v", locked, err)
	}
}

func testLoginFailuresCascade(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	failTestRecord(t, s, "alice", sessionsTestNow, failTestPolicy)
	failTestRecord(t, s, "bob", sessionsTestNow, failTestPolicy)
	if _, _, err := s.RecordLoginFailure(testCtx, sessionsTestOther, "carol", "192.0.2.9", sessionsTestNow, failTestPolicy); err != nil {
		t.Fatal(err)
	}
	// An unknown user has no record.
	if _, _, err := s.RecordLoginFailure(testCtx, sessionsTestOther, "nobody", "192.0.2.9", sessionsTestNow, failTestPolicy); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failure of an unknown user: %v, want ErrNotFound", err)
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRealm(testCtx, "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLoginFailure(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatalf("bob's record: %v", err)
	}
	// Users and a realm made again with the deleted ones' IDs start clean.
	mustCreateUser(t, s, testUser("alice", sessionsTestRealm, "alice", ""))
	mustCreateRealm(t, s, testRealm(sessionsTestOther, "other", 3000))
	mustCreateUser(t, s, testUser("carol", sessionsTestOther, "carol", ""))
	for _, u := range []struct{ realm, id string }{{sessionsTestRealm, "alice"}, {sessionsTestOther, "carol"}, {sessionsTestOther, "nobody"}} {
		if f, err := s.GetLoginFailure(testCtx, u.realm, u.id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("record of the deleted %s left: %+v, %v", u.id, f, err)
		}
	}
}
