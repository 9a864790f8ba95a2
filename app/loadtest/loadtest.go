// Package loadtest is `idenplane loadtest`: it seeds a throw-away database,
// starts the server and measures it over HTTP. It is a tool beside the
// server, not a part of it: it imports app to start the server in its own
// process, and nothing of the server imports it.
package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/store"
)

// `idenplane loadtest` measures the server as an operator would meet it:
// a throw-away database seeded with realms, clients and many users, the
// server started as its own process (or in this one), and each scenario
// driven over HTTP on loopback with keep-alive connections. The crypto-
// bound scenarios are compared with the same crypto alone, measured in the
// same run on the same cores, since that cost is the floor no server can
// go below.

// Config says what Run runs.
type Config struct {
	// Executable, when set, is started as `Executable serve`, so that its
	// RSS and CPU time are the server's alone. Empty runs the server in
	// this process; RSS and CPU then include the load generator.
	Executable string
	Schema     string // schema.sql, to open the database for seeding
	// PostgresSchema is schema_postgres.sql, for a PostgreSQL DB.
	PostgresSchema string
	// DB is the database of the servers under test: "" for a SQLite file
	// in Dir, or the URL of an empty PostgreSQL database.
	DB string
	// Replicas is how many servers share the database (PostgreSQL only),
	// each its own process: the load is spread over their connections
	// and their RSS and CPU are added up.
	Replicas int
	Version  string
	// HashPassword is the server's password hash (identity.Argon2idHash): it
	// makes the one hash every seeded user shares, and is the argon2id
	// floor the password grant is compared with.
	HashPassword func(password string) string
	// Duration is how long each scenario is measured, after a warm-up.
	Duration    time.Duration
	Concurrency int      // connections per scenario (the storm has its own)
	Scenarios   []string // names to run; empty runs every scenario
	Users       int      // users in the realm the page and lookup scenarios read
	Sessions    int      // active SSO sessions seeded beside them
	// StormConcurrency is the number of connections of the password-grant
	// storm, which shows that password hashing queues instead of taking
	// memory per request.
	StormConcurrency int
	// NoEvents leaves login events off in the realms; they are on by
	// default, so that their writes are part of every grant's cost.
	NoEvents   bool
	JSON       bool   // print the results as JSON instead of a table
	ProfileDir string // write a CPU profile per scenario here (in-process only)
	// Peers are other providers the grant scenarios then run against,
	// side by side with this server (peers.go).
	Peers []Peer
	// Rounds is how many times the side-by-side runs go round every
	// server (one when zero): a shared machine's speed drifts by more than
	// the gaps being measured, and the median of several rounds does not.
	Rounds   int
	Dir      string // where the database goes; a temporary directory when empty
	Progress io.Writer
}

// Scenarios names every scenario, in the order they run.
func Scenarios() []string {
	names := make([]string, len(loadScenarios))
	for i, s := range loadScenarios {
		names[i] = s.name
	}
	return names
}

// loadEnv is what the scenarios share: the running server and what was
// seeded into it.
type loadEnv struct {
	cfg        Config
	srv        *loadServer
	apiKey     string
	password   string // every seeded user's
	svcSecret  map[string]string
	appSecret  string
	nhiSecret  string // the identity's client secret
	nhiAPIKey  string // the identity's API key
	users      int
	self       *loadTarget
	floors     map[string]float64 // per second, by floor name
	floorCPU   map[string]float64 // ms of CPU per operation, by floor name
	results    map[string]*loadResult
	hashedPass string
	dir        string        // the run's directory: the database, the directory server's files
	sample     []sampledUser // seeded users the writing scenarios use
	// What the scenarios that need more than the realm readied (prepare),
	// each while it runs.
	scimToken string         // a SCIM client's bearer token
	ldap      *loadDirectory // the directory of ldap-bind
	hooks     *hookReceiver  // the webhook receiver of webhooks
	pepSecret string         // the AuthZEN client's secret
	broker    *brokerSetup   // the clients and provider of broker
}

