package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/bus"
)

// Hook is a point of the server where a plugin runs.
type Hook string

const (
	// HookEvent observes the bus's events, after their change committed.
	HookEvent Hook = "event"
	// HookClaims adds claims to access and ID tokens.
	HookClaims Hook = "claims"
	// HookSignIn decides a sign-in at the flow's plugin step.
	HookSignIn Hook = "signin"
)

var hooks = []Hook{HookEvent, HookClaims, HookSignIn}

// export is the function of the module that runs the hook.
func (h Hook) export() string { return "on_" + string(h) }

// Permission grants a plugin a host function or a capability of the
// sandbox it lacks without.
type Permission string

const (
	// PermLog grants the host function idenplane.log.
	PermLog Permission = "log"
	// PermClock gives WASI's clocks the real time; without it they show
	// a fixed time that only moves by what the module asked.
	PermClock Permission = "clock"
	// PermRandom gives WASI's random_get the system's randomness; without
	// it, a fixed sequence.
	PermRandom Permission = "random"
)

var permissions = []Permission{PermLog, PermClock, PermRandom}

// The limits a manifest may set, and what it gets without.
const (
	DefaultMemoryPages = 256 // 16 MiB: a Go module starts at about 40 pages
	MaxMemoryPages     = 16384
	DefaultTimeout     = 100 * time.Millisecond
	MaxTimeout         = 10 * time.Second
)

// Manifest is a plugin's plugin.json.
type Manifest struct {
	Name        string       `json:"name"`
	Version     string       `json:"version"`
	Description string       `json:"description,omitempty"`
	Hooks       []Hook       `json:"hooks"`
	Permissions []Permission `json:"permissions,omitempty"`
	Limits      Limits       `json:"limits"`
	// Events are the types an event hook takes (bus patterns: "user.*",
	// "*"); none means every type.
	Events []string `json:"events,omitempty"`
	// FailOpen keeps an observer enabled through failed calls: they are
	// counted, and the module is made anew for the next event.
	FailOpen bool `json:"failOpen,omitempty"`
}

// Limits bound each call.
type Limits struct {
	MemoryPages uint32 `json:"memoryPages,omitempty"` // of 64 KiB
	TimeoutMs   int    `json:"timeoutMs,omitempty"`
}

// Timeout is the time a call may take.
func (l Limits) Timeout() time.Duration { return time.Duration(l.TimeoutMs) * time.Millisecond }

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ParseManifest reads a plugin.json found in the directory dirName and
// checks it: every field known, the name the directory's, hooks and
// permissions among those the server has. The limits left out get their
// defaults.
func ParseManifest(dirName string, data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("plugin.json: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !namePattern.MatchString(m.Name) {
		bad("name %q: lowercase letters, digits and hyphens, at most 63", m.Name)
	} else if m.Name != dirName {
		bad("name %q is not its directory's name %q", m.Name, dirName)
	}
	if m.Version == "" {
		bad("version: missing")
	}
	if len(m.Hooks) == 0 {
		bad("hooks: at least one of %s", joined(hooks))
	}
	for _, h := range m.Hooks {
		if !slices.Contains(hooks, h) {
			bad("unknown hook %q (known: %s)", h, joined(hooks))
		}
	}
	for _, p := range m.Permissions {
		if !slices.Contains(permissions, p) {
			bad("unknown permission %q (known: %s)", p, joined(permissions))
		}
	}
	for _, e := range m.Events {
		if !bus.ValidPattern(e) {
			bad("events: %q names no event type", e)
		}
	}
	if len(m.Events) > 0 && !m.Has(HookEvent) {
		bad("events: only for the %q hook", HookEvent)
	}
	if m.FailOpen && !m.Has(HookEvent) {
		bad("failOpen: only for the %q hook; the others fail as docs/plugins.md says", HookEvent)
	}
	switch l := &m.Limits; {
	case l.MemoryPages == 0:
		l.MemoryPages = DefaultMemoryPages
	case l.MemoryPages > MaxMemoryPages:
		bad("limits.memoryPages: at most %d", MaxMemoryPages)
	}
	switch l := &m.Limits; {
	case l.TimeoutMs == 0:
		l.TimeoutMs = int(DefaultTimeout / time.Millisecond)
	case l.TimeoutMs < 0 || l.Timeout() > MaxTimeout:
		bad("limits.timeoutMs: from 1 to %d", MaxTimeout/time.Millisecond)
	}
	if len(m.Events) == 0 && m.Has(HookEvent) {
		m.Events = []string{"*"}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &m, nil
}

// Has says whether the plugin runs at hook h.
func (m *Manifest) Has(h Hook) bool { return m != nil && slices.Contains(m.Hooks, h) }

// Grants says whether the manifest grants p.
func (m *Manifest) Grants(p Permission) bool { return slices.Contains(m.Permissions, p) }

func joined[T ~string](list []T) string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}
