package risk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// Session risk. An SSO session's profile starts from its sign-in's
// assessment (Succeeded) and follows the session: a refresh from another
// address, the client SDK's reports, an administrator's evaluation. Each
// observation judges what it saw, scores the session again with the
// realm's weights and lets the session policies decide; a policy that
// ends the session (end-session, step-up) ends it at once through the
// store's DeleteSession, so that its tokens stop standing, and a refresh
// with one of its refresh tokens is told why.

// EventKind is what observed a session.
type EventKind string

const (
	KindSignIn         EventKind = "sign-in"         // the session's sign-in: its profile starts
	KindRefresh        EventKind = "refresh"         // a refresh from an address the session was not last seen at
	KindDevicePosture  EventKind = "device-posture"  // the client SDK's report of the device
	KindNetworkContext EventKind = "network-context" // the client SDK's report of the network
	KindBehavioral     EventKind = "behavioral"      // the client SDK's samples of behaviour
	KindEvaluation     EventKind = "evaluation"      // an administrator's POST …/evaluate
)

// EventKinds are every kind, in the order a session meets them.
var EventKinds = []EventKind{KindSignIn, KindRefresh, KindDevicePosture, KindNetworkContext, KindBehavioral, KindEvaluation}

// The error_description of a refresh of a session a policy ended
// (docs/risk.md): clients may show it, and tell the two apart.
const (
	EndedDescription  = "the session was ended by the realm's risk policy"
	StepUpDescription = "the realm's risk policy requires a new sign-in with a second factor"
)

// Refusal is a refresh refused because a session policy ended the
// session, now or before: the refresh answers invalid_grant with its
// text.
type Refusal struct{ Action Action }

func (r *Refusal) Error() string {
	if r.Action == StepUp {
		return StepUpDescription
	}
	return EndedDescription
}

// noReport is the detail of a signal only the client SDK reports, before
// it has.
const noReport = "no report from the client SDK yet"

// SessionRetention is how long a session's profile is kept after its
// last change, and an observation after it was made: a session lives ten
// hours at most, so a month keeps the record of ended ones for an
// investigation.
const SessionRetention = 30 * 24 * time.Hour

// maxPlaces is how many of the addresses a session was seen at its
// profile keeps, the newest: enough for a day of a travelling laptop.
const maxPlaces = 20

// seenPlace is an address a session was seen at, placed as the GeoIP
// database says.
type seenPlace struct {
	IP      string  `json:"ip"`
	Network string  `json:"network,omitempty"`
	Country string  `json:"country,omitempty"`
	Located bool    `json:"located,omitempty"`
	Lat     float64 `json:"lat,omitempty"`
	Lon     float64 `json:"lon,omitempty"`
	At      int64   `json:"at"`
}

// profile is a session's profile, decoded for an observation.
type profile struct {
	rec      *store.SessionRisk
	prev     int // the version read; -1 for a profile not stored yet
	findings []Finding
	places   []seenPlace
}

func decodeProfile(rec *store.SessionRisk) (*profile, error) {
	p := &profile{rec: rec, prev: rec.Observations}
	if err := json.Unmarshal([]byte(rec.Signals), &p.findings); err != nil {
		return nil, fmt.Errorf("session risk %s: signals: %w", rec.SessionID, err)
	}
	if err := json.Unmarshal([]byte(rec.Places), &p.places); err != nil {
		return nil, fmt.Errorf("session risk %s: places: %w", rec.SessionID, err)
	}
	// A profile written before a signal was added lists it unknown.
	for _, sig := range SessionSignals {
		if p.finding(sig) == nil {
			p.findings = append(p.findings, Finding{Signal: sig, State: Unknown, Detail: noReport})
		}
	}
	return p, nil
}

func (p *profile) finding(sig Signal) *Finding {
	for i := range p.findings {
		if p.findings[i].Signal == sig {
			return &p.findings[i]
		}
	}
	return nil
}

