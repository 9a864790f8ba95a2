package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// deviceSuite is the conformance tests of device authorizations.
func deviceSuite() []subTest {
	return []subTest{
		{"DeviceCreateGet", testDeviceCreateGet},
		{"DeviceCreateRules", testDeviceCreateRules},
		{"DeviceDecide", testDeviceDecide},
		{"DevicePollPending", testDevicePollPending},
		{"DevicePollRedeems", testDevicePollRedeems},
		{"DevicePollExpired", testDevicePollExpired},
		{"DevicePollRefused", testDevicePollRefused},
		{"DevicePurge", testDevicePurge},
		{"DeviceCascades", testDeviceCascades},
	}
}

const (
	deviceTestRealm  = "11111111-1111-4111-8111-111111111111"
	deviceTestOther  = "22222222-2222-4222-8222-222222222222"
	deviceTestNow    = int64(1_800_000_000_000)
	deviceTestSecond = int64(1000)
)

// deviceTestFixture makes realms acme and other; user alice and clients
// tv and cli in acme; user carol and client far in other.
func deviceTestFixture(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(deviceTestRealm, "acme", 1000))
	mustCreateRealm(t, s, testRealm(deviceTestOther, "other", 2000))
	mustCreateUser(t, s, testUser("alice", deviceTestRealm, "alice", ""))
	mustCreateUser(t, s, testUser("carol", deviceTestOther, "carol", ""))
	for _, c := range []*store.Client{
		{ID: "tv", RealmID: deviceTestRealm, ClientID: "tv-app", Name: "Living room TV", ClientType: "PUBLIC", CreatedAt: 1},
		{ID: "cli", RealmID: deviceTestRealm, ClientID: "cli-app", ClientType: "PUBLIC", CreatedAt: 1},
		{ID: "far", RealmID: deviceTestOther, ClientID: "far-app", ClientType: "PUBLIC", CreatedAt: 1},
	} {
		if err := s.CreateClient(testCtx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// deviceTestAuth is a pending authorization of client tv in acme whose
// device code is "dc-"+userCode, created at deviceTestNow, living ten
// minutes, as reads return it.
func deviceTestAuth(userCode string) *store.DeviceAuthorization {
	return &store.DeviceAuthorization{
		DeviceCodeHash: store.HashToken("dc-" + userCode), UserCode: userCode, RealmID: deviceTestRealm, ClientID: "tv",
		Scopes: []string{"openid", "profile"}, Status: store.DevicePending, Interval: 5,
		CreatedAt: deviceTestNow, ExpiresAt: deviceTestNow + 600*deviceTestSecond,
		PublicClientID: "tv-app", ClientName: "Living room TV",
	}
}

func deviceTestMustCreate(t *testing.T, s *store.Store, auths ...*store.DeviceAuthorization) {
	t.Helper()
	for _, d := range auths {
		if err := s.CreateDeviceAuthorization(testCtx, d); err != nil {
			t.Fatalf("create device authorization %s: %v", d.UserCode, err)
		}
	}
}

func deviceTestGet(t *testing.T, s *store.Store, userCode string) *store.DeviceAuthorization {
	t.Helper()
	d, err := s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, userCode)
	if err != nil {
		t.Fatalf("device authorization %s: %v", userCode, err)
	}
	return d
}

// deviceTestPoll polls with the device code of userCode as client tv.
func deviceTestPoll(t *testing.T, s *store.Store, userCode string, now int64) (*store.DeviceAuthorization, store.DevicePoll) {
	t.Helper()
	d, poll, err := s.PollDeviceAuthorization(testCtx, deviceTestRealm, store.HashToken("dc-"+userCode), "tv", now)
	if err != nil {
		t.Fatalf("poll %s: %v", userCode, err)
	}
	return d, poll
}

func deviceTestMustNotFind(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: %v, want ErrNotFound", what, err)
	}
}

