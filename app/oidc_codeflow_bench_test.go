package app

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

// codeflowBench is a server on loopback with realm bench, user alice and a
// confidential client with the password and refresh grants; opts adjust
// the server's Config.
type codeflowBench struct {
	base   string
	secret string
	client *http.Client
	server *testServer
	// webSecret is the secret of the browser benchmarks' client web.
	webSecret string
}

func newCodeflowBench(b *testing.B, opts ...func(*Config)) *codeflowBench {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	s := newTestServer(b, append([]func(*Config){func(c *Config) { c.BaseURL = base }}, opts...)...)
	srv := httptest.NewUnstartedServer(s.handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	b.Cleanup(srv.Close)

	s.createRealm("bench")
	s.createUser("bench", map[string]any{"username": "alice", "password": codeflowPassword})
	r := s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{
		"clientId": "app", "grantTypes": []string{"password", "refresh_token"}})
	mustStatus(b, r, http.StatusCreated)
	return &codeflowBench{base: base, secret: r.object(b)["secret"].(string), server: s,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}}
}

// grant posts a token request of client app and returns the new refresh
// token.
func (c *codeflowBench) grant(form url.Values) (string, error) {
	return c.grantAs(form, "app", c.secret)
}

// grantAs posts a token request of client id with its secret.
func (c *codeflowBench) grantAs(form url.Values, id, secret string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, c.base+"/realms/bench/protocol/openid-connect/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &httpStatusError{resp.StatusCode}
	}
	var body struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", err
	}
	return body.RefreshToken, nil
}

var codeflowBenchPassword = url.Values{"grant_type": {"password"}, "username": {"alice"},
	"password": {codeflowPassword}, "scope": {"openid"}}

func codeflowBenchRun(b *testing.B, work func(pb *testing.PB) error) {
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		if err := work(pb); err != nil {
			b.Error(err)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "grants/s")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
}

// BenchmarkPasswordGrant measures password grants over HTTP on loopback:
// the argon2id check (19 MiB, 2 passes) dominates.
func BenchmarkPasswordGrant(b *testing.B) {
	c := newCodeflowBench(b)
	if _, err := c.grant(codeflowBenchPassword); err != nil {
		b.Fatal(err)
	}
	codeflowBenchRun(b, func(pb *testing.PB) error {
		for pb.Next() {
			if _, err := c.grant(codeflowBenchPassword); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkRefreshTokenGrant measures refresh grants over HTTP on
// loopback: each goroutine follows its own chain of rotated tokens, every
// grant a write transaction.
func BenchmarkRefreshTokenGrant(b *testing.B) {
	benchmarkRefreshes(b, newCodeflowBench(b))
}

// BenchmarkRefreshTokenGrantWatched is BenchmarkRefreshTokenGrant in a
// realm with a session policy that can act: each refresh reads its
// session's risk profile too (app/risk), from where the session was last
// seen.
func BenchmarkRefreshTokenGrantWatched(b *testing.B) {
	c := newCodeflowBench(b)
	mustStatus(b, c.server.admin(http.MethodPost, "/admin/realms/bench/risk-policies", map[string]any{"name": "watch",
		"scope": "session", "conditions": map[string]any{"signals": []string{"impossible_travel"}}, "action": "notify"}),
		http.StatusCreated)
	benchmarkRefreshes(b, c)
}

func benchmarkRefreshes(b *testing.B, c *codeflowBench) {
	// One chain per goroutine RunParallel starts, made before the timer.
	chains := make(chan string, 4*runtime.GOMAXPROCS(0))
	for range cap(chains) {
		token, err := c.grant(codeflowBenchPassword)
		if err != nil {
			b.Fatal(err)
		}
		chains <- token
	}
	codeflowBenchRun(b, func(pb *testing.PB) error {
		token := <-chains
		for pb.Next() {
			next, err := c.grant(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}})
			if err != nil {
				return fmt.Errorf("refresh: %w", err)
			}
			token = next
		}
		return nil
	})
}
