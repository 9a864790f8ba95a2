package risk

import (
	"context"
	"net/http"
	"slices"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// secondFactors are the AMR values of a second factor already proved.
var secondFactors = []string{"otp", "hwk", "swk", "mfa"}

// errDenied ends a sign-in a policy denied: the person is told, and the
// log and the assessment say why.
var errDenied = apperr.New(http.StatusForbidden, apperr.CodeForbidden, "sign-in refused by the realm's risk policy").
	WithKey("risk.error.denied")

// errNoSecondFactor ends a sign-in a policy asks a second factor of, from
// a user who has none: never a dead end, the page says to ask the
// administrator.
var errNoSecondFactor = apperr.New(http.StatusForbidden, apperr.CodeForbidden,
	"the realm's risk policy asks for a second factor, and the account has none").WithKey("risk.error.noSecondFactor")

// step is the risk assessment's required action (signin.OwedStep), which
// every browser flow ends with: owed when the deciding policy asks a
// second factor the sign-in has not proved, through the sign-in's own
// TOTP page, or its security-key page for a user with keys and no
// authenticator app. A denied sign-in ends here with its page.
type step struct {
	s         *Service
	totp, key signin.Step
}

// Step is the risk step; totp and key are the sign-in's TOTP and
// security-key steps, whose pages ask the second factor for it.
func (s *Service) Step(totp, key signin.Step) signin.OwedStep {
	return step{s: s, totp: totp, key: key}
}

func (step) Kind() signin.StepKind         { return signin.KindRiskCheck }
func (st step) AMR() []string              { return append(st.totp.AMR(), st.key.AMR()...) }
func (st step) Events() []signin.EventType { return st.totp.Events() }

// Owed decides from the flow's assessment.
func (st step) Owed(ctx context.Context, f *signin.Flow) (bool, error) {
	if f.Risk == nil {
		return false, nil
	}
	switch Action(f.Risk.Action) {
	case Deny:
		return false, errDenied
	case SecondFactor:
		if slices.ContainsFunc(f.AMR(), func(m string) bool { return slices.Contains(secondFactors, m) }) {
			return false, nil
		}
		second, err := st.factor(ctx, f)
		if err != nil {
			return false, err
		}
		if second == nil {
			return false, errNoSecondFactor
		}
		return true, nil
	}
	return false, nil
}

// factor is the step that asks the user's second factor: the TOTP step
// for a user with an authenticator app, else the security-key step for a
// user with keys; nil for a user with neither.
func (st step) factor(ctx context.Context, f *signin.Flow) (signin.Step, error) {
	types, err := st.s.deps.Store.CredentialTypes(ctx, f.Realm.ID, f.User.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case slices.Contains(types, store.CredentialTOTP):
		return st.totp, nil
	case slices.Contains(types, store.CredentialWebAuthn):
		return st.key, nil
	}
	return nil, nil
}

func (st step) Show(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) error {
	second, err := st.factor(r.Context(), f)
	if err != nil {
		return err
	}
	if second == nil {
		return errNoSecondFactor
	}
	return second.Show(w, r, f, v)
}

func (st step) Submit(w http.ResponseWriter, r *http.Request, f *signin.Flow, v signin.View) (*store.User, error) {
	second, err := st.factor(r.Context(), f)
	if err != nil {
		return nil, err
	}
	if second == nil {
		return nil, errNoSecondFactor
	}
	if second.Kind() == signin.KindTOTP {
		f.Prove(st.totp.AMR()...) // the key's AMR stays unproved
	}
	return second.Submit(w, r, f, v)
}
