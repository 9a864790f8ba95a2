package signin

import (
	"context"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/store"
)

// RiskLevels are the levels of a risk assessment, lowest first: a
// condition's RiskLevel holds at its level and above.
var RiskLevels = []string{"low", "medium", "high", "critical"}

// RiskAction is what the risk policy that decided a sign-in demands.
type RiskAction string

const (
	RiskAllow        RiskAction = "allow"
	RiskSecondFactor RiskAction = "mfa"
	RiskDeny         RiskAction = "deny"
	RiskNotify       RiskAction = "notify" // allowed; the assessment published an event
)

// Risk is what the assessment of a sign-in found and decided.
type Risk struct {
	Assessment string // its ID
	Level      string
	Score      int
	Action     RiskAction
	Policy     string // the policy that decided; "" when none matched
}

// AtLeast says whether the assessed level is level or above.
func (r *Risk) AtLeast(level string) bool {
	return slices.Index(RiskLevels, r.Level) >= slices.Index(RiskLevels, level)
}

// An Assessor scores a sign-in once its user is known, from the request
// that named the user (its address, its device cookie): the dispatcher
// asks it once per flow and keeps the answer in Flow.Risk, which the
// RiskLevel condition and the risk step read. It is the risk module's.
type Assessor interface {
	// Assess answers the flow's assessment, made now or earlier for
	// the same flow. w is nil for the password grant, which keeps no
	// cookie.
	Assess(w http.ResponseWriter, r *http.Request, f *Flow) (Risk, error)
	// Succeeded records that the sign-in assessed as risk ended signed
	// in: only those make the user's history.
	Succeeded(ctx context.Context, f *Flow) error
	// Enforces says whether the realm has a policy that acts on
	// sign-ins: then every browser sign-in follows a flow (Definition).
	Enforces(ctx context.Context, realm *store.Realm) (bool, error)
}

// assess fills f.Risk once the flow's user is known.
func (e *Engine) assess(w http.ResponseWriter, r *http.Request, f *Flow) error {
	if e.deps.Assessor == nil || f.User == nil || f.User == Unnamed || f.User.ID == "" || f.Risk != nil {
		return nil
	}
	risk, err := e.deps.Assessor.Assess(w, r, f)
	if err != nil {
		return err
	}
	f.Risk = &risk
	return nil
}

// Definition is what the browser sign-ins (usage browser or device) of a
// client of kind follow: the flow bound to it; else, in a realm whose risk
// policies act, the server's own browser flow, so that no sign-in escapes
// them on the pages that predate flows; else nil, those pages. fallback
// says the definition is the server's own, which follows an identity
// provider hint as those pages do.
func (e *Engine) Definition(ctx context.Context, realm *store.Realm, kind, clientID string, usage Usage) (def *Definition, fallback bool, err error) {
	if def, err = Bound(ctx, e.deps.Store, realm.ID, kind, clientID, usage); def != nil || err != nil || e.deps.Assessor == nil {
		return def, false, err
	}
	enforces, err := e.deps.Assessor.Enforces(ctx, realm)
	if !enforces || err != nil {
		return nil, false, err
	}
	return BrowserDefinition(), true, nil
}
