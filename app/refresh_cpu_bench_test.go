package app

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

// BenchmarkRefreshOwnWork measures the CPU a refresh grant costs beside
// its two RS256 signatures. The refreshes go through the App's handler
// in process (no loopback, no OpenAPI check), on 32 chains at once so
// that the rotations share commits as under the load test's 32
// connections; as many pairs of bare signatures with the realm's key over
// a token-sized input (the load test's floor) run the same way, in turns
// with them. Both are read from the process's CPU time (user and system,
// the commits' writes included), so the difference, own-µs/op, is the
// refresh's own work: the token's read, the rotation, the claims, the
// JSON and the HTTP handling.
func BenchmarkRefreshOwnWork(b *testing.B) {
	// The App alone, without the OpenAPI check of newTestServer, whose
	// validator's large heap made the collector's share of a refresh
	// several times what it is in a server.
	st, _ := apptest.OpenStore(b)
	a, err := New(context.Background(), st, Config{BaseURL: apptest.BaseURL, Version: "test", MasterKey: apptest.MasterKey(),
		AdminAPIKey: testAPIKey, Logger: apptest.Logger(b), SigningKeys: apptest.SigningKeys(NewPrivateKey)})
	if err != nil {
		b.Fatal(err)
	}
	h := a.Handler()
	web := &apptest.Server{T: b, Handler: h, Store: st}
	web.CreateRealm("bench")
	web.CreateUser("bench", map[string]any{"username": "alice", "password": codeflowPassword,
		"email": "alice@example.com", "firstName": "Alice", "lastName": "Liddell"})
	r := web.Admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{
		"clientId": "app", "grantTypes": []string{"password", "refresh_token"}})
	apptest.MustStatus(b, r, http.StatusCreated)
	secret := r.Object(b)["secret"].(string)
	// As many chains of rotated tokens as the load test's connections.
	chains := make([]string, 32)
	for i := range chains {
		if chains[i], err = refreshBenchGrant(h, secret, codeflowBenchPassword); err != nil {
			b.Fatal(err)
		}
	}
	key, err := a.signingKeys.Active(context.Background(), web.Realm("bench"))
	if err != nil {
		b.Fatal(err)
	}
	signer, ok := key.Key.(*rsa.PrivateKey)
	if !ok {
		b.Fatalf("the realm signs with %s, not RS256", key.Algorithm)
	}
	input := make([]byte, 600) // about a signed token's header and claims, as the load test's floor
	sign := func() {
		h := sha256.Sum256(input)
		if _, err := rsa.SignPKCS1v15(nil, signer, crypto.SHA256, h[:]); err != nil {
			b.Error(err)
		}
	}

	refreshOne := func(chain int) {
		next, err := refreshBenchGrant(h, secret, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {chains[chain]}})
		if err != nil {
			b.Error(err)
			return
		}
		chains[chain] = next
	}
	b.ReportAllocs()
	b.ResetTimer()
	// The two alternate in rounds of benchRound, so that both see the
	// same machine: on a shared one its speed drifts within seconds. The
	// labels let a CPU profile (-cpuprofile) tell them apart: go tool
	// pprof -tagfocus phase=refresh.
	var refresh, sigs time.Duration
	for done := 0; done < b.N; done += benchRound {
		n := min(benchRound, b.N-done)
		b.StartTimer()
		refresh += cpuTime(b, "refresh", func() { inParallel(len(chains), n, refreshOne) })
		b.StopTimer()
		sigs += cpuTime(b, "signatures", func() { inParallel(len(chains), n, func(int) { sign(); sign() }) })
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(refresh), "cpu-µs/op")
	b.ReportMetric(per(sigs), "sigs-µs/op")
	b.ReportMetric(per(refresh-sigs), "own-µs/op")
}

// benchRound is how many refreshes, or pairs of signatures, run before
// the other kind's turn.
const benchRound = 200

// inParallel runs n calls of op on workers goroutines, each passing its
// own worker number, and waits for them.
func inParallel(workers, n int, op func(worker int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				op(w)
			}
		})
	}
	wg.Wait()
}

// refreshBenchGrant posts a token request of client app through h and
// returns the refresh token answered.
func refreshBenchGrant(h http.Handler, secret string, form url.Values) (string, error) {
	req := httptest.NewRequest(http.MethodPost, "/realms/bench/protocol/openid-connect/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("app", secret)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	body := w.Body.Bytes()
	const field = `"refresh_token":"`
	i := bytes.Index(body, []byte(field))
	if w.Code != http.StatusOK || i < 0 {
		return "", fmt.Errorf("token request: %d %s", w.Code, body)
	}
	rest := body[i+len(field):]
	return string(rest[:bytes.IndexByte(rest, '"')]), nil
}

// cpuTime is the process's CPU time, user and system, that run takes;
// its samples in a CPU profile carry the label phase.
func cpuTime(b *testing.B, phase string, run func()) time.Duration {
	used := func() time.Duration {
		var u syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
			b.Fatal(err)
		}
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	start := used()
	pprof.Do(context.Background(), pprof.Labels("phase", phase), func(context.Context) { run() })
	return used() - start
}
