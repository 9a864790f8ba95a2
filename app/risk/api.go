package risk

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Policy is a risk policy as the admin API shows it.
type Policy struct {
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Description      string     `json:"description"`
	Enabled          bool       `json:"enabled"`
	Priority         int        `json:"priority"`
	Conditions       Conditions `json:"conditions"`
	Action           Action     `json:"action"`
	Scope            Scope      `json:"scope"`
	CreatedTimestamp int64      `json:"createdTimestamp"`
	UpdatedTimestamp int64      `json:"updatedTimestamp"`
}

// PolicyInput is the body of a create and of a PUT.
type PolicyInput struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Enabled     *bool      `json:"enabled"` // absent: true
	Priority    int        `json:"priority"`
	Conditions  Conditions `json:"conditions"`
	Action      Action     `json:"action"`
	// Scope: sign-in (the default) or session.
	Scope Scope `json:"scope,omitempty"`
}

// Toggle is the body of PATCH …/toggle: enabled sets the state; an empty
// body (or {}) flips it.
type Toggle struct {
	Enabled *bool `json:"enabled"`
}

// Priority is the body of PATCH …/priority.
type Priority struct {
	Priority *int `json:"priority"`
}

// Assessment is a risk assessment as the admin API shows it.
type Assessment struct {
	ID         string    `json:"id"`
	UserID     string    `json:"userId"`
	Kind       string    `json:"kind"` // the requester: oidc, saml, device, account, step-up, password-grant
	ClientID   string    `json:"clientId,omitempty"`
	IPAddress  string    `json:"ipAddress"`
	Network    string    `json:"network,omitempty"`
	UserAgent  string    `json:"userAgent"`
	Country    string    `json:"country,omitempty"`
	Score      int       `json:"score"`
	Level      Level     `json:"level"`
	Signals    []Finding `json:"signals"`
	Weights    Weights   `json:"weights"`
	PolicyID   string    `json:"policyId,omitempty"`
	PolicyName string    `json:"policyName,omitempty"`
	Action     Action    `json:"action"`
	// Outcome: pending until the sign-in ends signed in (succeeded);
	// a denied or abandoned sign-in stays pending.
	Outcome   string `json:"outcome"`
	Timestamp int64  `json:"timestamp"`
}

// Dashboard counts a realm's assessments over a window.
type Dashboard struct {
	From     int64          `json:"from"`
	To       int64          `json:"to"`
	Total    int            `json:"total"`
	ByLevel  map[Level]int  `json:"byLevel"`
	BySignal map[Signal]int `json:"bySignal"`
}

func policyRep(p *store.RiskPolicy) (Policy, error) {
	rep := Policy{ID: p.ID, Name: p.Name, Description: p.Description, Enabled: p.Enabled, Priority: p.Priority,
		Action: Action(p.Action), Scope: Scope(p.Scope), CreatedTimestamp: p.CreatedAt, UpdatedTimestamp: p.UpdatedAt}
	err := json.Unmarshal([]byte(p.Conditions), &rep.Conditions)
	return rep, err
}

func assessmentRep(a *store.RiskAssessment) (Assessment, error) {
	rep := Assessment{ID: a.ID, UserID: a.UserID, Kind: a.Kind, ClientID: a.ClientID, IPAddress: a.IPAddress, Network: a.Network,
		UserAgent: a.UserAgent, Country: a.Country, Score: a.Score, Level: Level(a.Level), PolicyID: a.PolicyID,
		PolicyName: a.PolicyName, Action: Action(a.Action), Outcome: a.Outcome, Timestamp: a.CreatedAt}
	if err := json.Unmarshal([]byte(a.Signals), &rep.Signals); err != nil {
		return rep, err
	}
	return rep, json.Unmarshal([]byte(a.Weights), &rep.Weights)
}

func (s *Service) policyLocation(realm *store.Realm, id string) string {
	return s.deps.BaseURL + "/admin/realms/" + url.PathEscape(realm.Name) + "/risk-policies/" + url.PathEscape(id)
}