// judge records what an observation found of a signal of the session's
// places: once present it stays present, since a session that jumped a
// continent stays suspect however it carries on; absent only replaces
// unknown.
func (p *profile) judge(sig Signal, st State, detail string) {
	f := p.finding(sig)
	if st == Present || f.State == Unknown && st == Absent {
		f.State, f.Detail = st, detail
	}
}

// report records the client SDK's latest word on a signal: the latest
// report decides, so a device put right counts no more.
func (p *profile) report(sig Signal, st State, detail string) {
	f := p.finding(sig)
	f.State, f.Detail = st, detail
}

func (p *profile) lastPlace() *seenPlace {
	if len(p.places) == 0 {
		return nil
	}
	return &p.places[len(p.places)-1]
}

// rescore weighs the findings with the realm's weights now and writes the
// profile's record.
func (s *Service) rescore(cfg *realmConfig, p *profile) {
	score, present := 0, []Signal{}
	for i := range p.findings {
		f := &p.findings[i]
		f.Weight, f.Contribution = cfg.settings.Weights[f.Signal], 0
		if f.State == Present {
			f.Contribution = f.Weight
			score += f.Weight
			present = append(present, f.Signal)
		}
	}
	// The list in SessionSignals' order, whatever order it was written in.
	slices.SortStableFunc(p.findings, func(a, b Finding) int {
		return slices.Index(SessionSignals, a.Signal) - slices.Index(SessionSignals, b.Signal)
	})
	p.rec.Score = min(score, 100)
	p.rec.Level = string(cfg.settings.level(p.rec.Score))
	p.rec.Present = presentList(present)
	sig, _ := json.Marshal(p.findings)
	places, _ := json.Marshal(p.places)
	p.rec.Signals, p.rec.Places = string(sig), string(places)
}

// startProfile is the profile a sign-in gives its session: the findings
// of its assessment a (nil for a sign-in not assessed), and the place of
// its address.
func (s *Service) startProfile(cfg *realmConfig, sso *store.Session, clientID string, a *store.RiskAssessment, now time.Time) *profile {
	p := &profile{prev: -1, rec: &store.SessionRisk{SessionID: sso.ID, RealmID: sso.RealmID, UserID: sso.UserID, ClientID: clientID,
		StartedAt: sso.StartedAt, UpdatedAt: now.UnixMilli(), Observations: 1, Active: sso.Active(now.UnixMilli())}}
	if a != nil {
		_ = json.Unmarshal([]byte(a.Signals), &p.findings) // written by Assess; a profile without them has them unknown
		p.rec.AssessmentID = a.ID
		pl := seenPlace{IP: a.IPAddress, Network: a.Network, Country: a.Country, Located: a.Located, At: a.CreatedAt}
		if a.Located {
			pl.Lat, pl.Lon = float64(a.LatitudeE6)/1e6, float64(a.LongitudeE6)/1e6
		}
		if pl.IP != "" {
			p.places = []seenPlace{pl}
		}
	} else if ip, err := netip.ParseAddr(sso.IPAddress); err == nil {
		ip = ip.Unmap()
		where := s.geo.lookup(ip)
		p.places = []seenPlace{{IP: ip.String(), Network: network(ip), Country: where.Country, Located: where.Located,
			Lat: where.Lat, Lon: where.Lon, At: sso.StartedAt}}
	}
	for _, sig := range SessionSignals {
		switch f := p.finding(sig); {
		case sig == DevicePosture || sig == AnonymizingNetwork || sig == BehaviorAnomaly:
			if f == nil {
				p.findings = append(p.findings, Finding{Signal: sig})
				f = p.finding(sig)
			}
			f.State, f.Detail = Unknown, noReport
		case f == nil:
			p.findings = append(p.findings, Finding{Signal: sig, State: Unknown, Detail: "the session's sign-in was not assessed"})
		}
	}
	if last := p.lastPlace(); last != nil {
		p.rec.IPAddress, p.rec.Country = last.IP, last.Country
	}
	s.rescore(cfg, p)
	return p
}

