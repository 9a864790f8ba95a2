package app

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// bruteEnv is realm acme with brute-force settings, login events on, its
// user alice and the confidential client cli allowed the password grant,
// on a clock the test moves.
type bruteEnv struct {
	*codeflowEnv
	realmID string
	secret  string
}

// newBruteEnv makes the realm with three failures locking for 20 minutes,
// forgotten after an hour of quiet; realm fields override these.
func newBruteEnv(t *testing.T, realm map[string]any) *bruteEnv {
	t.Helper()
	clock := &codeflowClock{}
	clock.ns.Store(time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC).UnixNano())
	s := newOIDCTestServer(t, func(c *Config) { c.Now = clock.now })
	body := map[string]any{"name": "acme", "eventsEnabled": true, "adminEventsEnabled": true, "bruteForceEnabled": true,
		"maxLoginFailures": 3, "lockoutDuration": 1200, "failureResetTime": 3600}
	maps.Copy(body, realm)
	r := s.admin(http.MethodPost, "/admin/realms", body)
	mustStatus(t, r, http.StatusCreated)
	alice := s.createUser("acme", map[string]any{"username": "alice", "password": codeflowPassword})
	s.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	e := &bruteEnv{codeflowEnv: &codeflowEnv{oidcTestServer: s, t: t, clock: clock, aliceID: alice["id"].(string)},
		realmID: mustRealmID(t, s.testServer, "acme")}
	e.secret = e.client("cli", map[string]any{"grantTypes": []string{"password"}})
	return e
}

// grant asks for tokens with the password grant.
func (e *bruteEnv) grant(username, password string) (int, map[string]any) {
	e.t.Helper()
	return e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}},
		codeflowBasic("cli", e.secret))
}

// mustRefuse checks the answer every failed sign-in gets, locked or not.
func (e *bruteEnv) mustRefuse(what, username, password string) {
	e.t.Helper()
	status, body := e.grant(username, password)
	want := map[string]any{"error": "invalid_grant", "error_description": "invalid user credentials"}
	if status != http.StatusBadRequest || !reflect.DeepEqual(body, want) {
		e.t.Fatalf("%s: %d %v, want 400 %v", what, status, body, want)
	}
}

func (e *bruteEnv) mustSignIn(what, username string) {
	e.t.Helper()
	if status, body := e.grant(username, codeflowPassword); status != http.StatusOK {
		e.t.Fatalf("%s: %d %v, want tokens", what, status, body)
	}
}

func (e *bruteEnv) failures(userID string) *store.LoginFailure {
	e.t.Helper()
	f, err := e.store.GetLoginFailure(e.t.Context(), e.realmID, userID)
	if err != nil {
		e.t.Fatalf("failure record of %s: %v", userID, err)
	}
	return f
}

// lockEvents returns the LOGIN_ERROR events with error
// user_temporarily_disabled, oldest first.
func (e *bruteEnv) lockEvents() []loginEventRep {
	e.t.Helper()
	r := e.admin(http.MethodGet, "/admin/realms/acme/events?type=LOGIN_ERROR&max=1000", nil)
	mustStatus(e.t, r, http.StatusOK)
	var events, out []loginEventRep
	r.decode(e.t, &events)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Error == "user_temporarily_disabled" {
			out = append(out, events[i])
		}
	}
	return out
}

// After maxLoginFailures wrong passwords the right one fails the same
// way, until lockoutDuration has passed.
func TestBruteForceLockoutPasswordGrant(t *testing.T) {
	e := newBruteEnv(t, nil)
	start := e.clock.now()
	for i := range 3 {
		e.mustRefuse("wrong password "+string(rune('1'+i)), "alice", "wrong password")
	}
	e.mustRefuse("right password, locked", "alice", codeflowPassword)
	e.mustRefuse("wrong password, locked", "alice", "wrong password")
	// Other users are not held up.
	e.mustSignIn("bob", "bob")

	f := e.failures(e.aliceID)
	want := &store.LoginFailure{RealmID: e.realmID, UserID: e.aliceID, Failures: 3, LastFailureAt: start.UnixMilli(),
		LastIP: "192.0.2.1", TemporaryLockouts: 1, LockedUntil: start.Add(20 * time.Minute).UnixMilli()}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("record %+v, want %+v (attempts while locked are not counted)", f, want)
	}
	// Events: the lockout, then each locked attempt, all user_temporarily_disabled.
	events := e.lockEvents()
	if len(events) != 3 || events[0].UserID != e.aliceID || events[0].Details["lockout"] != "temporary" ||
		events[1].UserID != e.aliceID || events[1].ClientID != "cli" || events[1].Details["username"] != "alice" {
		t.Fatalf("lock events %+v", events)
	}

	// The flood guard's window (15 minutes) passes; the lockout (20) not yet.
	e.clock.advance(20*time.Minute - time.Millisecond)
	e.mustRefuse("right password a moment before the end", "alice", codeflowPassword)
	e.clock.advance(time.Millisecond)
	e.mustSignIn("right password after the lockout", "alice")
	// The success forgets the failures.
	if _, err := e.store.GetLoginFailure(t.Context(), e.realmID, e.aliceID); err == nil {
		t.Fatal("failures kept after a successful sign-in")
	}
}

