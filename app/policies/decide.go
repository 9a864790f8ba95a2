package policies

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// Request is one access request: AuthZEN's subject, action, resource and
// context.
type Request struct {
	Subject  *Subject       `json:"subject"`
	Action   *Action        `json:"action"`
	Resource *Resource      `json:"resource"`
	Context  map[string]any `json:"context,omitempty"`
}

// Subject is who asks: a type and an ID of that type; a subject of type
// user is resolved to the realm's user whose ID, username or email its id
// is.
type Subject struct {
	Type       string         `json:"type"`
	ID         string         `json:"id"`
	Properties map[string]any `json:"properties,omitempty"`
}

// Resource is what the request is for.
type Resource struct {
	Type       string         `json:"type"`
	ID         string         `json:"id"`
	Properties map[string]any `json:"properties,omitempty"`
}

// Action is what the subject would do.
type Action struct {
	Name       string         `json:"name"`
	Properties map[string]any `json:"properties,omitempty"`
}

// SubjectUser is the type of subject resolved to a user of the realm.
const SubjectUser = "user"

const maxIdentifierLength = 1024

// check refuses a request without its subject, action or resource, naming
// the field under prefix ("" or "evaluations[2].").
func (q *Request) check(prefix string) error {
	id := func(field, v string) error {
		switch {
		case v == "":
			return apperr.Field(prefix+field, "is required")
		case len(v) > maxIdentifierLength:
			return apperr.Field(prefix+field, "is longer than %d bytes", maxIdentifierLength)
		}
		return nil
	}
	switch {
	case q.Subject == nil:
		return apperr.Field(prefix+"subject", "is required")
	case q.Action == nil:
		return apperr.Field(prefix+"action", "is required")
	case q.Resource == nil:
		return apperr.Field(prefix+"resource", "is required")
	}
	for _, c := range []struct{ field, v string }{{"subject.type", q.Subject.Type}, {"subject.id", q.Subject.ID},
		{"action.name", q.Action.Name}, {"resource.type", q.Resource.Type}, {"resource.id", q.Resource.ID}} {
		if err := id(c.field, c.v); err != nil {
			return err
		}
	}
	return nil
}

// Facts are what the server knows of a request beyond what its caller
// sends: when, and from which address; the caller's context may name
// them itself (context.time, context.clientAddress).
type Facts struct {
	Now           time.Time
	ClientAddress string
}

// Outcome is what one policy whose target covers a request made of it.
type Outcome struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Effect Effect `json:"effect"`
	// Applied: its condition holds, so its effect counts.
	Applied bool `json:"applied"`
	// Reason: "the condition holds", "the condition does not hold", or
	// why its evaluation failed (a failure denies: see Decision).
	Reason string `json:"reason"`
	failed bool
}

// Decision is the realm's answer to a request, with each policy whose
// target covers it.
type Decision struct {
	Decision Effect    `json:"decision"`
	Reason   string    `json:"reason"`
	Policies []Outcome `json:"policies"`
}

// Permitted says whether the decision permits.
func (d *Decision) Permitted() bool { return d.Decision == Permit }

// Decide answers a request from the realm's enabled policies: deny
// overrides permit; a policy whose condition fails (an error, or the cost
// limit reached) denies when it would deny, and leaves a request no other
// policy permits denied when it would permit; a request no policy applies
// to gets the realm's default decision.
func (s *Service) Decide(ctx context.Context, realm *store.Realm, q *Request, f Facts) (*Decision, error) {
	cfg, err := s.config(ctx, realm)
	if err != nil {
		return nil, err
	}
	d := &Decision{Policies: []Outcome{}}
	var covering []*compiled
	risk := false
	for _, p := range cfg.policies {
		if p.target.covers(q.Resource.Type, q.Action.Name) {
			covering = append(covering, p)
			risk = risk || p.usesRisk
		}
	}
	if len(covering) > 0 {
		vars, err := s.variables(ctx, realm, q, f, risk)
		if err != nil {
			return nil, err
		}
		act, err := cel.NewActivation(vars)
		if err != nil {
			return nil, err
		}
		for _, p := range covering {
			d.Policies = append(d.Policies, p.run(act))
		}
	}
	combine(d, cfg.settings)
	return d, nil
}