// seeAddress judges the session's move to the address ipText, when it is
// not the one the session was last seen at, against the places it was
// seen at: an address, network or country it had not used, an address of
// the deny lists, travel faster than a plane since the last located
// place. It answers the signals it found present and whether the address
// was new.
func (s *Service) seeAddress(cfg *realmConfig, p *profile, ipText string, at time.Time) ([]Signal, bool) {
	ip, err := netip.ParseAddr(ipText)
	if err != nil {
		return nil, false
	}
	ip = ip.Unmap()
	if last := p.lastPlace(); last != nil && last.IP == ip.String() {
		return nil, false
	}
	where := s.geo.lookup(ip)
	pl := seenPlace{IP: ip.String(), Network: network(ip), Country: where.Country, Located: where.Located, Lat: where.Lat,
		Lon: where.Lon, At: at.UnixMilli()}
	var found []Signal
	allowed := containsAddr(cfg.allow, ip)
	novelty := func(sig Signal, seen func(seenPlace) bool, what string) {
		switch {
		case allowed:
			p.judge(sig, Absent, "an address of the realm's allow list")
		case len(p.places) == 0 || slices.ContainsFunc(p.places, seen):
			p.judge(sig, Absent, "")
		default:
			p.judge(sig, Present, what)
			found = append(found, sig)
		}
	}
	novelty(NewIP, func(o seenPlace) bool { return o.IP == pl.IP }, "the session moved to an address it had not used ("+pl.IP+")")
	novelty(NewNetwork, func(o seenPlace) bool { return o.Network == pl.Network },
		"the session moved to a network it had not used ("+pl.Network+")")
	switch {
	case containsAddr(cfg.deny, ip):
		p.judge(IPDenied, Present, "the realm's deny list holds "+pl.IP)
		found = append(found, IPDenied)
	case s.list.holds(ip):
		p.judge(IPDenied, Present, "the server's deny list file holds "+pl.IP)
		found = append(found, IPDenied)
	default:
		p.judge(IPDenied, Absent, "")
	}
	if s.geo != nil && pl.Country != "" {
		novelty(NewCountry, func(o seenPlace) bool { return o.Country == "" || o.Country == pl.Country },
			"the session moved to a country it had not been in ("+pl.Country+")")
	}
	if allowed {
		p.judge(ImpossibleTravel, Absent, "an address of the realm's allow list")
	} else if s.geo != nil && pl.Located {
		if sig, st, detail := s.sessionTravel(cfg, p, pl); st != Unknown {
			p.judge(sig, st, detail)
			if st == Present {
				found = append(found, sig)
			}
		}
	}
	p.places = append(p.places, pl)
	if len(p.places) > maxPlaces {
		p.places = slices.Delete(p.places, 0, len(p.places)-maxPlaces)
	}
	p.rec.IPAddress, p.rec.Country = pl.IP, pl.Country
	return found, true
}

// sessionTravel judges the journey from the session's last located place
// to pl, as travel judges a sign-in's from the user's last.
func (s *Service) sessionTravel(cfg *realmConfig, p *profile, pl seenPlace) (Signal, State, string) {
	var prev *seenPlace
	for i := len(p.places) - 1; i >= 0 && prev == nil; i-- {
		if p.places[i].Located {
			prev = &p.places[i]
		}
	}
	if prev == nil {
		return ImpossibleTravel, Unknown, ""
	}
	km := distanceKm(prev.Lat, prev.Lon, pl.Lat, pl.Lon)
	const noiseKm = 100 // as a sign-in's: addresses are placed to a city at best
	if km < noiseKm {
		return ImpossibleTravel, Absent, ""
	}
	took := time.UnixMilli(pl.At).Sub(time.UnixMilli(prev.At))
	speed := km / max(took.Hours(), 1.0/60)
	if speed > float64(cfg.settings.MaxSpeedKmh) {
		return ImpossibleTravel, Present, fmt.Sprintf("%.0f km from where the session was (%s) in %s: %.0f km/h", km,
			prev.Country, took.Round(time.Minute), speed)
	}
	return ImpossibleTravel, Absent, ""
}

