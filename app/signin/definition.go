package signin

// A Definition is an authentication flow as an administrator writes it:
// an ordered list of steps. The dispatcher walks it from the top; what a
// step's requirement means is said on Requirement.
type Definition struct {
	ID          string           `json:"id"`
	Alias       string           `json:"alias"`
	Description string           `json:"description,omitempty"`
	Usage       Usage            `json:"usage"`
	Steps       []DefinitionStep `json:"steps"`
	// BuiltIn marks the flows seed-defaults creates: equal to the
	// server's behaviour without a flow.
	BuiltIn bool `json:"builtIn"`
}

// Usage is the kind of sign-in a flow serves.
type Usage string

const (
	UsageBrowser     Usage = "browser"      // the hosted pages: OIDC, SAML, account, step-up
	UsageDirectGrant Usage = "direct-grant" // the password grant: no pages
	UsageDevice      Usage = "device"       // approving a device code in the browser
)

// A DefinitionStep is one step of a flow.
type DefinitionStep struct {
	Kind        StepKind    `json:"kind"`
	Requirement Requirement `json:"requirement"`
	// Condition is set on every Conditional step, and may be on an
	// Alternative one: that alternative is offered only when it holds.
	Condition *Condition `json:"condition,omitempty"`
	// Provider is the identity provider's alias of an
	// identity-provider-redirect step; empty offers every enabled
	// provider of the realm, as the sign-in page's buttons do.
	Provider string `json:"provider,omitempty"`
}

// StepKind names what a step asks of the person signing in.
type StepKind string

const (
	// The steps that tell who is signing in.
	KindUsernamePassword StepKind = "username-password"
	KindUsername         StepKind = "username"      // who, not yet proven: a later step proves it
	KindPasskey          StepKind = "passkey"       // a discoverable WebAuthn credential: who and proof at once
	KindIdentityProvider StepKind = "idp-redirect"  // an upstream provider's sign-in
	KindOrgDiscovery     StepKind = "org-discovery" // the email's domain picks the organization's provider
	// The steps that need the user known.
	KindTOTP         StepKind = "totp"
	KindSecurityKey  StepKind = "webauthn"      // a WebAuthn credential as a second factor
	KindRecoveryCode StepKind = "recovery-code" // one of the user's single-use recovery codes
	KindEmailCode    StepKind = "email-otp"     // a six-digit code mailed to the user's address
	KindTerms        StepKind = "terms"         // the realm's terms, accepted once per version
	// KindPlugin asks the server's sign-in plugins (app/plugins): allow,
	// deny, or a second factor first.
	KindPlugin StepKind = "plugin"
	// The required actions: owed by the user, named by no flow.
	KindUpdatePassword StepKind = "update-password"
	KindConfigureTOTP  StepKind = "configure-totp" // a realm with mfaRequired, of a user without a second factor
	// KindRiskCheck: the risk assessment's decision (app/risk): a second
	// factor a policy asks for, or the end of a denied sign-in.
	KindRiskCheck StepKind = "risk-check"
)

// Requirement says when a step must be passed.
type Requirement string

const (
	// Required: the step must be passed.
	Required Requirement = "required"
	// Alternative: consecutive alternative steps are one choice; passing
	// any one of them passes the group. Alternatives with a condition
	// form a choice of their own, apart from those without: each is
	// offered when its condition holds, and a choice none of whose
	// conditions holds is skipped (a second factor, whichever the user
	// has, for the users who have one).
	Alternative Requirement = "alternative"
	// Conditional: required when its condition holds for the user (or
	// the client), skipped otherwise.
	Conditional Requirement = "conditional"
)

// A Condition holds for a sign-in when every field set in it holds.
type Condition struct {
	Role      string `json:"role,omitempty"`      // the user has this realm role, or client role as "client/role"
	Group     string `json:"group,omitempty"`     // the user is a member of this group (its path), directly or below
	Client    string `json:"client,omitempty"`    // the sign-in is for this client (its clientId or SAML entity ID)
	Attribute string `json:"attribute,omitempty"` // the user's attribute, as "name=value"
	// Configured: the user has a credential of the step's kind (a TOTP
	// authenticator, a security key, recovery codes), as Keycloak's
	// "user configured" condition.
	Configured bool `json:"configured,omitempty"`
	// RiskLevel: the sign-in's risk assessment (app/risk) is at this
	// level or above ("medium": medium, high or critical).
	RiskLevel string `json:"riskLevel,omitempty"`
}
