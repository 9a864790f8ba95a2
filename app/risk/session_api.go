package risk

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The admin API of session risk (…/session-risk) and continuous
// verification (…/continuous-verification): reads need risk:read, an
// evaluation risk:write.

// SessionRisk is a session's risk profile as the admin API shows it.
type SessionRisk struct {
	SessionID    string    `json:"sessionId"`
	UserID       string    `json:"userId"`
	Username     string    `json:"username"`
	ClientID     string    `json:"clientId,omitempty"`
	AssessmentID string    `json:"assessmentId,omitempty"` // the sign-in's
	Status       string    `json:"status"`                 // active, ended, ended-by-risk
	Score        int       `json:"score"`
	Level        Level     `json:"level"`
	Signals      []Finding `json:"signals"`
	IPAddress    string    `json:"ipAddress"`
	Country      string    `json:"country,omitempty"`
	PolicyID     string    `json:"policyId,omitempty"` // the session policy that decided last
	PolicyName   string    `json:"policyName,omitempty"`
	Action       Action    `json:"action,omitempty"`
	EndedBy      Action    `json:"endedBy,omitempty"` // end-session or step-up
	StepUpOwed   bool      `json:"stepUpOwed"`
	Observations int       `json:"observations"`
	Started      int64     `json:"started"`
	Updated      int64     `json:"updated"`
}

// Place is an address a session was seen at.
type Place struct {
	IPAddress string `json:"ipAddress"`
	Network   string `json:"network,omitempty"`
	Country   string `json:"country,omitempty"`
	At        int64  `json:"at"`
}

// PostureView is a session's device posture (GET …/device-posture/{sessionId}).
type PostureView struct {
	SessionID  string  `json:"sessionId"`
	UserID     string  `json:"userId"`
	Reported   bool    `json:"reported"`
	Posture    *Device `json:"posture"`
	ReceivedAt int64   `json:"receivedAt,omitempty"`
	Finding    Finding `json:"finding"`
}

// NetworkView is a session's network context (GET …/network-context/{sessionId}).
type NetworkView struct {
	SessionID  string          `json:"sessionId"`
	UserID     string          `json:"userId"`
	Reported   bool            `json:"reported"`
	Context    *NetworkContext `json:"context"`
	ReceivedAt int64           `json:"receivedAt,omitempty"`
	IPAddress  string          `json:"ipAddress"`
	Country    string          `json:"country,omitempty"`
	Places     []Place         `json:"places"`
	// Findings are the signals of the network: anonymizing_network, and
	// those of the addresses the session was seen at.
	Findings []Finding `json:"findings"`
}

// BehaviorView is the verdict of a session's latest samples.
type BehaviorView struct {
	BehaviorVerdict
	ReceivedAt int64 `json:"receivedAt"`
}

// SessionProfile is what continuous verification knows of a session
// (GET …/continuous-verification/session-profiles/{sessionId}).
type SessionProfile struct {
	SessionID      string          `json:"sessionId"`
	UserID         string          `json:"userId"`
	Username       string          `json:"username"`
	ClientID       string          `json:"clientId,omitempty"`
	Status         string          `json:"status"`
	IPAddress      string          `json:"ipAddress"`
	Country        string          `json:"country,omitempty"`
	Places         []Place         `json:"places"`
	DevicePosture  *Device         `json:"devicePosture"`
	NetworkContext *NetworkContext `json:"networkContext"`
	Behavior       *BehaviorView   `json:"behavior"`
	// Signals are those the client SDK reports: device_posture,
	// anonymizing_network, behavior_anomaly.
	Signals    []Finding `json:"signals"`
	Score      int       `json:"score"`
	Level      Level     `json:"level"`
	LastSignal int64     `json:"lastSignal"` // the SDK's latest report; 0 for none
	Started    int64     `json:"started"`
	Updated    int64     `json:"updated"`
}

// SessionDashboard counts a realm's session profiles changed in a window.
type SessionDashboard struct {
	From     int64          `json:"from"`
	To       int64          `json:"to"`
	Total    int            `json:"total"`
	ByStatus map[string]int `json:"byStatus"`
	ByLevel  map[Level]int  `json:"byLevel"`
	BySignal map[Signal]int `json:"bySignal"`
	ByAction map[Action]int `json:"byAction"`
}

