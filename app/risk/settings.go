package risk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// Settings are a realm's risk settings (GET/PUT …/risk-settings): the
// weight of each signal, the score each level starts at, the addresses
// it allows and denies, and how the novelty and travel signals judge.
type Settings struct {
	// Weights are what each signal adds to the score when present;
	// those not given keep DefaultWeights'.
	Weights map[Signal]int `json:"weights"`
	// Thresholds are the scores medium, high and critical start at.
	Thresholds Thresholds `json:"thresholds"`
	// AllowList: addresses and CIDR ranges the realm trusts (an office):
	// from them the network and place signals are absent.
	AllowList []string `json:"allowList"`
	// DenyList: addresses and CIDR ranges whose sign-ins carry
	// ip_denylisted.
	DenyList []string `json:"denyList"`
	// MaxSpeedKmh: travel faster than this since the last located
	// sign-in is impossible.
	MaxSpeedKmh int `json:"maxSpeedKmh"`
	// HourHistory is how many of the user's last sign-ins tell their
	// usual hours; MinHourHistory how many it takes before an hour can
	// be unusual.
	HourHistory    int `json:"hourHistory"`
	MinHourHistory int `json:"minHourHistory"`
}

// Thresholds are where the levels above low start, each score included.
type Thresholds struct {
	Medium   int `json:"medium"`
	High     int `json:"high"`
	Critical int `json:"critical"`
}

// DefaultWeights: a deny-listed address alone is critical; an impossible
// journey is high; a new device on a new network in a new country is
// high; any one novelty alone stays below medium. Of the client SDK's
// signals, each alone is medium: a device short of its posture, an
// anonymizing network, behaviour unlike the user's.
var DefaultWeights = map[Signal]int{NewDevice: 20, NewIP: 5, NewNetwork: 10, IPDenied: 100, NewCountry: 25,
	ImpossibleTravel: 60, UnusualHour: 15, UserFailures: 20, IPFailures: 20, DevicePosture: 40, AnonymizingNetwork: 30,
	BehaviorAnomaly: 35}

// DefaultSettings are a realm's settings until an administrator writes
// its own.
func DefaultSettings() Settings {
	w := make(map[Signal]int, len(DefaultWeights))
	for k, v := range DefaultWeights {
		w[k] = v
	}
	return Settings{Weights: w, Thresholds: Thresholds{Medium: 30, High: 60, Critical: 85}, AllowList: []string{}, DenyList: []string{},
		MaxSpeedKmh: 1000, HourHistory: 30, MinHourHistory: 10}
}

// level is the level of score.
func (s *Settings) level(score int) Level {
	switch {
	case score >= s.Thresholds.Critical:
		return Critical
	case score >= s.Thresholds.High:
		return High
	case score >= s.Thresholds.Medium:
		return Medium
	}
	return Low
}

const maxListEntries = 1000

// check refuses settings that make no sense, naming the field; it fills
// the weights not given with the defaults'.
func (s *Settings) check() error {
	if s.Weights == nil {
		s.Weights = map[Signal]int{}
	}
	for sig, w := range s.Weights {
		if !knownSignal(sig) {
			return apperr.Field("weights", "unknown signal %q", sig)
		}
		if w < 0 || w > 100 {
			return apperr.Field("weights", "the weight of %s must be from 0 to 100, not %d", sig, w)
		}
	}
	for sig, w := range DefaultWeights {
		if _, ok := s.Weights[sig]; !ok {
			s.Weights[sig] = w
		}
	}
	t := s.Thresholds
	if t.Medium < 1 || t.Medium >= t.High || t.High >= t.Critical || t.Critical > 100 {
		return apperr.Field("thresholds", "must rise: 0 < medium < high < critical <= 100, not %d, %d, %d", t.Medium, t.High, t.Critical)
	}
	for field, list := range map[string][]string{"allowList": s.AllowList, "denyList": s.DenyList} {
		if len(list) > maxListEntries {
			return apperr.Field(field, "holds at most %d entries", maxListEntries)
		}
		for _, e := range list {
			if _, err := parsePrefix(e); err != nil {
				return apperr.Field(field, "%v", err)
			}
		}
	}
	if s.AllowList == nil {
		s.AllowList = []string{}
	}
	if s.DenyList == nil {
		s.DenyList = []string{}
	}
	if s.MaxSpeedKmh < 100 || s.MaxSpeedKmh > 100000 {
		return apperr.Field("maxSpeedKmh", "must be from 100 to 100000, not %d", s.MaxSpeedKmh)
	}
	if s.HourHistory < 1 || s.HourHistory > 200 || s.MinHourHistory < 1 || s.MinHourHistory > s.HourHistory {
		return apperr.Field("hourHistory", "must be from 1 to 200, and minHourHistory from 1 to hourHistory")
	}
	return nil
}

// realmConfig is what an assessment reads of its realm: the settings
// with their lists parsed, and the enabled policies of each scope by
// priority.
type realmConfig struct {
	settings Settings
	allow    []netip.Prefix
	deny     []netip.Prefix
	policies []*policy // of sign-ins
	// sessionPolicies decide sessions; watchSessions says whether one of
	// them can act (notify, step-up, end-session): without, a refresh
	// reads nothing.
	sessionPolicies []*policy
	watchSessions   bool
}

// config reads the realm's settings and policies, cached until either
// changes.
func (s *Service) config(ctx context.Context, realm *store.Realm) (*realmConfig, error) {
	// Every refresh asks: a hit allocates nothing.
	if c, ok := s.configs.Get(realm.ID, s.deps.Store.Generation(), time.Now()); ok {
		return c, nil
	}
	return store.Cached(s.deps.Store, s.configs, realm.ID, func() (*realmConfig, error) {
		set, err := s.settings(ctx, realm)
		if err != nil {
			return nil, err
		}
		c := &realmConfig{settings: set}
		for _, e := range set.AllowList {
			p, _ := parsePrefix(e)
			c.allow = append(c.allow, p)
		}
		for _, e := range set.DenyList {
			p, _ := parsePrefix(e)
			c.deny = append(c.deny, p)
		}
		stored, err := s.deps.Store.ListRiskPolicies(ctx, realm.ID)
		if err != nil {
			return nil, err
		}
		for _, sp := range stored {
			if !sp.Enabled {
				continue
			}
			p, err := policyOf(sp)
			if err != nil {
				return nil, err
			}
			if p.Scope == ScopeSession {
				c.sessionPolicies = append(c.sessionPolicies, p)
				c.watchSessions = c.watchSessions || p.Action != Allow
			} else {
				c.policies = append(c.policies, p)
			}
		}
		return c, nil
	})
}

func (s *Service) settings(ctx context.Context, realm *store.Realm) (Settings, error) {
	raw, err := s.deps.Store.RiskSettings(ctx, realm.ID)
	if errors.Is(err, store.ErrNotFound) {
		return DefaultSettings(), nil
	} else if err != nil {
		return Settings{}, err
	}
	set := DefaultSettings()
	if err := json.Unmarshal([]byte(raw), &set); err != nil {
		return Settings{}, fmt.Errorf("risk settings of realm %s: %w", realm.Name, err)
	}
	return set, nil
}