// failureResetTime of quiet forgets the failures counted so far.
func TestBruteForceFailureReset(t *testing.T) {
	e := newBruteEnv(t, map[string]any{"failureResetTime": 300})
	e.mustRefuse("first failure", "alice", "wrong password")
	e.mustRefuse("second failure", "alice", "wrong password")
	e.clock.advance(5 * time.Minute)
	e.mustRefuse("failure after the reset time", "alice", "wrong password")
	e.mustRefuse("and another", "alice", "wrong password")
	if f := e.failures(e.aliceID); f.Failures != 2 || f.LockedUntil != 0 {
		t.Fatalf("record %+v, want two failures, not locked", f)
	}
	e.mustSignIn("four failures, never three within the reset time", "alice")
	// Without the quiet time, the same four lock.
	for range 3 {
		e.mustRefuse("bob's failure", "bob", "wrong password")
	}
	e.mustRefuse("bob, locked", "bob", codeflowPassword)
}

// After permanentLockoutAfter temporary lockouts the next one lasts until
// an admin unlocks the user.
func TestBruteForcePermanentLockout(t *testing.T) {
	e := newBruteEnv(t, map[string]any{"maxLoginFailures": 2, "lockoutDuration": 60, "permanentLockoutAfter": 1})
	e.mustRefuse("failure 1", "alice", "wrong password")
	e.mustRefuse("failure 2", "alice", "wrong password")
	e.mustRefuse("locked", "alice", codeflowPassword)
	e.clock.advance(61 * time.Second)
	e.mustRefuse("failure 1 after the lockout", "alice", "wrong password")
	e.mustRefuse("failure 2 after the lockout", "alice", "wrong password")
	e.clock.advance(1000 * time.Hour)
	e.mustRefuse("long after, locked for good", "alice", codeflowPassword)
	if f := e.failures(e.aliceID); !f.Permanent() || f.TemporaryLockouts != 1 {
		t.Fatalf("record %+v, want a permanent lockout after one temporary", f)
	}
	locked := bruteTestLockedUsers(t, e.testServer, "")
	if len(locked) != 1 || locked[0]["permanent"] != true || locked[0]["lockedUntil"] != nil || locked[0]["temporaryLockouts"] != 1.0 {
		t.Fatalf("locked users %v", locked)
	}
	var lockouts []string
	for _, ev := range e.lockEvents() {
		if ev.Details["lockout"] != "" {
			lockouts = append(lockouts, ev.Details["lockout"])
		}
	}
	if !reflect.DeepEqual(lockouts, []string{"temporary", "permanent"}) {
		t.Fatalf("lockout events %q, want the temporary and then the permanent lockout", lockouts)
	}
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/brute-force/users/"+e.aliceID+"/unlock", nil), http.StatusNoContent)
	e.mustSignIn("after the unlock", "alice")
}