// readPolicy decodes and checks a policy body; nothing is stored on a
// refusal.
func readPolicy(r *http.Request) (*PolicyInput, error) {
	var in PolicyInput
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return nil, err
	}
	if err := checkPolicy(&in); err != nil {
		return nil, err
	}
	return &in, nil
}

func conditionsJSON(c Conditions) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// errNameTaken: policy names are the realm's own, one each.
func errNameTaken(name string) error {
	return apperr.Conflict("name", "the realm has a risk policy named %q", name)
}

// CreatePolicy adds a policy.
func (s *Service) CreatePolicy(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	in, err := readPolicy(r)
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	p := &store.RiskPolicy{ID: uuid.NewString(), RealmID: realm.ID, Name: in.Name, Description: in.Description,
		Enabled: in.Enabled == nil || *in.Enabled, Priority: in.Priority, Conditions: conditionsJSON(in.Conditions),
		Action: string(in.Action), Scope: string(in.Scope), CreatedAt: now, UpdatedAt: now}
	if err := s.deps.Store.CreateRiskPolicy(r.Context(), p); errors.Is(err, store.ErrConflict) {
		return errNameTaken(in.Name)
	} else if err != nil {
		return err
	}
	rep, err := policyRep(p)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.policyLocation(realm, p.ID), rep)
}

// ListPolicies lists the realm's policies in the order they decide.
func (s *Service) ListPolicies(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ps, err := s.deps.Store.ListRiskPolicies(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	out := make([]Policy, 0, len(ps))
	for _, p := range ps {
		rep, err := policyRep(p)
		if err != nil {
			return err
		}
		out = append(out, rep)
	}
	return httpx.OK(w, out)
}

func (s *Service) policy(r *http.Request) (*store.RiskPolicy, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, err
	}
	return httpx.ChildOf(r, realm.ID, "id", "risk policy", s.deps.Store.GetRiskPolicy)
}

// GetPolicy shows a policy.
func (s *Service) GetPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.policy(r)
	if err != nil {
		return err
	}
	rep, err := policyRep(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// PutPolicy replaces a policy, whole.
func (s *Service) PutPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.policy(r)
	if err != nil {
		return err
	}
	in, err := readPolicy(r)
	if err != nil {
		return err
	}
	p.Name, p.Description, p.Enabled, p.Priority = in.Name, in.Description, in.Enabled == nil || *in.Enabled, in.Priority
	p.Conditions, p.Action, p.Scope = conditionsJSON(in.Conditions), string(in.Action), string(in.Scope)
	return s.writePolicy(w, r, p)
}

func (s *Service) writePolicy(w http.ResponseWriter, r *http.Request, p *store.RiskPolicy) error {
	p.UpdatedAt = s.deps.Now().UnixMilli()
	if err := s.deps.Store.UpdateRiskPolicy(r.Context(), p); errors.Is(err, store.ErrConflict) {
		return errNameTaken(p.Name)
	} else if err != nil {
		return err
	}
	rep, err := policyRep(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// DeletePolicy deletes a policy; the assessments it decided keep its name.
func (s *Service) DeletePolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.policy(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteRiskPolicy(r.Context(), p.RealmID, p.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// TogglePolicy sets a policy's state ({"enabled": bool}), or flips it
// (no body, or {}).
func (s *Service) TogglePolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.policy(r)
	if err != nil {
		return err
	}
	var body []byte
	if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" { // no body at all flips
		if body, err = httpx.ReadBody(r); err != nil {
			return err
		}
	}
	var t Toggle
	if len(body) > 0 {
		if err := httpx.StrictUnmarshal(body, &t); err != nil {
			return err
		}
	}
	if t.Enabled == nil {
		p.Enabled = !p.Enabled
	} else {
		p.Enabled = *t.Enabled
	}
	return s.writePolicy(w, r, p)
}

// SetPriority moves a policy in the order policies decide.
func (s *Service) SetPriority(w http.ResponseWriter, r *http.Request) error {
	p, err := s.policy(r)
	if err != nil {
		return err
	}
	var in Priority
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.Priority == nil {
		return apperr.Field("priority", "is required")
	}
	p.Priority = *in.Priority
	return s.writePolicy(w, r, p)
}

// filter reads the list's and the dashboard's query.
func (s *Service) filter(q url.Values) (store.RiskFilter, error) {
	f := store.RiskFilter{UserID: q.Get("user"), Level: q.Get("level"), Signal: q.Get("signal")}
	if f.Level != "" && !slices.Contains(Levels, Level(f.Level)) {
		return f, apperr.Field("level", "must be one of low, medium, high, critical, not %q", f.Level)
	}
	if f.Signal != "" && !slices.Contains(Signals, Signal(f.Signal)) {
		return f, apperr.Field("signal", "unknown signal %q", f.Signal)
	}
	for name, dst := range map[string]*int64{"from": &f.From, "to": &f.To} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, apperr.Field(name, "must be a time in Unix milliseconds, not %q", v)
			}
			*dst = n
		}
	}
	if f.From > 0 && f.To > 0 && f.To <= f.From {
		return f, apperr.Field("to", "must be after from")
	}
	return f, nil
}

