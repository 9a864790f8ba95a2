package signin

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// fakeSubject: the user has the credentials in has, owes no more the
// steps in done, and conditions hold when their role is in roles.
type fakeSubject struct {
	has   []StepKind
	done  []StepKind
	roles []string
}

func (s fakeSubject) Skips(_ context.Context, _ *Flow, k StepKind) (bool, error) {
	return slices.Contains(s.done, k), nil
}

func (s fakeSubject) Holds(_ context.Context, _ *Flow, c *Condition, _ StepKind) (bool, error) {
	return slices.Contains(s.roles, c.Role), nil
}

func (s fakeSubject) CanPass(_ context.Context, _ *Flow, k StepKind) (bool, error) {
	return !k.NeedsUser() || slices.Contains(s.has, k), nil
}

// fakeOwed is a required action, owed when owed.
type fakeOwed struct {
	Step
	owed bool
}

func (s fakeOwed) Owed(context.Context, *Flow) (bool, error) { return s.owed, nil }

func TestNext(t *testing.T) {
	pwd := DefinitionStep{Kind: KindUsernamePassword, Requirement: Required}
	altPwd := DefinitionStep{Kind: KindUsernamePassword, Requirement: Alternative}
	altPasskey := DefinitionStep{Kind: KindPasskey, Requirement: Alternative}
	totp := DefinitionStep{Kind: KindTOTP, Requirement: Required}
	altTOTP := DefinitionStep{Kind: KindTOTP, Requirement: Alternative}
	altMail := DefinitionStep{Kind: KindEmailCode, Requirement: Alternative}
	adminTOTP := DefinitionStep{Kind: KindTOTP, Requirement: Conditional, Condition: &Condition{Role: "admin"}}
	terms := DefinitionStep{Kind: KindTerms, Requirement: Required}
	// A second factor of those the user has, asked of admins only.
	adminOrTOTP := DefinitionStep{Kind: KindTOTP, Requirement: Alternative, Condition: &Condition{Role: "admin"}}
	adminOrMail := DefinitionStep{Kind: KindEmailCode, Requirement: Alternative, Condition: &Condition{Role: "admin"}}
	staffOrMail := DefinitionStep{Kind: KindEmailCode, Requirement: Alternative, Condition: &Condition{Role: "staff"}}
	for _, tc := range []struct {
		name   string
		steps  []DefinitionStep
		passed []int
		known  bool
		who    fakeSubject
		owed   bool  // the user owes the one required action
		want   []int // nil: done
		cannot bool
	}{
		{"first step", []DefinitionStep{pwd, totp}, nil, false, fakeSubject{}, false, []int{0}, false},
		{"then the second factor", []DefinitionStep{pwd, totp}, []int{0}, true, fakeSubject{has: []StepKind{KindTOTP}}, false, []int{1}, false},
		{"all passed", []DefinitionStep{pwd, totp}, []int{0, 1}, true, fakeSubject{}, false, nil, false},
		{"alternatives offered together", []DefinitionStep{altPwd, altPasskey, totp}, nil, false, fakeSubject{}, false, []int{0, 1}, false},
		{"one alternative passes the group", []DefinitionStep{altPwd, altPasskey, terms}, []int{1}, true,
			fakeSubject{has: []StepKind{KindTerms}}, false, []int{2}, false},
		{"condition holds", []DefinitionStep{pwd, adminTOTP}, []int{0}, true,
			fakeSubject{has: []StepKind{KindTOTP}, roles: []string{"admin"}}, false, []int{1}, false},
		{"condition does not hold", []DefinitionStep{pwd, adminTOTP}, []int{0}, true, fakeSubject{has: []StepKind{KindTOTP}}, false, nil, false},
		{"only the alternatives the user can pass", []DefinitionStep{pwd, altTOTP, altMail}, []int{0}, true,
			fakeSubject{has: []StepKind{KindEmailCode}}, false, []int{2}, false},
		{"a step the user owes no more", []DefinitionStep{pwd, terms, totp}, []int{0}, true,
			fakeSubject{has: []StepKind{KindTerms, KindTOTP}, done: []StepKind{KindTerms}}, false, []int{2}, false},
		{"skipped before asking whether the user can pass", []DefinitionStep{pwd, terms}, []int{0}, true,
			fakeSubject{done: []StepKind{KindTerms}}, false, nil, false},
		{"a step owed no more is still offered to a user not yet known", []DefinitionStep{altPwd, altPasskey, terms}, nil, false,
			fakeSubject{done: []StepKind{KindTerms}}, false, []int{0, 1}, false},
		{"a required step the user cannot pass", []DefinitionStep{pwd, totp}, []int{0}, true, fakeSubject{}, false, nil, true},
		{"a required action owed after the flow's steps", []DefinitionStep{pwd, totp}, []int{0, 1}, true, fakeSubject{}, true, []int{2}, false},
		{"a required action done", []DefinitionStep{pwd, totp}, []int{0, 1, 2}, true, fakeSubject{}, true, nil, false},
		{"the flow's steps before a required action", []DefinitionStep{pwd, totp}, []int{0}, true,
			fakeSubject{has: []StepKind{KindTOTP}}, true, []int{1}, false},
		{"no alternative the user can pass", []DefinitionStep{pwd, altTOTP, altMail}, []int{0}, true, fakeSubject{}, false, nil, true},
		{"alternatives whose conditions hold, offered together", []DefinitionStep{pwd, adminOrTOTP, adminOrMail}, []int{0}, true,
			fakeSubject{has: []StepKind{KindTOTP, KindEmailCode}, roles: []string{"admin"}}, false, []int{1, 2}, false},
		{"only the alternatives whose condition holds", []DefinitionStep{pwd, adminOrTOTP, staffOrMail}, []int{0}, true,
			fakeSubject{has: []StepKind{KindTOTP, KindEmailCode}, roles: []string{"staff"}}, false, []int{2}, false},
		{"conditional alternatives none of which holds are skipped", []DefinitionStep{pwd, adminOrTOTP, adminOrMail, terms}, []int{0}, true,
			fakeSubject{has: []StepKind{KindTOTP, KindTerms}}, false, []int{3}, false},
		{"conditional alternatives that hold but the user cannot pass", []DefinitionStep{pwd, adminOrTOTP, adminOrMail}, []int{0}, true,
			fakeSubject{roles: []string{"admin"}}, false, nil, true},
		{"conditional alternatives are a choice apart from the first factor's", []DefinitionStep{altPwd, altPasskey, adminOrTOTP}, nil, false,
			fakeSubject{}, false, []int{0, 1}, false},
		{"and come after it", []DefinitionStep{altPwd, altPasskey, adminOrTOTP}, []int{1}, true,
			fakeSubject{has: []StepKind{KindTOTP}, roles: []string{"admin"}}, false, []int{2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Flow{rec: &store.SignInFlow{Passed: tc.passed}, Def: &Definition{Steps: tc.steps}}
			if tc.known {
				f.User = &store.User{ID: "alice"}
			}
			got, err := next(context.Background(), f, tc.who, []OwedStep{fakeOwed{owed: tc.owed}})
			var cannot *CannotPassError
			switch {
			case tc.cannot:
				var ae *apperr.Error
				if !errors.As(err, &cannot) || !errors.As(err, &ae) || ae.Key != "signin.error.cannotPass" {
					t.Fatalf("got %v, %v; want a CannotPassError shown as a page", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(got, tc.want):
				t.Fatalf("offers %v, want %v", got, tc.want)
			}
		})
	}
}
