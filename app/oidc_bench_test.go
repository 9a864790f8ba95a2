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

// BenchmarkClientCredentialsGrant measures client-credentials grants over
// HTTP on loopback with keep-alive connections, per signing algorithm.
func BenchmarkClientCredentialsGrant(b *testing.B) {
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		b.Run(alg, func(b *testing.B) {
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
			mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/keys/rotate",
				map[string]any{"algorithm": alg, "immediate": true}), http.StatusOK)
			r := s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{
				"clientId": "svc", "grantTypes": []string{"client_credentials"}})
			mustStatus(b, r, http.StatusCreated)
			secret := r.object(b)["secret"].(string)

			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
			body := url.Values{"grant_type": {"client_credentials"}}.Encode()
			grant := func() error {
				req, _ := http.NewRequest(http.MethodPost, base+"/realms/bench/protocol/openid-connect/token", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.SetBasicAuth("svc", secret)
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
			if err := grant(); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(4)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := grant(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "grants/s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
		})
	}
}

type httpStatusError struct{ status int }

func (e *httpStatusError) Error() string { return "status " + http.StatusText(e.status) }
