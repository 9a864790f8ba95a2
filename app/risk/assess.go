package risk

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// historyLength is how many of the user's last sign-ins an assessment
// reads: the novelty signals look no further back.
const historyLength = 50

// Weights are the weights and thresholds an assessment used, kept with
// it: a later change of the settings does not rewrite its score.
type Weights struct {
	Weights    map[Signal]int `json:"weights"`
	Thresholds Thresholds     `json:"thresholds"`
}

// EventData is the data of risk.notify and risk.denied (docs/events.md).
type EventData struct {
	AssessmentID string   `json:"assessmentId"`
	UserID       string   `json:"userId"`
	Username     string   `json:"username"`
	ClientID     string   `json:"clientId,omitempty"`
	IPAddress    string   `json:"ipAddress,omitempty"`
	Country      string   `json:"country,omitempty"`
	Score        int      `json:"score"`
	Level        Level    `json:"level"`
	Signals      []Signal `json:"signals"`
	PolicyID     string   `json:"policyId,omitempty"`
	PolicyName   string   `json:"policyName,omitempty"`
	Action       Action   `json:"action"`
}

// Assess scores the sign-in f once (signin.Assessor): the assessment of
// its flow when there is one, else a new one, stored with the events its
// policy publishes in one transaction.
func (s *Service) Assess(w http.ResponseWriter, r *http.Request, f *signin.Flow) (signin.Risk, error) {
	ctx := r.Context()
	if f.Requester() != signin.RequesterPasswordGrant { // a grant's flow is new each time
		a, err := s.deps.Store.RiskAssessmentOfFlow(ctx, f.Realm.ID, f.ID())
		if err == nil {
			return riskOf(a), nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return signin.Risk{}, err
		}
	}
	cfg, err := s.config(ctx, f.Realm)
	if err != nil {
		return signin.Risk{}, err
	}
	history, err := s.deps.Store.RiskHistory(ctx, f.User.ID, max(historyLength, cfg.settings.HourHistory))
	if err != nil {
		return signin.Risk{}, err
	}
	o := &observation{realmID: f.Realm.ID, userID: f.User.ID, ipText: s.deps.ClientIP(r), agent: agentFamily(r.UserAgent()),
		geo: s.geo != nil, at: s.deps.Now()}
	if ip, err := netip.ParseAddr(o.ipText); err == nil {
		o.ip = ip.Unmap()
		o.network = network(o.ip)
		o.place = s.geo.lookup(o.ip)
	}
	o.device = s.device(w, r, f.Realm)
	findings := s.findings(cfg, o, history)
	score, present := 0, []Signal{}
	for _, fd := range findings {
		score += fd.Contribution
		if fd.State == Present {
			present = append(present, fd.Signal)
		}
	}
	score = min(score, 100)
	level := cfg.settings.level(score)
	p, err := s.decide(ctx, cfg.policies, &sighting{score: score, level: level, present: present, client: f.Wants.Client,
		country: o.place.Country, ip: o.ip, user: f.User, realm: f.Realm})
	if err != nil {
		return signin.Risk{}, err
	}
	// A session policy that ended one of the user's sessions asking a
	// step-up asks it of this sign-in, unless a sign-in policy denies it
	// or asks the same.
	if p == nil || p.Action == Allow || p.Action == Notify {
		owed, err := s.deps.Store.SessionStepUpOwed(ctx, f.Realm.ID, f.User.ID, o.at.UnixMilli())
		if err == nil {
			p = &policy{ID: owed.PolicyID, Name: owed.PolicyName, Action: SecondFactor}
		} else if !errors.Is(err, store.ErrNotFound) {
			return signin.Risk{}, err
		}
	}
	a := &store.RiskAssessment{ID: uuid.NewString(), RealmID: f.Realm.ID, UserID: f.User.ID, FlowID: f.ID(), Kind: string(f.Requester()),
		ClientID: f.Wants.Client, IPAddress: o.ipText, Network: o.network, DeviceHash: o.device, UserAgent: o.agent,
		Country: o.place.Country, Located: o.place.Located, Score: score, Level: string(level), Action: string(Allow),
		Outcome: store.RiskPending, CreatedAt: o.at.UnixMilli()}
	if o.place.Located {
		a.LatitudeE6, a.LongitudeE6 = int64(o.place.Lat*1e6), int64(o.place.Lon*1e6)
	}
	if p != nil {
		a.PolicyID, a.PolicyName, a.Action = p.ID, p.Name, string(p.Action)
	}
	sig, _ := json.Marshal(findings)
	weights, _ := json.Marshal(Weights{Weights: cfg.settings.Weights, Thresholds: cfg.settings.Thresholds})
	a.Signals, a.Weights, a.Present = string(sig), string(weights), presentList(present)

	var pending bus.Pending
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.AddRiskAssessment(ctx, a); err != nil {
			return err
		}
		t := map[Action]bus.Type{Notify: bus.RiskNotify, Deny: bus.RiskDenied}[Action(a.Action)]
		if t == "" {
			return nil
		}
		pending, err = s.deps.Bus.Queue(ctx, tx, f.Realm, t, EventData{AssessmentID: a.ID, UserID: a.UserID,
			Username: f.User.Username, ClientID: a.ClientID, IPAddress: a.IPAddress, Country: a.Country, Score: score,
			Level: level, Signals: present, PolicyID: a.PolicyID, PolicyName: a.PolicyName, Action: Action(a.Action)})
		return err
	})
	if err != nil {
		return signin.Risk{}, err
	}
	pending.Wake()
	if a.Action != string(Allow) || level != Low {
		s.deps.Log.InfoContext(ctx, "risk assessed", "realm", f.Realm.Name, "user", f.User.ID, "score", score, "level", level,
			"signals", a.Present, "policy", a.PolicyName, "action", a.Action)
	}
	return riskOf(a), nil
}