// Run seeds a throw-away database, starts the server, runs the scenarios
// and writes the results to out. It fails if any request failed.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if cfg.HashPassword == nil {
		return errors.New("loadtest: Config.HashPassword is not set")
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 32
	}
	if cfg.StormConcurrency <= 0 {
		cfg.StormConcurrency = 200
	}
	if cfg.Users < 1 {
		cfg.Users = 1
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.ProfileDir != "" {
		cfg.Executable = "" // a profile needs the server in this process
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return err
		}
	}
	cfg.Replicas = max(cfg.Replicas, 1)
	if cfg.Replicas > 1 && (!store.IsPostgres(cfg.DB) || cfg.Executable == "") {
		return errors.New("loadtest: several replicas need a PostgreSQL database and servers as their own processes")
	}
	for _, name := range cfg.Scenarios {
		if !slices.Contains(Scenarios(), name) {
			return fmt.Errorf("unknown scenario %q; scenarios: %s", name, strings.Join(Scenarios(), ", "))
		}
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "idenplane-loadtest")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	key := make([]byte, store.MasterKeySize)
	_, _ = rand.Read(key)
	apiKeyBytes := make([]byte, 24)
	_, _ = rand.Read(apiKeyBytes)
	env := &loadEnv{cfg: cfg, apiKey: hex.EncodeToString(apiKeyBytes), password: "load-test-password-1",
		svcSecret: map[string]string{}, users: cfg.Users, floors: map[string]float64{}, floorCPU: map[string]float64{}, results: map[string]*loadResult{},
		dir: dir}
	spec := loadServerSpec{exe: cfg.Executable, schema: cfg.Schema, version: cfg.Version, replicas: cfg.Replicas,
		db: filepath.Join(dir, "loadtest.db"), key: key, apiKey: env.apiKey, logPath: filepath.Join(dir, "server.log")}
	backend := "SQLite"
	if cfg.DB != "" {
		spec.db, spec.schema, backend = cfg.DB, cfg.PostgresSchema, "PostgreSQL"
	}

	srv, err := startLoadServer(ctx, spec)
	if err != nil {
		return err
	}
	defer func() { srv.stop() }()
	if err := env.setUp(ctx, srv); err != nil {
		return fmt.Errorf("set up realms: %w", err)
	}
	if err := env.seed(ctx, spec); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	// Restart on the now-existing database: start-up time and idle memory
	// are an operator's first sight of the server.
	if err := srv.stop(); err != nil {
		return fmt.Errorf("stop server: %w", err)
	}
	start := time.Now()
	if srv, err = startLoadServer(ctx, spec); err != nil {
		return err
	}
	startup := time.Since(start)
	env.srv = srv
	env.self = env.selfTarget()
	var peers []*loadTarget
	for _, p := range cfg.Peers {
		t, err := peerTarget(ctx, p)
		if err != nil {
			return err
		}
		peers = append(peers, t)
	}
	// Let start-up work settle before idle memory is read.
	time.Sleep(time.Second)
	idle := srv.rss()

	var results []*loadResult
	var skipped []loadSkip
	for _, sc := range loadScenarios {
		if len(cfg.Scenarios) > 0 && !slices.Contains(cfg.Scenarios, sc.name) {
			continue
		}
		fmt.Fprintf(cfg.Progress, "running %s\n", sc.name)
		res, err := env.runPrepared(ctx, sc)
		if errors.Is(err, errSkipScenario) {
			fmt.Fprintf(cfg.Progress, "  %s: %v\n", sc.name, err)
			skipped = append(skipped, loadSkip{Name: sc.name, Reason: err.Error()})
			continue
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.name, err)
		}
		if res.Floor > 0 {
			// The header's floors are those of this table, not of the
			// side-by-side runs that measure theirs again.
			env.floors[sc.floor], env.floorCPU[sc.floor] = res.Floor, res.FloorCPUMs
		}
		env.results[sc.name] = res
		results = append(results, res)
	}
	for _, res := range results {
		res.judge(env)
	}
	var side []*loadResult
	if len(peers) > 0 {
		if side, err = env.compare(ctx, peers); err != nil {
			return err
		}
	}
	report := &loadReport{SideBySide: side, Machine: machineInfo(), Version: cfg.Version, Duration: cfg.Duration.String(),
		Backend: backend, Replicas: cfg.Replicas,
		Users: cfg.Users, Sessions: cfg.Sessions, ServerAlone: srv.child, Events: !cfg.NoEvents, StartupMs: ms(startup), IdleRSSMB: mb(idle),
		Floors: env.floors, FloorCPUMs: env.floorCPU, Results: results, Skipped: skipped, FinalRSSMB: mb(srv.rss())}
	report.judge()
	if cfg.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		report.print(out)
	}
	failed := 0
	for _, res := range slices.Concat(results, side) {
		failed += res.Errors
	}
	if failed > 0 {
		return fmt.Errorf("%d requests failed (server log: %s)", failed, spec.logPath)
	}
	return nil
}

// loadReport is the outcome of one run.
type loadReport struct {
	Machine     string             `json:"machine"`
	Version     string             `json:"version"`
	Backend     string             `json:"backend"`
	Replicas    int                `json:"replicas"`
	Duration    string             `json:"durationPerScenario"`
	Users       int                `json:"users"`
	Sessions    int                `json:"sessions"`
	ServerAlone bool               `json:"serverMeasuredAlone"`
	Events      bool               `json:"loginEvents"`
	StartupMs   float64            `json:"startToReadyMs"`
	IdleRSSMB   float64            `json:"idleRssMB"`
	FinalRSSMB  float64            `json:"finalRssMB"`
	Floors      map[string]float64 `json:"floorsPerSecond"`
	FloorCPUMs  map[string]float64 `json:"floorsCpuPerOpMs"`
	Results     []*loadResult      `json:"scenarios"`
	Checks      []loadCheck        `json:"checks"`
	SideBySide  []*loadResult      `json:"sideBySide,omitempty"` // with the peers, scenario by scenario
	Skipped     []loadSkip         `json:"skipped,omitempty"`
}

