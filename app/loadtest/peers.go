package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// loadTarget is a server the grant scenarios run against: the one the
// load test started, or a peer (another OpenID Connect provider, started
// by whoever runs the comparison), driven by the same load generator.
type loadTarget struct {
	name string
	srv  *loadServer // its address, and the process whose CPU and RSS are read (pid 0: none)
	// tokenPath and svcAuth are the token endpoint and the client-
	// credentials client of a realm; a peer has one of each.
	tokenPath func(realm string) string
	svcAuth   func(realm string) http.Header
	appAuth   http.Header // the client of the password and refresh grants
	username  func(i int) string
	users     int
	password  string
	// scope is asked for by the password grant, refreshScope by the
	// sign-in that starts a refresh chain; "" asks for the defaults.
	scope, refreshScope string
}

// selfTarget is the server the load test started and seeded.
func (e *loadEnv) selfTarget() *loadTarget {
	return &loadTarget{name: "idenplane", srv: e.srv, tokenPath: tokenPath,
		svcAuth:  func(realm string) http.Header { return basicAuth(loadSvcClient, e.svcSecret[realm]) },
		appAuth:  basicAuth(loadAppClient, e.appSecret),
		username: loadUsername, users: e.users, password: e.password}
}

// Peer is another provider to run the grant scenarios against, side by
// side with this server. It must have the clients PeerServiceClient
// (client_credentials) and PeerAppClient (password and refresh_token),
// with the secrets PeerServiceSecret and PeerAppSecret, and the users
// PeerUsername(0) to PeerUsername(PeerUsers-1) with PeerPassword: one per
// connection, since a provider may keep one refresh token per user and
// client (Dex does). docs/dex/dex.yaml sets up Dex so.
type Peer struct {
	Name string
	URL  string // its issuer: the token endpoint is read from its discovery document
	PID  int    // its process, for CPU and RSS; 0 reads neither
}

// The peer's clients and user.
const (
	PeerServiceClient = "load-svc"
	PeerServiceSecret = "load-svc-secret"
	PeerAppClient     = "load-app"
	PeerAppSecret     = "load-app-secret"
	// PeerPassword is the peer users' password, the seeded users' too.
	PeerPassword = "load-test-password-1"
	PeerUsers    = 32
)

// PeerUsername is the peer's user i.
func PeerUsername(i int) string { return fmt.Sprintf("load%d@example.com", i) }

// peerScenarios are the scenarios a peer runs: the grants every provider
// has.
var peerScenarios = []string{scenarioCCRS256, "password", "refresh"}

// peerTarget reads the peer's discovery document.
func peerTarget(ctx context.Context, p Peer) (*loadTarget, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.URL, "/")+"/.well-known/openid-configuration", nil)
	if err != nil {
		return nil, fmt.Errorf("peer %s: %w", p.Name, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("peer %s: %w", p.Name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("peer %s: discovery answered %d: %.200s (%v)", p.Name, resp.StatusCode, body, err)
	}
	var doc struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("peer %s: discovery: %w", p.Name, err)
	}
	token, err := url.Parse(doc.TokenEndpoint)
	if err != nil || token.Scheme != "http" || token.Host == "" {
		return nil, fmt.Errorf("peer %s: token endpoint %q: the load generator speaks plain HTTP", p.Name, doc.TokenEndpoint)
	}
	svc := basicAuth(PeerServiceClient, PeerServiceSecret)
	return &loadTarget{name: p.Name,
		srv:       &loadServer{base: "http://" + token.Host, addrs: []string{token.Host}, child: p.PID > 0, pids: peerPIDs(p.PID)},
		tokenPath: func(string) string { return token.Path },
		svcAuth:   func(string) http.Header { return svc },
		appAuth:   basicAuth(PeerAppClient, PeerAppSecret),
		username:  PeerUsername, users: PeerUsers, password: PeerPassword,
		scope: "openid", refreshScope: "openid offline_access"}, nil
}

// compare runs each peer scenario on this server and on every peer, one
// after the other, so that the machine's drift touches all alike; with
// Rounds above one it does so again, each round starting one server
// later, so that no server always runs first.
func (e *loadEnv) compare(ctx context.Context, peers []*loadTarget) ([]*loadResult, error) {
	if e.cfg.Concurrency > PeerUsers {
		return nil, fmt.Errorf("a peer has %d users, one per connection of the refresh scenario: -concurrency %d is too many",
			PeerUsers, e.cfg.Concurrency)
	}
	targets := slices.Concat([]*loadTarget{e.self}, peers)
	var out []*loadResult
	for _, sc := range loadScenarios {
		if !slices.Contains(peerScenarios, sc.name) || (len(e.cfg.Scenarios) > 0 && !slices.Contains(e.cfg.Scenarios, sc.name)) {
			continue
		}
		for round := range max(e.cfg.Rounds, 1) {
			for i := range targets {
				t := targets[(round+i)%len(targets)]
				fmt.Fprintf(e.cfg.Progress, "running %s on %s (round %d)\n", sc.name, t.name, round+1)
				res, err := e.run(ctx, sc, t)
				if err != nil {
					return nil, fmt.Errorf("scenario %s on %s: %w", sc.name, t.name, err)
				}
				res.Round = round + 1
				out = append(out, res)
			}
		}
	}
	return out, nil
}