// combine makes the decision of the outcomes.
func combine(d *Decision, set Settings) {
	var denied, deniedFailed, permitted, permitFailed *Outcome
	for i := range d.Policies {
		o := &d.Policies[i]
		switch {
		case o.Applied && o.Effect == Deny && denied == nil:
			denied = o
		case o.failed && o.Effect == Deny && deniedFailed == nil:
			deniedFailed = o
		case o.Applied && o.Effect == Permit && permitted == nil:
			permitted = o
		case o.failed && o.Effect == Permit && permitFailed == nil:
			permitFailed = o
		}
	}
	switch {
	case denied != nil:
		d.Decision, d.Reason = Deny, fmt.Sprintf("denied by policy %q", denied.Name)
	case deniedFailed != nil:
		d.Decision, d.Reason = Deny, fmt.Sprintf("policy %q, which denies, failed to evaluate: denied", deniedFailed.Name)
	case permitted != nil:
		d.Decision, d.Reason = Permit, fmt.Sprintf("permitted by policy %q", permitted.Name)
	case permitFailed != nil:
		d.Decision, d.Reason = Deny, fmt.Sprintf("policy %q, which permits, failed to evaluate, and no other permits: denied",
			permitFailed.Name)
	default:
		d.Decision, d.Reason = set.DefaultDecision, fmt.Sprintf("no policy applies: the realm's default decision, %s", set.DefaultDecision)
	}
}

// run evaluates the policy's condition on a request's variables (their
// map, or its activation).
func (p *compiled) run(vars any) Outcome {
	o := Outcome{ID: p.id, Name: p.name, Effect: p.effect}
	if p.program == nil {
		o.failed, o.Reason = true, "its condition does not compile"
		return o
	}
	held, err := evalBool(p.program, vars)
	switch {
	case err != nil:
		o.failed, o.Reason = true, "its condition failed: "+err.Error()
	case held:
		o.Applied, o.Reason = true, "its condition holds"
	default:
		o.Reason = "its condition does not hold"
	}
	return o
}

func evalBool(prg cel.Program, vars any) (bool, error) {
	out, _, err := prg.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the condition is %s, not a boolean", out.Type().TypeName())
	}
	return bool(b), nil
}

