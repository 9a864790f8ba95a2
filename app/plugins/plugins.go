// Package plugins runs the server's WebAssembly plugins (docs/plugins.md):
// modules an operator puts in --plugins-dir, each with a manifest naming
// its hooks (an observer of the bus's events, a token-claims hook, a
// sign-in step), the host functions it may call and its limits. Each runs
// in a wazero sandbox of its own: no filesystem or network, the clock and
// randomness only if granted, a memory cap and a time limit per call. A
// plugin that fails a call is turned off, and stays off across restarts,
// while the server goes on.
package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the plugins area uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Dir is --plugins-dir: a directory per plugin; "" loads none.
	Dir string
	// Bus takes plugin.disabled; the observers take the bus's events as
	// one of its subscribers.
	Bus *bus.Bus
	// QueueSize bounds the events waiting for the observers; zero means
	// DefaultQueueSize.
	QueueSize int
}

// State is what a plugin is doing.
type State string

const (
	Enabled  State = "enabled"
	Disabled State = "disabled" // by an administrator
	// Failed: refused at load, or turned off by a call that failed.
	Failed State = "failed"
)

// The files of a plugin, in its directory under --plugins-dir.
const (
	ManifestFile = "plugin.json"
	ModuleFile   = "plugin.wasm"
)

// Service is the plugins area: the registry of the loaded plugins, their
// admin API, a subscriber of the bus, the claims hook and the sign-in
// step.
type Service struct {
	deps    Deps
	mu      sync.RWMutex
	plugins map[string]*plugin
	obs     *observers
}

// plugin is one directory of --plugins-dir.
type plugin struct {
	name string
	man  *Manifest // nil when plugin.json could not be read
	sb   *sandbox  // nil when refused
	// state and reason are guarded by Service.mu.
	state  State
	reason string
	stats  stats
}

// refused says whether the plugin never loaded: nothing of it runs or is
// stored until its files are fixed and the server restarted.
func (p *plugin) refused() bool { return p.sb == nil }

// New builds the plugins area, with no plugin loaded yet (Load).
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.QueueSize <= 0 {
		d.QueueSize = DefaultQueueSize
	}
	s := &Service{deps: d, plugins: map[string]*plugin{}}
	s.obs = newObservers(s, d.QueueSize)
	return s
}

// Load loads every plugin of the directory. A plugin it refuses (its
// manifest, its module) is logged and listed as failed with the reason,
// and the others load; only a directory it cannot read fails the start.
func (s *Service) Load(ctx context.Context) error {
	if s.deps.Dir == "" {
		return nil
	}
	entries, err := os.ReadDir(s.deps.Dir)
	if err != nil {
		return fmt.Errorf("--plugins-dir: %w", err)
	}
	stored, err := s.deps.Store.ListPluginStates(ctx)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := s.load(ctx, e.Name())
		if !p.refused() {
			if i := slices.IndexFunc(stored, func(st *store.PluginState) bool { return st.Name == p.name }); i >= 0 {
				p.state, p.reason = State(stored[i].State), stored[i].Reason
			}
		}
		s.mu.Lock()
		s.plugins[p.name] = p
		s.mu.Unlock()
		s.deps.Log.Info("plugin loaded", "plugin", p.name, "state", p.state, "reason", p.reason)
	}
	return nil
}

// load reads and compiles one plugin; a plugin never seen before is
// enabled: putting it in the directory was the operator's choice.
func (s *Service) load(ctx context.Context, name string) *plugin {
	p := &plugin{name: name, state: Enabled}
	refuse := func(err error) *plugin {
		p.state, p.reason = Failed, "refused at load: "+err.Error()
		s.deps.Log.Error("plugin refused", "plugin", name, "err", err)
		return p
	}
	dir := filepath.Join(s.deps.Dir, name)
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return refuse(err)
	}
	if p.man, err = ParseManifest(name, data); err != nil {
		return refuse(err)
	}
	wasm, err := os.ReadFile(filepath.Join(dir, ModuleFile))
	if err != nil {
		return refuse(err)
	}
	if p.sb, err = newSandbox(ctx, p.man, wasm, s.deps.Log); err != nil {
		return refuse(err)
	}
	return p
}

// Close stops every plugin's runtime.
func (s *Service) Close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.plugins {
		if p.sb != nil {
			p.sb.close(ctx)
		}
	}
}

// running are the enabled plugins at hook h, by name: the order their
// calls are made in.
func (s *Service) running(h Hook) []*plugin {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*plugin
	for _, p := range s.plugins {
		if p.state == Enabled && p.man.Has(h) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// call runs p's hook h with input, counting it; a call that fails turns
// p off (failed, stored, plugin.disabled in realm) unless keep says the
// plugin stays on through its failures.
func (s *Service) call(ctx context.Context, p *plugin, h Hook, realm *store.Realm, input []byte, keep bool) ([]byte, error) {
	start := time.Now()
	out, err := p.sb.call(ctx, h, input)
	p.stats.record(time.Since(start), err != nil)
	if err != nil {
		err = fmt.Errorf("plugin %s, hook %s: %w", p.name, h, err)
		if keep {
			s.deps.Log.Warn("plugin call failed", "plugin", p.name, "hook", h, "err", err)
		} else {
			s.fail(ctx, p, h, realm, err)
		}
	}
	return out, err
}

// fail turns p off for cause, lastingly: its state is stored, and an
// event says so in the realm of the call.
func (s *Service) fail(ctx context.Context, p *plugin, h Hook, realm *store.Realm, cause error) {
	ctx = context.WithoutCancel(ctx)
	s.mu.Lock()
	if p.state != Enabled {
		s.mu.Unlock()
		return
	}
	p.state, p.reason = Failed, cause.Error()
	s.mu.Unlock()
	s.deps.Log.Error("plugin disabled", "plugin", p.name, "hook", h, "err", cause)
	if err := s.save(ctx, p, Failed, cause.Error()); err != nil {
		s.deps.Log.Error("storing a plugin's failure failed", "plugin", p.name, "err", err)
	}
	if realm == nil {
		return
	}
	data := map[string]any{"plugin": p.name, "version": p.man.Version, "hook": h, "reason": cause.Error()}
	if err := s.deps.Bus.Publish(ctx, s.deps.Store, realm, bus.PluginDisabled, data); err != nil {
		s.deps.Log.Error("publishing plugin.disabled failed", "plugin", p.name, "err", err)
	}
}

func (s *Service) save(ctx context.Context, p *plugin, state State, reason string) error {
	return s.deps.Store.SavePluginState(ctx, &store.PluginState{Name: p.name, State: string(state), Reason: reason,
		UpdatedAt: s.deps.Now().UnixMilli()})
}

// errUnknown is a plugin the registry does not hold.
var errUnknown = errors.New("no such plugin")