func testDeviceCreateGet(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	want := deviceTestAuth("BCDFGHJK")
	deviceTestMustCreate(t, s, want)
	mustEqual(t, "device authorization", deviceTestGet(t, s, "BCDFGHJK"), want)

	_, err := s.DeviceAuthorizationByUserCode(testCtx, deviceTestOther, "BCDFGHJK")
	deviceTestMustNotFind(t, "user code in another realm", err)
	_, err = s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, "BCDFGHJL")
	deviceTestMustNotFind(t, "unknown user code", err)

	// Whatever state the caller hands in, a new authorization is pending
	// and unpolled; nil scopes read back as an empty list.
	bare := deviceTestAuth("LMNPQRST")
	bare.Status, bare.UserID, bare.AuthTime, bare.LastPollAt, bare.Scopes = store.DeviceApproved, "alice", 5, 7, nil
	deviceTestMustCreate(t, s, bare)
	got := deviceTestGet(t, s, "LMNPQRST")
	if got.Status != store.DevicePending || got.UserID != "" || got.AuthTime != 0 || got.LastPollAt != 0 ||
		got.Scopes == nil || len(got.Scopes) != 0 {
		t.Fatalf("new authorization %+v: want pending, unpolled, no user, empty scopes", got)
	}
}

func testDeviceCreateRules(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"))

	taken := deviceTestAuth("BCDFGHJK")
	taken.DeviceCodeHash = store.HashToken("another device code")
	err := s.CreateDeviceAuthorization(testCtx, taken)
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Column != "user_code" {
		t.Fatalf("taken user code: %v, want a conflict on user_code", err)
	}
	sameCode := deviceTestAuth("LMNPQRST")
	sameCode.DeviceCodeHash = store.HashToken("dc-BCDFGHJK")
	mustBeErrConflict(t, "taken device code", s.CreateDeviceAuthorization(testCtx, sameCode))
	for name, change := range map[string]func(*store.DeviceAuthorization){
		"client of another realm": func(d *store.DeviceAuthorization) { d.ClientID = "far" },
		"unknown client":          func(d *store.DeviceAuthorization) { d.ClientID = "nope" },
		"unknown realm":           func(d *store.DeviceAuthorization) { d.RealmID = "nope" },
	} {
		d := deviceTestAuth("VWXZBCDF")
		change(d)
		deviceTestMustNotFind(t, name, s.CreateDeviceAuthorization(testCtx, d))
	}
	raw := deviceTestAuth("VWXZBCDF")
	raw.DeviceCodeHash = []byte("dc-VWXZBCDF")
	if err := s.CreateDeviceAuthorization(testCtx, raw); err == nil {
		t.Fatal("a device code was stored instead of its hash")
	}
	_, err = s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, "VWXZBCDF")
	deviceTestMustNotFind(t, "a refused authorization", err)
}

