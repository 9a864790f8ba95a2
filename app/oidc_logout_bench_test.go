package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkBackchannelLogoutReceived measures logout tokens received over
// HTTP on loopback: signature and claims checked, jti recorded, the
// user's sessions looked up and ended (none here, so the figure is the
// endpoint's own cost).
func BenchmarkBackchannelLogoutReceived(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	s := newTestServer(b, func(c *Config) { c.BaseURL = base })
	srv := httptest.NewUnstartedServer(s.handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	b.Cleanup(srv.Close)
	s.createRealm("bench")
	mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{"clientId": "web"}), http.StatusCreated)
	user := s.createUser("bench", map[string]any{"username": "alice"})["id"].(string)
	realm, err := s.store.GetRealm(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	// Tokens are signed up front: signing is the sender's cost.
	tokens := make([]string, b.N+1)
	for i := range tokens {
		tokens[i], err = s.app.sign(context.Background(), realm, "logout+jwt", map[string]any{
			"iss": base + "/realms/bench", "aud": "web", "sub": user, "iat": time.Now().Unix(), "jti": uuid.NewString(),
			"events": map[string]any{backchannelEvent: map[string]any{}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	send := func(token string) error {
		req, _ := http.NewRequest(http.MethodPost, base+"/realms/bench/protocol/openid-connect/logout/backchannel",
			strings.NewReader(url.Values{"logout_token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return &httpStatusError{resp.StatusCode}
		}
		return nil
	}
	if err := send(tokens[b.N]); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := send(tokens[next.Add(1)-1]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "logouts/s")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
}
