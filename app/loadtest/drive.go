package loadtest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idenplane/idenplane/app"
)

// loadResult is one scenario's measurements.
type loadResult struct {
	Name        string  `json:"name"`
	Server      string  `json:"server"`
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	Shed        int     `json:"shed"` // refused with 503 or 429 and Retry-After: the storm's clean overload answer
	RPS         float64 `json:"requestsPerSecond"`
	P50Ms       float64 `json:"p50Ms"`
	P95Ms       float64 `json:"p95Ms"`
	P99Ms       float64 `json:"p99Ms"`
	CPUPerReqMs float64 `json:"serverCpuPerRequestMs"`
	// ServerCPU and GeneratorCPU are the server's and the load generator's
	// CPU time over the measured time, in % of one core; GeneratorCPU is
	// 0 when both run in one process.
	ServerCPU    float64 `json:"serverCpuPercent"`
	GeneratorCPU float64 `json:"generatorCpuPercent,omitempty"`
	RSSMaxMB     float64 `json:"rssMaxMB"`
	FloorName    string  `json:"floorName,omitempty"`
	Floor        float64 `json:"floorPerSecond,omitempty"`
	// FloorCPUMs is the CPU time of one of the crypto floor's operations.
	FloorCPUMs float64 `json:"floorCpuPerOpMs,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
	Target     string  `json:"target,omitempty"`
	Value      string  `json:"value,omitempty"`
	Met        bool    `json:"met"`
	FirstError string  `json:"firstError,omitempty"`
	Round      int     `json:"round,omitempty"` // of a side-by-side run, from 1
	// Effect names what the requests cause beyond their answers, counted
	// where it lands (webhook deliveries at the receiver), and EffectRate
	// is how many landed per second of the measured time.
	Effect     string  `json:"effect,omitempty"`
	EffectRate float64 `json:"effectPerSecond,omitempty"`

	scenario *loadScenario
}

// judge fills in the floor, the ratio and the target of the scenario.
func (r *loadResult) judge(e *loadEnv) {
	sc := r.scenario
	if sc.floor != "" {
		r.FloorName = sc.floor
		if other := e.results[sc.floor]; other != nil {
			r.Floor = other.RPS
		}
		if r.Floor > 0 {
			r.Ratio = r.RPS / r.Floor
		}
	}
	if sc.target != nil && (sc.floor == "" || r.Floor > 0) {
		r.Target, r.Value, r.Met = sc.target(r)
	}
}

// loadCall is one request of a scenario's worker. shed reports a clean
// refusal under overload (503 or 429 with Retry-After).
type loadCall func(ctx context.Context) (shed bool, err error)

type loadScenario struct {
	name  string
	storm bool   // runs with StormConcurrency connections
	conc  int    // at most this many connections, when set
	floor string // a floor's name, or another scenario whose rate is the reference
	// target judges the result: the target's text, the measured value, met.
	target func(r *loadResult) (string, string, bool)
	// workers prepares n workers' calls, each to be called in a loop by
	// one goroutine over client.
	workers loadWorkers
	// prepare, when set, readies what this scenario alone uses (a
	// directory server, a receiver, registrations through the admin API)
	// before its workers are made; release undoes what would otherwise
	// weigh on the scenarios after it. errSkipScenario in its chain skips
	// the scenario, saying why.
	prepare func(ctx context.Context, e *loadEnv) (release func(ctx context.Context) error, err error)
	// floorOp, when set, makes the floor's operation from what prepare
	// readied (a bind against the directory it started), for floors that
	// are not crypto alone.
	floorOp func(e *loadEnv) (func(), error)
	// effect, when set, counts what the requests cause beyond their
	// answers; it is read at the start and the end of the measured time.
	effect *loadEffect
}

// noRelease is the release of a prepare whose work weighs on nothing
// after its scenario.
func noRelease(context.Context) error { return nil }

// loadEffect is a count of what a scenario's requests cause elsewhere.
type loadEffect struct {
	name string // plural, for "%s/s"
	// counter is the count's reader, taken once the scenario is prepared:
	// the measuring goroutine reads it, never the environment, which the
	// scenario's release changes.
	counter func(e *loadEnv) func() int64
}

// errSkipScenario skips a scenario that cannot run here (a tool it needs
// is missing), which is not a failure of the server.
var errSkipScenario = errors.New("scenario skipped")

// loadWorkers prepares n workers' calls to server t, each to be called
// in a loop by one goroutine over conns.
type loadWorkers func(ctx context.Context, e *loadEnv, t *loadTarget, conns *loadConns, n int) ([]loadCall, error)

// runPrepared runs sc on this server, between its prepare and its
// release.
func (e *loadEnv) runPrepared(ctx context.Context, sc *loadScenario) (*loadResult, error) {
	if sc.prepare == nil {
		return e.run(ctx, sc, e.self)
	}
	release, err := sc.prepare(ctx, e)
	if err != nil {
		return nil, err
	}
	res, err := e.run(ctx, sc, e.self)
	// Released even when the run was stopped: a directory server or a
	// subscription must not outlive the run.
	if rerr := release(context.WithoutCancel(ctx)); rerr != nil {
		err = errors.Join(err, fmt.Errorf("release: %w", rerr))
	}
	return res, err
}

// run drives one scenario against server t: a warm-up, then Duration
// measured.
func (e *loadEnv) run(ctx context.Context, sc *loadScenario, t *loadTarget) (*loadResult, error) {
	n := e.cfg.Concurrency
	switch {
	case sc.storm:
		n = e.cfg.StormConcurrency
	case sc.conc > 0:
		n = min(n, sc.conc)
	}
	// The floor is measured just before the scenario, on the same cores:
	// a shared machine's speed drifts over a run.
	var floor float64
	var floorCPU time.Duration
	if t == e.self {
		op, err := e.floorOp(sc)
		if err != nil {
			return nil, fmt.Errorf("floor %s: %w", sc.floor, err)
		}
		if op != nil {
			floor, floorCPU = opsPerSecond(ctx, min(e.cfg.Duration, 3*time.Second), op)
		}
	}
	conns := newLoadConns(t.srv.addrs, n)
	defer conns.close()
	calls, err := sc.workers(ctx, e, t, conns, n)
	if err != nil {
		return nil, err
	}
	warm := min(e.cfg.Duration/5, 2*time.Second)
	begin := time.Now().Add(warm)
	end := begin.Add(e.cfg.Duration)

	var profile *os.File
	stopAt := make(chan struct{})
	var rssMax, effectStart atomic.Int64
	var cpuStart, genStart time.Duration
	effectCount := func() int64 { return 0 }
	if sc.effect != nil {
		effectCount = sc.effect.counter(e)
	}
	go func() {
		time.Sleep(time.Until(begin))
		cpuStart, genStart = t.srv.cpuTime(), processCPU("self")
		effectStart.Store(effectCount())
		if e.cfg.ProfileDir != "" {
			if f, err := os.Create(filepath.Join(e.cfg.ProfileDir, sc.name+".pprof")); err == nil && pprof.StartCPUProfile(f) == nil {
				profile = f
			}
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			rssMax.Store(max(rssMax.Load(), t.srv.rss()))
			select {
			case <-tick.C:
			case <-stopAt:
				return
			}
		}
	}()

	type tally struct {
		lat          []time.Duration
		errors, shed int
		firstErr     error
	}
	tallies := make([]tally, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tl := &tallies[w]
			for {
				start := time.Now()
				if !start.Before(end) || ctx.Err() != nil {
					return
				}
				shed, err := calls[w](ctx)
				if start.Before(begin) {
					continue
				}
				switch {
				case err != nil:
					tl.errors++
					if tl.firstErr == nil {
						tl.firstErr = err
					}
				case shed:
					tl.shed++
				default:
					tl.lat = append(tl.lat, time.Since(start))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	cpu, gen := t.srv.cpuTime()-cpuStart, processCPU("self")-genStart
	effect := effectCount()
	close(stopAt)
	if profile != nil {
		pprof.StopCPUProfile()
		profile.Close()
	}

	res := &loadResult{Name: sc.name, Server: t.name, Concurrency: n, scenario: sc, RSSMaxMB: mb(rssMax.Load()), Floor: floor,
		FloorCPUMs: ms(floorCPU)}
	var lat []time.Duration
	for _, t := range tallies {
		lat = append(lat, t.lat...)
		res.Errors += t.errors
		res.Shed += t.shed
		if t.firstErr != nil && res.FirstError == "" {
			res.FirstError = t.firstErr.Error()
		}
	}
	slices.Sort(lat)
	res.Requests = len(lat) + res.Errors + res.Shed
	res.RPS = float64(len(lat)) / elapsed.Seconds()
	if len(lat) > 0 {
		res.P50Ms, res.P95Ms, res.P99Ms = ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99))
		res.CPUPerReqMs = ms(cpu) / float64(res.Requests)
	}
	res.ServerCPU = 100 * cpu.Seconds() / elapsed.Seconds()
	if t.srv.child {
		res.GeneratorCPU = 100 * gen.Seconds() / elapsed.Seconds()
	}
	if sc.effect != nil {
		res.Effect = sc.effect.name
		res.EffectRate = float64(effect-effectStart.Load()) / elapsed.Seconds()
	}
	if res.FirstError != "" {
		fmt.Fprintf(e.cfg.Progress, "  %s: %d errors, the first: %s\n", sc.name, res.Errors, res.FirstError)
	}
	return res, ctx.Err()
}

func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// floorOp is the operation of sc's floor: the scenario's own, or one of
// floorOps; nil when sc has none, or its floor is another scenario.
func (e *loadEnv) floorOp(sc *loadScenario) (func(), error) {
	if sc.floorOp != nil {
		return sc.floorOp(e)
	}
	return floorOps(e.cfg.HashPassword)[sc.floor], nil
}

// The floors that are crypto alone.
const (
	floorRS256   = "RS256"
	floorES256   = "ES256"
	floorEdDSA   = "EdDSA"
	floorArgon2  = "argon2id"
	floorRS256x2 = "RS256x2" // a signed SAML response: the response's and the assertion's signatures
)

// floorOps are the crypto alone: RS256, ES256 and EdDSA signatures over a
// token-sized input, two RS256 signatures (a SAML response signed as a
// whole and in its assertion), and the server's argon2id password hash.
func floorOps(hashPassword func(string) string) map[string]func() {
	input := make([]byte, 600) // about a signed access token's header and claims
	_, _ = rand.Read(input)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, app.RSAKeyBits)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rs256 := func() {
		h := sha256.Sum256(input)
		_, _ = rsa.SignPKCS1v15(nil, rsaKey, crypto.SHA256, h[:])
	}
	return map[string]func(){
		floorRS256: rs256,
		floorES256: func() {
			h := sha256.Sum256(input)
			_, _ = ecdsa.SignASN1(rand.Reader, ecKey, h[:])
		},
		floorEdDSA:   func() { _ = ed25519.Sign(edKey, input) },
		floorArgon2:  func() { _ = hashPassword("load-test-password-1") },
		floorRS256x2: func() { rs256(); rs256() },
	}
}

// opsPerSecond runs op in a loop on GOMAXPROCS goroutines for d, and
// returns their rate and the CPU time of one. The rate is what the cores
// gave this process meanwhile; the CPU time of one operation is what it
// costs, which a server's CPU per request compares with when other work
// shares the machine.
func opsPerSecond(ctx context.Context, d time.Duration, op func()) (float64, time.Duration) {
	var count atomic.Int64
	cpuStart := processCPU("self")
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				op()
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	rate, cpu := float64(count.Load())/time.Since(start).Seconds(), processCPU("self")-cpuStart
	runtime.GC() // argon2id's buffers should not count against the next scenario
	return rate, cpu / time.Duration(max(count.Load(), 1))
}

var errLoadStatus = errors.New("unexpected status")
