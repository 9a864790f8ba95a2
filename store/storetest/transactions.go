package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// transactionSuite is the conformance tests of transactions and of
// concurrent writers.
func transactionSuite() []subTest {
	return []subTest{
		{"TxCommit", testTxCommit},
		{"TxRollback", testTxRollback},
		{"TxRollbackLeavesNothing", testTxRollbackLeavesNothing},
		{"TxSeesOwnWrites", testTxSeesOwnWrites},
		{"TxNestedMethods", testTxNestedMethods},
		{"TxGenerationsMoveAfterCommit", testTxGenerationsMoveAfterCommit},
		{"ReadTxSnapshot", testReadTxSnapshot},
		{"RaceRefreshTokenRotation", testRaceRefreshTokenRotation},
		{"GroupTxMembersApart", testGroupTxMembersApart},
		{"SavepointFailsAlone", testSavepointFailsAlone},
		{"RaceRefreshTokenRotationGrouped", testRaceRefreshTokenRotationGrouped},
		{"RaceSameUsername", testRaceSameUsername},
		{"RaceLogoutTokenID", testRaceLogoutTokenID},
		{"RaceActionToken", testRaceActionToken},
		{"RaceWebAuthnCeremony", testRaceWebAuthnCeremony},
		{"RaceGroupMoves", testRaceGroupMoves},
		{"RacePasswordChanges", testRacePasswordChanges},
		{"RaceConsentGrants", testRaceConsentGrants},
		{"RaceSignInFlowStep", testRaceSignInFlowStep},
		{"RaceSignInEmailCodeUse", testRaceSignInEmailCodeUse},
		{"RaceSignInEmailCodeIssue", testRaceSignInEmailCodeIssue},
	}
}

