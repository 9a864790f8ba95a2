package signin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
)

// The longest alias and description a flow may have, and the most steps:
// a flow is read by people, and walked on every sign-in.
const (
	maxAliasLen       = 255
	maxDescriptionLen = 1000
	maxSteps          = 50
)

// checkTraits is what the checks know of a kind of step.
type checkTraits struct {
	identifies bool // it tells who is signing in
	proves     bool // it proves the user is who they claim
	needsUser  bool // it can only run once the user is known
	configured bool // a "configured" condition means something for it
}

var checkKinds = map[StepKind]checkTraits{
	KindUsernamePassword: {identifies: true, proves: true},
	KindUsername:         {identifies: true},
	KindPasskey:          {identifies: true, proves: true},
	KindIdentityProvider: {identifies: true, proves: true},
	KindOrgDiscovery:     {identifies: true, proves: true},
	KindTOTP:             {proves: true, needsUser: true, configured: true},
	KindSecurityKey:      {proves: true, needsUser: true, configured: true},
	KindRecoveryCode:     {proves: true, needsUser: true, configured: true},
	KindEmailCode:        {proves: true, needsUser: true},
	KindTerms:            {needsUser: true},
	KindPlugin:           {needsUser: true},
}

var checkUsages = map[Usage]bool{UsageBrowser: true, UsageDirectGrant: true, UsageDevice: true}

var checkRequirements = map[Requirement]bool{Required: true, Alternative: true, Conditional: true}

// CheckDefinition refuses a flow that could never complete or makes no
// sense, with a field error naming the step at fault (steps[i].…) and
// why. providerExists says whether the realm has an identity provider of
// an alias; an idp-redirect step naming none of them is refused.
//
// Steps are walked as the dispatcher walks them: consecutive alternative
// steps are one choice (those with a condition apart from those without),
// a required step is always run, a step with a condition may run or be
// skipped. Every path through that walk must identify the
// user before any step that needs the user, and must prove who they are
// once identified: a path that ends with the user unknown cannot
// complete, and one that ends with the user named but unproven would sign
// anyone in who types a username.
func CheckDefinition(d Definition, providerExists func(alias string) bool) error {
	if strings.TrimSpace(d.Alias) == "" {
		return apperr.Field("alias", "is required")
	}
	if err := validate.Identifier("alias", d.Alias, maxAliasLen); err != nil {
		return err
	}
	if err := validate.Text("description", d.Description, maxDescriptionLen); err != nil {
		return err
	}
	if !checkUsages[d.Usage] {
		return apperr.Field("usage", "must be %s, %s or %s, not %q", UsageBrowser, UsageDirectGrant, UsageDevice, d.Usage)
	}
	if len(d.Steps) == 0 {
		return apperr.Field("steps", "has no steps: a flow needs at least one that identifies the user")
	}
	if len(d.Steps) > maxSteps {
		return apperr.Field("steps", "has %d steps, more than %d", len(d.Steps), maxSteps)
	}
	for i := range d.Steps {
		if err := checkStep(d.Steps[i], i, providerExists); err != nil {
			return err
		}
		if d.Usage == UsageDirectGrant {
			if err := checkDirectGrantStep(d.Steps, i); err != nil {
				return err
			}
		}
	}
	return checkPaths(d.Steps)
}

func stepField(i int, name string) string { return fmt.Sprintf("steps[%d].%s", i, name) }

// checkStep checks one step on its own.
func checkStep(s DefinitionStep, i int, providerExists func(string) bool) error {
	traits, ok := checkKinds[s.Kind]
	if !ok {
		return apperr.Field(stepField(i, "kind"), "unknown kind %q", s.Kind)
	}
	if !checkRequirements[s.Requirement] {
		return apperr.Field(stepField(i, "requirement"), "must be %s, %s or %s, not %q", Required, Alternative, Conditional, s.Requirement)
	}
	switch {
	case s.Requirement == Conditional && s.Condition == nil:
		return apperr.Field(stepField(i, "condition"), "is required on a conditional step")
	case s.Requirement == Required && s.Condition != nil:
		return apperr.Field(stepField(i, "condition"), "is only for a conditional or alternative step, and this one is %s", s.Requirement)
	}
	if c := s.Condition; c != nil {
		if *c == (Condition{}) {
			return apperr.Field(stepField(i, "condition"), "sets nothing: a condition that always holds is a required step")
		}
		if c.Configured && !traits.configured {
			return apperr.Field(stepField(i, "condition.configured"),
				"means the user has a credential of the step's kind, which %s steps have not (only totp, webauthn and recovery-code)", s.Kind)
		}
		if c.RiskLevel != "" && !slices.Contains(RiskLevels, c.RiskLevel) {
			return apperr.Field(stepField(i, "condition.riskLevel"), "must be one of %s, not %q", strings.Join(RiskLevels, ", "), c.RiskLevel)
		}
		if c.Attribute != "" {
			if name, _, ok := strings.Cut(c.Attribute, "="); !ok || name == "" {
				return apperr.Field(stepField(i, "condition.attribute"), "must be name=value, not %q", c.Attribute)
			}
		}
		for name, v := range map[string]string{"role": c.Role, "group": c.Group, "client": c.Client, "attribute": c.Attribute} {
			if err := validate.Setting(stepField(i, "condition."+name), v, maxAliasLen); err != nil {
				return err
			}
		}
	}
	if s.Provider != "" {
		if s.Kind != KindIdentityProvider {
			return apperr.Field(stepField(i, "provider"), "is only for an %s step", KindIdentityProvider)
		}
		if providerExists == nil || !providerExists(s.Provider) {
			return apperr.Field(stepField(i, "provider"), "the realm has no identity provider %q", s.Provider)
		}
	}
	return nil
}