// SignalEvent is one observation of a session (GET …/continuous-verification/events).
type SignalEvent struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionId"`
	UserID    string          `json:"userId"`
	Kind      EventKind       `json:"kind"`
	ClientID  string          `json:"clientId,omitempty"`
	IPAddress string          `json:"ipAddress,omitempty"`
	Detail    json.RawMessage `json:"detail"`
	// Signals are those this observation found present.
	Signals    []Signal `json:"signals"`
	Score      int      `json:"score"` // the session's, after it
	Level      Level    `json:"level"`
	Action     Action   `json:"action,omitempty"`
	PolicyID   string   `json:"policyId,omitempty"`
	PolicyName string   `json:"policyName,omitempty"`
	Timestamp  int64    `json:"timestamp"`
}

// SignalsDashboard counts the observations of a window.
type SignalsDashboard struct {
	From     int64             `json:"from"`
	To       int64             `json:"to"`
	Events   int               `json:"events"`
	Sessions int               `json:"sessions"` // observed in the window
	Users    int               `json:"users"`
	ByKind   map[EventKind]int `json:"byKind"`
	BySignal map[Signal]int    `json:"bySignal"` // observations that found each present
}

// MetricBaseline is a user's baseline of one metric.
type MetricBaseline struct {
	Metric    Metric  `json:"metric"`
	Samples   int     `json:"samples"`
	Mean      float64 `json:"mean"`
	Deviation float64 `json:"deviation"`
	Ready     bool    `json:"ready"` // enough samples to judge
}

// Baseline is a user's baseline of behaviour (GET …/behavioral/{userId}).
type Baseline struct {
	UserID     string           `json:"userId"`
	Metrics    []MetricBaseline `json:"metrics"`
	MinSamples int              `json:"minSamples"`
	Threshold  float64          `json:"threshold"` // deviations
	Updated    int64            `json:"updated"`   // 0 before the first samples
}

// SessionCounts counts a user's session profiles by status.
type SessionCounts struct {
	Total       int `json:"total"`
	Active      int `json:"active"`
	Ended       int `json:"ended"`
	EndedByRisk int `json:"endedByRisk"`
}

// UserSummary is what continuous verification knows of a user (GET
// …/continuous-verification/user/{userId}/summary): their sessions kept,
// the observations of them, and their baseline.
type UserSummary struct {
	UserID   string        `json:"userId"`
	Username string        `json:"username"`
	Sessions SessionCounts `json:"sessions"`
	// HighestLevel is that of the user's riskiest live session; "" for none.
	HighestLevel    Level             `json:"highestLevel,omitempty"`
	StepUpOwed      bool              `json:"stepUpOwed"`
	Events          int               `json:"events"`
	ByKind          map[EventKind]int `json:"byKind"`
	BySignal        map[Signal]int    `json:"bySignal"`
	BaselineMetrics int               `json:"baselineMetrics"` // ready to judge
	LastSignal      int64             `json:"lastSignal"`
}

func sessionRiskRep(p *profile) SessionRisk {
	r := p.rec
	return SessionRisk{SessionID: r.SessionID, UserID: r.UserID, Username: r.Username, ClientID: r.ClientID,
		AssessmentID: r.AssessmentID, Status: r.Status(), Score: r.Score, Level: Level(r.Level), Signals: p.findings,
		IPAddress: r.IPAddress, Country: r.Country, PolicyID: r.PolicyID, PolicyName: r.PolicyName, Action: Action(r.Action),
		EndedBy: Action(r.EndedBy), StepUpOwed: r.StepUpOwed, Observations: r.Observations, Started: r.StartedAt, Updated: r.UpdatedAt}
}

func placesOf(p *profile) []Place {
	out := make([]Place, 0, len(p.places))
	for _, pl := range p.places {
		out = append(out, Place{IPAddress: pl.IP, Network: pl.Network, Country: pl.Country, At: pl.At})
	}
	return out
}

