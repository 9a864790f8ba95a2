package signin

// DefaultDefinitions are the built-in flows, the server's sign-in without
// a flow as far as a definition says it: on the pages, a password, a
// passkey, any of the realm's identity providers, or the organization an
// email's domain names, then the second factor the user set up (a TOTP
// code, a security key, a recovery code), for the users who have one; by
// the password grant, a password and then the TOTP code of those users.
// Seeding a realm's defaults writes these; the sign-in falls back to them
// for a client bound to no flow. docs/auth-flows.md says where today's
// sign-in differs.
func DefaultDefinitions() []Definition {
	configured := func() *Condition { return &Condition{Configured: true} }
	pages := func() []DefinitionStep {
		return []DefinitionStep{
			{Kind: KindUsernamePassword, Requirement: Alternative},
			{Kind: KindPasskey, Requirement: Alternative},
			{Kind: KindIdentityProvider, Requirement: Alternative},
			{Kind: KindOrgDiscovery, Requirement: Alternative},
			{Kind: KindTOTP, Requirement: Alternative, Condition: configured()},
			{Kind: KindSecurityKey, Requirement: Alternative, Condition: configured()},
			{Kind: KindRecoveryCode, Requirement: Alternative, Condition: configured()},
		}
	}
	return []Definition{
		{Alias: browserID, Usage: UsageBrowser, BuiltIn: true, Steps: pages(), Description: browserDescription},
		{Alias: "direct-grant", Usage: UsageDirectGrant, BuiltIn: true,
			Description: "The password grant: a password, then TOTP for users who have it",
			Steps: []DefinitionStep{
				{Kind: KindUsernamePassword, Requirement: Required},
				{Kind: KindTOTP, Requirement: Conditional, Condition: configured()},
			}},
		{Alias: "device", Usage: UsageDevice, BuiltIn: true, Steps: pages(),
			Description: "Approving a device code: as the browser flow"},
	}
}

const browserDescription = "Sign-in on the hosted pages: a password, a passkey, an identity provider or the organization of the email's domain, then the second factor the user has set up, if any"

// browserID names BrowserDefinition where a flow records what it follows,
// as stepUpID does StepUpDefinition.
const browserID = "browser"

// BrowserDefinition is the server's own browser sign-in, never stored:
// what a SAML service provider bound to no flow signs in with. It is the
// browser flow seed-defaults writes (DefaultDefinitions).
func BrowserDefinition() *Definition {
	for _, d := range DefaultDefinitions() {
		if d.Alias == browserID {
			d.ID = browserID
			return &d
		}
	}
	panic("signin: no built-in browser flow") // DefaultDefinitions always has one
}

// stepUpID names StepUpDefinition where a flow records what it follows:
// no stored flow's ID (those are UUIDs).
const stepUpID = "step-up"

// StepUpDefinition is what a step-up asks of the signed-in user whose
// session lacks the second factor the user has: one of the second factors
// the user set up, as Keycloak asks only for what is missing. It is the
// server's own, never stored and never bound.
func StepUpDefinition() *Definition {
	return &Definition{ID: stepUpID, Alias: stepUpID, Usage: UsageBrowser, BuiltIn: true, Steps: []DefinitionStep{
		{Kind: KindTOTP, Requirement: Alternative},
		{Kind: KindSecurityKey, Requirement: Alternative},
		{Kind: KindRecoveryCode, Requirement: Alternative},
	}}
}