// checkDirectGrantStep refuses in a direct-grant flow what needs a page:
// the password grant can only carry a username, a password and a TOTP
// code.
func checkDirectGrantStep(steps []DefinitionStep, i int) error {
	s := steps[i]
	req := s.Requirement
	if req == Alternative && groupLen(steps, i) == 1 {
		req = Required
		if s.Condition != nil {
			req = Conditional
		}
	}
	switch {
	case s.Kind == KindUsernamePassword && req == Required:
	case s.Kind == KindTOTP && (req == Required || req == Conditional):
	case s.Kind == KindUsernamePassword || s.Kind == KindTOTP:
		return apperr.Field(stepField(i, "requirement"),
			"a direct-grant flow offers no choice: %s must be required%s", s.Kind, map[bool]string{true: " or conditional"}[s.Kind == KindTOTP])
	default:
		return apperr.Field(stepField(i, "kind"),
			"a direct-grant flow has no pages: only username-password (required) and totp (required or conditional), not %s", s.Kind)
	}
	return nil
}

// groupLen is the number of steps in the group of step i.
func groupLen(steps []DefinitionStep, i int) int {
	for _, g := range stepGroups(steps) {
		if slices.Contains(g, i) {
			return len(g)
		}
	}
	return 0
}

// pathState is where a path through the steps stands: whether the user
// is known and proven, and which step named them while unproven.
type pathState struct {
	identified, proven bool
	namedBy            int
}

// conditionNeedsUser says whether deciding the condition needs the user:
// everything but the client does.
func conditionNeedsUser(c *Condition) bool {
	return c != nil && (c.Role != "" || c.Group != "" || c.Attribute != "" || c.Configured || c.RiskLevel != "")
}

// checkPaths walks every path through the steps at once, as the set of
// states the paths reach.
func checkPaths(steps []DefinitionStep) error {
	states := map[pathState]bool{{namedBy: -1}: true}
	for _, group := range stepGroups(steps) {
		next := map[pathState]bool{}
		for st := range states {
			for _, j := range group {
				s := steps[j]
				if !st.identified && checkKinds[s.Kind].needsUser {
					return apperr.Field(stepField(j, "kind"), "the %s step needs the user, and on some path no earlier step identifies them", s.Kind)
				}
				if !st.identified && conditionNeedsUser(s.Condition) {
					return apperr.Field(stepField(j, "condition"), "asks about the user, and on some path no earlier step identifies them")
				}
				if s.Condition != nil {
					next[st] = true // skipped: its condition, or every one of its group's, does not hold
				}
				next[pass(st, j, s.Kind)] = true
			}
		}
		states = next
	}
	for st := range states {
		if !st.identified {
			return apperr.Field("steps", "on some path no step identifies the user: a sign-in could never complete")
		}
	}
	unproven := -1
	for st := range states {
		if !st.proven && (unproven < 0 || st.namedBy < unproven) {
			unproven = st.namedBy
		}
	}
	if unproven >= 0 {
		return apperr.Field(stepField(unproven, "kind"),
			"%s names the user without proof, and on some path no later step proves it (username-password, passkey, webauthn, totp, email-otp or recovery-code)",
			KindUsername)
	}
	return nil
}

// pass is the state after passing step i of kind k.
func pass(st pathState, i int, k StepKind) pathState {
	t := checkKinds[k]
	if t.identifies && !st.identified {
		st.identified, st.namedBy = true, i
	}
	if t.proves {
		st.proven = true
	}
	return st
}