// look is one look at a session.
type look struct {
	kind     EventKind
	clientID string // the refresh's client, the SDK's token's; "" for an evaluation
	ip       string // the caller's address; "" for an evaluation
	// judge applies what the observation reports to the profile, and
	// answers the event's detail and the signals it found present; it
	// runs again when the profile changed meanwhile. nil judges nothing.
	judge func(ctx context.Context, cfg *realmConfig, p *profile, now time.Time) (detail any, found []Signal, err error)
	// also writes what the observation learnt, in its transaction (a
	// baseline of behaviour); nil writes nothing.
	also func(ctx context.Context, tx *store.Store) error
}

// observed is what an observation left: the profile, and the action
// that ended the session, if it did.
type observed struct {
	p     *profile
	ended Action
}

// SessionEventData is the data of risk.session.notify and
// risk.session.ended (docs/events.md).
type SessionEventData struct {
	SessionID  string    `json:"sessionId"`
	UserID     string    `json:"userId"`
	Username   string    `json:"username"`
	ClientID   string    `json:"clientId,omitempty"`
	IPAddress  string    `json:"ipAddress,omitempty"`
	Country    string    `json:"country,omitempty"`
	Score      int       `json:"score"`
	Level      Level     `json:"level"`
	Signals    []Signal  `json:"signals"`
	PolicyID   string    `json:"policyId"`
	PolicyName string    `json:"policyName"`
	Action     Action    `json:"action"`
	Trigger    EventKind `json:"trigger"`
}

// observe applies o to the session's profile, its session policies
// deciding, and acts: the write swaps on the profile's version, so an
// observation that raced another reads it again.
func (s *Service) observe(ctx context.Context, realm *store.Realm, user *store.User, sessionID string, sso *store.Session,
	rec *store.SessionRisk, o look) (*observed, error) {
	for attempt := 1; ; attempt++ {
		out, err := s.observeOnce(ctx, realm, user, sessionID, sso, rec, o)
		if !errors.Is(err, store.ErrConflict) || attempt == 3 {
			return out, err
		}
		rec = nil
	}
}

