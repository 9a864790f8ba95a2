package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store/pgtest"
	"github.com/idenplane/idenplane/store/storetest"
)

// cliStartReplica starts a server of a fleet: on db, listening on addr,
// answering for the fleet's public address.
func cliStartReplica(t *testing.T, db string, env []string, public string) *cliServer {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s := cliLaunchAt(t, db, newCLILog(), env, cliFreeAddr(t), public)
		err := s.waitReady()
		if err == nil {
			return s
		}
		if attempt < 3 && strings.Contains(s.stderr.String(), "address already in use") {
			continue
		}
		t.Fatalf("replica did not become ready: %v\nstderr:\n%s", err, s.stderr)
	}
}

// oidc posts form to one of the realm's OpenID Connect endpoints as the
// client and answers the status and the JSON body.
func (s *cliServer) oidc(realm, endpoint, clientID, secret string, form url.Values) (int, map[string]any) {
	s.t.Helper()
	status, body := s.oidcPost(realm, endpoint, clientID, secret, form)
	out := map[string]any{}
	_ = json.Unmarshal(body, &out)
	return status, out
}

// within polls cond until it holds or bound has passed.
func within(bound time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(bound); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// TestCLIReplicas runs two servers on one PostgreSQL database behind one
// public address, as a load balancer would, and checks that they are
// interchangeable.
func TestCLIReplicas(t *testing.T) {
	db := pgtest.Database(t)
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey, "IDENPLANE_MASTER_KEY=" + cliMasterKey(t)}
	public := "https://idp.fleet.test"
	a := cliStartReplica(t, db, env, public)
	b := cliStartReplica(t, db, env, public)

	// The hourly upkeep, which both begin at start, runs on one of them.
	began := func() (n int) {
		for _, s := range []*cliServer{a, b} {
			n += strings.Count(s.stderr.String(), "upkeep began")
		}
		return n
	}
	left := func() (n int) {
		for _, s := range []*cliServer{a, b} {
			n += strings.Count(s.stderr.String(), "upkeep left to the server that began it")
		}
		return n
	}
	if !within(cliWaitBound, func() bool { return began()+left() == 2 }) || began() != 1 {
		t.Fatalf("upkeep began %d times and was left %d times on two servers, want once each", began(), left())
	}

	const realm, password = "fleet", "fleet-password-1"
	a.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": realm, "bruteForceEnabled": true,
		"maxLoginFailures": 4, "lockoutDuration": 600}, http.StatusCreated)
	var client struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(a.must(http.MethodPost, "/admin/realms/"+realm+"/clients", cliAPIKey,
		map[string]any{"clientId": "app", "grantTypes": []string{"password", "refresh_token"}}, http.StatusCreated), &client); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		var user struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(a.must(http.MethodPost, "/admin/realms/"+realm+"/users", cliAPIKey,
			map[string]any{"username": name}, http.StatusCreated), &user); err != nil {
			t.Fatal(err)
		}
		a.must(http.MethodPut, "/admin/realms/"+realm+"/users/"+user.ID+"/reset-password", cliAPIKey,
			map[string]any{"password": password, "temporary": false}, http.StatusNoContent)
	}
	grant := func(s *cliServer, form url.Values) (int, map[string]any) {
		return s.oidc(realm, "token", "app", client.Secret, form)
	}
	signIn := func(s *cliServer, user, pw string) (int, map[string]any) {
		return grant(s, url.Values{"grant_type": {"password"}, "username": {user}, "password": {pw}, "scope": {"openid"}})
	}
	active := func(s *cliServer, token string) bool {
		status, out := s.oidc(realm, "token/introspect", "app", client.Secret, url.Values{"token": {token}})
		if status != http.StatusOK {
			t.Fatalf("introspect on %s: %d %v", s.base, status, out)
		}
		return out["active"] == true
	}

	// Signed in on a; refreshed and introspected on b.
	status, first := signIn(a, "alice", password)
	if status != http.StatusOK {
		t.Fatalf("password grant on a: %d %v", status, first)
	}
	status, refreshed := grant(b, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}})
	if status != http.StatusOK {
		t.Fatalf("refresh on b of a token from a: %d %v", status, refreshed)
	}
	access := refreshed["access_token"].(string)
	if !active(b, access) || !active(a, access) {
		t.Fatal("the refreshed access token is not active on both servers")
	}
	// The token a refreshed away is refused on a too.
	if status, out := grant(a, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}}); status != http.StatusBadRequest {
		t.Fatalf("reuse on a of a token b rotated: %d %v", status, out)
	}

	// Signed in again; logged out on b; the access token is dead on a,
	// which had just found it active.
	_, second := signIn(a, "alice", password)
	access = second["access_token"].(string)
	if !active(a, access) {
		t.Fatal("a fresh access token is not active")
	}
	if status, out := b.oidc(realm, "logout", "app", client.Secret, url.Values{"refresh_token": {second["refresh_token"].(string)}}); status != http.StatusNoContent {
		t.Fatalf("logout on b: %d %v", status, out)
	}
	if !within(storetest.FleetBound, func() bool { return !active(a, access) }) {
		t.Fatalf("the access token of a session ended on b is still active on a after %s", storetest.FleetBound)
	}

	// An admin change on a is seen by b within the bound: b has the realm
	// cached from the grants above.
	lifespan := func(s *cliServer) float64 {
		_, out := signIn(s, "alice", password)
		v, _ := out["expires_in"].(float64)
		return v
	}
	if got := lifespan(b); got <= 120 {
		t.Fatalf("expires_in on b before the change: %v, want the default 300", got)
	}
	a.must(http.MethodPut, "/admin/realms/"+realm, cliAPIKey, map[string]any{"accessTokenLifespan": 120}, http.StatusOK)
	if !within(storetest.FleetBound, func() bool { return lifespan(b) <= 120 }) {
		t.Fatalf("b still issues tokens for %v s, %s after a changed the realm to 120", lifespan(b), storetest.FleetBound)
	}

	// Brute force: four wrong passwords, two on each server, lock bob out
	// on both.
	for i := range 4 {
		s := []*cliServer{a, b}[i%2]
		if status, out := signIn(s, "bob", "wrong"); status != http.StatusUnauthorized && status != http.StatusBadRequest {
			t.Fatalf("wrong password %d: %d %v", i, status, out)
		}
	}
	for _, s := range []*cliServer{a, b} {
		if status, _ := signIn(s, "bob", password); status == http.StatusOK {
			t.Fatalf("bob signed in on %s after four failures across the two servers", s.base)
		}
	}

	// One server killed mid-load: every write either answered is there,
	// and the other keeps serving.
	cliKillOneReplica(t, a, b, realm)
}

