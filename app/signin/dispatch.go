package signin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
)

// Identifies says whether a step of the kind tells who is signing in.
func (k StepKind) Identifies() bool {
	switch k {
	case KindUsernamePassword, KindUsername, KindPasskey, KindIdentityProvider, KindOrgDiscovery:
		return true
	}
	return false
}

// NeedsUser says whether a step of the kind can run only once the user is
// known.
func (k StepKind) NeedsUser() bool {
	switch k {
	case KindTOTP, KindSecurityKey, KindRecoveryCode, KindEmailCode, KindTerms, KindPlugin:
		return true
	}
	return false
}

// A group is what the dispatcher asks for at once: one required or
// conditional step, or a run of alternatives.
type group []int

func groups(def *Definition) []group { return stepGroups(def.Steps) }

// stepGroups cuts steps into groups: consecutive alternatives are one,
// those with a condition apart from those without.
func stepGroups(steps []DefinitionStep) []group {
	var out []group
	for i, st := range steps {
		if i > 0 && joins(steps[i-1], st) {
			out[len(out)-1] = append(out[len(out)-1], i)
			continue
		}
		out = append(out, group{i})
	}
	return out
}

// joins says whether st joins the group of the step before it.
func joins(before, st DefinitionStep) bool {
	return st.Requirement == Alternative && before.Requirement == Alternative && (st.Condition == nil) == (before.Condition == nil)
}

// conditional says whether each step of g has a condition: g is asked
// only when one of them holds.
func conditional(def *Definition, g group) bool { return def.Steps[g[0]].Condition != nil }

// A Subject answers what the dispatcher asks of a flow's user.
type Subject interface {
	// Holds says whether cond holds for the flow, for a step of kind.
	Holds(ctx context.Context, f *Flow, cond *Condition, kind StepKind) (bool, error)
	// CanPass says whether the flow's user has what a step of kind
	// needs (a TOTP authenticator, a passkey, an address to mail).
	CanPass(ctx context.Context, f *Flow, kind StepKind) (bool, error)
}

// CannotPassError is a sign-in that can go no further: the user lacks
// what every step it may take now needs.
type CannotPassError struct{ Kinds []StepKind }

func (e *CannotPassError) Error() string {
	return fmt.Sprintf("the user cannot pass any of the steps %v", e.Kinds)
}

// errCannotPass is how a person is told: a page, never a dead end.
var errCannotPass = apperr.New(http.StatusForbidden, apperr.CodeForbidden, "").WithKey("signin.error.cannotPass")

// A skippingSubject also knows the steps the user owes no more, whatever
// the flow says (Skipper): terms already accepted.
type skippingSubject interface {
	Subject
	Skips(ctx context.Context, f *Flow, kind StepKind) (bool, error)
}

// skips says whether the known user owes none of g: a step of it says
// so, as if passed.
func skips(ctx context.Context, f *Flow, who Subject, g group) (bool, error) {
	s, ok := who.(skippingSubject)
	if !ok || f.User == nil {
		return false, nil
	}
	for _, i := range g {
		if skip, err := s.Skips(ctx, f, f.Def.Steps[i].Kind); err != nil || skip {
			return skip, err
		}
	}
	return false, nil
}

// next is the dispatcher's one decision: the steps the flow offers now
// (indexes into its definition, then into owed past its end), or none
// when it has passed every step it owes. Only this function knows the
// order of steps: the flow's, then the required actions the user owes.
func next(ctx context.Context, f *Flow, who Subject, owed []OwedStep) ([]int, error) {
	// The flow's own steps were over when the first required action
	// began: a conditional step passed over stays passed over, even once
	// an action made its condition hold (a TOTP authenticator set up).
	var own []group
	if !owing(f) {
		own = groups(f.Def)
	}
	for _, g := range own {
		if passedAny(f, g) {
			continue
		}
		if conditional(f.Def, g) {
			var err error
			if g, err = holding(ctx, f, who, g); err != nil {
				return nil, err
			}
			if len(g) == 0 {
				continue
			}
		}
		if skip, err := skips(ctx, f, who, g); err != nil {
			return nil, err
		} else if skip {
			continue
		}
		var offer []int
		var kinds []StepKind
		for _, i := range g {
			kind := f.Def.Steps[i].Kind
			kinds = append(kinds, kind)
			if f.User == nil {
				if !kind.NeedsUser() {
					offer = append(offer, i)
				}
				continue
			}
			ok, err := who.CanPass(ctx, f, kind)
			if err != nil {
				return nil, err
			}
			if ok {
				offer = append(offer, i)
			}
		}
		if len(offer) == 0 {
			return nil, errors.Join(errCannotPass, &CannotPassError{Kinds: kinds})
		}
		return offer, nil
	}
	if f.User == nil {
		return nil, nil
	}
	for k, st := range owed {
		i := len(f.Def.Steps) + k
		if f.passed(i) {
			continue
		}
		if ok, err := st.Owed(ctx, f); err != nil || ok {
			return []int{i}, err
		}
	}
	return nil, nil
}

// holding is the steps of g whose conditions hold for f.
func holding(ctx context.Context, f *Flow, who Subject, g group) (group, error) {
	var out group
	for _, i := range g {
		st := f.Def.Steps[i]
		holds, err := who.Holds(ctx, f, st.Condition, st.Kind)
		if err != nil {
			return nil, err
		}
		if holds {
			out = append(out, i)
		}
	}
	return out, nil
}

// owing says whether f passed a required action, past its own steps.
func owing(f *Flow) bool {
	for _, i := range f.record().Passed {
		if i >= len(f.Def.Steps) {
			return true
		}
	}
	return false
}

func passedAny(f *Flow, g group) bool {
	for _, i := range g {
		if f.passed(i) {
			return true
		}
	}
	return false
}
