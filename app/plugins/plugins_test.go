package plugins

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// syncBuffer is a log the worker and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newService(t *testing.T, dir string) (*Service, *store.Store, *syncBuffer) {
	t.Helper()
	st, _ := apptest.OpenStore(t)
	logs := &syncBuffer{}
	b := bus.New(nil)
	s := New(Deps{Store: st, Dir: dir, Bus: b, Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	b.Subscribe(s)
	if err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, st, logs
}

func TestManifestRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, tc := range []struct{ name, manifest, want string }{
		{"unknown hook", `{"name":"p","version":"1","hooks":["claims","on-login"]}`, `unknown hook "on-login" (known: event, claims, signin)`},
		{"unknown permission", `{"name":"p","version":"1","hooks":["claims"],"permissions":["network"]}`, `unknown permission "network" (known: log, clock, random)`},
		{"unknown field", `{"name":"p","version":"1","hooks":["claims"],"filesystem":"/"}`, `unknown field "filesystem"`},
		{"another directory's name", `{"name":"q","version":"1","hooks":["claims"]}`, `is not its directory's name "p"`},
		{"fail open for a claims hook", `{"name":"p","version":"1","hooks":["claims"],"failOpen":true}`, "failOpen: only for the \"event\" hook"},
		{"no hook", `{"name":"p","version":"1","hooks":[]}`, "hooks: at least one"},
		{"too much memory", `{"name":"p","version":"1","hooks":["claims"],"limits":{"memoryPages":99999}}`, "limits.memoryPages"},
		{"too long a call", `{"name":"p","version":"1","hooks":["claims"],"limits":{"timeoutMs":60000}}`, "limits.timeoutMs"},
		{"events of no type", `{"name":"p","version":"1","hooks":["event"],"events":["nothing.*"]}`, `events: "nothing.*" names no event type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest("p", []byte(tc.manifest))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
	m, err := ParseManifest("p", []byte(`{"name":"p","version":"1","hooks":["event"]}`))
	if err != nil || m.Limits.MemoryPages != DefaultMemoryPages || m.Limits.Timeout() != DefaultTimeout || m.Events[0] != "*" {
		t.Fatalf("defaults: %+v %v", m, err)
	}
}

// A plugin whose manifest names an unknown hook is refused at load: the
// log says why, the list shows it failed, and nothing of it is stored.
func TestPluginRefusedAtLoad(t *testing.T) {
	dir := t.TempDir()
	apptest.BuildPlugin(t, dir, "claims")
	bad := filepath.Join(dir, "claims", "plugin.json")
	if err := os.WriteFile(bad, []byte(`{"name":"claims","version":"1","hooks":["claims","teleport"],"permissions":["network"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, st, logs := newService(t, dir)
	p := s.plugins["claims"]
	if p == nil || p.state != Failed || !strings.Contains(p.reason, `unknown hook "teleport"`) || !strings.Contains(p.reason, `unknown permission "network"`) {
		t.Fatalf("plugin: %+v", p)
	}
	if !strings.Contains(logs.String(), "plugin refused") || !strings.Contains(logs.String(), "teleport") {
		t.Fatalf("the log does not say why:\n%s", logs)
	}
	if states, err := st.ListPluginStates(context.Background()); err != nil || len(states) != 0 {
		t.Fatalf("stored: %+v %v", states, err)
	}
	if len(s.running(HookClaims)) != 0 {
		t.Fatal("a refused plugin runs")
	}
}

// A plugin that calls a host function its manifest does not grant cannot
// reach it: the server refuses the module at load, naming the function
// and the permission; granted, the same call reaches the log.
func TestHostFunctionNeedsItsPermission(t *testing.T) {
	dir := t.TempDir()
	apptest.BuildPlugin(t, dir, "nolog")
	s, _, _ := newService(t, dir)
	p := s.plugins["nolog"]
	if p.state != Failed || !strings.Contains(p.reason, `imports idenplane.log, which needs the permission "log"`) {
		t.Fatalf("without the permission: %s %q", p.state, p.reason)
	}

	granted := filepath.Join(dir, "nolog", "plugin.json")
	if err := os.WriteFile(granted, []byte(`{"name":"nolog","version":"1","hooks":["claims"],"permissions":["log"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, logs := newService(t, dir)
	if p := s.plugins["nolog"]; p.state != Enabled {
		t.Fatalf("with the permission: %s %q", p.state, p.reason)
	}
	if _, err := s.call(context.Background(), s.plugins["nolog"], HookClaims, nil, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "this line never reaches") || !strings.Contains(logs.String(), "plugin=nolog") {
		t.Fatalf("the log line did not arrive:\n%s", logs)
	}
}

// An observer takes the events it subscribed to once their transaction
// commits; failing open, a failed call is counted and it stays enabled.
func TestObserverTakesEvents(t *testing.T) {
	dir := t.TempDir()
	apptest.BuildPlugin(t, dir, "observer")
	s, st, logs := newService(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer s.Start(ctx)()
	defer cancel()
	realm := &store.Realm{ID: "r1", Name: "acme", Enabled: true}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	if s.Wants(ctx, realm, bus.LoginFailed) {
		t.Fatal("wants login.failed, which it did not subscribe to")
	}
	for _, typ := range []bus.Type{bus.UserCreated, bus.LoginFailed, bus.UserDeleted} {
		if err := s.deps.Bus.Publish(ctx, st, realm, typ, map[string]any{"userId": "u1"}); err != nil {
			t.Fatal(err)
		}
	}
	p := s.plugins["observer"]
	deadline := time.Now().Add(10 * time.Second)
	for {
		if calls, errs, _, _ := p.stats.snapshot(); calls == 2 && errs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls: %+v\n%s", s.rep(p), logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "observed user.created in acme") || strings.Contains(logs.String(), "observed login.failed") {
		t.Fatalf("log:\n%s", logs)
	}
	if s.rep(p).State != Enabled {
		t.Fatalf("a fail-open observer was turned off: %+v", s.rep(p))
	}
}

// Events queued past the queue's size are dropped, and counted.
func TestObserverQueueIsBounded(t *testing.T) {
	dir := t.TempDir()
	apptest.BuildPlugin(t, dir, "observer")
	s, st, _ := newService(t, dir)
	s.obs = newObservers(s, 2) // and no worker: nothing leaves the queue
	ctx := context.Background()
	realm := &store.Realm{ID: "r1", Name: "acme", Enabled: true}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := s.deps.Bus.Publish(ctx, st, realm, bus.UserCreated, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	if r := s.rep(s.plugins["observer"]); r.Dropped != 3 {
		t.Fatalf("dropped %d of 5 events with room for 2", r.Dropped)
	}
}

func TestStatsP99(t *testing.T) {
	var s stats
	for i := 1; i <= 200; i++ {
		s.record(time.Duration(i)*time.Millisecond, i%50 == 0)
	}
	calls, errs, _, p99 := s.snapshot()
	if calls != 200 || errs != 4 || p99 != 198*time.Millisecond {
		t.Fatalf("calls %d errors %d p99 %v", calls, errs, p99)
	}
}

// recorder is a subscriber of the bus that keeps what it is given.
type recorder struct {
	mu     sync.Mutex
	events []*bus.Event
}

func (r *recorder) Wants(context.Context, *store.Realm, bus.Type) bool { return true }
func (r *recorder) Wake()                                              {}
func (r *recorder) Queue(_ context.Context, _ *store.Store, e *bus.Event) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return true, nil
}

// A plugin that crashes is turned off, stored so, and plugin.disabled
// says so in the realm of the call; the next call does not reach it.
func TestFailedPluginIsDisabledWithAnEvent(t *testing.T) {
	dir := t.TempDir()
	apptest.BuildPlugin(t, dir, "crash")
	s, st, _ := newService(t, dir)
	rec := &recorder{}
	s.deps.Bus.Subscribe(rec)
	ctx := context.Background()
	realm := &store.Realm{ID: "r1", Name: "acme", Enabled: true}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	user := &store.User{ID: "u1", RealmID: realm.ID, Username: "alice", Enabled: true}
	if err := st.CreateUser(ctx, user); err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"sub": "u1"}
	s.AddClaims(ctx, ClaimsRequest{Realm: realm, ClientID: "app", User: user, TokenType: AccessToken}, claims)
	if len(claims) != 1 {
		t.Fatalf("a crashed plugin added claims: %v", claims)
	}
	stored, err := st.GetPluginState(ctx, "crash")
	if err != nil || stored.State != string(Failed) || !strings.Contains(stored.Reason, "panic: assignment to entry in nil map") {
		t.Fatalf("stored: %+v %v", stored, err)
	}
	rec.mu.Lock()
	if len(rec.events) != 1 || rec.events[0].Type != bus.PluginDisabled || rec.events[0].Realm.ID != realm.ID {
		t.Fatalf("events: %+v", rec.events)
	}
	data := rec.events[0].Data.(map[string]any)
	rec.mu.Unlock()
	if data["plugin"] != "crash" || data["hook"] != HookClaims || !strings.Contains(data["reason"].(string), "panic") {
		t.Fatalf("plugin.disabled data: %v", data)
	}
	s.AddClaims(ctx, ClaimsRequest{Realm: realm, ClientID: "app", User: user, TokenType: AccessToken}, claims)
	if r := s.rep(s.plugins["crash"]); r.Calls != 1 || r.State != Failed {
		t.Fatalf("after the failure: %+v", r)
	}
}
