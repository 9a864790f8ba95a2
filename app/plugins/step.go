package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Decision is a sign-in hook's answer.
type Decision string

const (
	Allow Decision = "allow"
	Deny  Decision = "deny"
	// SecondFactor: the user passes a second factor first, unless the
	// sign-in proved one already.
	SecondFactor Decision = "mfa"
)

// signInInput is the sign-in hook's input (docs/plugins.md).
type signInInput struct {
	Realm     string    `json:"realm"`
	Client    string    `json:"client"`
	User      userInput `json:"user"`
	AMR       []string  `json:"amr"`
	Requester string    `json:"requester"`
}

type signInOutput struct {
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason,omitempty"`
}

// secondFactors are the AMR values of a second factor already proved.
var secondFactors = []string{"otp", "hwk", "mfa"}

// step is the plugin step of an authentication flow: every enabled
// sign-in plugin, by name, decides. It passes over itself on allow, ends
// the sign-in on deny, and on a second factor asks the user's TOTP code
// through the sign-in's own TOTP step.
type step struct {
	s      *Service
	second signin.Step
}

// Step is the plugins' step of the hosted sign-in (app/signin); second is
// the sign-in's TOTP step, whose page asks a second factor for it.
func (s *Service) Step(second signin.Step) signin.Step { return step{s: s, second: second} }

func (step) Kind() signin.StepKind         { return signin.KindPlugin }
func (st step) AMR() []string              { return st.second.AMR() }
func (st step) Events() []signin.EventType { return st.second.Events() }
func (st step) Show(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) error {
	return st.second.Show(w, r, f, v)
}

func (st step) Submit(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) (*store.User, error) {
	return st.second.Submit(w, r, f, v)
}

// Skip asks the plugins (signin.Skipper): allowed, the step is passed
// over; denied, the sign-in ends with the refusal; a second factor, the
// step's page asks it.
func (st step) Skip(ctx context.Context, f *signin.Flow) (bool, error) {
	d, reason, err := st.s.decide(ctx, f)
	if err != nil {
		return false, err
	}
	switch d {
	case Allow:
		return true, nil
	case SecondFactor:
		if slices.ContainsFunc(f.AMR(), func(m string) bool { return slices.Contains(secondFactors, m) }) {
			return true, nil
		}
		types, err := st.s.deps.Store.CredentialTypes(ctx, f.Realm.ID, f.User.ID)
		if err != nil {
			return false, err
		}
		if !slices.Contains(types, store.CredentialTOTP) {
			return false, st.s.denied(f, "a plugin asks for a second factor, and the user has no authenticator app")
		}
		return false, nil
	}
	return false, st.s.denied(f, reason)
}

// denied is the sign-in's end: the person sees that the server refused,
// the log says why.
func (s *Service) denied(f *signin.Flow, reason string) error {
	s.deps.Log.Info("a sign-in plugin denied a sign-in", "realm", f.Realm.Name, "user", f.User.ID, "reason", reason)
	return apperr.New(http.StatusForbidden, apperr.CodeForbidden, "sign-in refused: %s", reason).WithKey("signin.error.pluginDenied")
}

// decide asks every enabled sign-in plugin, failing closed: a plugin
// that fails a call, or has failed one and was turned off for it, denies
// until an administrator enables or disables it. A deny wins; then a
// second factor; else allow.
func (s *Service) decide(ctx context.Context, f *signin.Flow) (Decision, string, error) {
	if reason := s.failedSignIn(); reason != "" {
		return Deny, reason, nil
	}
	ps := s.running(HookSignIn)
	if len(ps) == 0 {
		return Allow, "", nil
	}
	roles, err := s.deps.Store.EffectiveRoles(ctx, f.User.ID)
	if err != nil {
		return "", "", err
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.Name
		if r.ClientID != "" {
			names[i] = r.ClientClientID + "/" + r.Name
		}
	}
	user, err := s.userInput(ctx, f.User, names)
	if err != nil {
		return "", "", err
	}
	input, err := json.Marshal(signInInput{Realm: f.Realm.Name, Client: f.Wants.Client, User: user,
		AMR: nonNil(f.AMR()), Requester: string(f.Requester())})
	if err != nil {
		return "", "", err
	}
	decision := Allow
	for _, p := range ps {
		out, err := s.call(ctx, p, HookSignIn, f.Realm, input, false)
		if err != nil {
			return Deny, err.Error(), nil
		}
		var o signInOutput
		if err := json.Unmarshal(out, &o); err != nil || !slices.Contains([]Decision{Allow, Deny, SecondFactor}, o.Decision) {
			err = fmt.Errorf("plugin %s, hook signin: output %.200q is no decision (allow, deny, mfa)", p.name, out)
			s.fail(ctx, p, HookSignIn, f.Realm, err)
			return Deny, err.Error(), nil
		}
		switch o.Decision {
		case Deny:
			return Deny, fmt.Sprintf("plugin %s: %s", p.name, o.Reason), nil
		case SecondFactor:
			decision = SecondFactor
		}
	}
	return decision, "", nil
}

// failedSignIn is why a sign-in plugin that failed denies, or "".
func (s *Service) failedSignIn() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.plugins {
		if p.state == Failed && p.man.Has(HookSignIn) {
			return fmt.Sprintf("plugin %s failed: %s", p.name, p.reason)
		}
	}
	return ""
}
