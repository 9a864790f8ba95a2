package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// refreshChain is one refresh-token family as a client sees it: the
// tokens it presented and was answered for, and the last one it was given.
type refreshChain struct {
	rotated []string // presented and answered: each must be refused from now on
	last    string   // given in the last answer
}

// TestCLIKillDuringRefreshes kills the server with SIGKILL while clients
// refresh in a loop (the rotations sharing commits), then checks, on the
// restarted server, that every refresh token a client was answered with
// and had not presented yet works exactly once, and that no token rotated
// away before the kill works.
func TestCLIKillDuringRefreshes(t *testing.T) {
	const (
		hammers   = 8  // chains refreshed in a loop until the kill
		holders   = 16 // chains refreshed a few times, then held
		killAfter = 300
		password  = "crash-test-password-1"
	)
	dir := t.TempDir()
	db := dir + "/refresh-crash.db"
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}
	s := cliStartServer(t, db, env...)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "crash"}, http.StatusCreated)
	var client struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(s.must(http.MethodPost, "/admin/realms/crash/clients", cliAPIKey,
		map[string]any{"clientId": "app", "grantTypes": []string{"password", "refresh_token"}}, http.StatusCreated), &client); err != nil {
		t.Fatal(err)
	}
	var user struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(s.must(http.MethodPost, "/admin/realms/crash/users", cliAPIKey,
		map[string]any{"username": "alice"}, http.StatusCreated), &user); err != nil {
		t.Fatal(err)
	}
	s.must(http.MethodPut, "/admin/realms/crash/users/"+user.ID+"/reset-password", cliAPIKey,
		map[string]any{"password": password, "temporary": false}, http.StatusNoContent)

	token := func(base string, form url.Values) (int, string, error) {
		req, err := http.NewRequest(http.MethodPost, base+"/realms/crash/protocol/openid-connect/token", strings.NewReader(form.Encode()))
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("app", client.Secret)
		resp, err := cliClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, "", err
		}
		var out struct {
			RefreshToken string `json:"refresh_token"`
			Error        string `json:"error"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return resp.StatusCode, "", fmt.Errorf("%d: %s", resp.StatusCode, body)
		}
		if resp.StatusCode == http.StatusOK {
			return resp.StatusCode, out.RefreshToken, nil
		}
		return resp.StatusCode, out.Error, nil
	}
	refresh := func(base, rt string) (int, string, error) {
		return token(base, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	}

	chains := make([]*refreshChain, hammers+holders)
	for i := range chains {
		status, rt, err := token(s.base, url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {password}})
		if err != nil || status != http.StatusOK || rt == "" {
			t.Fatalf("sign-in %d: %d %q %v", i, status, rt, err)
		}
		chains[i] = &refreshChain{last: rt}
	}

	var (
		killed    atomic.Bool
		acked     atomic.Int64
		reachKill = make(chan struct{})
		once      sync.Once
		hammering sync.WaitGroup
		holding   sync.WaitGroup
	)
	// step refreshes chain c once; it reports false once the server is gone.
	step := func(c *refreshChain) bool {
		status, next, err := refresh(s.base, c.last)
		if err != nil || status != http.StatusOK {
			if !killed.Load() {
				t.Errorf("refresh before the kill: %d %q %v", status, next, err)
			}
			return false
		}
		c.rotated, c.last = append(c.rotated, c.last), next
		if acked.Add(1) >= killAfter {
			once.Do(func() { close(reachKill) })
		}
		return true
	}
	for _, c := range chains[:hammers] {
		hammering.Go(func() {
			for step(c) {
			}
		})
	}
	// The holders refresh now and then until the load has run a while,
	// then once more, and the kill follows their last answers at once: an
	// answer sent before its rotation were durable would be lost with it.
	for i, c := range chains[hammers:] {
		holding.Go(func() {
			for {
				select {
				case <-reachKill:
					step(c)
					return
				case <-time.After(time.Duration(1+i) * time.Millisecond):
					if !step(c) {
						return
					}
				}
			}
		})
	}
	select {
	case <-reachKill:
	case <-time.After(cliWaitBound):
		t.Fatalf("fewer than %d refreshes answered", killAfter)
	}
	holding.Wait()
	// The holders are done, the hammers still at it: kill.
	killed.Store(true)
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	if ws, ok := s.waitExit().Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatal("server not killed by SIGKILL")
	}
	hammering.Wait()
	t.Logf("%d refreshes answered before the kill", acked.Load())

	s2 := cliStartServer(t, db, env...)
	for i, c := range chains[hammers:] {
		// Answered and never presented: usable, once.
		if status, next, err := refresh(s2.base, c.last); err != nil || status != http.StatusOK || next == "" {
			t.Errorf("holder %d: its last answered token after the restart: %d %q %v, want a new token", i, status, next, err)
		}
		if status, code, err := refresh(s2.base, c.last); err != nil || status != http.StatusBadRequest || code != "invalid_grant" {
			t.Errorf("holder %d: its last answered token a second time: %d %q %v, want invalid_grant", i, status, code, err)
		}
	}
	for i, c := range chains {
		// Rotated away before the kill: refused. (Presenting one revokes the
		// family, which is why the live tokens were used first.)
		for j, rt := range c.rotated {
			if status, code, err := refresh(s2.base, rt); err != nil || status != http.StatusBadRequest || code != "invalid_grant" {
				t.Errorf("chain %d: token %d, rotated away before the kill: %d %q %v, want invalid_grant", i, j, status, code, err)
			}
		}
	}
}