// loadSkip is a scenario that could not run here, and why.
type loadSkip struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// loadCheck is one of the targets, met or not.
type loadCheck struct {
	Target string `json:"target"`
	Value  string `json:"value"`
	Met    bool   `json:"met"`
}

func (r *loadReport) judge() {
	r.Checks = append(r.Checks,
		loadCheck{"start to ready ≤ 100 ms", fmt.Sprintf("%.0f ms", r.StartupMs), r.StartupMs <= 100},
		loadCheck{"idle RSS ≤ 30 MB", fmt.Sprintf("%.1f MB", r.IdleRSSMB), r.IdleRSSMB <= 30})
	if r.Sessions >= 100_000 {
		// The sessions' share: idle and under token load. The password
		// scenarios' memory is the hashes', judged by the storm's check.
		peak := r.IdleRSSMB
		for _, res := range r.Results {
			if !strings.HasPrefix(res.Name, "password") {
				peak = max(peak, res.RSSMaxMB)
			}
		}
		r.Checks = append(r.Checks, loadCheck{fmt.Sprintf("RSS ≤ 150 MB with %d sessions", r.Sessions),
			fmt.Sprintf("%.1f MB", peak), peak <= 150})
	}
	for _, res := range r.Results {
		if res.Target != "" {
			r.Checks = append(r.Checks, loadCheck{res.Name + ": " + res.Target, res.Value, res.Met})
		}
	}
}

func (r *loadReport) print(w io.Writer) {
	fmt.Fprintf(w, "\nidenplane %s load test on %s\n", r.Version, r.Machine)
	alone := "server alone (child process)"
	if !r.ServerAlone {
		alone = "server and load generator together (in-process)"
	}
	events := "login events on (the default types: no refresh or introspection events)"
	if !r.Events {
		events = "login events off"
	}
	servers := "one server"
	if r.Replicas > 1 {
		servers = fmt.Sprintf("%d servers sharing the database (RSS and CPU added up)", r.Replicas)
	}
	fmt.Fprintf(w, "%s, %s\n", r.Backend, servers)
	fmt.Fprintf(w, "%d users, %d SSO sessions, %s; %s per scenario; RSS and CPU: %s\n", r.Users, r.Sessions, events, r.Duration, alone)
	fmt.Fprintf(w, "start to ready %.0f ms, idle RSS %.1f MB, RSS at the end %.1f MB\n", r.StartupMs, r.IdleRSSMB, r.FinalRSSMB)
	names := make([]string, 0, len(r.Floors))
	for n := range r.Floors {
		names = append(names, n)
	}
	slices.Sort(names)
	var floors []string
	for _, n := range names {
		floors = append(floors, fmt.Sprintf("%s %.0f/s (%.3f ms of CPU each)", n, r.Floors[n], r.FloorCPUMs[n]))
	}
	fmt.Fprintf(w, "floors alone on all cores, measured just before their scenario: %s\n\n", strings.Join(floors, ", "))
	fmt.Fprintf(w, "%-16s %5s %9s %8s %8s %8s %6s %5s %9s %5s %5s %8s %9s %6s\n",
		"scenario", "conc", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "shed", "cpu/req", "cpu%", "gen%", "RSS MB", "floor/s", "ratio")
	for _, res := range r.Results {
		floor, ratio := "", ""
		if res.Floor > 0 {
			floor, ratio = fmt.Sprintf("%.0f", res.Floor), fmt.Sprintf("%.2f", res.Ratio)
		}
		fmt.Fprintf(w, "%-16s %5d %9.0f %8.2f %8.2f %8.2f %6d %5d %7.2fms %5.0f %5.0f %8.1f %9s %6s\n",
			res.Name, res.Concurrency, res.RPS, res.P50Ms, res.P95Ms, res.P99Ms, res.Errors, res.Shed,
			res.CPUPerReqMs, res.ServerCPU, res.GeneratorCPU, res.RSSMaxMB, floor, ratio)
	}
	for _, res := range r.Results {
		if res.Effect != "" {
			fmt.Fprintf(w, "%s: %.0f %s/s received\n", res.Name, res.EffectRate, res.Effect)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Reason)
	}
	printComparison(w, r.SideBySide)
	fmt.Fprintln(w, "\ntargets:")
	for _, c := range r.Checks {
		mark := "met"
		if !c.Met {
			mark = "MISSED"
		}
		fmt.Fprintf(w, "  %-6s %-46s %s\n", mark, c.Target, c.Value)
	}
}

func machineInfo() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, GOMAXPROCS %d, %s %s/%s", model, runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(b int64) float64         { return float64(b) / (1 << 20) }

var errLoadSetup = errors.New("load test set-up failed")
