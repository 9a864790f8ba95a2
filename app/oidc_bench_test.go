package app

import (
	"encoding/json"
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
			s.runGrants(b, base)
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
		})
	}
}

// runGrants makes the client-credentials client svc of realm bench and
// times b.N of its grants over HTTP to base, from 4 × GOMAXPROCS
// keep-alive connections; it reports grants/s and answers the seconds the
// grants took.
func (s *testServer) runGrants(b *testing.B, base string) float64 {
	b.Helper()
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
	elapsed := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/elapsed, "grants/s")
	return elapsed
}

type httpStatusError struct{ status int }

func (e *httpStatusError) Error() string { return "status " + http.StatusText(e.status) }

// BenchmarkIntrospection measures introspection of a JWT access token over
// HTTP on loopback.
func BenchmarkIntrospection(b *testing.B) {
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
	r := s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{"clientId": "svc", "grantTypes": []string{"client_credentials"}})
	mustStatus(b, r, http.StatusCreated)
	secret := r.object(b)["secret"].(string)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	post := func(path, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, base+"/realms/bench/protocol/openid-connect/"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("svc", secret)
		return client.Do(req)
	}
	resp, err := post("token", "grant_type=client_credentials")
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("token: %v", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	body := url.Values{"token": {tok.AccessToken}}.Encode()
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := post("token/introspect", body)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "introspections/s")
}