func testDeviceDecide(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	expiring := deviceTestAuth("VWXZBCDF")
	expiring.ExpiresAt = deviceTestNow + deviceTestSecond
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"), deviceTestAuth("LMNPQRST"), expiring)
	now := deviceTestNow + 10*deviceTestSecond

	deviceTestMustNotFind(t, "approval by a user of another realm",
		s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", "carol", now, now))
	deviceTestMustNotFind(t, "approval by an unknown user",
		s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", "nobody", now, now))
	deviceTestMustNotFind(t, "approval in another realm",
		s.ApproveDeviceAuthorization(testCtx, deviceTestOther, "BCDFGHJK", "alice", now, now))
	if got := deviceTestGet(t, s, "BCDFGHJK"); got.Status != store.DevicePending {
		t.Fatalf("a refused approval changed the state to %s", got.Status)
	}

	if err := s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", "alice", now-3, now); err != nil {
		t.Fatal(err)
	}
	want := deviceTestAuth("BCDFGHJK")
	want.Status, want.UserID, want.AuthTime = store.DeviceApproved, "alice", now-3
	mustEqual(t, "approved authorization", deviceTestGet(t, s, "BCDFGHJK"), want)

	if err := s.DenyDeviceAuthorization(testCtx, deviceTestRealm, "LMNPQRST", now); err != nil {
		t.Fatal(err)
	}
	if got := deviceTestGet(t, s, "LMNPQRST"); got.Status != store.DeviceDenied || got.UserID != "" {
		t.Fatalf("denied authorization %+v", got)
	}

	// A decision is final, and an expired authorization cannot be decided.
	deviceTestMustNotFind(t, "second approval", s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", "alice", now, now))
	deviceTestMustNotFind(t, "denial after approval", s.DenyDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", now))
	deviceTestMustNotFind(t, "approval after denial", s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "LMNPQRST", "alice", now, now))
	deviceTestMustNotFind(t, "approval of an expired code", s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "VWXZBCDF", "alice", now, now))
	deviceTestMustNotFind(t, "denial of an expired code", s.DenyDeviceAuthorization(testCtx, deviceTestRealm, "VWXZBCDF", now))
	deviceTestMustNotFind(t, "denial of an unknown code", s.DenyDeviceAuthorization(testCtx, deviceTestRealm, "ZZZZZZZZ", now))
	if got := deviceTestGet(t, s, "VWXZBCDF"); got.Status != store.DevicePending {
		t.Fatalf("expired authorization became %s", got.Status)
	}
}

func testDevicePollPending(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"))
	sec := deviceTestSecond
	t0 := deviceTestNow + 2*sec
	for _, step := range []struct {
		at       int64
		poll     store.DevicePoll
		interval int
	}{
		{t0, store.DevicePollPending, 5},            // the first poll is never too soon
		{t0 + 5*sec, store.DevicePollPending, 5},    // exactly the interval later
		{t0 + 9*sec, store.DevicePollSlowDown, 10},  // 4 s: too soon, the interval grows
		{t0 + 18*sec, store.DevicePollSlowDown, 15}, // 9 s: too soon for the new interval
		{t0 + 33*sec, store.DevicePollPending, 15},  // 15 s: fine, and the interval stays
	} {
		d, poll := deviceTestPoll(t, s, "BCDFGHJK", step.at)
		if poll != step.poll || d.Interval != step.interval || d.LastPollAt != step.at {
			t.Fatalf("poll at +%d ms: %v interval %d last poll %d, want %v interval %d",
				step.at-t0, poll, d.Interval, d.LastPollAt, step.poll, step.interval)
		}
		if got := deviceTestGet(t, s, "BCDFGHJK"); got.Interval != step.interval || got.LastPollAt != step.at || got.Status != store.DevicePending {
			t.Fatalf("stored after poll at +%d ms: %+v", step.at-t0, got)
		}
	}
}

func testDevicePollRedeems(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"), deviceTestAuth("LMNPQRST"))
	now := deviceTestNow + 10*deviceTestSecond
	if err := s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", "alice", now-1, now); err != nil {
		t.Fatal(err)
	}
	if err := s.DenyDeviceAuthorization(testCtx, deviceTestRealm, "LMNPQRST", now); err != nil {
		t.Fatal(err)
	}
	// A decided authorization answers at once, however soon the poll.
	d, poll := deviceTestPoll(t, s, "BCDFGHJK", now+1)
	want := deviceTestAuth("BCDFGHJK")
	want.Status, want.UserID, want.AuthTime = store.DeviceApproved, "alice", now-1
	if poll != store.DevicePollApproved {
		t.Fatalf("poll of an approved code: %v", poll)
	}
	mustEqual(t, "redeemed authorization", d, want)
	// Redeemed once: gone.
	_, _, err := s.PollDeviceAuthorization(testCtx, deviceTestRealm, store.HashToken("dc-BCDFGHJK"), "tv", now+2)
	deviceTestMustNotFind(t, "second poll of an approved code", err)
	_, err = s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, "BCDFGHJK")
	deviceTestMustNotFind(t, "redeemed code", err)

	// A denial answers every poll, even after expiry: nothing to redeem.
	for _, at := range []int64{now + 1, now + 2, deviceTestAuth("LMNPQRST").ExpiresAt} {
		if _, poll := deviceTestPoll(t, s, "LMNPQRST", at); poll != store.DevicePollDenied {
			t.Fatalf("poll of a denied code at %d: %v", at, poll)
		}
	}
}