func sessionProfileRep(p *profile) (SessionProfile, error) {
	r := p.rec
	rep := SessionProfile{SessionID: r.SessionID, UserID: r.UserID, Username: r.Username, ClientID: r.ClientID, Status: r.Status(),
		IPAddress: r.IPAddress, Country: r.Country, Places: placesOf(p), Signals: []Finding{}, Score: r.Score, Level: Level(r.Level),
		LastSignal: max(r.PostureAt, r.NetworkAt, r.BehaviorAt), Started: r.StartedAt, Updated: r.UpdatedAt}
	for _, sig := range []Signal{DevicePosture, AnonymizingNetwork, BehaviorAnomaly} {
		rep.Signals = append(rep.Signals, *p.finding(sig))
	}
	if r.DevicePosture != "" {
		rep.DevicePosture = &Device{}
		if err := json.Unmarshal([]byte(r.DevicePosture), rep.DevicePosture); err != nil {
			return rep, err
		}
	}
	if r.NetworkContext != "" {
		rep.NetworkContext = &NetworkContext{}
		if err := json.Unmarshal([]byte(r.NetworkContext), rep.NetworkContext); err != nil {
			return rep, err
		}
	}
	if r.Behavior != "" {
		rep.Behavior = &BehaviorView{ReceivedAt: r.BehaviorAt}
		if err := json.Unmarshal([]byte(r.Behavior), &rep.Behavior.BehaviorVerdict); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// sessionProfile reads the profile of the session the path names: the
// stored one, or for a session of the realm without one (its sign-in was
// not assessed) one made from it and not stored; a 404 otherwise.
func (s *Service) sessionProfile(r *http.Request) (*store.Realm, *profile, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	ctx, id := r.Context(), mux.Vars(r)["sessionId"]
	cfg, err := s.config(ctx, realm)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.profileOf(ctx, cfg, realm, id, nil, nil, s.deps.Now())
	if err != nil {
		return nil, nil, err
	}
	if p.prev < 0 { // made from the session: its user's name is not read with it
		u, err := s.deps.Store.GetUser(ctx, realm.ID, p.rec.UserID)
		if err != nil {
			return nil, nil, err
		}
		p.rec.Username = u.Username
	}
	return realm, p, nil
}

// sessionFilter reads the session lists' and dashboard's query.
func sessionFilter(q url.Values) (store.SessionRiskFilter, error) {
	f := store.SessionRiskFilter{UserID: q.Get("user"), Level: q.Get("level"), Signal: q.Get("signal"), Status: q.Get("status")}
	if f.Level != "" && !slices.Contains(Levels, Level(f.Level)) {
		return f, apperr.Field("level", "must be one of low, medium, high, critical, not %q", f.Level)
	}
	if f.Signal != "" && !knownSignal(Signal(f.Signal)) {
		return f, apperr.Field("signal", "unknown signal %q", f.Signal)
	}
	if f.Status != "" && !slices.Contains([]string{store.SessionRiskActive, store.SessionRiskEnded, store.SessionRiskEndedByRisk}, f.Status) {
		return f, apperr.Field("status", "must be one of active, ended, ended-by-risk, not %q", f.Status)
	}
	var err error
	f.From, f.To, err = window(q)
	return f, err
}

// window reads from and to (Unix milliseconds, to excluded).
func window(q url.Values) (from, to int64, err error) {
	for name, dst := range map[string]*int64{"from": &from, "to": &to} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, 0, apperr.Field(name, "must be a time in Unix milliseconds, not %q", v)
			}
			*dst = n
		}
	}
	if from > 0 && to > 0 && to <= from {
		return 0, 0, apperr.Field("to", "must be after from")
	}
	return from, to, nil
}

// defaultWindow fills a dashboard's window: up to now, over span.
func (s *Service) defaultWindow(from, to *int64, span time.Duration) {
	if *to == 0 {
		*to = s.deps.Now().UnixMilli() + 1
	}
	if *from == 0 {
		*from = time.UnixMilli(*to).Add(-span).UnixMilli()
	}
}