func (s *Service) observeOnce(ctx context.Context, realm *store.Realm, user *store.User, sessionID string, sso *store.Session,
	rec *store.SessionRisk, o look) (*observed, error) {
	cfg, err := s.config(ctx, realm)
	if err != nil {
		return nil, err
	}
	now := s.deps.Now()
	p, err := s.profileOf(ctx, cfg, realm, sessionID, sso, rec, now)
	if err != nil {
		return nil, err
	}
	if user == nil {
		if user, err = s.deps.Store.GetUser(ctx, realm.ID, p.rec.UserID); err != nil {
			return nil, err
		}
	}
	if o.kind == KindRefresh && p.prev >= 0 {
		// A refresh that raced another from the same move finds it made.
		if ip, err := netip.ParseAddr(o.ip); err == nil && p.lastPlace() != nil && p.lastPlace().IP == ip.Unmap().String() {
			return &observed{p: p}, nil
		}
	}
	beforePresent, beforePolicy := p.rec.Present, p.rec.PolicyID
	var found []Signal
	if o.ip != "" {
		f, _ := s.seeAddress(cfg, p, o.ip, now)
		found = append(found, f...)
	}
	var detail any = struct{}{}
	if o.judge != nil {
		d, f, err := o.judge(ctx, cfg, p, now)
		if err != nil {
			return nil, err
		}
		detail = d
		found = append(found, f...)
	}
	s.rescore(cfg, p)
	r := p.rec
	client := o.clientID
	if client == "" {
		client = r.ClientID
	}
	g := &sighting{score: r.Score, level: Level(r.Level), client: client, country: r.Country, user: user, realm: realm}
	for _, f := range p.findings {
		if f.State == Present {
			g.present = append(g.present, f.Signal)
		}
	}
	if ip, err := netip.ParseAddr(r.IPAddress); err == nil {
		g.ip = ip
	}
	pol, err := s.decide(ctx, cfg.sessionPolicies, g)
	if err != nil {
		return nil, err
	}
	r.PolicyID, r.PolicyName, r.Action = "", "", ""
	if pol != nil {
		r.PolicyID, r.PolicyName, r.Action = pol.ID, pol.Name, string(pol.Action)
	}
	var end Action
	if r.Active && r.EndedBy == "" && (Action(r.Action) == EndSession || Action(r.Action) == StepUp) {
		end = Action(r.Action)
		r.EndedBy, r.StepUpOwed = string(end), end == StepUp
	}
	r.Observations, r.UpdatedAt = max(p.prev, 0)+1, now.UnixMilli()
	d, _ := json.Marshal(detail)
	ev := &store.SessionRiskEvent{ID: uuid.NewString(), RealmID: realm.ID, SessionID: r.SessionID, UserID: r.UserID,
		Kind: string(o.kind), ClientID: o.clientID, IPAddress: o.ip, Detail: string(d), Present: presentList(found),
		Score: r.Score, Level: r.Level, Action: r.Action, PolicyID: r.PolicyID, PolicyName: r.PolicyName, CreatedAt: now.UnixMilli()}
	var t bus.Type
	switch {
	case end != "":
		t = bus.RiskSessionEnded
	case Action(r.Action) == Notify && (r.Present != beforePresent || r.PolicyID != beforePolicy):
		t = bus.RiskSessionNotify // once for what it saw: not again on every refresh
	}
	var ended []*store.Session
	var pending bus.Pending
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.SaveSessionRisk(ctx, r, p.prev); err != nil {
			return err
		}
		if err := tx.AddSessionRiskEvent(ctx, ev); err != nil {
			return err
		}
		if o.also != nil {
			if err := o.also(ctx, tx); err != nil {
				return err
			}
		}
		if end != "" {
			// The tokens' hashes first: deleting the session takes them.
			if _, err := tx.RefuseSessionTokens(ctx, realm.ID, r.SessionID, string(end), now.UnixMilli()); err != nil {
				return err
			}
			var err error
			ended, err = tx.DeleteSession(ctx, realm.ID, r.SessionID, store.SessionSSO, now.UnixMilli())
			if errors.Is(err, store.ErrNotFound) { // it ended meanwhile
				ended, err = nil, nil
			}
			if err != nil {
				return err
			}
		}
		if t == "" {
			return nil
		}
		pending, err = s.deps.Bus.Queue(ctx, tx, realm, t, SessionEventData{SessionID: r.SessionID, UserID: r.UserID,
			Username: user.Username, ClientID: client, IPAddress: r.IPAddress, Country: r.Country, Score: r.Score,
			Level: Level(r.Level), Signals: g.present, PolicyID: r.PolicyID, PolicyName: r.PolicyName, Action: Action(r.Action),
			Trigger: o.kind})
		return err
	})
	if err != nil {
		return nil, err
	}
	pending.Wake()
	if len(ended) > 0 {
		s.deps.SessionsEnded(ctx, realm, ended)
	}
	if end != "" || len(found) > 0 {
		s.deps.Log.InfoContext(ctx, "session risk", "realm", realm.Name, "session", r.SessionID, "user", r.UserID,
			"trigger", o.kind, "score", r.Score, "level", r.Level, "found", ev.Present, "policy", r.PolicyName, "ended", end)
	}
	return &observed{p: p, ended: end}, nil
}