func testDevicePollExpired(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"), deviceTestAuth("LMNPQRST"))
	if err := s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "LMNPQRST", "alice", deviceTestNow, deviceTestNow+1); err != nil {
		t.Fatal(err)
	}
	expiry := deviceTestAuth("BCDFGHJK").ExpiresAt
	// Expiry wins over approval, and answers the same however often asked.
	for _, code := range []string{"BCDFGHJK", "LMNPQRST"} {
		for i := range 2 {
			if _, poll := deviceTestPoll(t, s, code, expiry+int64(i)); poll != store.DevicePollExpired {
				t.Fatalf("poll %d of expired %s: %v", i, code, poll)
			}
		}
	}
	if got := deviceTestGet(t, s, "LMNPQRST"); got.Status != store.DeviceApproved {
		t.Fatalf("an expired approval was redeemed: %+v", got)
	}
	if _, poll := deviceTestPoll(t, s, "BCDFGHJK", expiry-1); poll != store.DevicePollPending {
		t.Fatalf("poll just before expiry: %v", poll)
	}
}

func testDevicePollRefused(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"))
	now := deviceTestNow + deviceTestSecond
	for name, poll := range map[string]func() error{
		"another client": func() error {
			_, _, err := s.PollDeviceAuthorization(testCtx, deviceTestRealm, store.HashToken("dc-BCDFGHJK"), "cli", now)
			return err
		},
		"another realm": func() error {
			_, _, err := s.PollDeviceAuthorization(testCtx, deviceTestOther, store.HashToken("dc-BCDFGHJK"), "tv", now)
			return err
		},
		"unknown device code": func() error {
			_, _, err := s.PollDeviceAuthorization(testCtx, deviceTestRealm, store.HashToken("dc-nope"), "tv", now)
			return err
		},
		"the user code as device code": func() error {
			_, _, err := s.PollDeviceAuthorization(testCtx, deviceTestRealm, store.HashToken("BCDFGHJK"), "tv", now)
			return err
		},
	} {
		deviceTestMustNotFind(t, name, poll())
	}
	// None of them counted as a poll.
	if got := deviceTestGet(t, s, "BCDFGHJK"); got.LastPollAt != 0 {
		t.Fatalf("a refused poll was recorded: %+v", got)
	}
}

func testDevicePurge(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	early := deviceTestAuth("BCDFGHJK")
	early.ExpiresAt = deviceTestNow + deviceTestSecond
	other := deviceTestAuth("LMNPQRST")
	other.RealmID, other.ClientID = deviceTestOther, "far"
	other.ExpiresAt = deviceTestNow + deviceTestSecond
	deviceTestMustCreate(t, s, early, other, deviceTestAuth("VWXZBCDF"))
	n, err := s.DeleteExpiredDeviceAuthorizations(testCtx, deviceTestNow+deviceTestSecond)
	if err != nil || n != 2 {
		t.Fatalf("purge: %d, %v; want the 2 expired in both realms", n, err)
	}
	_, err = s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, "BCDFGHJK")
	deviceTestMustNotFind(t, "purged authorization", err)
	deviceTestGet(t, s, "VWXZBCDF")
	// The purged user codes are free again.
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"))
}

func testDeviceCascades(t *testing.T, s *store.Store) {
	deviceTestFixture(t, s)
	deviceTestMustCreate(t, s, deviceTestAuth("BCDFGHJK"), deviceTestAuth("LMNPQRST"))
	now := deviceTestNow + deviceTestSecond
	if err := s.ApproveDeviceAuthorization(testCtx, deviceTestRealm, "BCDFGHJK", "alice", now, now); err != nil {
		t.Fatal(err)
	}
	// An approval dies with its user, so a deleted user's device gets no token.
	if err := s.DeleteUser(testCtx, deviceTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	_, err := s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, "BCDFGHJK")
	deviceTestMustNotFind(t, "approval of a deleted user", err)
	deviceTestGet(t, s, "LMNPQRST")
	if err := s.DeleteClient(testCtx, deviceTestRealm, "tv"); err != nil {
		t.Fatal(err)
	}
	_, err = s.DeviceAuthorizationByUserCode(testCtx, deviceTestRealm, "LMNPQRST")
	deviceTestMustNotFind(t, "authorization of a deleted client", err)
}