// ListAssessments lists the realm's assessments, newest first.
func (s *Service) ListAssessments(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := s.filter(r.URL.Query())
	if err != nil {
		return err
	}
	first, max, err := httpx.FirstMax(r.URL.Query(), 50)
	if err != nil {
		return err
	}
	as, err := s.deps.Store.ListRiskAssessments(r.Context(), realm.ID, f, first, max)
	if err != nil {
		return err
	}
	out := make([]Assessment, 0, len(as))
	for _, a := range as {
		rep, err := assessmentRep(a)
		if err != nil {
			return err
		}
		out = append(out, rep)
	}
	return httpx.OK(w, out)
}

// GetAssessment shows one assessment.
func (s *Service) GetAssessment(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	a, err := httpx.ChildOf(r, realm.ID, "id", "risk assessment", s.deps.Store.GetRiskAssessment)
	if err != nil {
		return err
	}
	rep, err := assessmentRep(a)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// AssessmentDashboard counts the assessments of a window (from, to;
// the last 24 hours by default) by level, signal and action.
func (s *Service) AssessmentDashboard(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := s.filter(r.URL.Query())
	if err != nil {
		return err
	}
	now := s.deps.Now()
	if f.To == 0 {
		f.To = now.UnixMilli() + 1
	}
	if f.From == 0 {
		f.From = time.UnixMilli(f.To).Add(-24 * time.Hour).UnixMilli()
	}
	d := Dashboard{From: f.From, To: f.To, ByLevel: map[Level]int{}, BySignal: map[Signal]int{}}
	for _, l := range Levels {
		d.ByLevel[l] = 0
	}
	for _, sig := range Signals {
		d.BySignal[sig] = 0
	}
	err = s.deps.Store.EachRiskOutline(r.Context(), realm.ID, f, func(level, present string) {
		d.Total++
		d.ByLevel[Level(level)]++
		for _, sig := range Signals {
			if containsSignal(present, sig) {
				d.BySignal[sig]++
			}
		}
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, d)
}

func containsSignal(present string, sig Signal) bool {
	return strings.Contains(present, ","+string(sig)+",")
}

// GetSettings shows the realm's risk settings, the defaults filled in.
func (s *Service) GetSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	set, err := s.settings(r.Context(), realm)
	if err != nil {
		return err
	}
	return httpx.OK(w, set)
}

// PutSettings replaces the realm's risk settings; fields left out keep
// their defaults.
func (s *Service) PutSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	set := DefaultSettings()
	set.Weights = nil
	if err := httpx.DecodeJSON(r, &set); err != nil {
		return err
	}
	if err := set.check(); err != nil {
		return err
	}
	b, err := json.Marshal(set)
	if err != nil {
		return err
	}
	if err := s.deps.Store.PutRiskSettings(r.Context(), realm.ID, string(b), s.deps.Now().UnixMilli()); err != nil {
		return err
	}
	return httpx.OK(w, set)
}
