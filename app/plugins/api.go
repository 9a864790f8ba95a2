package plugins

import (
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Rep is a plugin as the admin API shows it. The counts are since the
// server started; p99Ms is of the latest thousand calls.
type Rep struct {
	Name        string       `json:"name"`
	Version     string       `json:"version,omitempty"`
	Description string       `json:"description,omitempty"`
	Hooks       []Hook       `json:"hooks"`
	Permissions []Permission `json:"permissions"`
	Limits      *Limits      `json:"limits,omitempty"`
	FailOpen    bool         `json:"failOpen,omitempty"`
	State       State        `json:"state"`
	// Reason says why the plugin failed: refused at load, or the call
	// that turned it off.
	Reason  string  `json:"reason,omitempty"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	Dropped int64   `json:"dropped"` // events an observer lost to a full queue
	P99Ms   float64 `json:"p99Ms"`
}

func (s *Service) rep(p *plugin) Rep {
	s.mu.RLock()
	r := Rep{Name: p.name, State: p.state, Reason: p.reason, Hooks: []Hook{}, Permissions: []Permission{}}
	s.mu.RUnlock()
	if m := p.man; m != nil {
		r.Version, r.Description, r.Hooks, r.FailOpen = m.Version, m.Description, m.Hooks, m.FailOpen
		r.Permissions = append(r.Permissions, m.Permissions...)
		limits := m.Limits
		r.Limits = &limits
	}
	var p99 time.Duration
	r.Calls, r.Errors, r.Dropped, p99 = p.stats.snapshot()
	r.P99Ms = float64(p99.Microseconds()) / 1000
	return r
}

// List answers every plugin of --plugins-dir, by name.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	s.mu.RLock()
	ps := make([]*plugin, 0, len(s.plugins))
	for _, p := range s.plugins {
		ps = append(ps, p)
	}
	s.mu.RUnlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	return httpx.List(w, ps, s.rep)
}

// Get answers the plugin the path names.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	p, err := s.named(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, s.rep(p))
}

// Enable turns the plugin on, lastingly; a failed plugin's next call
// runs in a new instance.
func (s *Service) Enable(w http.ResponseWriter, r *http.Request) error {
	return s.setState(w, r, Enabled)
}

// Disable turns the plugin off, lastingly.
func (s *Service) Disable(w http.ResponseWriter, r *http.Request) error {
	return s.setState(w, r, Disabled)
}

func (s *Service) setState(w http.ResponseWriter, r *http.Request, state State) error {
	p, err := s.named(r)
	if err != nil {
		return err
	}
	if p.refused() {
		return apperr.Conflict("state", "the plugin was refused at load (%s): fix its files and restart the server", p.reason)
	}
	if err := s.save(r.Context(), p, state, ""); err != nil {
		return err
	}
	s.mu.Lock()
	p.state, p.reason = state, ""
	s.mu.Unlock()
	s.deps.Log.Info("plugin state changed", "plugin", p.name, "state", state)
	return httpx.OK(w, s.rep(p))
}

// Delete takes the plugin out of the server and forgets its stored
// state. Its files stay: the operator owns the directory, and the next
// start loads them anew, enabled.
func (s *Service) Delete(w http.ResponseWriter, r *http.Request) error {
	p, err := s.named(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeletePluginState(r.Context(), p.name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	s.mu.Lock()
	delete(s.plugins, p.name)
	s.mu.Unlock()
	if p.sb != nil {
		p.sb.close(r.Context())
	}
	s.deps.Log.Info("plugin removed", "plugin", p.name)
	return httpx.NoContent(w)
}

func (s *Service) named(r *http.Request) (*plugin, error) {
	name := mux.Vars(r)["name"]
	s.mu.RLock()
	p, ok := s.plugins[name]
	s.mu.RUnlock()
	if !ok {
		return nil, apperr.NotFound("plugin").WithCause(errUnknown)
	}
	return p, nil
}