func testTxCommit(t *testing.T, s *store.Store) {
	err := s.Tx(testCtx, func(tx *store.Store) error {
		r := mustCreateRealm(t, tx, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		mustCreateUser(t, tx, testUser("a0000000-0000-4000-8000-000000000001", r.ID, "alice", ""))
		// Reads inside the transaction see its writes.
		if _, err := tx.GetRealm(testCtx, "acme"); err != nil {
			return fmt.Errorf("read own write: %w", err)
		}
		// A nested Tx joins the outer one.
		return tx.Tx(testCtx, func(inner *store.Store) error {
			return inner.CreateRealm(testCtx, testRealm("22222222-2222-4222-8222-222222222222", "nested", 2000))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"acme", "nested"} {
		if _, err := s.GetRealm(testCtx, name); err != nil {
			t.Fatalf("realm %s after commit: %v", name, err)
		}
	}
	if _, err := s.GetUserByUsername(testCtx, "11111111-1111-4111-8111-111111111111", "alice"); err != nil {
		t.Fatalf("user after commit: %v", err)
	}
}

func testTxRollback(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("33333333-3333-4333-8333-333333333333", "before", 500))
	boom := errors.New("boom")
	err := s.Tx(testCtx, func(tx *store.Store) error {
		r := mustCreateRealm(t, tx, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
		mustCreateUser(t, tx, testUser("a0000000-0000-4000-8000-000000000001", r.ID, "alice", ""))
		if err := tx.DeleteRealm(testCtx, "before"); err != nil {
			return err
		}
		return tx.Tx(testCtx, func(inner *store.Store) error {
			if err := inner.SetAdminAPIKeyHash(testCtx, []byte("in-tx")); err != nil {
				return err
			}
			return fmt.Errorf("inner: %w", boom)
		})
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if _, err := s.GetRealm(testCtx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("realm created in a failed Tx: %v, want ErrNotFound", err)
	}
	if _, err := s.GetUser(testCtx, "11111111-1111-4111-8111-111111111111", "a0000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("user created in a failed Tx: %v", err)
	}
	if _, err := s.GetRealm(testCtx, "before"); err != nil {
		t.Fatalf("realm deleted in a failed Tx is gone: %v", err)
	}
	if _, err := s.AdminAPIKeyHash(testCtx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("admin key set in a failed Tx: %v", err)
	}
	// The store is usable after the rollback.
	mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
}

// inOrder runs steps until one fails; inside a transaction, a failure
// returned rather than a test stopped keeps the transaction from being
// left open.
func inOrder(steps ...func() error) error {
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}

// txTestWrites is one of each kind of write on acme of sessionsTestFixture,
// made through tx: a user dave, with a role, a group, a session and its
// refresh token, a consent, a login failure and a changed password; an
// event; alice's password changed; bob deleted; the realm renamed for
// display.
func txTestWrites(tx *store.Store) error {
	now, hour := sessionsTestNow, sessionsTestHour
	return inOrder(
		func() error {
			return tx.CreateUser(testCtx, testUser("dave", sessionsTestRealm, "dave", "dave@example.test"))
		},
		func() error {
			return tx.CreateRole(testCtx, &store.Role{ID: "tx-role", RealmID: sessionsTestRealm, Name: "tx-role"})
		},
		func() error { return tx.AddRoleMappings(testCtx, store.UserRoles("dave"), []string{"tx-role"}) },
		func() error {
			return tx.CreateGroup(testCtx, &store.Group{ID: "tx-group", RealmID: sessionsTestRealm, Name: "tx-group"})
		},
		func() error { return tx.AddGroupMember(testCtx, "tx-group", "dave") },
		func() error {
			return tx.CreateSession(testCtx, sessionsTestSSO("tx-sso", sessionsTestRealm, "dave", now, now+hour))
		},
		func() error {
			return tx.CreateSession(testCtx, sessionsTestOAuth("tx-web", sessionsTestRealm, "dave", "tx-sso", "web", now, now+hour))
		},
		func() error {
			return tx.CreateRefreshToken(testCtx, sessionsTestToken("tx-t1", "dave", "web", "tx-web", false, now, now+hour))
		},
		func() error { return tx.GrantConsent(testCtx, "dave", "web", []string{"openid"}, now) },
		func() error {
			_, _, err := tx.RecordLoginFailure(testCtx, sessionsTestRealm, "dave", "192.0.2.9", now,
				store.LoginFailurePolicy{MaxFailures: 5, LockoutMillis: hour})
			return err
		},
		func() error {
			return tx.ChangeUserPassword(testCtx, sessionsTestRealm, "dave", "dave-1", now, false, 5)
		},
		func() error {
			return tx.ChangeUserPassword(testCtx, sessionsTestRealm, "dave", "dave-2", now+1, false, 5)
		},
		func() error {
			return tx.AddLoginEvent(testCtx, &store.LoginEvent{ID: "tx-event", RealmID: sessionsTestRealm, Time: now, Type: "LOGIN"})
		},
		func() error {
			return tx.ChangeUserPassword(testCtx, sessionsTestRealm, "alice", "alice-new", now, false, 5)
		},
		func() error { return tx.DeleteUser(testCtx, sessionsTestRealm, "bob") },
		func() error {
			r, err := tx.GetRealm(testCtx, "acme")
			if err != nil {
				return err
			}
			r.DisplayName = "Renamed in a transaction"
			return tx.UpdateRealm(testCtx, r)
		},
	)
}

// txTestWritten says which of txTestWrites s shows: all of them, or none.
func txTestWritten(s *store.Store) (all, none bool, err error) {
	var seen []bool
	see := func(b bool) { seen = append(seen, b) }
	found := func(err error) (bool, error) {
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	steps := []func() error{
		func() error {
			ok, err := found(sessionsTestErr(s.GetUser(testCtx, sessionsTestRealm, "dave")))
			see(ok)
			return err
		},
		func() error {
			ok, err := found(sessionsTestErr(s.GetRoleByID(testCtx, sessionsTestRealm, "tx-role")))
			see(ok)
			return err
		},
		func() error {
			roles, err := s.EffectiveRoles(testCtx, "dave")
			see(len(roles) == 1)
			return err
		},
		func() error {
			members, err := s.ListGroupMembers(testCtx, "tx-group", 0, 10)
			see(len(members) == 1)
			return err
		},
		func() error {
			ok, err := found(sessionsTestErr(s.GetSession(testCtx, sessionsTestRealm, "tx-web")))
			see(ok)
			return err
		},
		func() error {
			ok, err := found(sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-tx-t1"))))
			see(ok)
			return err
		},
		func() error {
			ok, err := found(sessionsTestErr(s.GetConsent(testCtx, "dave", "web")))
			see(ok)
			return err
		},
		func() error {
			ok, err := found(sessionsTestErr(s.GetLoginFailure(testCtx, sessionsTestRealm, "dave")))
			see(ok)
			return err
		},
		func() error {
			h, err := s.PasswordHistory(testCtx, sessionsTestRealm, "dave", 10)
			see(slices.Equal(h, []string{"dave-1"}))
			return err
		},
		func() error {
			events, err := s.ListLoginEvents(testCtx, sessionsTestRealm, store.LoginEventFilter{})
			see(len(events) == 1)
			return err
		},
		func() error {
			u, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
			see(err == nil && u.PasswordHash == "alice-new")
			return err
		},
		func() error {
			ok, err := found(sessionsTestErr(s.GetUser(testCtx, sessionsTestRealm, "bob")))
			see(!ok)
			return err
		},
		func() error {
			r, err := s.GetRealm(testCtx, "acme")
			see(err == nil && r.DisplayName == "Renamed in a transaction")
			return err
		},
	}
	if err := inOrder(steps...); err != nil {
		return false, false, err
	}
	return !slices.Contains(seen, false), !slices.Contains(seen, true), nil
}

func testTxRollbackLeavesNothing(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	boom := errors.New("boom")
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := txTestWrites(tx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if _, none, err := txTestWritten(s); err != nil || !none {
		t.Fatalf("after the rollback: none of the writes seen %t (%v), want none seen", none, err)
	}
	// The same writes then go through: nothing of the rolled back ones
	// stood in their way.
	if err := s.Tx(testCtx, txTestWrites); err != nil {
		t.Fatal(err)
	}
	if all, _, err := txTestWritten(s); err != nil || !all {
		t.Fatalf("after the commit: all writes seen %t (%v)", all, err)
	}
}

func testTxSeesOwnWrites(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := txTestWrites(tx); err != nil {
			return err
		}
		// The transaction reads its own writes, lists and joins included.
		if all, _, err := txTestWritten(tx); err != nil || !all {
			return fmt.Errorf("inside the transaction: all writes seen %t (%v)", all, err)
		}
		if _, total, err := tx.ListUsers(testCtx, sessionsTestRealm, store.UserFilter{Limit: 10}); err != nil || total != 2 {
			return fmt.Errorf("users inside the transaction: %d (%v), want alice and dave", total, err)
		}
		// Nothing shows outside it before it commits.
		if _, none, err := txTestWritten(s); err != nil || !none {
			return fmt.Errorf("outside the transaction: none of the writes seen %t (%v)", none, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if all, _, err := txTestWritten(s); err != nil || !all {
		t.Fatalf("after the commit: all writes seen %t (%v)", all, err)
	}
}

func testTxNestedMethods(t *testing.T, s *store.Store) {
	now, hour := refreshTokenFixture(t, s)
	policy := store.LoginFailurePolicy{MaxFailures: 2, LockoutMillis: hour}
	// The store's methods that are transactions of their own join the
	// one they are called in: they see its writes, and it sees theirs.
	nested := func(tx *store.Store) error {
		return inOrder(
			func() error { return tx.CreateUser(testCtx, testUser("dave", sessionsTestRealm, "dave", "")) },
			func() error {
				_, _, err := tx.RecordLoginFailure(testCtx, sessionsTestRealm, "dave", "192.0.2.9", now, policy)
				return err
			},
			func() error {
				_, locked, err := tx.RecordLoginFailure(testCtx, sessionsTestRealm, "dave", "192.0.2.9", now+1, policy)
				if err == nil && !locked {
					err = errors.New("the second failure in the transaction did not lock dave out")
				}
				return err
			},
			func() error {
				return tx.ChangeUserPassword(testCtx, sessionsTestRealm, "dave", "dave-1", now, false, 5)
			},
			func() error {
				return tx.ChangeUserPassword(testCtx, sessionsTestRealm, "dave", "dave-2", now+1, false, 5)
			},
			func() error {
				if h, err := tx.PasswordHistory(testCtx, sessionsTestRealm, "dave", 10); err != nil || !slices.Equal(h, []string{"dave-1"}) {
					return fmt.Errorf("dave's history in the transaction: %v (%v)", h, err)
				}
				return nil
			},
			func() error {
				_, err := tx.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-t1"), sessionsTestNext("t2", now, now+hour), now)
				return err
			},
			func() error {
				_, err := tx.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-t2"), sessionsTestNext("t3", now+1, now+hour), now+1)
				return err
			},
			func() error {
				return tx.Tx(testCtx, func(inner *store.Store) error {
					return inner.GrantConsent(testCtx, "dave", "web", []string{"openid"}, now)
				})
			},
		)
	}
	boom := errors.New("boom")
	if err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := nested(tx); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	// The rollback took what the nested methods wrote with it.
	mustBeErrNotFound(t, "dave after the rollback", sessionsTestErr(s.GetUser(testCtx, sessionsTestRealm, "dave")))
	mustBeErrNotFound(t, "t2 after the rollback", sessionsTestErr(s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken("tok-t2"))))
	if got := sessionsTestTokenState(t, s, "tok-t1"); !got.Live(now) {
		t.Fatalf("t1 after the rollback: %+v, want it live, never rotated", got)
	}

	if err := s.Tx(testCtx, nested); err != nil {
		t.Fatal(err)
	}
	if f, err := s.GetLoginFailure(testCtx, sessionsTestRealm, "dave"); err != nil || f.Failures != 2 || !f.Locked(now+1) {
		t.Fatalf("dave's failures after the commit: %+v (%v)", f, err)
	}
	if u, err := s.GetUser(testCtx, sessionsTestRealm, "dave"); err != nil || u.PasswordHash != "dave-2" {
		t.Fatalf("dave after the commit: %+v (%v)", u, err)
	}
	if got := sessionsTestTokenState(t, s, "tok-t3"); got.FamilyID != "t1" || !got.Live(now+1) {
		t.Fatalf("t3 after the commit: %+v", got)
	}
	if _, err := s.GetConsent(testCtx, "dave", "web"); err != nil {
		t.Fatalf("dave's consent after the commit: %v", err)
	}
}

// Caches keep what they read under a generation until it moves: it must
// not move before the write commits, or a cache could keep, under the new
// generation, what it read just before the commit.
func testTxGenerationsMoveAfterCommit(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s, sessionsTestSSO("sso", sessionsTestRealm, "alice", now, now+hour))
	gen, revocations := s.Generation(), s.RevocationGeneration()
	err := s.Tx(testCtx, func(tx *store.Store) error {
		return inOrder(
			func() error {
				r, err := tx.GetRealm(testCtx, "acme")
				if err != nil {
					return err
				}
				r.DisplayName = "Renamed"
				return tx.UpdateRealm(testCtx, r)
			},
			func() error {
				_, err := tx.DeleteSession(testCtx, sessionsTestRealm, "sso", store.SessionSSO, now)
				return err
			},
			func() error {
				if s.Generation() != gen || s.RevocationGeneration() != revocations {
					return errors.New("a generation moved before the transaction committed")
				}
				return nil
			},
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Generation() == gen || s.RevocationGeneration() == revocations {
		t.Fatalf("generations after the commit: %d and %d, as before", s.Generation(), s.RevocationGeneration())
	}
}

func testReadTxSnapshot(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	users := func(s *store.Store) (int, error) {
		_, total, err := s.ListUsers(testCtx, sessionsTestRealm, store.UserFilter{Limit: 10})
		return total, err
	}
	err := s.ReadTx(testCtx, func(tx *store.Store) error {
		before, err := users(tx)
		if err != nil {
			return err
		}
		// A writer commits meanwhile: the read transaction keeps reading
		// the database as it was when it began reading.
		if err := s.CreateUser(testCtx, testUser("dave", sessionsTestRealm, "dave", "")); err != nil {
			return err
		}
		if after, err := users(tx); err != nil || after != before {
			return fmt.Errorf("users within one read transaction: %d, then %d (%v)", before, after, err)
		}
		if _, err := tx.GetUser(testCtx, sessionsTestRealm, "dave"); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("a user created after the snapshot: %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := users(s); err != nil || n != 3 {
		t.Fatalf("users after the read transaction: %d (%v), want 3", n, err)
	}
}

// race runs fn(0) … fn(n-1) at once, each on a goroutine of its own, and
// returns their errors by index.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// raceTestOneWins fails unless exactly one of errs is nil and every other
// is want.
func raceTestOneWins(t *testing.T, what string, errs []error, want error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("%s: both %d and %d won", what, winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, want):
			t.Fatalf("%s: %d lost with %v, want %v", what, i, err, want)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: none of %d won", what, len(errs))
	}
	return winner
}

const raceWriters = 8

// refreshTokenFixture makes alice's SSO and OAuth sessions with the live
// refresh token "tok-t1" (ID t1), and returns the fixture's clock.
func refreshTokenFixture(t *testing.T, s *store.Store) (now, hour int64) {
	t.Helper()
	sessionsTestFixture(t, s)
	now, hour = sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-hour, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-hour, now+hour))
	sessionsTestMustCreateToken(t, s, sessionsTestToken("t1", "alice", "web", "web", false, now-hour, now+hour))
	return now, hour
}

// Two rotations of one refresh token: one wins, and the others are a reuse
// of the token, which revokes its family (the winner's successor too).
func testRaceRefreshTokenRotation(t *testing.T, s *store.Store) {
	now, hour := refreshTokenFixture(t, s)
	errs := race(raceWriters, func(i int) error {
		_, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-t1"),
			sessionsTestNext(fmt.Sprintf("next-%d", i), now, now+hour), now)
		return err
	})
	winner := raceTestOneWins(t, "rotations of one token", errs, store.ErrTokenReused)
	for i := range raceWriters {
		got, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken(fmt.Sprintf("tok-next-%d", i)))
		switch {
		case i != winner:
			mustBeErrNotFound(t, fmt.Sprintf("successor of the losing rotation %d", i), err)
		case err != nil:
			t.Fatalf("the winner's successor: %v", err)
		case got.FamilyID != "t1" || got.RevokedAt != now:
			t.Fatalf("the winner's successor %+v: want it of family t1, revoked by the reuse", got)
		}
	}
	if got := sessionsTestTokenState(t, s, "tok-t1"); got.RotatedAt != now || got.RevokedAt != now {
		t.Fatalf("the presented token %+v: want it rotated and revoked", got)
	}
}

func testRaceSameUsername(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	errs := race(raceWriters, func(i int) error {
		return s.CreateUser(testCtx, testUser(fmt.Sprintf("dave-%d", i), sessionsTestRealm, "dave", fmt.Sprintf("dave-%d@example.test", i)))
	})
	winner := raceTestOneWins(t, "users of one username", errs, store.ErrConflict)
	for i, err := range errs {
		var ce *store.ConflictError
		if i != winner && (!errors.As(err, &ce) || ce.Column != "username") {
			t.Fatalf("loser %d: %v, want a conflict on username", i, err)
		}
	}
	users, total, err := s.ListUsers(testCtx, sessionsTestRealm, store.UserFilter{Username: "dave", Exact: true, Limit: 10})
	if err != nil || total != 1 || users[0].ID != fmt.Sprintf("dave-%d", winner) {
		t.Fatalf("users named dave: %d (%v), want the winner's one", total, err)
	}
}

func testRaceLogoutTokenID(t *testing.T, s *store.Store) {
	errs := race(raceWriters, func(int) error {
		return s.RecordLogoutTokenID(testCtx, "jti-1", sessionsTestNow+1000, sessionsTestNow)
	})
	raceTestOneWins(t, "one logout token seen at once", errs, store.ErrConflict)
}

func testRaceActionToken(t *testing.T, s *store.Store) {
	actionTestFixture(t, s)
	errs := race(raceWriters, func(int) error {
		_, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, sessionsTestNow)
		return err
	})
	raceTestOneWins(t, "one link clicked at once", errs, store.ErrNotFound)
}

func testRaceWebAuthnCeremony(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	if err := s.CreateWebAuthnCeremony(testCtx, &store.WebAuthnCeremony{ID: "ceremony", RealmID: sessionsTestRealm, UserID: "alice",
		Kind: store.CeremonyLogin, SessionData: []byte(`{"challenge":"c"}`), ExpiresAt: sessionsTestNow + 1000}); err != nil {
		t.Fatal(err)
	}
	errs := race(raceWriters, func(int) error {
		_, err := s.TakeWebAuthnCeremony(testCtx, sessionsTestRealm, "ceremony", sessionsTestNow)
		return err
	})
	raceTestOneWins(t, "one ceremony answered at once", errs, store.ErrNotFound)
}

// Moves that would each be fine alone but close a loop together: the
// check for a cycle and the move are one transaction, so of "a under b"
// and "b under a" one is refused, and no moves leave a loop behind.
func testRaceGroupMoves(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	const pairs, triples = 4, 3
	for n := range 2*pairs + 3*triples {
		groupTestCreate(t, s, groupTestRealmID, n, "", fmt.Sprintf("g%d", n))
	}
	// Each pair a, b moves a under b and b under a; each triple a, b, c
	// moves a under b, b under c and c under a.
	type move struct{ group, parent int }
	var moves []move
	for p := range pairs {
		a, b := 2*p, 2*p+1
		moves = append(moves, move{a, b}, move{b, a})
	}
	for tr := range triples {
		a := 2*pairs + 3*tr
		moves = append(moves, move{a, a + 1}, move{a + 1, a + 2}, move{a + 2, a})
	}
	errs := race(len(moves), func(i int) error {
		return s.MoveGroup(testCtx, groupTestRealmID, groupTestID(moves[i].group), groupTestID(moves[i].parent))
	})
	for i := 0; i < len(moves); {
		size := 2
		if i >= 2*pairs {
			size = 3
		}
		cycles := 0
		for _, err := range errs[i : i+size] {
			switch {
			case errors.Is(err, store.ErrCycle):
				cycles++
			case err != nil:
				t.Fatalf("move: %v", err)
			}
		}
		if cycles != 1 {
			t.Fatalf("moves %v: %d refused as a cycle, want 1", moves[i:i+size], cycles)
		}
		i += size
	}
	groups, err := s.ListGroups(testCtx, groupTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	parent := map[string]string{}
	for _, g := range groups {
		parent[g.ID] = g.ParentID
	}
	for _, g := range groups {
		seen := map[string]bool{}
		for id := g.ID; id != ""; id = parent[id] {
			if seen[id] {
				t.Fatalf("group %s is its own ancestor", id)
			}
			seen[id] = true
		}
	}
}

// Each change keeps the hash it replaces, read in its own transaction:
// none is lost, none is kept twice.
func testRacePasswordChanges(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	errs := race(raceWriters, func(i int) error {
		return s.ChangeUserPassword(testCtx, sessionsTestRealm, "alice", fmt.Sprintf("hash-%d", i), sessionsTestNow+int64(i), false, raceWriters)
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	history, err := s.PasswordHistory(testCtx, sessionsTestRealm, "alice", 2*raceWriters)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	// alice had no password: the first change replaced none.
	all := append(slices.Clone(history), alice.PasswordHash)
	slices.Sort(all)
	var want []string
	for i := range raceWriters {
		want = append(want, fmt.Sprintf("hash-%d", i))
	}
	if len(history) != raceWriters-1 || !slices.Equal(all, want) {
		t.Fatalf("history %v and password %q: want every hash once", history, alice.PasswordHash)
	}
}

// Each grant adds its scope to what it reads of the consent in its own
// transaction: none is lost.
func testRaceConsentGrants(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	var want []string
	for i := range raceWriters {
		want = append(want, fmt.Sprintf("scope-%d", i))
	}
	errs := race(raceWriters, func(i int) error {
		return s.GrantConsent(testCtx, "alice", "web", []string{want[i]}, sessionsTestNow+int64(i))
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
	}
	c, err := s.GetConsent(testCtx, "alice", "web")
	if err != nil || !slices.Equal(c.Scopes, want) {
		t.Fatalf("consent after concurrent grants: %+v (%v), want scopes %v", c, err, want)
	}
	if history, err := s.ConsentHistory(testCtx, sessionsTestRealm, "alice", 0, 100); err != nil || len(history) != raceWriters {
		t.Fatalf("consent history: %d events (%v), want %d", len(history), err, raceWriters)
	}
}

// testGroupTxMembersApart runs many GroupTx callers at once, so that they
// share transactions: each gets its own outcome, a failing one loses its
// own writes alone, and a clash is the loser's alone.
func testGroupTxMembersApart(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	const n = 48
	boom := errors.New("boom")
	errs := race(n, func(i int) error {
		return s.GroupTx(testCtx, func(tx *store.Store) error {
			switch i % 3 {
			case 0: // writes, then fails
				if err := tx.CreateUser(testCtx, testUser(fmt.Sprintf("failed-%d", i), sessionsTestRealm, fmt.Sprintf("failed-%d", i), "")); err != nil {
					return err
				}
				return fmt.Errorf("member %d: %w", i, boom)
			case 1: // all of them want one username
				return tx.CreateUser(testCtx, testUser(fmt.Sprintf("clash-%d", i), sessionsTestRealm, "clash", ""))
			default:
				return tx.CreateUser(testCtx, testUser(fmt.Sprintf("kept-%d", i), sessionsTestRealm, fmt.Sprintf("kept-%d", i), ""))
			}
		})
	})
	clashWinners := 0
	for i, err := range errs {
		switch i % 3 {
		case 0:
			if !errors.Is(err, boom) {
				t.Fatalf("member %d: %v, want its own error", i, err)
			}
			mustBeErrNotFound(t, fmt.Sprintf("user of failed member %d", i),
				sessionsTestErr(s.GetUser(testCtx, sessionsTestRealm, fmt.Sprintf("failed-%d", i))))
		case 1:
			if err == nil {
				clashWinners++
			} else if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("member %d: %v, want nil or a conflict", i, err)
			}
		default:
			if err != nil {
				t.Fatalf("member %d: %v", i, err)
			}
			if _, err := s.GetUser(testCtx, sessionsTestRealm, fmt.Sprintf("kept-%d", i)); err != nil {
				t.Fatalf("user of member %d after commit: %v", i, err)
			}
		}
	}
	if clashWinners != 1 {
		t.Fatalf("%d members created the user clash, want 1", clashWinners)
	}
}

// testSavepointFailsAlone runs GroupTx members that each write, fail a
// savepoint and pass another, at once so that they share transactions and
// the savepoints nest in the members': the failed savepoint loses its own
// writes and nothing else, in its member or the others.
func testSavepointFailsAlone(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	const n = 16
	boom := errors.New("boom")
	user := func(tx *store.Store, i int, what string) error {
		name := fmt.Sprintf("%s-%d", what, i)
		return tx.CreateUser(testCtx, testUser(name, sessionsTestRealm, name, ""))
	}
	errs := race(n, func(i int) error {
		return s.GroupTx(testCtx, func(tx *store.Store) error {
			if err := user(tx, i, "before"); err != nil {
				return err
			}
			outcome, err := tx.Savepoint(testCtx, func(tx *store.Store) error {
				if err := user(tx, i, "undone"); err != nil {
					return err
				}
				return boom
			})
			if err != nil || !errors.Is(outcome, boom) {
				return fmt.Errorf("failing savepoint: outcome %v, err %v", outcome, err)
			}
			outcome, err = tx.Savepoint(testCtx, func(tx *store.Store) error { return user(tx, i, "kept") })
			if err != nil || outcome != nil {
				return fmt.Errorf("savepoint: outcome %v, err %v", outcome, err)
			}
			return user(tx, i, "after")
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		for _, what := range []string{"before", "kept", "after"} {
			if _, err := s.GetUser(testCtx, sessionsTestRealm, fmt.Sprintf("%s-%d", what, i)); err != nil {
				t.Fatalf("user %s of member %d after commit: %v", what, i, err)
			}
		}
		mustBeErrNotFound(t, fmt.Sprintf("user of member %d's failed savepoint", i),
			sessionsTestErr(s.GetUser(testCtx, sessionsTestRealm, fmt.Sprintf("undone-%d", i))))
	}

	// Outside a transaction, a savepoint is a transaction of its own.
	outcome, err := s.Savepoint(testCtx, func(tx *store.Store) error {
		if err := user(tx, 0, "alone"); err != nil {
			return err
		}
		return boom
	})
	if err != nil || !errors.Is(outcome, boom) {
		t.Fatalf("savepoint outside a transaction: outcome %v, err %v", outcome, err)
	}
	mustBeErrNotFound(t, "user of a failed savepoint outside a transaction",
		sessionsTestErr(s.GetUser(testCtx, sessionsTestRealm, "alone-0")))
}

// testRaceRefreshTokenRotationGrouped is RaceRefreshTokenRotation with the
// rotations sharing transactions, as the token endpoint runs them: the
// members after the winner see its rotation and revoke the family.
func testRaceRefreshTokenRotationGrouped(t *testing.T, s *store.Store) {
	now, hour := refreshTokenFixture(t, s)
	errs := race(raceWriters, func(i int) error {
		var reused error
		err := s.GroupTx(testCtx, func(tx *store.Store) error {
			_, err := tx.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-t1"),
				sessionsTestNext(fmt.Sprintf("next-%d", i), now, now+hour), now)
			if errors.Is(err, store.ErrTokenReused) {
				reused = err // the family's revocation is committed
				return nil
			}
			return err
		})
		return cmp.Or(err, reused)
	})
	winner := raceTestOneWins(t, "grouped rotations of one token", errs, store.ErrTokenReused)
	got, err := s.RefreshTokenByHash(testCtx, sessionsTestRealm, store.HashToken(fmt.Sprintf("tok-next-%d", winner)))
	if err != nil || got.RevokedAt != now {
		t.Fatalf("the winner's successor %+v (%v): want it revoked by the reuse", got, err)
	}
}
