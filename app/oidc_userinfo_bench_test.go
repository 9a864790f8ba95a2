package app

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkUserinfo measures userinfo requests over HTTP on loopback with
// keep-alive connections: a signature check, a revocation lookup, the
// user, client and scope reads, and the claim mappers, per request.
func BenchmarkUserinfo(b *testing.B) {
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
	r := s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{
		"clientId": "svc", "grantTypes": []string{"client_credentials"}})
	mustStatus(b, r, http.StatusCreated)
	secret := r.object(b)["secret"].(string)
	tok := s.request(http.MethodPost, "/realms/bench/protocol/openid-connect/token",
		url.Values{"grant_type": {"client_credentials"}, "client_id": {"svc"}, "client_secret": {secret}}.Encode(),
		"Content-Type: application/x-www-form-urlencoded")
	mustStatus(b, tok, http.StatusOK)
	token := tok.object(b)["access_token"].(string)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	userinfo := func() error {
		req, _ := http.NewRequest(http.MethodGet, base+"/realms/bench/protocol/openid-connect/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"sub"`) {
			return &httpStatusError{resp.StatusCode}
		}
		return nil
	}
	if err := userinfo(); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := userinfo(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
}