// variables are the condition's subject, resource, action and context of
// a request.
// A caller's context.riskLevel stands; else it is read only when a
// condition reads it (risk).
func (s *Service) variables(ctx context.Context, realm *store.Realm, q *Request, f Facts, risk bool) (map[string]any, error) {
	var err error
	subject := &SubjectVars{Type: q.Subject.Type, ID: q.Subject.ID, Properties: orEmpty(q.Subject.Properties)}
	if q.Subject.Type == SubjectUser {
		u, err := s.resolveUser(ctx, realm, q.Subject.ID)
		if err != nil {
			return nil, err
		}
		u.fill(subject)
	}
	c := make(map[string]any, len(q.Context)+3)
	maps.Copy(c, q.Context)
	c["time"] = contextTime(q.Context["time"], f.Now)
	if _, ok := c["clientAddress"].(string); !ok {
		c["clientAddress"] = f.ClientAddress
	}
	if _, ok := c["riskLevel"].(string); !ok {
		level := ""
		if risk {
			if level, err = s.riskLevel(ctx, subject); err != nil {
				return nil, err
			}
		}
		c["riskLevel"] = level
	}
	return map[string]any{
		"subject":  subject,
		"resource": &ResourceVars{Type: q.Resource.Type, ID: q.Resource.ID, Properties: orEmpty(q.Resource.Properties)},
		"action":   &ActionVars{Name: q.Action.Name, Properties: orEmpty(q.Action.Properties)},
		"context":  c,
	}, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// contextTime is context.time as a timestamp: the caller's, when it is an
// RFC 3339 time (with or without seconds), else now.
func contextTime(v any, now time.Time) any {
	s, ok := v.(string)
	if !ok {
		if v != nil {
			return v // the caller's, as it is: a condition that uses it as a time fails
		}
		return now
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return s
}

// riskLevel is the level of the risk assessment of the user's last
// sign-in (app/risk), "" when the subject is no user or none was
// assessed.
func (s *Service) riskLevel(ctx context.Context, subject *SubjectVars) (string, error) {
	if !subject.Found {
		return "", nil
	}
	hist, err := s.deps.Store.RiskHistory(ctx, subject.UserID, 1)
	if err != nil || len(hist) == 0 {
		return "", err
	}
	return hist[0].Level, nil
}

// resolvedUser is what a subject of type user resolves to; found false
// for an id that names no user of the realm.
type resolvedUser struct {
	found bool
	vars  SubjectVars
}

func (u *resolvedUser) fill(s *SubjectVars) {
	v := u.vars
	v.Type, v.ID, v.Properties, v.Found = s.Type, s.ID, s.Properties, u.found
	*s = v
}

// resolveUser finds the user a subject's id names, cached until a write
// moves the store's generation (a role, group, membership or attribute
// changed).
func (s *Service) resolveUser(ctx context.Context, realm *store.Realm, id string) (*resolvedUser, error) {
	return store.Cached(s.deps.Store, s.subjects, realm.ID+"\x00"+id, func() (*resolvedUser, error) {
		u, err := s.findUser(ctx, realm, id)
		if errors.Is(err, store.ErrNotFound) {
			return &resolvedUser{vars: emptyUser()}, nil
		} else if err != nil {
			return nil, err
		}
		return s.userFacts(ctx, realm, u)
	})
}

func emptyUser() SubjectVars {
	return SubjectVars{Roles: []string{}, ClientRoles: map[string][]string{}, Groups: []string{}, Organizations: []string{},
		Attributes: map[string][]string{}}
}

// findUser finds the user whose ID, username or email id is.
func (s *Service) findUser(ctx context.Context, realm *store.Realm, id string) (*store.User, error) {
	if uuid.Validate(id) == nil {
		u, err := s.deps.Store.GetUser(ctx, realm.ID, strings.ToLower(id))
		if !errors.Is(err, store.ErrNotFound) {
			return u, err
		}
	}
	u, err := s.deps.Store.GetUserByUsername(ctx, realm.ID, strings.ToLower(id))
	if errors.Is(err, store.ErrNotFound) && strings.Contains(id, "@") {
		return s.deps.Store.GetUserByEmail(ctx, realm.ID, id)
	}
	return u, err
}

// userFacts reads what a condition sees of a user.
func (s *Service) userFacts(ctx context.Context, realm *store.Realm, u *store.User) (*resolvedUser, error) {
	v := emptyUser()
	v.UserID, v.Username, v.Email, v.EmailVerified, v.Enabled = u.ID, u.Username, u.Email, u.EmailVerified, u.Enabled
	roles, err := s.deps.Store.EffectiveRoles(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range roles {
		if r.ClientID == "" {
			v.Roles = append(v.Roles, r.Name)
		} else {
			v.ClientRoles[r.ClientClientID] = append(v.ClientRoles[r.ClientClientID], r.Name)
		}
	}
	groups, err := s.deps.Store.ListUserGroups(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	if len(groups) > 0 {
		paths, err := s.groupPaths(ctx, realm)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			v.Groups = append(v.Groups, paths[g.ID])
		}
	}
	orgs, err := s.deps.Store.UserOrganizations(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, m := range orgs {
		if m.Enabled {
			v.Organizations = append(v.Organizations, m.Slug)
		}
	}
	attrs, err := s.deps.Store.UserCustomAttributes(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	maps.Copy(v.Attributes, attrs)
	return &resolvedUser{found: true, vars: v}, nil
}

// groupPaths maps the realm's group IDs to their paths, cached as the
// users are.
func (s *Service) groupPaths(ctx context.Context, realm *store.Realm) (map[string]string, error) {
	return store.Cached(s.deps.Store, s.groups, realm.ID, func() (map[string]string, error) {
		groups, err := s.deps.Store.ListGroups(ctx, realm.ID)
		if err != nil {
			return nil, err
		}
		byID := make(map[string]*store.Group, len(groups))
		for _, g := range groups {
			byID[g.ID] = g
		}
		paths := make(map[string]string, len(groups))
		var path func(g *store.Group, depth int) string
		path = func(g *store.Group, depth int) string {
			if p, ok := paths[g.ID]; ok {
				return p
			}
			p := "/" + g.Name
			if parent, ok := byID[g.ParentID]; ok && depth < len(groups) {
				p = path(parent, depth+1) + p
			}
			paths[g.ID] = p
			return p
		}
		for _, g := range groups {
			path(g, 0)
		}
		return paths, nil
	})
}
