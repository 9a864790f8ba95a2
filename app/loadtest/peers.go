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
var peerScenarios = []string{"cc-rs256", "password", "refresh"}

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
		srv:       &loadServer{base: "http://" + token.Host, addr: token.Host, child: p.PID > 0, pid: p.PID},
		tokenPath: func(string) string { return token.Path },
		svcAuth:   func(string) http.Header { return svc },
		appAuth:   basicAuth(PeerAppClient, PeerAppSecret),
		username:  PeerUsername, users: PeerUsers, password: PeerPassword,
		scope: "openid", refreshScope: "openid offline_access"}, nil
}

// compare runs each peer scenario on this server and then on every peer,
// scenario by scenario, so that the machine's drift touches all alike.
func (e *loadEnv) compare(ctx context.Context, peers []*loadTarget) ([]*loadResult, error) {
	if e.cfg.Concurrency > PeerUsers {
		return nil, fmt.Errorf("a peer has %d users, one per connection of the refresh scenario: -concurrency %d is too many",
			PeerUsers, e.cfg.Concurrency)
	}
	var out []*loadResult
	for _, sc := range loadScenarios {
		if !slices.Contains(peerScenarios, sc.name) || (len(e.cfg.Scenarios) > 0 && !slices.Contains(e.cfg.Scenarios, sc.name)) {
			continue
		}
		for _, t := range slices.Concat([]*loadTarget{e.self}, peers) {
			fmt.Fprintf(e.cfg.Progress, "running %s on %s\n", sc.name, t.name)
			res, err := e.run(ctx, sc, t)
			if err != nil {
				return nil, fmt.Errorf("scenario %s on %s: %w", sc.name, t.name, err)
			}
			out = append(out, res)
		}
	}
	return out, nil
}

func printComparison(w io.Writer, results []*loadResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "\nside by side, one load generator, each scenario on every server in turn:\n")
	fmt.Fprintf(w, "%-16s %-14s %9s %8s %8s %6s %9s %5s %8s %14s\n",
		"scenario", "server", "req/s", "p50 ms", "p99 ms", "errors", "cpu/req", "cpu%", "RSS MB", "vs idenplane")
	var ours float64
	for _, r := range results {
		if r.Server == "idenplane" {
			ours = r.RPS
		}
		vs := ""
		if ours > 0 && r.Server != "idenplane" && r.RPS > 0 {
			vs = fmt.Sprintf("%.2f×", ours/r.RPS)
		}
		cpu, cpuReq, rss := "", "", ""
		if r.ServerCPU > 0 {
			cpu, cpuReq, rss = fmt.Sprintf("%.0f", r.ServerCPU), fmt.Sprintf("%.2fms", r.CPUPerReqMs), fmt.Sprintf("%.1f", r.RSSMaxMB)
		}
		fmt.Fprintf(w, "%-16s %-14s %9.0f %8.2f %8.2f %6d %9s %5s %8s %14s\n",
			r.Name, r.Server, r.RPS, r.P50Ms, r.P99Ms, r.Errors, cpuReq, cpu, rss, vs)
	}
}