// Succeeded marks the assessed sign-in as signed in (signin.Assessor):
// from now on the user's later sign-ins are compared with it. The SSO
// session it landed in starts its risk profile from it; a sign-in asked
// for a second factor gave it, which is the step-up a session policy may
// have asked.
func (s *Service) Succeeded(ctx context.Context, f *signin.Flow) error {
	return s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.SucceedRiskAssessment(ctx, f.Risk.Assessment); err != nil {
			return err
		}
		if f.Risk.Action == signin.RiskSecondFactor {
			if err := tx.ClearSessionStepUp(ctx, f.Realm.ID, f.User.ID); err != nil {
				return err
			}
		}
		if f.SessionID == "" {
			return nil
		}
		a, err := tx.GetRiskAssessment(ctx, f.Realm.ID, f.Risk.Assessment)
		if err != nil {
			return err
		}
		return s.startSession(ctx, tx, f.Realm, f.SessionID, f.Wants.Client, a)
	})
}

// Enforces says whether the realm has an enabled policy of either scope
// (signin.Assessor): then its clients bound to no flow sign in through
// the server's own, whose sign-ins are assessed and decided, and whose
// sessions start from an assessment.
func (s *Service) Enforces(ctx context.Context, realm *store.Realm) (bool, error) {
	cfg, err := s.config(ctx, realm)
	if err != nil {
		return false, err
	}
	return len(cfg.policies) > 0 || len(cfg.sessionPolicies) > 0, nil
}

func riskOf(a *store.RiskAssessment) signin.Risk {
	return signin.Risk{Assessment: a.ID, Level: a.Level, Score: a.Score, Action: signin.RiskAction(a.Action), Policy: a.PolicyID}
}

// presentList is the signals as the store's filter finds them:
// ",new_device,new_ip,".
func presentList(sigs []Signal) string {
	if len(sigs) == 0 {
		return ","
	}
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = string(s)
	}
	return "," + strings.Join(parts, ",") + ","
}
