package signin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/idenplane/idenplane/store"
)

// RequesterKind names what asked for a sign-in.
type RequesterKind string

const (
	RequesterOIDC          RequesterKind = "oidc"
	RequesterSAML          RequesterKind = "saml"
	RequesterDevice        RequesterKind = "device"
	RequesterStepUp        RequesterKind = "step-up"
	RequesterAccount       RequesterKind = "account"
	RequesterImpersonation RequesterKind = "impersonation"
)

// Wants is what a requester asks of a sign-in, whatever its protocol
// calls it.
type Wants struct {
	// Client names the application the sign-in is for (an OIDC clientId
	// or a SAML entity ID): for the pages and for conditions on it.
	Client     string `json:"client,omitempty"`
	ClientName string `json:"clientName,omitempty"`
	LoginHint  string `json:"loginHint,omitempty"`
	OrgHint    string `json:"orgHint,omitempty"`
	// Fresh: the user must authenticate now, whatever session the
	// browser has (prompt=login, max_age=0, ForceAuthn).
	Fresh bool `json:"fresh,omitempty"`
	// ACR are the authentication context classes asked for, best first.
	ACR []string `json:"acr,omitempty"`
	// RememberMe is the choice of the sign-in form's checkbox.
	RememberMe bool `json:"rememberMe,omitempty"`
	// Session is the SSO session a step-up raises.
	Session string `json:"session,omitempty"`
}

// A Flow is one sign-in in progress: what asked for it, what it wants,
// the authentication flow it follows, and how far it has come.
type Flow struct {
	rec   *store.SignInFlow
	Realm *store.Realm
	Def   *Definition
	Wants Wants
	// User is the user the flow's steps have told, nil until then.
	User *store.User
	// Risk is the assessment of the sign-in once its user is known; nil
	// before, or without an assessor.
	Risk *Risk
	// SessionID is the SSO session the sign-in landed in, which the
	// requester's Finish sets (the session it made, signed in to again,
	// or raised), for the assessor's Succeeded; "" for none.
	SessionID string
	// proved is what the step being submitted proved, when it said
	// (Prove).
	proved []string
}

// Prove says which of its AMR values the step being submitted proved;
// without it, the step proved them all.
func (f *Flow) Prove(amr ...string) { f.proved = amr }

func (f *Flow) ID() string                 { return f.rec.ID }
func (f *Flow) Requester() RequesterKind   { return RequesterKind(f.rec.Requester) }
func (f *Flow) RequesterID() string        { return f.rec.RequesterID }
func (f *Flow) AMR() []string              { return f.rec.AMR }
func (f *Flow) Passed() []int              { return f.rec.Passed }
func (f *Flow) BrowserHash() []byte        { return f.rec.BrowserHash }
func (f *Flow) record() *store.SignInFlow  { return f.rec }
func (f *Flow) passed(step int) bool       { return slices.Contains(f.rec.Passed, step) }
func (f *Flow) wantsJSON() ([]byte, error) { return json.Marshal(f.Wants) }

func decodeWants(rec *store.SignInFlow) (Wants, error) {
	var w Wants
	if err := json.Unmarshal(rec.Wants, &w); err != nil {
		return w, fmt.Errorf("sign-in flow %s: what it wants: %w", rec.ID, err)
	}
	return w, nil
}

// DefinitionOf reads a stored authentication flow.
func DefinitionOf(f *store.AuthFlow) (*Definition, error) {
	d := &Definition{ID: f.ID, Alias: f.Alias, Description: f.Description, Usage: Usage(f.Usage), BuiltIn: f.BuiltIn}
	if err := json.Unmarshal([]byte(f.Steps), &d.Steps); err != nil {
		return nil, fmt.Errorf("auth flow %s steps: %w", f.ID, err)
	}
	return d, nil
}

// Bound is the flow a client's sign-ins of usage follow (clientKind
// store.ClientKindOIDC or store.ClientKindSAML, clientID the client's or
// service provider's internal ID), nil when they follow none.
func Bound(ctx context.Context, st *store.Store, realmID, clientKind, clientID string, usage Usage) (*Definition, error) {
	f, err := st.FlowForClient(ctx, realmID, clientKind, clientID, string(usage))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return DefinitionOf(f)
}

// StoredDefinition loads a realm's authentication flow from the store, or
// the server's own (the step-up's, the built-in browser sign-in's).
func StoredDefinition(st *store.Store) func(ctx context.Context, realm *store.Realm, id string) (*Definition, error) {
	return func(ctx context.Context, realm *store.Realm, id string) (*Definition, error) {
		switch id {
		case stepUpID:
			return StepUpDefinition(), nil
		case browserID:
			return BrowserDefinition(), nil
		}
		f, err := st.GetAuthFlow(ctx, realm.ID, id)
		if err != nil {
			return nil, err
		}
		return DefinitionOf(f)
	}
}
