package app

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// TestAccessLog: a JSON line per request, with the client's address as
// --trusted-proxies makes it, the route and the realm, and none of the
// values a query or a path may carry a credential in.
func TestAccessLog(t *testing.T) {
	out, logs := &lockedBuffer{}, &lockedBuffer{}
	peer, _, _ := strings.Cut(apptest.ClientAddr, ":")
	s := newTestServer(t, func(c *Config) {
		c.AccessLog = out
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		c.TrustedProxies = []netip.Prefix{netip.PrefixFrom(netip.MustParseAddr(peer), 32)}
	})
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli",
		"clientType": "PUBLIC", "grantTypes": []string{"password"}}), http.StatusCreated)
	s.createUser("acme", map[string]any{"username": "alice", "password": "a-long-enough-password"})
	out.mu.Lock()
	out.buf.Reset()
	out.mu.Unlock()

	const forwarded = "X-Forwarded-For: 203.0.113.7"
	grant := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type=password&client_id=cli&username=alice&password=a-long-enough-password",
		"Content-Type: application/x-www-form-urlencoded", forwarded)
	mustStatus(t, grant, http.StatusOK)
	auth := s.request(http.MethodGet, "/realms/acme/protocol/openid-connect/auth?client_id=cli&state=state-s3cret"+
		"&code_challenge=challenge-s3cret&code_challenge=again&response_type=code&token=tok-s3cret", nil, forwarded)
	invitation := s.request(http.MethodGet, "/realms/acme/account/organizations/org/invitations/invite-s3cret", nil)
	unmatched := s.request(http.MethodGet, "/nowhere?code=code-s3cret", nil)

	text := out.String()
	for _, secret := range []string{"s3cret", "a-long-enough-password"} {
		if strings.Contains(text, secret) {
			t.Fatalf("the access log holds %q:\n%s", secret, text)
		}
		// The server's own log of the refused invitation page neither.
		if strings.Contains(logs.String(), secret) {
			t.Fatalf("the log holds %q:\n%s", secret, logs)
		}
	}
	if !strings.Contains(logs.String(), `msg="request failed" method=GET path=/realms/acme/account/organizations/org/invitations/{token} status=401`) {
		t.Errorf("no line of the refused invitation page:\n%s", logs)
	}
	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines for 4 requests:\n%s", len(lines), text)
	}
	for i, c := range []struct {
		resp                                      *testResponse
		client, method, path, query, route, realm string
	}{
		{grant, "203.0.113.7", "POST", "/realms/acme/protocol/openid-connect/token", "",
			"/realms/{realm}/protocol/openid-connect/token", "acme"},
		{auth, "203.0.113.7", "GET", "/realms/acme/protocol/openid-connect/auth", "client_id,code_challenge,response_type,state,token",
			"/realms/{realm}/protocol/openid-connect/auth", "acme"},
		{invitation, peer, "GET", "/realms/acme/account/organizations/org/invitations/{token}", "",
			"/realms/{realm}/account/organizations/{slug}/invitations/{token}", "acme"},
		{unmatched, peer, "GET", "/nowhere", "code", "unmatched", ""},
	} {
		l := lines[i]
		want := map[string]any{"msg": "request", "level": "INFO", "client": c.client, "method": c.method, "path": c.path,
			"query": c.query, "status": float64(c.resp.Status), "bytes": float64(len(c.resp.Body)), "route": c.route, "realm": c.realm}
		for k, v := range want {
			if l[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, l[k], v, l)
			}
		}
		if d, ok := l["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("line %d: duration_ms %v", i, l["duration_ms"])
		}
		if _, ok := l["time"].(string); !ok {
			t.Errorf("line %d: no time", i)
		}
	}
}