// profileOf is the session's profile: rec when given, else read; a
// session without one (its sign-in was not assessed) starts one from the
// SSO session, which must be the realm's.
func (s *Service) profileOf(ctx context.Context, cfg *realmConfig, realm *store.Realm, sessionID string, sso *store.Session,
	rec *store.SessionRisk, now time.Time) (*profile, error) {
	var err error
	if rec == nil {
		rec, err = s.deps.Store.GetSessionRisk(ctx, realm.ID, sessionID, now.UnixMilli())
	}
	if err == nil {
		return decodeProfile(rec)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if sso == nil {
		if sso, err = s.ssoSession(ctx, realm, sessionID); err != nil {
			return nil, err
		}
	}
	return s.startProfile(cfg, sso, "", nil, now), nil
}

// ssoSession is the realm's SSO session id, live or not; a 404 naming it
// when there is none.
func (s *Service) ssoSession(ctx context.Context, realm *store.Realm, id string) (*store.Session, error) {
	sso, err := s.deps.Store.GetSession(ctx, realm.ID, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && sso.Kind != store.SessionSSO {
		return nil, apperr.NotFound("session " + id)
	}
	return sso, err
}

// startSession gives the SSO session a sign-in landed in its profile,
// from the sign-in's assessment, in the caller's transaction.
func (s *Service) startSession(ctx context.Context, tx *store.Store, realm *store.Realm, sessionID, clientID string,
	a *store.RiskAssessment) error {
	cfg, err := s.config(ctx, realm)
	if err != nil {
		return err
	}
	sso, err := tx.GetSession(ctx, realm.ID, sessionID)
	if err != nil {
		return err
	}
	now := s.deps.Now()
	p := s.startProfile(cfg, sso, clientID, a, now)
	detail, _ := json.Marshal(map[string]any{"assessmentId": a.ID, "kind": a.Kind})
	r := p.rec
	if err := tx.StartSessionRisk(ctx, r); err != nil {
		return err
	}
	return tx.AddSessionRiskEvent(ctx, &store.SessionRiskEvent{ID: uuid.NewString(), RealmID: realm.ID, SessionID: sessionID,
		UserID: r.UserID, Kind: string(KindSignIn), ClientID: clientID, IPAddress: a.IPAddress, Detail: string(detail),
		Present: r.Present, Score: r.Score, Level: r.Level, CreatedAt: now.UnixMilli()})
}

// Refreshed observes the refresh of the SSO session sso by the client
// clientID from the address ip, before its tokens are issued: the
// refresh's hook. It reads nothing when the realm has no session policy
// that can act (the realm's policies are in memory), and one profile by
// its key when the session is at the address it was last seen at; only a
// move writes. A session a policy ends answers a *Refusal.
func (s *Service) Refreshed(ctx context.Context, realm *store.Realm, user *store.User, sso *store.Session, clientID, ip string) error {
	cfg, err := s.config(ctx, realm)
	if err != nil || !cfg.watchSessions {
		return err
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return nil // no address to judge
	}
	rec, err := s.deps.Store.GetSessionRisk(ctx, realm.ID, sso.ID, s.deps.Now().UnixMilli())
	switch {
	case err == nil && rec.IPAddress == addr.Unmap().String():
		return nil
	case errors.Is(err, store.ErrNotFound):
		rec = nil
	case err != nil:
		return err
	}
	out, err := s.observe(ctx, realm, user, sso.ID, sso, rec, look{kind: KindRefresh, clientID: clientID, ip: ip,
		judge: func(_ context.Context, _ *realmConfig, p *profile, _ time.Time) (any, []Signal, error) {
			return map[string]string{"country": p.rec.Country}, nil, nil
		}})
	if err != nil {
		return err
	}
	if out.ended != "" {
		return &Refusal{Action: out.ended}
	}
	return nil
}

// RefusedRefresh says why the refresh token with this hash, which the
// store no longer has, is refused: the text of the session policy's
// action that ended its session, or "" when none did.
func (s *Service) RefusedRefresh(ctx context.Context, realm *store.Realm, hash []byte) (string, error) {
	action, err := s.deps.Store.RefusedToken(ctx, realm.ID, hash)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return (&Refusal{Action: Action(action)}).Error(), nil
}

// Evaluate scores the session again now, with the realm's weights and
// session policies as they are, and acts on the decision: the
// administrator's POST …/session-risk/{sessionId}/evaluate. A session
// that has ended is scored, and nothing more.
func (s *Service) evaluate(ctx context.Context, realm *store.Realm, sessionID string) (*profile, error) {
	var before struct {
		Score int    `json:"previousScore"`
		Level string `json:"previousLevel"`
	}
	out, err := s.observe(ctx, realm, nil, sessionID, nil, nil, look{kind: KindEvaluation,
		judge: func(_ context.Context, _ *realmConfig, p *profile, _ time.Time) (any, []Signal, error) {
			before.Score, before.Level = p.rec.Score, p.rec.Level
			return &before, nil, nil
		}})
	if err != nil {
		return nil, err
	}
	return out.p, nil
}