// listProfiles answers a page of the realm's profiles, each as rep
// makes it.
func listProfiles[R any](s *Service, w http.ResponseWriter, r *http.Request, rep func(*profile) (R, error)) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := sessionFilter(r.URL.Query())
	if err != nil {
		return err
	}
	first, max, err := httpx.FirstMax(r.URL.Query(), 50)
	if err != nil {
		return err
	}
	recs, err := s.deps.Store.ListSessionRisks(r.Context(), realm.ID, f, s.deps.Now().UnixMilli(), first, max)
	if err != nil {
		return err
	}
	out := make([]R, 0, len(recs))
	for _, rec := range recs {
		p, err := decodeProfile(rec)
		if err != nil {
			return err
		}
		v, err := rep(p)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return httpx.OK(w, out)
}

// ListSessionRisks lists the realm's session profiles, the latest
// changed first.
func (s *Service) ListSessionRisks(w http.ResponseWriter, r *http.Request) error {
	return listProfiles(s, w, r, func(p *profile) (SessionRisk, error) { return sessionRiskRep(p), nil })
}

// GetSessionRisk shows a session's risk profile.
func (s *Service) GetSessionRisk(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.sessionProfile(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, sessionRiskRep(p))
}

// EvaluateSession scores the session again now and acts on what its
// session policies decide.
func (s *Service) EvaluateSession(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	p, err := s.evaluate(r.Context(), realm, mux.Vars(r)["sessionId"])
	if err != nil {
		return err
	}
	// The profile's user's name, which an observation does not read.
	if rec, err := s.deps.Store.GetSessionRisk(r.Context(), realm.ID, p.rec.SessionID, s.deps.Now().UnixMilli()); err == nil {
		p.rec.Username, p.rec.Active = rec.Username, rec.Active
	} else {
		return err
	}
	return httpx.OK(w, sessionRiskRep(p))
}

