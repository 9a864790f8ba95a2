package ldapfed_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/ldapfed"
)

// BenchmarkDirectorySyncRSS measures the server's own peak memory while it
// syncs a large directory: the built binary runs `serve` as a child
// process on a fresh database, and its VmHWM is read from /proc after
// each sync, so that neither this process's LDIF nor slapd counts. It is
// slow (a 100,000-user directory by default; IDENPLANE_SYNC_USERS sets
// another size), hence a benchmark:
//
//	go test ./app/ldapfed/ -run '^$' -bench DirectorySyncRSS -benchtime 1x -timeout 30m
//
// "users" syncs the people; "groups" maps the directory's groups too,
// benchGroupSize people in each. IDENPLANE_BINARY names a binary to run
// instead of building one, and the child inherits the environment:
// IDENPLANE_DEBUG_ADDR serves its profiles.
func BenchmarkDirectorySyncRSS(b *testing.B) {
	users := 100_000
	if v := os.Getenv("IDENPLANE_SYNC_USERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("IDENPLANE_SYNC_USERS=%q: want a positive number", v)
		}
		users = n
	}
	d := apptest.StartDirectory(b, peopleLDIF(users)+groupsLDIF(users))
	bin := serverBinary(b)
	b.Run("users", func(b *testing.B) { measureSync(b, bin, users, directoryProvider("corp", d)) })
	b.Run("groups", func(b *testing.B) {
		measureSync(b, bin, users, with(directoryProvider("corp", d), "groupsDn", d.GroupsDN))
	})
}

// benchGroupSize is how many people each group of the benchmark's
// directory holds: every person is in one.
const benchGroupSize = 1000

// measureSync imports the directory into a new server, then syncs it
// again with nothing to change, and reports the server's peak RSS of
// each.
func measureSync(b *testing.B, bin string, users int, provider map[string]any) {
	var importPeak, resyncPeak, importRate float64
	for range b.N {
		srv := startChildServer(b, bin)
		realm := "rss"
		srv.admin(http.MethodPost, "/admin/realms", map[string]any{"name": realm}, http.StatusCreated, nil)
		var p struct{ ID string }
		srv.admin(http.MethodPost, "/admin/realms/"+realm+"/user-federation", provider, http.StatusCreated, &p)
		path := "/admin/realms/" + realm + "/user-federation/" + p.ID

		// The realm's creation (its keys, its defaults) is not the sync's.
		srv.resetPeak()
		start := time.Now()
		res := srv.sync(path)
		if res.Read != users || res.Created != users || res.Failed != 0 || res.Error != "" {
			b.Fatalf("import: %+v", res)
		}
		importRate = max(importRate, float64(users)/time.Since(start).Seconds())
		importPeak = max(importPeak, srv.peakRSSMB())

		// The second sync reads every entry and writes nothing: what it
		// holds is its comparison with the linked users.
		srv.resetPeak()
		res = srv.sync(path)
		if res.Read != users || res.Created != 0 || res.Updated != 0 || res.Failed != 0 || res.Error != "" {
			b.Fatalf("resync: %+v", res)
		}
		resyncPeak = max(resyncPeak, srv.peakRSSMB())
		srv.stop()
	}
	b.ReportMetric(importRate, "import-users/s")
	b.ReportMetric(importPeak, "import-serverPeakRSS-MB")
	b.ReportMetric(resyncPeak, "resync-serverPeakRSS-MB")
}

// peopleLDIF is n people, user000000 and on.
func peopleLDIF(n int) string {
	var b strings.Builder
	b.Grow(n * 260)
	for i := range n {
		uid := fmt.Sprintf("user%06d", i)
		b.WriteString(apptest.Person(uid, "Given", "Sn"+strconv.Itoa(i), uid+"@example.org", "pw"))
	}
	return b.String()
}