// With bruteForceEnabled false nothing is counted and nobody is locked.
func TestBruteForceDisabled(t *testing.T) {
	e := newBruteEnv(t, map[string]any{"bruteForceEnabled": false, "maxLoginFailures": 1})
	for range 4 {
		e.mustRefuse("failure", "alice", "wrong password")
	}
	e.mustSignIn("right password", "alice")
	if _, err := e.store.GetLoginFailure(t.Context(), e.realmID, e.aliceID); err == nil {
		t.Fatal("failures counted with brute-force protection off")
	}
	// Nor a wrong one-time code (the identity core's own tests check the
	// rest of its checks).
	realm, err := e.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := e.store.GetUser(t.Context(), realm.ID, e.aliceID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.app.id.CheckOneTimeCode(t.Context(), realm, alice, "000000", false, "192.0.2.1"); !errors.Is(err, identity.ErrInvalidTOTP) {
		t.Fatalf("a wrong code: %v", err)
	}
	if _, err := e.store.GetLoginFailure(t.Context(), e.realmID, e.aliceID); err == nil {
		t.Fatal("a wrong code counted with brute-force protection off")
	}
	// A record from when it was on no longer locks, and is not listed.
	if _, _, err := e.store.RecordLoginFailure(t.Context(), realm.ID, e.aliceID, "192.0.2.1", e.clock.now().UnixMilli(),
		store.LoginFailurePolicy{MaxFailures: 1, LockoutMillis: 3600_000}); err != nil {
		t.Fatal(err)
	}
	e.mustSignIn("with an old lockout on record", "alice")
	if locked := bruteTestLockedUsers(t, e.testServer, ""); len(locked) != 0 {
		t.Fatalf("locked users %v with protection off", locked)
	}
}

// Concurrent wrong passwords are each counted once, through HTTP. The
// server's flood guard is turned off here (a zero window forgets every
// failure at once): it would answer most of them 429 before any password
// is checked, and what is tested is the realm's count.
func TestBruteForceConcurrentGrants(t *testing.T) {
	for _, c := range []struct {
		name        string
		maxFailures int
		want        int // failures on record
		lockouts    int
	}{
		{"below the limit", 1000, 50, 0},
		{"over the limit", 5, 5, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newBruteEnv(t, map[string]any{"maxLoginFailures": c.maxFailures})
			// Fifty hashes queue for the slots: on a loaded machine they may
			// wait longer than the server's bound, and this test is about
			// the failures counted, not the overload answer.
			retuneIdentity(t, e.app, func(d *identity.Deps) {
				d.Throttle, d.HashWait = identity.NewThrottle(e.app.now, 0), time.Hour
			})
			form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"wrong password"}}.Encode()
			var wg sync.WaitGroup
			answers := make([]string, 50)
			for i := range answers {
				wg.Go(func() {
					req := httptest.NewRequest(http.MethodPost, "/realms/acme/protocol/openid-connect/token", strings.NewReader(form))
					req.RemoteAddr = "192.0.2.1:1234"
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.SetBasicAuth("cli", e.secret)
					rec := httptest.NewRecorder()
					e.handler.ServeHTTP(rec, req)
					answers[i] = rec.Result().Status + " " + strings.TrimSpace(rec.Body.String())
				})
			}
			wg.Wait()
			for _, a := range answers {
				if a != answers[0] || !strings.HasPrefix(a, "400 ") || !strings.Contains(a, "invalid user credentials") {
					t.Fatalf("answers differ or are not a wrong password's: %q and %q", answers[0], a)
				}
			}
			f := e.failures(e.aliceID)
			if f.Failures != c.want || f.TemporaryLockouts != c.lockouts {
				t.Fatalf("record %+v, want %d failures and %d lockouts", f, c.want, c.lockouts)
			}
			var lockouts int
			for _, ev := range e.lockEvents() {
				if ev.Details["lockout"] != "" {
					lockouts++
				}
			}
			if lockouts != c.lockouts {
				t.Fatalf("%d lockout events, want %d", lockouts, c.lockouts)
			}
		})
	}
}

// The device page refuses a locked user's right password as it refuses a
// wrong one, counts its failures, and forgets them on success.
func TestBruteForceDeviceApproval(t *testing.T) {
	s := newDeviceTestServer(t, newDeviceTestClock(0))
	realm, err := s.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	realm.EventsEnabled = true
	if err := s.store.UpdateRealm(t.Context(), realm); err != nil {
		t.Fatal(err)
	}
	alice, err := s.store.GetUserByUsername(t.Context(), realm.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	page := s.url + "/realms/acme/device"
	approve := func(password string) (int, string) {
		t.Helper()
		b := newDeviceTestBrowser(t)
		if _, _, err := b.open(page + "?user_code=" + url.QueryEscape(deviceTestStart(t, s))); err != nil {
			t.Fatal(err)
		}
		status, body, err := b.submit(map[string]string{"action": "approve", "username": "alice", "password": password})
		if err != nil {
			t.Fatal(err)
		}
		return status, body
	}
	// A wrong password is counted.
	if status, body := approve("wrong password"); status != http.StatusBadRequest || !strings.Contains(body, enMsg(deviceMsgBadLogin)) {
		t.Fatalf("wrong password: %d %s", status, body)
	}
	if f, err := s.store.GetLoginFailure(t.Context(), realm.ID, alice.ID); err != nil || f.Failures != 1 {
		t.Fatalf("record %+v %v, want one failure", f, err)
	}
	// A success forgets it.
	if status, _ := approve(deviceTestPassword); status != http.StatusOK {
		t.Fatalf("approval: %d", status)
	}
	if _, err := s.store.GetLoginFailure(t.Context(), realm.ID, alice.ID); err == nil {
		t.Fatal("failures kept after an approval")
	}
	// Locked (the realm's five failures): the right password reads as a wrong one.
	for range realm.MaxLoginFailures {
		if _, _, err := s.store.RecordLoginFailure(t.Context(), realm.ID, alice.ID, "192.0.2.9", s.app.now().UnixMilli(),
			identity.BruteForcePolicy(realm)); err != nil {
			t.Fatal(err)
		}
	}
	status, body := approve(deviceTestPassword)
	if status != http.StatusBadRequest || !strings.Contains(body, enMsg(deviceMsgBadLogin)) || strings.Contains(body, "Device connected") {
		t.Fatalf("locked user's approval: %d %s", status, body)
	}
	events, err := s.store.ListLoginEvents(t.Context(), realm.ID, store.LoginEventFilter{Types: []string{"LOGIN_ERROR"},
		EventWindow: store.EventWindow{Max: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var attempts int
	for _, ev := range events {
		if ev.Error == "user_temporarily_disabled" && ev.UserID == alice.ID && ev.ClientID == "tv" {
			attempts++
		}
	}
	if attempts != 1 {
		t.Fatalf("%d lock events of the device attempt in %+v, want 1", attempts, events)
	}
}
