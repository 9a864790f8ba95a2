package bus

import (
	"slices"
	"strings"
)

// Type names an event (docs/events.md lists them with their data; a test
// holds the two equal).
type Type string

// The event types, stable: receivers dispatch on them. A type is never
// renamed or given another meaning; new ones are added.
const (
	UserCreated               Type = "user.created"
	UserUpdated               Type = "user.updated"
	UserDeleted               Type = "user.deleted"
	CredentialAdded           Type = "credential.added"
	CredentialRemoved         Type = "credential.removed"
	CredentialRotated         Type = "credential.rotated"
	LoginSucceeded            Type = "login.succeeded"
	LoginFailed               Type = "login.failed"
	AuthEvent                 Type = "auth.event"
	ImpersonationStarted      Type = "impersonation.started"
	SCIMProvisioned           Type = "scim.provisioned"
	OrganizationMemberAdded   Type = "organization.member.added"
	OrganizationMemberRemoved Type = "organization.member.removed"
	NHICredentialIssued       Type = "nhi.credential.issued"
	LDAPSyncFinished          Type = "ldap.sync.finished"
	AdminChange               Type = "admin.change"
	WebhookDisabled           Type = "webhook.disabled"
	WebhookTest               Type = "webhook.test"
	PluginDisabled            Type = "plugin.disabled"
	RiskNotify                Type = "risk.notify"
	RiskDenied                Type = "risk.denied"
	RiskSessionNotify         Type = "risk.session.notify"
	RiskSessionEnded          Type = "risk.session.ended"
)

// Types are every event type, in the order docs/events.md lists them.
var Types = []Type{UserCreated, UserUpdated, UserDeleted, CredentialAdded, CredentialRemoved, CredentialRotated,
	LoginSucceeded, LoginFailed, AuthEvent, ImpersonationStarted, SCIMProvisioned, OrganizationMemberAdded,
	OrganizationMemberRemoved, NHICredentialIssued, LDAPSyncFinished, AdminChange, WebhookDisabled, WebhookTest, PluginDisabled,
	RiskNotify, RiskDenied, RiskSessionNotify, RiskSessionEnded}

// ValidPattern says whether p names an event type or a group of them: "*",
// or a prefix ending in ".*" that some type has ("user.*",
// "organization.member.*").
func ValidPattern(p string) bool {
	if p == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(p, ".*"); ok {
		return slices.ContainsFunc(Types, func(t Type) bool { return strings.HasPrefix(string(t), prefix+".") })
	}
	return slices.Contains(Types, Type(p))
}

// Matches says whether a subscription to patterns takes events of type t.
func Matches(patterns []string, t Type) bool {
	for _, p := range patterns {
		if p == "*" || p == string(t) {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(string(t), prefix) {
			return true
		}
	}
	return false
}
