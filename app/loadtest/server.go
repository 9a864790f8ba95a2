package loadtest

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/store"
)

// loadOutboundAllow lets the server's outbound calls reach loopback: the
// scenarios' peers (the webhook receiver, the upstream realm a brokered
// sign-in asks, the directory) listen there.
const loadOutboundAllow = "127.0.0.0/8"

// loadServerSpec is how the load test starts the server under test.
type loadServerSpec struct {
	exe      string // the binary to run as `serve`; "" runs it in this process
	schema   string // schema.sql, or schema_postgres.sql for a PostgreSQL db
	version  string
	db       string // a SQLite file or a PostgreSQL URL
	replicas int    // servers on db, behind one public address: 1, or more on PostgreSQL
	key      []byte
	apiKey   string
	logPath  string
}

// loadServer is the running server under test: one process, or the
// replicas of a fleet, measured together.
type loadServer struct {
	base  string   // http://addr of the first: the public address of all
	addrs []string // each server's host:port
	child bool
	pids  []int // whose RSS and CPU time are read: the children, or this process
	stop  func() error
}

// startLoadServer starts the server, or spec.replicas of them one after
// the other, and returns once each answers ready.
func startLoadServer(ctx context.Context, spec loadServerSpec) (*loadServer, error) {
	all := &loadServer{stop: func() error { return nil }}
	for i := range max(spec.replicas, 1) {
		s, err := startOneServer(ctx, spec, all.base)
		if err != nil {
			_ = all.stop()
			return nil, err
		}
		if i == 0 {
			all.base, all.child = s.base, s.child
		}
		all.addrs, all.pids = append(all.addrs, s.addrs...), append(all.pids, s.pids...)
		before := all.stop
		all.stop = func() error { return errors.Join(s.stop(), before()) }
	}
	return all, nil
}

// startOneServer starts a server answering for base ("": its own address).
func startOneServer(ctx context.Context, spec loadServerSpec, base string) (*loadServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	if base == "" {
		base = "http://" + addr
	}
	var s *loadServer
	if spec.exe != "" {
		ln.Close() // the child binds the same port
		s, err = startChildServer(spec, addr, base)
	} else {
		s, err = startInProcessServer(ctx, spec, ln, base)
	}
	if err != nil {
		return nil, err
	}
	s.addrs = []string{addr}
	if err := waitReady(ctx, "http://"+addr, 30*time.Second); err != nil {
		_ = s.stop()
		return nil, fmt.Errorf("%w (server log: %s)", err, spec.logPath)
	}
	return s, nil
}

func startChildServer(spec loadServerSpec, addr, base string) (*loadServer, error) {
	logFile, err := os.OpenFile(spec.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.exe, "serve", "--db", spec.db, "--addr", addr, "--base-url", base, "--log-format", "json",
		"--outbound-allow", loadOutboundAllow)
	cmd.Env = append(os.Environ(), "IDENPLANE_MASTER_KEY="+hex.EncodeToString(spec.key),
		"IDENPLANE_ADMIN_API_KEY="+spec.apiKey)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s serve: %w", spec.exe, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logFile.Close() }()
	stopped := false
	return &loadServer{base: base, child: true, pids: []int{cmd.Process.Pid}, stop: func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return fmt.Errorf("server exited: %w", err)
			}
			return err
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			return errors.New("server did not stop within 30 s")
		}
	}}, nil
}

func startInProcessServer(ctx context.Context, spec loadServerSpec, ln net.Listener, base string) (*loadServer, error) {
	st, err := store.Open(ctx, spec.storeConfig())
	if err != nil {
		ln.Close()
		return nil, err
	}
	a, err := app.New(ctx, st, app.Config{BaseURL: base, Version: spec.version, MasterKey: spec.key, AdminAPIKey: spec.apiKey,
		Logger: slog.New(slog.DiscardHandler), OutboundAllowed: []netip.Prefix{netip.MustParsePrefix(loadOutboundAllow)}})
	if err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	go a.RunJobs(jobsCtx)
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stopped := false
	return &loadServer{base: base, pids: []int{os.Getpid()}, stop: func() error {
		if stopped {
			return nil
		}
		stopped = true
		stopJobs()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := srv.Shutdown(shutdownCtx)
		return errors.Join(err, st.Close())
	}}, nil
}

// waitReady polls the readiness endpoint every millisecond.
func waitReady(ctx context.Context, base string, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health/ready", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("server not ready within %s", limit)
}

// storeConfig opens spec's database.
func (spec loadServerSpec) storeConfig() store.Config {
	cfg := store.Config{Path: spec.db, Schema: spec.schema, MasterKey: spec.key}
	if store.IsPostgres(spec.db) {
		cfg.Schema, cfg.PostgresSchema = "", spec.schema
	}
	return cfg
}

// rss is the servers' resident memory in bytes together, from /proc.
func (s *loadServer) rss() int64 {
	var sum int64
	for _, pid := range s.pids {
		sum += processRSS(pid)
	}
	return sum
}

// processRSS is a process's resident memory in bytes.
func processRSS(pid int) int64 {
	// statm, not status: the generator reads it every 50 ms on the cores
	// the server runs on, and under the password load status, which
	// gathers much more, cost the generator 11 ms of CPU a second against
	// statm's 4.
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// cpuTime is the CPU time the servers have used together, user and
// system, from /proc (in clock ticks of 10 ms).
func (s *loadServer) cpuTime() time.Duration {
	var sum time.Duration
	for _, pid := range s.pids {
		sum += processCPU(strconv.Itoa(pid))
	}
	return sum
}

// processCPU is the CPU time a process (a PID, or "self") has used.
func processCPU(pid string) time.Duration {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields follow its ')'.
	if i := bytes.LastIndexByte(data, ')'); i >= 0 {
		data = data[i+1:]
	}
	f := strings.Fields(string(data))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
