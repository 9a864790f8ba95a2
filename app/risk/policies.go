package risk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Conditions are what a policy matches: every one given must hold.
type Conditions struct {
	// MinScore: the score is at least this.
	MinScore *int `json:"minScore,omitempty"`
	// Levels: the level is one of these.
	Levels []Level `json:"levels,omitempty"`
	// Signals: each of these is present.
	Signals []Signal `json:"signals,omitempty"`
	// Clients: the sign-in is for one of these (clientId or SAML entity
	// ID).
	Clients []string `json:"clients,omitempty"`
	// Groups: the user is a member of one of these groups (its path),
	// directly or below.
	Groups []string `json:"groups,omitempty"`
	// Roles: the user holds one of these realm roles, or client roles as
	// "client/role".
	Roles []string `json:"roles,omitempty"`
	// Countries: the address is in one of these (ISO codes); an address
	// of no known country matches none.
	Countries []string `json:"countries,omitempty"`
	// Networks: the address is in one of these addresses or CIDR ranges.
	Networks []string `json:"networks,omitempty"`
}

// policy is a stored policy, read for matching.
type policy struct {
	ID, Name string
	Cond     Conditions
	networks []netip.Prefix
	Action   Action
	Scope    Scope
}

func policyOf(sp *store.RiskPolicy) (*policy, error) {
	p := &policy{ID: sp.ID, Name: sp.Name, Action: Action(sp.Action), Scope: Scope(sp.Scope)}
	if err := json.Unmarshal([]byte(sp.Conditions), &p.Cond); err != nil {
		return nil, fmt.Errorf("risk policy %s: %w", sp.ID, err)
	}
	for _, n := range p.Cond.Networks {
		pre, err := parsePrefix(n)
		if err != nil {
			return nil, fmt.Errorf("risk policy %s: %w", sp.ID, err)
		}
		p.networks = append(p.networks, pre)
	}
	return p, nil
}

const (
	maxNameLength        = 255
	maxDescriptionLength = 1000
	maxConditionEntries  = 100
)

// checkPolicy refuses what no sign-in could match or the server cannot
// do, naming the field.
func checkPolicy(in *PolicyInput) error {
	if err := validate.Setting("name", in.Name, maxNameLength); err != nil {
		return err
	}
	if strings.TrimSpace(in.Name) == "" {
		return apperr.Field("name", "is required")
	}
	if len(in.Description) > maxDescriptionLength {
		return apperr.Field("description", "is longer than %d characters", maxDescriptionLength)
	}
	actions := Actions
	switch in.Scope {
	case "":
		in.Scope = ScopeSignIn
	case ScopeSignIn:
	case ScopeSession:
		actions = SessionActions
	default:
		return apperr.Field("scope", "must be sign-in or session, not %q", in.Scope)
	}
	if !slices.Contains(actions, in.Action) {
		return apperr.Field("action", "must be one of %s for a %s policy, not %q", actionList(actions), in.Scope, in.Action)
	}
	c := in.Conditions
	if c.MinScore != nil && (*c.MinScore < 0 || *c.MinScore > 100) {
		return apperr.Field("conditions.minScore", "must be from 0 to 100, not %d", *c.MinScore)
	}
	for _, l := range c.Levels {
		if !slices.Contains(Levels, l) {
			return apperr.Field("conditions.levels", "unknown level %q (low, medium, high, critical)", l)
		}
	}
	for _, sig := range c.Signals {
		if !knownSignal(sig) {
			return apperr.Field("conditions.signals", "unknown signal %q", sig)
		}
		if in.Scope == ScopeSignIn && !slices.Contains(Signals, sig) {
			return apperr.Field("conditions.signals", "%s is reported of sessions only: a sign-in policy never sees it", sig)
		}
	}
	for field, list := range map[string][]string{"clients": c.Clients, "groups": c.Groups, "roles": c.Roles, "countries": c.Countries,
		"networks": c.Networks} {
		if len(list) > maxConditionEntries {
			return apperr.Field("conditions."+field, "holds at most %d entries", maxConditionEntries)
		}
		for _, v := range list {
			if err := validate.Setting("conditions."+field, v, maxNameLength); err != nil {
				return err
			}
			if v == "" {
				return apperr.Field("conditions."+field, "holds an empty entry")
			}
		}
	}
	for _, cc := range c.Countries {
		if len(cc) != 2 || strings.ToUpper(cc) != cc {
			return apperr.Field("conditions.countries", "must be ISO 3166-1 alpha-2 codes such as FR, not %q", cc)
		}
	}
	for _, n := range c.Networks {
		if _, err := parsePrefix(n); err != nil {
			return apperr.Field("conditions.networks", "%v", err)
		}
	}
	return nil
}

func knownSignal(s Signal) bool { return slices.Contains(SessionSignals, s) }

func actionList(actions []Action) string {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// sighting is what policies are matched against.
type sighting struct {
	score   int
	level   Level
	present []Signal
	client  string
	country string
	ip      netip.Addr
	user    *store.User
	realm   *store.Realm
}

// decide is the first policy whose conditions hold, nil for none.
func (s *Service) decide(ctx context.Context, policies []*policy, g *sighting) (*policy, error) {
	for _, p := range policies {
		ok, err := s.matches(ctx, p, g)
		if err != nil {
			return nil, err
		}
		if ok {
			return p, nil
		}
	}
	return nil, nil
}

// matches checks the cheap conditions first: those on the user read the
// store only when the others hold.
func (s *Service) matches(ctx context.Context, p *policy, g *sighting) (bool, error) {
	c := p.Cond
	switch {
	case c.MinScore != nil && g.score < *c.MinScore,
		len(c.Levels) > 0 && !slices.Contains(c.Levels, g.level),
		len(c.Clients) > 0 && !slices.Contains(c.Clients, g.client),
		len(c.Countries) > 0 && !slices.Contains(c.Countries, g.country),
		len(p.networks) > 0 && !containsAddr(p.networks, g.ip):
		return false, nil
	}
	for _, sig := range c.Signals {
		if !slices.Contains(g.present, sig) {
			return false, nil
		}
	}
	if len(c.Roles) > 0 {
		roles, err := s.deps.Store.EffectiveRoles(ctx, g.user.ID)
		if err != nil {
			return false, err
		}
		if !slices.ContainsFunc(roles, func(r *store.Role) bool {
			name := r.Name
			if r.ClientID != "" {
				name = r.ClientClientID + "/" + r.Name
			}
			return slices.Contains(c.Roles, name)
		}) {
			return false, nil
		}
	}
	if len(c.Groups) > 0 {
		ok, err := s.inGroups(ctx, g, c.Groups)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// inGroups: the user is a member of a group with one of paths, or below.
func (s *Service) inGroups(ctx context.Context, g *sighting, paths []string) (bool, error) {
	groups, err := s.deps.Store.ListUserGroups(ctx, g.user.ID)
	if err != nil {
		return false, err
	}
	for _, gr := range groups {
		path := "/" + gr.Name
		for p := gr; p.ParentID != ""; {
			if p, err = s.deps.Store.GetGroup(ctx, g.realm.ID, p.ParentID); err != nil {
				return false, err
			}
			path = "/" + p.Name + path
		}
		for _, want := range paths {
			if path == want || strings.HasPrefix(path, want+"/") {
				return true, nil
			}
		}
	}
	return false, nil
}
