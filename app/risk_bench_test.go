package app

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// The cost of risk assessments on the grants: the password grant is
// assessed (the user's history read, the policies tried, one row
// written); the refresh grant is observed for its session only when a
// session policy can act (the profile read by its key, nothing written
// while the address stays the same).

// riskBenchPolicies are enabled policies of different conditions, none of
// which matches the benchmarks' sign-ins, so that each is tried on every
// one: a critical level, a deny-listed address, a country never used.
var riskBenchPolicies = []map[string]any{
	{"name": "tell on critical sign-ins", "priority": 1, "conditions": map[string]any{"levels": []string{"critical"}},
		"action": "notify"},
	{"name": "deny-listed addresses give a code", "priority": 2,
		"conditions": map[string]any{"signals": []string{"ip_denylisted"}}, "action": "mfa"},
	{"name": "no sign-ins from KP", "priority": 3, "conditions": map[string]any{"countries": []string{"KP"}}, "action": "deny"},
}

// riskBenchSessionPolicies are session policies that can act, none of
// which matches the benchmarks' refreshes.
var riskBenchSessionPolicies = []map[string]any{
	{"name": "tell on critical sessions", "scope": "session", "priority": 1,
		"conditions": map[string]any{"levels": []string{"critical"}}, "action": "notify"},
	{"name": "travellers sign in again", "scope": "session", "priority": 2,
		"conditions": map[string]any{"signals": []string{"impossible_travel"}}, "action": "end-session"},
	{"name": "deny-listed sessions step up", "scope": "session", "priority": 3,
		"conditions": map[string]any{"signals": []string{"ip_denylisted"}}, "action": "step-up"},
}

// newRiskBench is newCodeflowBench with a GeoIP database, whose client
// signs in through the trusted proxy from riskParis with Firefox on
// Linux, where alice has a full history (50 sign-ins, a day apart, the
// last yesterday), and the first policies of riskBenchPolicies.
func newRiskBench(b *testing.B, policies []map[string]any) *codeflowBench {
	b.Helper()
	geo := riskGeoDB(b)
	c := newCodeflowBench(b, func(cfg *Config) {
		cfg.GeoIPDB = geo
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	from := riskParis
	c.client.Transport = forwardedFor{rt: c.client.Transport, from: &from}
	for _, p := range policies {
		mustStatus(b, c.server.admin(http.MethodPost, "/admin/realms/bench/risk-policies", p), http.StatusCreated)
	}

	ctx := context.Background()
	realm, err := c.server.store.GetRealm(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	alice, err := c.server.store.GetUserByUsername(ctx, realm.ID, "alice")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for i := range 50 {
		err := c.server.store.AddRiskAssessment(ctx, &store.RiskAssessment{ID: fmt.Sprintf("history-%02d", i), RealmID: realm.ID,
			UserID: alice.ID, FlowID: fmt.Sprintf("history-flow-%02d", i), Kind: "password-grant", ClientID: "app",
			IPAddress: riskParis, Network: "198.51.100.0/24", UserAgent: "Firefox on Linux", Country: "FR", Located: true,
			LatitudeE6: 48_850_000, LongitudeE6: 2_350_000, Level: "low", Signals: "[]", Present: ",", Weights: "{}",
			Action: "allow", Outcome: store.RiskSucceeded, CreatedAt: now.Add(-time.Duration(i+1) * 24 * time.Hour).UnixMilli()})
		if err != nil {
			b.Fatal(err)
		}
	}
	// One grant before the timer: assessed, as a returning user's, with
	// every policy tried and none deciding.
	if _, err := c.grant(codeflowBenchPassword); err != nil {
		b.Fatal(err)
	}
	last, err := c.server.store.ListRiskAssessments(ctx, realm.ID, store.RiskFilter{}, 0, 1)
	if err != nil || len(last) != 1 {
		b.Fatalf("assessments %v %v", last, err)
	}
	if a := last[0]; a.Kind != "password-grant" || a.Score != 0 || a.Action != "allow" || a.PolicyID != "" || a.Country != "FR" ||
		a.Outcome != store.RiskSucceeded {
		b.Fatalf("the first grant's assessment %+v, want a returning user's, allowed by no policy", a)
	}
	return c
}

// riskBenchRun is codeflowBenchRun timing each operation: besides ns/op
// and grants/s it reports the median and the 99th percentile of the
// operations' latencies. newOp is called once in each goroutine, and
// answers the goroutine's operation.
func riskBenchRun(b *testing.B, newOp func() func() error) {
	var mu sync.Mutex
	var latencies []time.Duration
	codeflowBenchRun(b, func(pb *testing.PB) error {
		op := newOp()
		mine := make([]time.Duration, 0, 256)
		defer func() {
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
		for pb.Next() {
			start := time.Now()
			if err := op(); err != nil {
				return err
			}
			mine = append(mine, time.Since(start))
		}
		return nil
	})
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(riskPercentile(latencies, 50)), "p50-ns/op")
	b.ReportMetric(float64(riskPercentile(latencies, 99)), "p99-ns/op")
}

// riskPercentile is the p-th percentile of sorted by nearest rank.
func riskPercentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BenchmarkRiskPasswordGrant measures password grants over HTTP on
// loopback, each assessed, without policies and with three tried: the
// argon2id check still dominates.
func BenchmarkRiskPasswordGrant(b *testing.B) {
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			c := newRiskBench(b, riskBenchPolicies[:n])
			riskBenchRun(b, func() func() error {
				return func() error {
					_, err := c.grant(codeflowBenchPassword)
					return err
				}
			})
		})
	}
}

// BenchmarkRiskRefresh measures refresh grants over HTTP on loopback in a
// realm without policies, with three of sign-ins (which a refresh does not
// read), and with three of sessions: each goroutine follows its own chain
// of rotated tokens, as BenchmarkRefreshTokenGrant does.
func BenchmarkRiskRefresh(b *testing.B) {
	for _, run := range []struct {
		name     string
		policies []map[string]any
	}{{"policies=0", nil}, {"policies=3", riskBenchPolicies}, {"session-policies=3", riskBenchSessionPolicies}} {
		b.Run(run.name, func(b *testing.B) {
			c := newRiskBench(b, run.policies)
			// One chain per goroutine RunParallel starts, made before the timer.
			chains := make(chan string, 4*runtime.GOMAXPROCS(0))
			for range cap(chains) {
				token, err := c.grant(codeflowBenchPassword)
				if err != nil {
					b.Fatal(err)
				}
				chains <- token
			}
			riskBenchRun(b, func() func() error {
				token := <-chains
				return func() error {
					next, err := c.grant(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}})
					if err != nil {
						return fmt.Errorf("refresh: %w", err)
					}
					token = next
					return nil
				}
			})
		})
	}
}