// groupsLDIF puts the n people of peopleLDIF in groups of
// benchGroupSize.
func groupsLDIF(n int) string {
	var b strings.Builder
	for first := 0; first < n; first += benchGroupSize {
		fmt.Fprintf(&b, "dn: cn=group%04d,ou=groups,%s\nobjectClass: groupOfNames\ncn: group%04d\n",
			first/benchGroupSize, apptest.DirectorySuffix, first/benchGroupSize)
		for i := first; i < min(first+benchGroupSize, n); i++ {
			fmt.Fprintf(&b, "member: %s\n", apptest.PersonDN(fmt.Sprintf("user%06d", i)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// serverBinary is $IDENPLANE_BINARY, or the server built for this run.
func serverBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("IDENPLANE_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "idenplane")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/idenplane/idenplane").CombinedOutput(); err != nil {
		b.Fatalf("build the server: %v\n%s", err, out)
	}
	return bin
}

// childServer is `idenplane serve` in a process of its own.
type childServer struct {
	b      *testing.B
	base   string
	apiKey string
	cmd    *exec.Cmd
	done   chan struct{}
	log    string // the file of its output
}

func startChildServer(b *testing.B, bin string) *childServer {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // the child binds the same port
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	dir := b.TempDir()
	s := &childServer{b: b, base: "http://" + addr, apiKey: hex.EncodeToString(key[:24]), done: make(chan struct{}),
		log: filepath.Join(dir, "server.log")}
	logFile, err := os.Create(s.log)
	if err != nil {
		b.Fatal(err)
	}
	s.cmd = exec.Command(bin, "serve", "--db", filepath.Join(dir, "idenplane.db"), "--addr", addr,
		"--base-url", s.base, "--log-format", "json")
	s.cmd.Env = append(os.Environ(), "IDENPLANE_MASTER_KEY="+hex.EncodeToString(key), "IDENPLANE_ADMIN_API_KEY="+s.apiKey)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		b.Fatalf("start the server: %v", err)
	}
	go func() { _ = s.cmd.Wait(); logFile.Close(); close(s.done) }()
	b.Cleanup(s.stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(s.base + "/health/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.done:
			b.Fatalf("the server exited: %s", s.output())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("the server was not ready within 30 s: %s", s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// output is what the server wrote so far.
func (s *childServer) output() string {
	data, _ := os.ReadFile(s.log)
	return string(data)
}

func (s *childServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// admin calls the admin API and decodes its answer into out.
func (s *childServer) admin(method, path string, body any, want int, out any) {
	s.b.Helper()
	status, data, err := s.call(method, path, body)
	if err != nil || status != want {
		s.b.Fatalf("%s %s: %d %v: %s", method, path, status, err, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.b.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

func (s *childServer) call(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Admin-API-Key", s.apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// sync runs a full sync of the provider at path and answers its result.
// A sync longer than the server's write timeout loses its answer, not its
// run: the result is then read from the provider once it ends.
func (s *childServer) sync(path string) ldapfed.SyncResult {
	s.b.Helper()
	var res ldapfed.SyncResult
	status, data, err := s.call(http.MethodPost, path+"/sync", nil)
	if err == nil {
		if status != http.StatusOK {
			s.b.Fatalf("sync: %d: %s", status, data)
		}
		if err := json.Unmarshal(data, &res); err != nil {
			s.b.Fatal(err)
		}
		return res
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		s.b.Fatalf("sync: %v", err)
	}
	for {
		time.Sleep(time.Second)
		var p struct {
			SyncStatus struct {
				LastSync *ldapfed.SyncResult
				Running  *ldapfed.Progress
			}
		}
		s.admin(http.MethodGet, path, nil, http.StatusOK, &p)
		if p.SyncStatus.Running == nil && p.SyncStatus.LastSync != nil {
			return *p.SyncStatus.LastSync
		}
	}
}

// peakRSSMB is the server's peak resident set (VmHWM), in MB.
func (s *childServer) peakRSSMB() float64 {
	s.b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		s.b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				s.b.Fatal(err)
			}
			return kb / 1024
		}
	}
	s.b.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// resetPeak starts the server's VmHWM again from its RSS now (the
// kernel's clear_refs, value 5).
func (s *childServer) resetPeak() {
	s.b.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0); err != nil {
		s.b.Fatalf("reset the peak RSS: %v", err)
	}
}
