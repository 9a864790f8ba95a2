package signin

import (
	"errors"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apperr"
)

func step(k StepKind, r Requirement) DefinitionStep { return DefinitionStep{Kind: k, Requirement: r} }

func when(k StepKind, c Condition) DefinitionStep {
	return DefinitionStep{Kind: k, Requirement: Conditional, Condition: &c}
}

// orIf is an alternative offered when c holds.
func orIf(k StepKind, c Condition) DefinitionStep {
	return DefinitionStep{Kind: k, Requirement: Alternative, Condition: &c}
}

func realmProviders(alias string) bool { return alias == "github" }

func TestCheckDefinitionAccepts(t *testing.T) {
	idp := step(KindIdentityProvider, Alternative)
	idp.Provider = "github"
	for name, d := range map[string]Definition{
		"a password":                   {Usage: UsageBrowser, Steps: []DefinitionStep{step(KindUsernamePassword, Required)}},
		"username then a security key": {Usage: UsageBrowser, Steps: []DefinitionStep{step(KindUsername, Required), step(KindSecurityKey, Required)}},
		"username then a choice of proofs": {Usage: UsageBrowser, Steps: []DefinitionStep{step(KindUsername, Required),
			step(KindTOTP, Alternative), step(KindEmailCode, Alternative), step(KindRecoveryCode, Alternative)}},
		"an alternative group of one is required": {Usage: UsageDirectGrant, Steps: []DefinitionStep{step(KindUsernamePassword, Alternative),
			step(KindTOTP, Required)}},
		"a named provider or a password": {Usage: UsageDevice, Steps: []DefinitionStep{idp, step(KindUsernamePassword, Alternative),
			when(KindTerms, Condition{Group: "/staff"})}},
		"a client condition before the user is known": {Usage: UsageBrowser, Steps: []DefinitionStep{
			step(KindUsernamePassword, Required), when(KindSecurityKey, Condition{Client: "admin-app", Role: "admin"})}},
		"a condition on the client alone may come first": {Usage: UsageBrowser, Steps: []DefinitionStep{
			when(KindPasskey, Condition{Client: "kiosk"}), step(KindUsernamePassword, Required)}},
		"a second factor of those the user has, for those who have one": {Usage: UsageBrowser, Steps: []DefinitionStep{
			step(KindUsernamePassword, Alternative), step(KindPasskey, Alternative),
			orIf(KindTOTP, Condition{Configured: true}), orIf(KindSecurityKey, Condition{Configured: true})}},
		"direct grant with totp for those who have it, as a choice of one": {Usage: UsageDirectGrant, Steps: []DefinitionStep{
			step(KindUsernamePassword, Required), orIf(KindTOTP, Condition{Configured: true})}},
		"direct grant with totp on a role": {Usage: UsageDirectGrant, Steps: []DefinitionStep{step(KindUsernamePassword, Required),
			when(KindTOTP, Condition{Role: "admin"})}},
	} {
		d.Alias = "flow"
		if err := CheckDefinition(d, realmProviders); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDefaultDefinitionsPassTheChecks(t *testing.T) {
	defs := DefaultDefinitions()
	if len(defs) != 3 {
		t.Fatalf("%d defaults", len(defs))
	}
	for _, d := range defs {
		// The default idp-redirect step names no provider: a realm
		// without any still passes.
		if err := CheckDefinition(d, func(string) bool { return false }); err != nil {
			t.Errorf("%s: %v", d.Alias, err)
		}
		if !d.BuiltIn || string(d.Usage) != d.Alias {
			t.Errorf("%s: builtIn %v usage %s", d.Alias, d.BuiltIn, d.Usage)
		}
	}
}

func TestCheckDefinitionRefuses(t *testing.T) {
	pw := step(KindUsernamePassword, Required)
	idpNamed := func(alias string) DefinitionStep {
		s := step(KindIdentityProvider, Required)
		s.Provider = alias
		return s
	}
	withCondition := func(s DefinitionStep, c Condition) DefinitionStep { s.Condition = &c; return s }
	for _, tc := range []struct {
		name  string
		d     Definition
		field string
		says  string
	}{
		{"no alias", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{pw}}, "alias", "is required"},
		{"markup in the alias", Definition{Alias: "<b>", Usage: UsageBrowser, Steps: []DefinitionStep{pw}}, "alias", "markup"},
		{"empty", Definition{Usage: UsageBrowser}, "steps", "has no steps"},
		{"unknown usage", Definition{Usage: "kiosk", Steps: []DefinitionStep{pw}}, "usage", `not "kiosk"`},
		{"unknown kind", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{pw, step("sms", Required)}}, "steps[1].kind", `unknown kind "sms"`},
		{"unknown requirement", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{step(KindUsernamePassword, "optional")}},
			"steps[0].requirement", `not "optional"`},
		{"conditional without a condition", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{pw, step(KindTOTP, Conditional)}},
			"steps[1].condition", "is required on a conditional step"},
		{"a condition on a required step", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{withCondition(pw, Condition{Role: "a"})}},
			"steps[0].condition", "only for a conditional or alternative step"},
		{"a condition that sets nothing", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{pw, when(KindTOTP, Condition{})}},
			"steps[1].condition", "sets nothing"},
		{"configured on a kind without credentials", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{pw, when(KindTerms, Condition{Configured: true})}},
			"steps[1].condition.configured", "terms steps have not"},
		{"an attribute condition without a value", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{pw, when(KindTOTP, Condition{Attribute: "dept"})}},
			"steps[1].condition.attribute", "must be name=value"},
		{"a provider on another kind", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{{Kind: KindPasskey, Requirement: Required, Provider: "github"}}},
			"steps[0].provider", "only for an idp-redirect step"},
		{"an unknown provider", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{idpNamed("gitlab")}},
			"steps[0].provider", `no identity provider "gitlab"`},
		{"a second factor first", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{step(KindTOTP, Required), pw}},
			"steps[0].kind", "the totp step needs the user"},
		{"a second factor as an alternative to identifying", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{
			step(KindUsernamePassword, Alternative), step(KindEmailCode, Alternative)}},
			"steps[1].kind", "the email-otp step needs the user"},
		{"a second factor after a step that may be skipped", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{
			when(KindPasskey, Condition{Client: "kiosk"}), step(KindSecurityKey, Required), pw}},
			"steps[1].kind", "the webauthn step needs the user"},
		{"terms first", Definition{Usage: UsageDevice, Steps: []DefinitionStep{step(KindTerms, Required), pw}},
			"steps[0].kind", "the terms step needs the user"},
		{"a role condition before the user is known", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{
			when(KindUsernamePassword, Condition{Role: "admin"}), pw}},
			"steps[0].condition", "asks about the user"},
		{"a configured condition first", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{when(KindRecoveryCode, Condition{Configured: true}), pw}},
			"steps[0].kind", "the recovery-code step needs the user"},
		{"a second factor joined to the first by a condition", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{
			orIf(KindUsernamePassword, Condition{Client: "web"}), orIf(KindTOTP, Condition{Configured: true})}},
			"steps[1].kind", "the totp step needs the user"},
		{"conditional alternatives that may all be skipped identify nobody", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{
			orIf(KindUsernamePassword, Condition{Client: "web"}), orIf(KindPasskey, Condition{Client: "kiosk"})}},
			"steps", "no step identifies the user"},
		{"direct grant with a choice of conditional codes", Definition{Usage: UsageDirectGrant, Steps: []DefinitionStep{
			pw, orIf(KindTOTP, Condition{Configured: true}), orIf(KindTOTP, Condition{Role: "admin"})}},
			"steps[1].requirement", "totp must be required or conditional"},
		{"no step identifies on some path", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{when(KindPasskey, Condition{Client: "kiosk"})}},
			"steps", "no step identifies the user"},
		{"a username alone", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{step(KindUsername, Required)}},
			"steps[0].kind", "names the user without proof"},
		{"a username then terms", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{step(KindUsername, Required), step(KindTerms, Required)}},
			"steps[0].kind", "names the user without proof"},
		{"a username then a proof only some users give", Definition{Usage: UsageBrowser, Steps: []DefinitionStep{
			step(KindUsername, Alternative), step(KindPasskey, Alternative), when(KindTOTP, Condition{Configured: true})}},
			"steps[0].kind", "names the user without proof"},
		{"direct grant with a passkey", Definition{Usage: UsageDirectGrant, Steps: []DefinitionStep{pw, step(KindPasskey, Required)}},
			"steps[1].kind", "a direct-grant flow has no pages"},
		{"direct grant with terms", Definition{Usage: UsageDirectGrant, Steps: []DefinitionStep{pw, when(KindTerms, Condition{Role: "x"})}},
			"steps[1].kind", "a direct-grant flow has no pages"},
		{"direct grant with a choice", Definition{Usage: UsageDirectGrant, Steps: []DefinitionStep{
			step(KindUsernamePassword, Alternative), step(KindTOTP, Alternative)}},
			"steps[0].requirement", "username-password must be required"},
		{"direct grant with a conditional password", Definition{Usage: UsageDirectGrant, Steps: []DefinitionStep{
			when(KindUsernamePassword, Condition{Client: "cli"})}},
			"steps[0].requirement", "username-password must be required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.d.Alias == "" && tc.field != "alias" {
				tc.d.Alias = "flow"
			}
			err := CheckDefinition(tc.d, realmProviders)
			var e *apperr.Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted or not a field error: %v", err)
			}
			if e.Status != 400 || e.Code != apperr.CodeInvalidField || e.Field != tc.field || !strings.Contains(e.Message, tc.says) {
				t.Errorf("got %d %s %s %q, want field %s saying %q", e.Status, e.Code, e.Field, e.Message, tc.field, tc.says)
			}
		})
	}
}
