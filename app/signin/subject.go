package signin

import (
	"context"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/store"
)

// storeSubject answers the dispatcher's questions from the store.
type storeSubject struct{ st *store.Store }

func (s storeSubject) CanPass(ctx context.Context, f *Flow, kind StepKind) (bool, error) {
	if !kind.NeedsUser() {
		return true, nil
	}
	switch kind {
	case KindTOTP, KindSecurityKey:
		types, err := s.st.CredentialTypes(ctx, f.Realm.ID, f.User.ID)
		if err != nil {
			return false, err
		}
		if kind == KindTOTP {
			return slices.Contains(types, store.CredentialTOTP), nil
		}
		return slices.Contains(types, store.CredentialWebAuthn), nil
	case KindRecoveryCode:
		n, err := s.st.RecoveryCodesLeft(ctx, f.Realm.ID, f.User.ID)
		return n > 0, err
	case KindEmailCode:
		return f.User.Email != "" && f.User.EmailVerified, nil
	case KindTerms: // terms nobody wrote cannot be accepted, nor skipped (auth-flows.md)
		return f.Realm.TermsText != "" && f.Realm.TermsVersion != "", nil
	}
	return true, nil
}

// stepsSubject adds to a Subject the steps' own word on whether the user
// still owes them (Skipper).
type stepsSubject struct {
	Subject
	steps map[StepKind]Step
}

func (s stepsSubject) Skips(ctx context.Context, f *Flow, kind StepKind) (bool, error) {
	if sk, ok := s.steps[kind].(Skipper); ok {
		return sk.Skip(ctx, f)
	}
	return false, nil
}

// Holds: every field the condition sets holds.
func (s storeSubject) Holds(ctx context.Context, f *Flow, c *Condition, kind StepKind) (bool, error) {
	if c.Client != "" && c.Client != f.Wants.Client {
		return false, nil
	}
	if f.User == nil {
		return c.Role == "" && c.Group == "" && c.Attribute == "" && !c.Configured && c.RiskLevel == "", nil
	}
	// A sign-in not assessed (no assessor) is asked the step: a step meant
	// for risky sign-ins is never skipped for want of a score.
	if c.RiskLevel != "" && f.Risk != nil && !f.Risk.AtLeast(c.RiskLevel) {
		return false, nil
	}
	if c.Configured {
		if ok, err := s.CanPass(ctx, f, kind); !ok || err != nil {
			return false, err
		}
	}
	if c.Role != "" {
		roles, err := s.st.EffectiveRoles(ctx, f.User.ID)
		if err != nil {
			return false, err
		}
		if !slices.ContainsFunc(roles, func(r *store.Role) bool { return roleName(r) == c.Role }) {
			return false, nil
		}
	}
	if c.Group != "" {
		if ok, err := s.inGroup(ctx, f, c.Group); !ok || err != nil {
			return false, err
		}
	}
	if c.Attribute != "" {
		name, value, _ := strings.Cut(c.Attribute, "=")
		attrs, err := s.st.UserAttributes(ctx, f.User.ID)
		if err != nil {
			return false, err
		}
		if v, ok := attrs[name]; !ok || v != value {
			return false, nil
		}
	}
	return true, nil
}

// roleName is a realm role's name, or a client role's as "client/role".
func roleName(r *store.Role) string {
	if r.ClientID == "" {
		return r.Name
	}
	return r.ClientClientID + "/" + r.Name
}

// inGroup: the user is a member of the group with that path, or of a
// group below it.
func (s storeSubject) inGroup(ctx context.Context, f *Flow, path string) (bool, error) {
	groups, err := s.st.ListUserGroups(ctx, f.User.ID)
	if err != nil {
		return false, err
	}
	for _, g := range groups {
		p, err := s.groupPath(ctx, f.Realm.ID, g)
		if err != nil {
			return false, err
		}
		if p == path || strings.HasPrefix(p, path+"/") {
			return true, nil
		}
	}
	return false, nil
}

func (s storeSubject) groupPath(ctx context.Context, realmID string, g *store.Group) (string, error) {
	path := "/" + g.Name
	for g.ParentID != "" {
		var err error
		if g, err = s.st.GetGroup(ctx, realmID, g.ParentID); err != nil {
			return "", err
		}
		path = "/" + g.Name + path
	}
	return path, nil
}