func printComparison(w io.Writer, results []*loadResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "\nside by side, one load generator, each scenario on every server in turn:\n")
	fmt.Fprintf(w, "%-16s %5s %-14s %9s %8s %8s %6s %9s %5s %8s %14s\n",
		"scenario", "round", "server", "req/s", "p50 ms", "p99 ms", "errors", "cpu/req", "cpu%", "RSS MB", "vs idenplane")
	for _, r := range results {
		vs := ""
		if ours := ourRate(results, r); ours > 0 && r.Server != "idenplane" && r.RPS > 0 {
			vs = fmt.Sprintf("%.2f×", ours/r.RPS)
		}
		cpu, cpuReq, rss := "", "", ""
		if r.ServerCPU > 0 {
			cpu, cpuReq, rss = fmt.Sprintf("%.0f", r.ServerCPU), fmt.Sprintf("%.2fms", r.CPUPerReqMs), fmt.Sprintf("%.1f", r.RSSMaxMB)
		}
		fmt.Fprintf(w, "%-16s %5d %-14s %9.0f %8.2f %8.2f %6d %9s %5s %8s %14s\n",
			r.Name, r.Round, r.Server, r.RPS, r.P50Ms, r.P99Ms, r.Errors, cpuReq, cpu, rss, vs)
	}
	summary := summarize(results)
	if len(summary) == 0 {
		return
	}
	fmt.Fprintf(w, "\nover the rounds: medians, and idenplane's rate over each peer's in the same round:\n")
	fmt.Fprintf(w, "%-16s %-14s %6s %9s %15s %9s %5s %14s %14s\n",
		"scenario", "server", "rounds", "req/s", "req/s range", "cpu/req", "cpu%", "vs idenplane", "range")
	for _, s := range summary {
		vs, vsRange := "", ""
		if len(s.ratios) > 0 {
			vs = fmt.Sprintf("%.2f×", median(s.ratios))
			vsRange = fmt.Sprintf("%.2f–%.2f", slices.Min(s.ratios), slices.Max(s.ratios))
		}
		fmt.Fprintf(w, "%-16s %-14s %6d %9.0f %15s %7.2fms %5.0f %14s %14s\n",
			s.scenario, s.server, len(s.rates), median(s.rates),
			fmt.Sprintf("%.0f–%.0f", slices.Min(s.rates), slices.Max(s.rates)),
			median(s.cpuPerReq), median(s.cpu), vs, vsRange)
	}
}

// ourRate is this server's rate in r's scenario and round.
func ourRate(results []*loadResult, r *loadResult) float64 {
	for _, o := range results {
		if o.Server == "idenplane" && o.Name == r.Name && o.Round == r.Round {
			return o.RPS
		}
	}
	return 0
}

// serverSummary is one server's runs of one scenario over the rounds.
type serverSummary struct {
	scenario, server      string
	rates, cpuPerReq, cpu []float64
	ratios                []float64 // ours over this peer's, round by round
}

// summarize groups the side-by-side runs by scenario and server, in the
// order they first ran, when some scenario ran more than one round.
func summarize(results []*loadResult) []*serverSummary {
	var out []*serverSummary
	several := false
	for _, r := range results {
		i := slices.IndexFunc(out, func(s *serverSummary) bool { return s.scenario == r.Name && s.server == r.Server })
		if i < 0 {
			out = append(out, &serverSummary{scenario: r.Name, server: r.Server})
			i = len(out) - 1
		}
		s := out[i]
		s.rates = append(s.rates, r.RPS)
		s.cpuPerReq = append(s.cpuPerReq, r.CPUPerReqMs)
		s.cpu = append(s.cpu, r.ServerCPU)
		several = several || len(s.rates) > 1
		if ours := ourRate(results, r); ours > 0 && r.Server != "idenplane" && r.RPS > 0 {
			s.ratios = append(s.ratios, ours/r.RPS)
		}
	}
	if !several {
		return nil
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// peerPIDs are the processes measured of a peer: its own, if given.
func peerPIDs(pid int) []int {
	if pid <= 0 {
		return nil
	}
	return []int{pid}
}
