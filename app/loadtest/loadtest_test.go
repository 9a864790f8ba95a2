package loadtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/identity"
)

// A short run with the server in this process: the realms are set up over
// the admin API, the users and sessions seeded beside the server, and each
// scenario's requests succeed; the password grant's do only if the seeded
// users' shared hash is the server's own.
func TestRunInProcess(t *testing.T) {
	// A second per scenario: a password sign-in is one argon2id hash, which
	// on a loaded machine takes longer than a shorter window, and a request
	// still in flight when the window closes is not counted.
	cfg := Config{Schema: apptest.Schema(t), Version: "test", HashPassword: identity.Argon2idHash,
		Duration: time.Second, Concurrency: 2, Users: 5, Sessions: 5,
		Scenarios: []string{"userinfo", "password", "user-lookup"}, JSON: true, Dir: t.TempDir(), Progress: io.Discard}
	var out bytes.Buffer
	if err := Run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	var rep loadReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out.Bytes())
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors (first: %s)", r.Name, r.Requests, r.Errors, r.FirstError)
		}
	}
	if !slices.Equal(names, cfg.Scenarios) {
		t.Fatalf("scenarios run %v, want %v", names, cfg.Scenarios)
	}
	if rep.ServerAlone || rep.Users != 5 || rep.Sessions != 5 || rep.Floors["argon2id"] <= 0 {
		t.Fatalf("report %+v", rep)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no password hash", Config{}, "HashPassword"},
		{"unknown scenario", Config{HashPassword: identity.Argon2idHash, Scenarios: []string{"cc-rs256", "nope"}}, `unknown scenario "nope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Run(t.Context(), c.cfg, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %s", err, c.want)
			}
		})
	}
}

// A peer is driven like the server itself, scenario by scenario, through
// its discovery document, with the clients and users the load test names;
// a refresh chain follows the peer's rotation. A second round runs the
// servers in the other order.
func TestRunWithPeer(t *testing.T) {
	var mu sync.Mutex
	live := map[string]bool{} // the peer's refresh tokens not yet used
	served := map[string]int{}
	next := 0
	mux := http.NewServeMux()
	var issuer string
	mux.HandleFunc("GET /peer/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "token_endpoint": issuer + "/token"})
	})
	mux.HandleFunc("POST /peer/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		mu.Lock()
		defer mu.Unlock()
		grant := r.PostFormValue("grant_type")
		served[grant]++
		ok := false
		switch grant {
		case "client_credentials":
			ok = id == PeerServiceClient && secret == PeerServiceSecret
		case "password":
			ok = id == PeerAppClient && secret == PeerAppSecret && r.PostFormValue("password") == PeerPassword &&
				strings.HasSuffix(r.PostFormValue("username"), "@example.com")
		case "refresh_token":
			ok = id == PeerAppClient && live[r.PostFormValue("refresh_token")]
			delete(live, r.PostFormValue("refresh_token"))
		}
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		next++
		rt := fmt.Sprintf("rt-%d", next)
		live[rt] = true
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "at", "refresh_token": rt})
	})
	peer := httptest.NewServer(mux)
	defer peer.Close()
	issuer = peer.URL + "/peer"

	cfg := Config{Schema: apptest.Schema(t), Version: "test", HashPassword: identity.Argon2idHash,
		Duration: 500 * time.Millisecond, Concurrency: 2, Users: 5, Sessions: 5, Scenarios: []string{"cc-rs256", "refresh"},
		JSON: true, Dir: t.TempDir(), Progress: io.Discard, Peers: []Peer{{Name: "fake", URL: issuer}}, Rounds: 2}
	var out bytes.Buffer
	if err := Run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	var rep loadReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.SideBySide {
		got = append(got, fmt.Sprintf("%s@%s/%d", r.Name, r.Server, r.Round))
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s on %s: %d requests, %d errors (first: %s)", r.Name, r.Server, r.Requests, r.Errors, r.FirstError)
		}
	}
	// The header's floor is the one this server's own table was judged by,
	// not one measured again for a side-by-side run.
	for _, r := range rep.Results {
		if r.Name == "cc-rs256" && (r.Floor <= 0 || rep.Floors["RS256"] != r.Floor) {
			t.Errorf("RS256 floor %v in the header, %v in the table", rep.Floors["RS256"], r.Floor)
		}
	}
	want := []string{"cc-rs256@idenplane/1", "cc-rs256@fake/1", "cc-rs256@fake/2", "cc-rs256@idenplane/2",
		"refresh@idenplane/1", "refresh@fake/1", "refresh@fake/2", "refresh@idenplane/2"}
	if !slices.Equal(got, want) {
		t.Fatalf("side by side %v, want %v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if served["client_credentials"] == 0 || served["password"] != 4 || served["refresh_token"] == 0 {
		t.Fatalf("the peer served %v: want client credentials, one sign-in per refresh chain, and refreshes", served)
	}
}

func TestRunRefusesUnreachablePeer(t *testing.T) {
	cfg := Config{Schema: apptest.Schema(t), Version: "test", HashPassword: identity.Argon2idHash,
		Duration: 100 * time.Millisecond, Concurrency: 1, Users: 1, Sessions: 1, Scenarios: []string{"cc-rs256"},
		Dir: t.TempDir(), Progress: io.Discard, Peers: []Peer{{Name: "gone", URL: "http://127.0.0.1:1/dex"}}}
	if err := Run(t.Context(), cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "peer gone") {
		t.Fatalf("error %v, want one naming the peer", err)
	}
}

// The rounds' summary pairs each peer run with this server's run of the
// same round, and reports medians, so that one slow moment of the machine
// does not decide the comparison.
func TestComparisonSummary(t *testing.T) {
	run := func(name, server string, round int, rps float64) *loadResult {
		return &loadResult{Name: name, Server: server, Round: round, RPS: rps, CPUPerReqMs: 1000 / rps, ServerCPU: 100}
	}
	for _, c := range []struct {
		name    string
		results []*loadResult
		want    []string // scenario server median-rate median-ratio, or nothing when no scenario ran twice
	}{
		{"one round has no summary", []*loadResult{
			run("refresh", "idenplane", 1, 600), run("refresh", "dex", 1, 700)}, nil},
		{"ratios are paired by round", []*loadResult{
			run("refresh", "idenplane", 1, 600), run("refresh", "dex", 1, 800),
			run("refresh", "dex", 2, 500), run("refresh", "idenplane", 2, 700),
			run("refresh", "idenplane", 3, 650), run("refresh", "dex", 3, 650),
		}, []string{"refresh idenplane 650 -", "refresh dex 650 1.00"}},
		{"even rounds average the middle two", []*loadResult{
			run("cc-rs256", "idenplane", 1, 1000), run("cc-rs256", "dex", 1, 1000),
			run("cc-rs256", "dex", 2, 800), run("cc-rs256", "idenplane", 2, 1200),
			run("password", "idenplane", 1, 60), run("password", "dex", 1, 30),
			run("password", "dex", 2, 20), run("password", "idenplane", 2, 60),
		}, []string{"cc-rs256 idenplane 1100 -", "cc-rs256 dex 900 1.25", "password idenplane 60 -", "password dex 25 2.50"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range summarize(c.results) {
				ratio := "-"
				if len(s.ratios) > 0 {
					ratio = fmt.Sprintf("%.2f", median(s.ratios))
				}
				got = append(got, fmt.Sprintf("%s %s %.0f %s", s.scenario, s.server, median(s.rates), ratio))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("summary %q, want %q", got, c.want)
			}
			var out bytes.Buffer
			printComparison(&out, c.results)
			if has := strings.Contains(out.String(), "over the rounds"); has != (c.want != nil) {
				t.Fatalf("summary printed: %v, want %v:\n%s", has, c.want != nil, out.String())
			}
		})
	}
}