// SessionRiskDashboard counts the profiles changed in a window (from,
// to; the last 24 hours by default) by status, level, signal present and
// the deciding policy's action.
func (s *Service) SessionRiskDashboard(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := sessionFilter(r.URL.Query())
	if err != nil {
		return err
	}
	s.defaultWindow(&f.From, &f.To, 24*time.Hour)
	d := SessionDashboard{From: f.From, To: f.To, ByStatus: map[string]int{}, ByLevel: map[Level]int{}, BySignal: map[Signal]int{},
		ByAction: map[Action]int{}}
	for _, st := range []string{store.SessionRiskActive, store.SessionRiskEnded, store.SessionRiskEndedByRisk} {
		d.ByStatus[st] = 0
	}
	for _, l := range Levels {
		d.ByLevel[l] = 0
	}
	for _, sig := range SessionSignals {
		d.BySignal[sig] = 0
	}
	for _, a := range SessionActions {
		d.ByAction[a] = 0
	}
	err = s.deps.Store.EachSessionRiskOutline(r.Context(), realm.ID, f, s.deps.Now().UnixMilli(), func(o store.SessionRiskOutline) {
		d.Total++
		d.ByStatus[o.Status]++
		d.ByLevel[Level(o.Level)]++
		for _, sig := range SessionSignals {
			if containsSignal(o.Present, sig) {
				d.BySignal[sig]++
			}
		}
		if o.Action != "" {
			d.ByAction[Action(o.Action)]++
		}
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, d)
}

// ListSessionProfiles lists what continuous verification knows of the
// realm's sessions, the latest changed first.
func (s *Service) ListSessionProfiles(w http.ResponseWriter, r *http.Request) error {
	return listProfiles(s, w, r, sessionProfileRep)
}

// GetSessionProfile shows what continuous verification knows of a session.
func (s *Service) GetSessionProfile(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.sessionProfile(r)
	if err != nil {
		return err
	}
	rep, err := sessionProfileRep(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// GetDevicePosture shows the client SDK's latest report of a session's
// device, and the device_posture signal it gave.
func (s *Service) GetDevicePosture(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.sessionProfile(r)
	if err != nil {
		return err
	}
	rep := PostureView{SessionID: p.rec.SessionID, UserID: p.rec.UserID, Finding: *p.finding(DevicePosture)}
	if p.rec.DevicePosture != "" {
		rep.Reported, rep.ReceivedAt, rep.Posture = true, p.rec.PostureAt, &Device{}
		if err := json.Unmarshal([]byte(p.rec.DevicePosture), rep.Posture); err != nil {
			return err
		}
	}
	return httpx.OK(w, rep)
}

// GetNetworkContext shows the client SDK's latest report of a session's
// network, the addresses the session was seen at, and the signals of
// both.
func (s *Service) GetNetworkContext(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.sessionProfile(r)
	if err != nil {
		return err
	}
	rep := NetworkView{SessionID: p.rec.SessionID, UserID: p.rec.UserID, IPAddress: p.rec.IPAddress, Country: p.rec.Country,
		Places: placesOf(p)}
	for _, sig := range []Signal{AnonymizingNetwork, NewIP, NewNetwork, NewCountry, ImpossibleTravel, IPDenied} {
		rep.Findings = append(rep.Findings, *p.finding(sig))
	}
	if p.rec.NetworkContext != "" {
		rep.Reported, rep.ReceivedAt, rep.Context = true, p.rec.NetworkAt, &NetworkContext{}
		if err := json.Unmarshal([]byte(p.rec.NetworkContext), rep.Context); err != nil {
			return err
		}
	}
	return httpx.OK(w, rep)
}

// realmUser reads the user the path names ({userId}).
func (s *Service) realmUser(r *http.Request) (*store.Realm, *store.User, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", s.deps.Store.GetUser)
	return realm, u, err
}

// GetBehavior shows a user's baseline of behaviour.
func (s *Service) GetBehavior(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.realmUser(r)
	if err != nil {
		return err
	}
	b, _, err := s.readBaseline(r.Context(), realm, u.ID)
	if err != nil {
		return err
	}
	rep := Baseline{UserID: u.ID, Metrics: metricBaselines(b), MinSamples: minBaselineSamples, Threshold: anomalyDeviations}
	if rec, err := s.deps.Store.GetRiskBaseline(r.Context(), realm.ID, u.ID); err == nil {
		rep.Updated = rec.UpdatedAt
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return httpx.OK(w, rep)
}

func metricBaselines(b baseline) []MetricBaseline {
	out := make([]MetricBaseline, 0, len(Metrics))
	for _, m := range Metrics {
		st := b[m]
		if st == nil {
			st = &metricStats{}
		}
		out = append(out, MetricBaseline{Metric: m, Samples: int(st.N), Mean: round2(st.Mean), Deviation: round2(st.deviation()),
			Ready: st.N >= minBaselineSamples})
	}
	return out
}

// maxSummarySessions bounds the sessions a summary reads: a user has a
// handful live, and the profiles are kept a month.
const maxSummarySessions = 1000

// GetUserSummary sums up what continuous verification knows of a user.
func (s *Service) GetUserSummary(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.realmUser(r)
	if err != nil {
		return err
	}
	ctx, now := r.Context(), s.deps.Now().UnixMilli()
	sum := UserSummary{UserID: u.ID, Username: u.Username, ByKind: map[EventKind]int{}, BySignal: map[Signal]int{}}
	for _, k := range EventKinds {
		sum.ByKind[k] = 0
	}
	for _, sig := range SessionSignals {
		sum.BySignal[sig] = 0
	}
	recs, err := s.deps.Store.ListSessionRisks(ctx, realm.ID, store.SessionRiskFilter{UserID: u.ID}, now, 0, maxSummarySessions)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		sum.Sessions.Total++
		switch rec.Status() {
		case store.SessionRiskActive:
			sum.Sessions.Active++
			if slices.Index(Levels, Level(rec.Level)) > slices.Index(Levels, sum.HighestLevel) {
				sum.HighestLevel = Level(rec.Level)
			}
		case store.SessionRiskEnded:
			sum.Sessions.Ended++
		default:
			sum.Sessions.EndedByRisk++
		}
		sum.StepUpOwed = sum.StepUpOwed || rec.StepUpOwed
	}
	err = s.deps.Store.EachSessionRiskEventOutline(ctx, realm.ID, store.SessionRiskEventFilter{UserID: u.ID},
		func(kind, present, _, _ string, at int64) {
			sum.Events++
			sum.ByKind[EventKind(kind)]++
			for _, sig := range SessionSignals {
				if containsSignal(present, sig) {
					sum.BySignal[sig]++
				}
			}
			if k := EventKind(kind); k == KindDevicePosture || k == KindNetworkContext || k == KindBehavioral {
				sum.LastSignal = max(sum.LastSignal, at)
			}
		})
	if err != nil {
		return err
	}
	b, _, err := s.readBaseline(ctx, realm, u.ID)
	if err != nil {
		return err
	}
	for _, st := range b {
		if st.N >= minBaselineSamples {
			sum.BaselineMetrics++
		}
	}
	return httpx.OK(w, sum)
}

// eventFilter reads the events' list and dashboard query.
func eventFilter(q url.Values) (store.SessionRiskEventFilter, error) {
	f := store.SessionRiskEventFilter{SessionID: q.Get("session"), UserID: q.Get("user"), Kind: q.Get("kind"), Signal: q.Get("signal")}
	if f.Kind != "" && !slices.Contains(EventKinds, EventKind(f.Kind)) {
		return f, apperr.Field("kind", "must be one of sign-in, refresh, device-posture, network-context, behavioral, evaluation, not %q", f.Kind)
	}
	if f.Signal != "" && !knownSignal(Signal(f.Signal)) {
		return f, apperr.Field("signal", "unknown signal %q", f.Signal)
	}
	var err error
	f.From, f.To, err = window(q)
	return f, err
}

func signalEventRep(e *store.SessionRiskEvent) SignalEvent {
	rep := SignalEvent{ID: e.ID, SessionID: e.SessionID, UserID: e.UserID, Kind: EventKind(e.Kind), ClientID: e.ClientID,
		IPAddress: e.IPAddress, Detail: json.RawMessage(e.Detail), Signals: []Signal{}, Score: e.Score, Level: Level(e.Level),
		Action: Action(e.Action), PolicyID: e.PolicyID, PolicyName: e.PolicyName, Timestamp: e.CreatedAt}
	for _, sig := range SessionSignals {
		if containsSignal(e.Present, sig) {
			rep.Signals = append(rep.Signals, sig)
		}
	}
	return rep
}

// ListSignalEvents lists the observations of the realm's sessions,
// newest first.
func (s *Service) ListSignalEvents(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := eventFilter(r.URL.Query())
	if err != nil {
		return err
	}
	first, max, err := httpx.FirstMax(r.URL.Query(), 50)
	if err != nil {
		return err
	}
	es, err := s.deps.Store.ListSessionRiskEvents(r.Context(), realm.ID, f, first, max)
	if err != nil {
		return err
	}
	return httpx.List(w, es, signalEventRep)
}

// GetSignalEvent shows one observation.
func (s *Service) GetSignalEvent(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	e, err := httpx.ChildOf(r, realm.ID, "id", "continuous verification event", s.deps.Store.GetSessionRiskEvent)
	if err != nil {
		return err
	}
	return httpx.OK(w, signalEventRep(e))
}

// SignalsDashboard counts the observations of a window (from, to; the
// last 24 hours by default) by kind and by signal found present, and the
// sessions and users observed.
func (s *Service) SignalsDashboard(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := eventFilter(r.URL.Query())
	if err != nil {
		return err
	}
	s.defaultWindow(&f.From, &f.To, 24*time.Hour)
	d := SignalsDashboard{From: f.From, To: f.To, ByKind: map[EventKind]int{}, BySignal: map[Signal]int{}}
	for _, k := range EventKinds {
		d.ByKind[k] = 0
	}
	for _, sig := range SessionSignals {
		d.BySignal[sig] = 0
	}
	sessions, users := map[string]bool{}, map[string]bool{}
	err = s.deps.Store.EachSessionRiskEventOutline(r.Context(), realm.ID, f, func(kind, present, session, user string, _ int64) {
		d.Events++
		d.ByKind[EventKind(kind)]++
		for _, sig := range SessionSignals {
			if containsSignal(present, sig) {
				d.BySignal[sig]++
			}
		}
		sessions[session], users[user] = true, true
	})
	if err != nil {
		return err
	}
	d.Sessions, d.Users = len(sessions), len(users)
	return httpx.OK(w, d)
}
