package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

// BenchmarkClientCredentialsSubscribed measures client-credentials grants
// over HTTP on loopback (ES256) beside what plugs into them: nothing; the
// example claims plugin (testdata/plugins/claims), called for each access
// token; two webhooks that take every event (each grant's CLIENT_LOGIN is an
// auth.event, queued for both in the grant's own event transaction and
// delivered by the worker to a loopback receiver meanwhile, or, to tell
// the two costs apart, left in the outbox).
func BenchmarkClientCredentialsSubscribed(b *testing.B) {
	for _, tc := range []struct {
		name    string
		hooks   int
		deliver bool
		plugin  bool
	}{{"none", 0, false, false}, {"claims-plugin", 0, false, true}, {"webhooks=2/queued", 2, false, false},
		{"webhooks=2/delivered", 2, true, false}} {
		hooks := tc.hooks
		b.Run(tc.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			base := "http://" + ln.Addr().String()
			plugins := ""
			if tc.plugin {
				plugins = b.TempDir()
				apptest.BuildPlugin(b, plugins, "claims")
			}
			s := newTestServer(b, allowLoopback, func(c *Config) { c.BaseURL, c.PluginsDir = base, plugins })
			srv := httptest.NewUnstartedServer(s.handler)
			srv.Listener.Close()
			srv.Listener = ln
			srv.Start()
			b.Cleanup(srv.Close)

			s.createRealm("bench")
			mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/keys/rotate",
				map[string]any{"algorithm": "ES256", "immediate": true}), http.StatusOK)
			var received atomic.Int64
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				received.Add(1)
			}))
			b.Cleanup(rcv.Close)
			for range hooks {
				mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/webhooks",
					map[string]any{"url": rcv.URL, "events": []string{"*"}}), http.StatusCreated)
			}
			if tc.deliver {
				ctx, cancel := context.WithCancel(context.Background())
				wait := s.app.webhooks.Start(ctx)
				b.Cleanup(func() { cancel(); wait() })
			}
			elapsed := s.runGrants(b, base)
			b.ReportMetric(float64(received.Load())/elapsed, "delivered/s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
		})
	}
}

// BenchmarkWebhookDeliveries measures the worker alone: messages already
// in the outbox, sent to a loopback receiver, signed, each attempt
// recorded, one at a time per webhook and the webhooks in parallel.
func BenchmarkWebhookDeliveries(b *testing.B) {
	for _, hooks := range []int{1, 8} {
		b.Run(fmt.Sprintf("webhooks=%d", hooks), func(b *testing.B) {
			s := newTestServer(b, allowLoopback)
			s.createRealm("bench")
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
			}))
			b.Cleanup(rcv.Close)
			for range hooks {
				mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/webhooks",
					map[string]any{"url": rcv.URL, "events": []string{"user.created"}}), http.StatusCreated)
			}
			// b.N messages in all: users created, each queued for every webhook.
			users := max(1, b.N/hooks)
			for i := range users {
				mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/users",
					map[string]any{"username": fmt.Sprintf("u%d", i)}), http.StatusCreated)
			}
			b.ResetTimer()
			start := time.Now()
			delivered := 0
			for delivered < users*hooks {
				n := s.app.webhooks.DeliverDue(context.Background())
				if n == 0 {
					b.Fatalf("a pass delivered nothing after %d of %d", delivered, users*hooks)
				}
				delivered += n
			}
			b.ReportMetric(float64(delivered)/time.Since(start).Seconds(), "deliveries/s")
		})
	}
}