// cliKillOneReplica creates users on both servers at once, kills a with
// SIGKILL mid-burst, and checks on b that every acknowledged user is
// there and that b still serves.
func cliKillOneReplica(t *testing.T, a, b *cliServer, realm string) {
	const workers, killAfter, maxPerWorker = 8, 100, 2000
	var (
		mu        sync.Mutex
		acked     []string
		count     atomic.Int64
		killed    atomic.Bool
		reachKill = make(chan struct{})
		once      sync.Once
		wg        sync.WaitGroup
	)
	for w := range workers {
		s := []*cliServer{a, b}[w%2]
		wg.Go(func() {
			afterKill := 0
			for i := range maxPerWorker {
				if killed.Load() {
					if afterKill++; afterKill > 20 {
						return // b has served on: enough
					}
				}
				name := fmt.Sprintf("w%d-%05d", w, i)
				status, body, err := s.do(http.MethodPost, "/admin/realms/"+realm+"/users", cliAPIKey, map[string]any{"username": name})
				if err != nil || status != http.StatusCreated {
					if s == b || !killed.Load() {
						t.Errorf("create %s on %s: %d %v %s", name, s.base, status, err, body)
					}
					return
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				if count.Add(1) >= killAfter {
					once.Do(func() { close(reachKill) })
				}
			}
		})
	}
	select {
	case <-reachKill:
	case <-time.After(cliWaitBound):
		t.Fatalf("fewer than %d creates acknowledged", killAfter)
	}
	killed.Store(true)
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	a.waitExit()
	wg.Wait()
	have := map[string]bool{}
	for _, n := range b.usernames(realm, cliAPIKey) {
		have[n] = true
	}
	var lost []string
	for _, n := range acked {
		if !have[n] {
			lost = append(lost, n)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged users lost when a was killed, e.g. %v", len(lost), len(acked), lost[:min(5, len(lost))])
	}
	t.Logf("%d creates acknowledged on the two servers; all there after a was killed", len(acked))
	b.must(http.MethodPost, "/admin/realms/"+realm+"/users", cliAPIKey, map[string]any{"username": "after-the-kill"}, http.StatusCreated)
	b.stopGracefully()
}
